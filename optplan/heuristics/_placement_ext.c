/* The compiled placement loops of the offset planners: ``place`` (``_placement.place``) and
 * ``skyline_best_fit`` (``strip_packing_best_fit``, at the end of this file).
 *
 * Records are placed one by one in a given order; each goes where a gap rule puts it among
 * the chunks [offset, offset + size) of the already placed records that overlap it in time.
 * The rules are those of the Python reference in ``_placement.py`` (``lowest_fit``,
 * ``xla_best_fit_offset``, ``tflite_best_fit_offset``, ``top_fit``), which the tests compare
 * this with;
 * the overlap queries use the same block index as ``IntervalIndex``: a record overlapping
 * [s, e] is live at s (found in s's block) or starts in (s, e] (a slice of the records
 * sorted by start). Times are the compressed ones of ``profiles.compressed_times``.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

enum { RULE_LOWEST, RULE_XLA, RULE_TFLITE, RULE_TOP };

typedef struct {
    i64 start, end;
} Chunk;

static int compare_chunks(const void *a, const void *b)
{
    i64 x = ((const Chunk *)a)->start, y = ((const Chunk *)b)->start;
    return (x > y) - (x < y);
}

static i64 align_up(i64 value, i64 alignment)
{
    return alignment == 1 ? value : (value + alignment - 1) / alignment * alignment;
}

/* The offset the rule picks for ``size`` among ``count`` chunks (sorted here). Equal starts
 * may come in any order: only the first of them can have a gap before it, and its gap is
 * the same either way. */
static i64 choose(Chunk *chunks, i64 count, i64 size, i64 alignment, int rule)
{
    if (!count) return 0;
    if (rule == RULE_TOP) { /* above them all: no sorting needed */
        i64 top = 0;
        for (i64 j = 0; j < count; j++)
            if (chunks[j].end > top) top = chunks[j].end;
        return align_up(top, alignment);
    }
    qsort(chunks, (size_t)count, sizeof(Chunk), compare_chunks);
    i64 running = 0, best_offset = -1, best_fit = -1;
    for (i64 j = 0; j < count; j++) {
        i64 unaligned = running, candidate = align_up(running, alignment);
        if (candidate + size <= chunks[j].start) {
            i64 gap = chunks[j].start - candidate;
            if (rule == RULE_LOWEST) return candidate;
            if (rule == RULE_XLA) {
                if (best_offset < 0 || gap < best_fit) {
                    best_offset = candidate;
                    best_fit = gap;
                }
            } else if (best_offset < 0 || gap < best_fit) {
                /* TFLite compares the aligned gap with the best stored from the unaligned
                 * end: its own asymmetry, kept */
                best_offset = candidate;
                best_fit = chunks[j].start - unaligned;
                if (best_fit == 0) break;
            }
        }
        if (chunks[j].end > running) running = chunks[j].end;
    }
    return best_offset >= 0 ? best_offset : align_up(running, alignment);
}

typedef struct {
    Py_buffer view;
    int held;
} Array;

static const i64 *get_array(PyObject *object, Array *array, Py_ssize_t count, const char *name)
{
    if (PyObject_GetBuffer(object, &array->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    array->held = 1;
    if (array->view.itemsize != 8 || array->view.len / 8 != count) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd int64 values", name, count);
        return NULL;
    }
    return array->view.buf;
}

PyDoc_STRVAR(place_doc,
"place(first, last, sizes, by_first, order, rule, alignment, num_times) -> bytes\n"
"--\n\n"
"Offsets (int64 bytes) of the records placed in ``order``, each by ``rule`` (0 lowest\n"
"fit, 1 XLA best fit, 2 TFLite best fit, 3 above them all) among the placed records\n"
"overlapping it in time.\n"
"``first``/``last`` are compressed times (< ``num_times``), ``by_first`` the records\n"
"sorted by first time; every array int64.");

static PyObject *place(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objects[5];
    int rule;
    long long alignment, num_times;
    if (!PyArg_ParseTuple(args, "OOOOOiLL", &objects[0], &objects[1], &objects[2],
                          &objects[3], &objects[4], &rule, &alignment, &num_times))
        return NULL;
    Array arrays[5];
    memset(arrays, 0, sizeof(arrays));
    PyObject *result = NULL;
    i64 *block_ptr = NULL, *block_members = NULL, *offsets = NULL;
    Chunk *chunks = NULL;
    Py_ssize_t n = PyObject_Length(objects[0]);
    if (n < 0) goto done;
    static const char *names[5] = {"first", "last", "sizes", "by_first", "order"};
    const i64 *data[5];
    for (int k = 0; k < 5; k++)
        if (!(data[k] = get_array(objects[k], &arrays[k], n, names[k]))) goto done;
    const i64 *first = data[0], *last = data[1], *sizes = data[2], *by_first = data[3],
              *order = data[4];
    if (rule < RULE_LOWEST || rule > RULE_TOP || alignment < 1 || num_times < 0) {
        PyErr_SetString(PyExc_ValueError, "bad rule, alignment or num_times");
        goto done;
    }
    /* the block index: records touching each block of ``block`` times */
    i64 block = (num_times + 4095) / 4096;
    if (block < 16) block = 16;
    i64 num_blocks = num_times / block + 1;
    block_ptr = calloc((size_t)num_blocks + 1, sizeof(i64));
    offsets = malloc((size_t)(n ? n : 1) * sizeof(i64));
    chunks = malloc((size_t)(n ? n : 1) * sizeof(Chunk));
    if (!block_ptr || !offsets || !chunks) goto nomem;
    for (i64 r = 0; r < n; r++)
        for (i64 b = first[r] / block; b <= last[r] / block; b++) block_ptr[b + 1]++;
    for (i64 b = 0; b < num_blocks; b++) block_ptr[b + 1] += block_ptr[b];
    block_members = malloc((size_t)(block_ptr[num_blocks] ? block_ptr[num_blocks] : 1) *
                           sizeof(i64));
    if (!block_members) goto nomem;
    {
        i64 *fill = calloc((size_t)num_blocks, sizeof(i64));
        if (!fill) goto nomem;
        for (i64 r = 0; r < n; r++)
            for (i64 b = first[r] / block; b <= last[r] / block; b++)
                block_members[block_ptr[b] + fill[b]++] = r;
        free(fill);
    }
    for (i64 r = 0; r < n; r++) offsets[r] = -1;
    for (Py_ssize_t k = 0; k < n; k++) {
        i64 r = order[k];
        if (r < 0 || r >= n || offsets[r] >= 0) {
            PyErr_SetString(PyExc_ValueError, "order: not a permutation of the records");
            goto done;
        }
        i64 s = first[r], e = last[r], count = 0, b = s / block;
        for (i64 j = block_ptr[b]; j < block_ptr[b + 1]; j++) {  /* live at s */
            i64 o = block_members[j];
            if (o != r && offsets[o] >= 0 && first[o] <= s && last[o] >= s)
                chunks[count++] = (Chunk){offsets[o], offsets[o] + sizes[o]};
        }
        i64 lo = 0, hi = n;  /* the records starting in (s, e] */
        while (lo < hi) {
            i64 mid = (lo + hi) / 2;
            if (first[by_first[mid]] <= s) lo = mid + 1; else hi = mid;
        }
        for (i64 j = lo; j < n && first[by_first[j]] <= e; j++) {
            i64 o = by_first[j];
            if (offsets[o] >= 0) chunks[count++] = (Chunk){offsets[o], offsets[o] + sizes[o]};
        }
        offsets[r] = choose(chunks, count, sizes[r], alignment, rule);
    }
    result = PyBytes_FromStringAndSize((const char *)offsets, (Py_ssize_t)(n * sizeof(i64)));
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(block_ptr);
    free(block_members);
    free(offsets);
    free(chunks);
    for (int k = 0; k < 5; k++)
        if (arrays[k].held) PyBuffer_Release(&arrays[k].view);
    return result;
}


/* -- the skyline best fit of strip_packing_best_fit ------------------------------------ */
/* The reference is ``optplan/heuristics/strip_packing.py`` (Sekiyama et al. 2018 after Burke
 * et al. 2004); this is the same loop: fill the lowest (then leftmost) skyline segment with
 * the unplaced block inside it with the longest lifetime, then the largest size, then the
 * lowest index; without one, raise the segment to its lower neighbour. */
typedef struct {
    i64 height, start, segment;
} HeapItem;

typedef struct {
    i64 *start, *end, *height, *previous, *next;
    char *alive;
    i64 count, capacity;
    HeapItem *heap;
    i64 heap_size, heap_capacity;
} Skyline;

static int heap_less(const HeapItem *a, const HeapItem *b)
{
    if (a->height != b->height) return a->height < b->height;
    if (a->start != b->start) return a->start < b->start;
    return a->segment < b->segment;
}

static int heap_push(Skyline *k, HeapItem item)
{
    if (k->heap_size == k->heap_capacity) {
        i64 capacity = k->heap_capacity ? 2 * k->heap_capacity : 256;
        HeapItem *grown = realloc(k->heap, (size_t)capacity * sizeof(HeapItem));
        if (!grown) return -1;
        k->heap = grown;
        k->heap_capacity = capacity;
    }
    i64 at = k->heap_size++;
    while (at > 0) {
        i64 parent = (at - 1) / 2;
        if (!heap_less(&item, &k->heap[parent])) break;
        k->heap[at] = k->heap[parent];
        at = parent;
    }
    k->heap[at] = item;
    return 0;
}

static void heap_pop(Skyline *k)
{
    HeapItem item = k->heap[--k->heap_size];
    i64 at = 0;
    for (;;) {
        i64 child = 2 * at + 1;
        if (child >= k->heap_size) break;
        if (child + 1 < k->heap_size && heap_less(&k->heap[child + 1], &k->heap[child])) child++;
        if (!heap_less(&k->heap[child], &item)) break;
        k->heap[at] = k->heap[child];
        at = child;
    }
    if (k->heap_size) k->heap[at] = item;
}

static i64 skyline_add(Skyline *k, i64 start, i64 end, i64 height, i64 previous, i64 following)
{
    if (k->count == k->capacity) {
        i64 capacity = k->capacity ? 2 * k->capacity : 256;
        i64 *arrays[5] = {k->start, k->end, k->height, k->previous, k->next};
        for (int a = 0; a < 5; a++) {
            i64 *grown = realloc(arrays[a], (size_t)capacity * sizeof(i64));
            if (!grown) return -1;
            arrays[a] = grown;
        }
        k->start = arrays[0], k->end = arrays[1], k->height = arrays[2];
        k->previous = arrays[3], k->next = arrays[4];
        char *alive = realloc(k->alive, (size_t)capacity);
        if (!alive) return -1;
        k->alive = alive;
        k->capacity = capacity;
    }
    i64 segment = k->count++;
    k->start[segment] = start, k->end[segment] = end, k->height[segment] = height;
    k->previous[segment] = previous, k->next[segment] = following, k->alive[segment] = 1;
    if (previous >= 0) k->next[previous] = segment;
    if (following >= 0) k->previous[following] = segment;
    if (heap_push(k, (HeapItem){height, start, segment}) < 0) return -1;
    return segment;
}

/* Replace ``segment`` by ``num`` pieces (start, end, height), merging equal heights with each
 * other and with the outer neighbours. */
static int skyline_replace(Skyline *k, i64 segment, i64 pieces[][3], int num)
{
    i64 before = k->previous[segment], after = k->next[segment];
    k->alive[segment] = 0;
    i64 merged[3][3];
    int count = 0;
    for (int p = 0; p < num; p++) {
        if (count && merged[count - 1][2] == pieces[p][2]) {
            merged[count - 1][1] = pieces[p][1];
        } else {
            memcpy(merged[count++], pieces[p], sizeof(merged[0]));
        }
    }
    if (before >= 0 && k->height[before] == merged[0][2]) {
        k->alive[before] = 0;
        merged[0][0] = k->start[before];
        before = k->previous[before];
    }
    if (after >= 0 && k->height[after] == merged[count - 1][2]) {
        k->alive[after] = 0;
        merged[count - 1][1] = k->end[after];
        after = k->next[after];
    }
    for (int p = 0; p < count; p++) {
        before = skyline_add(k, merged[p][0], merged[p][1], merged[p][2], before, -1);
        if (before < 0) return -1;
    }
    if (after >= 0) {
        k->next[before] = after;
        k->previous[after] = before;
    }
    return 0;
}

PyDoc_STRVAR(skyline_doc,
"skyline_best_fit(first, last, sizes, by_start, num_times, alignment) -> bytes\n"
"--\n\n"
"Offsets (int64 bytes) of strip_packing_best_fit; ``first``/``last`` compressed times\n"
"(< ``num_times``), ``by_start`` the records by (first, index); every array int64.");

static PyObject *skyline_best_fit(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *objects[4];
    long long num_times, alignment;
    if (!PyArg_ParseTuple(args, "OOOOLL", &objects[0], &objects[1], &objects[2], &objects[3],
                          &num_times, &alignment))
        return NULL;
    Array arrays[4];
    memset(arrays, 0, sizeof(arrays));
    PyObject *result = NULL;
    Skyline k;
    memset(&k, 0, sizeof(k));
    i64 *offsets = NULL, *blocks = NULL;
    Py_ssize_t n = PyObject_Length(objects[0]);
    if (n < 0) goto done;
    static const char *names[4] = {"first", "last", "sizes", "by_start"};
    const i64 *data[4];
    for (int a = 0; a < 4; a++)
        if (!(data[a] = get_array(objects[a], &arrays[a], n, names[a]))) goto done;
    const i64 *first = data[0], *last = data[1], *sizes = data[2];
    if (alignment < 1 || (n && num_times < 1)) {
        PyErr_SetString(PyExc_ValueError, "bad alignment or num_times");
        goto done;
    }
    offsets = calloc((size_t)(n ? n : 1), sizeof(i64));
    blocks = malloc((size_t)(n ? n : 1) * sizeof(i64));  /* unplaced blocks by start */
    if (!offsets || !blocks) goto nomem;
    memcpy(blocks, data[3], (size_t)n * sizeof(i64));
    i64 live = n, dropped = 0; /* entries of ``blocks``; placed ones become -1 */
    if (n && skyline_add(&k, 0, num_times - 1, 0, -1, -1) < 0) goto nomem;
    for (i64 remaining = n; remaining;) {
        while (!k.alive[k.heap[0].segment]) heap_pop(&k);
        i64 segment = k.heap[0].segment;
        i64 low = k.start[segment], high = k.end[segment], height = k.height[segment];
        i64 lo = 0, hi = live; /* the first entry starting at or after ``low`` */
        while (lo < hi) {
            i64 mid = (lo + hi) / 2, b = blocks[mid] >= 0 ? blocks[mid] : ~blocks[mid];
            if (first[b] < low) lo = mid + 1; else hi = mid;
        }
        i64 chosen = -1, chosen_at = -1;
        for (i64 j = lo; j < live; j++) {
            i64 b = blocks[j];
            if (b < 0) {
                if (first[~b] > high) break;
                continue;
            }
            if (first[b] > high) break;
            if (last[b] > high) continue;
            if (chosen < 0) {
                chosen = b, chosen_at = j;
                continue;
            }
            i64 length = last[b] - first[b], best = last[chosen] - first[chosen];
            if (length > best || (length == best && (sizes[b] > sizes[chosen] ||
                                  (sizes[b] == sizes[chosen] && b < chosen))))
                chosen = b, chosen_at = j;
        }
        if (chosen < 0) {
            i64 before = k.previous[segment], after = k.next[segment], raised = -1;
            if (before >= 0) raised = k.height[before];
            if (after >= 0 && (raised < 0 || k.height[after] < raised)) raised = k.height[after];
            i64 pieces[1][3] = {{low, high, raised}};
            if (skyline_replace(&k, segment, pieces, 1) < 0) goto nomem;
            continue;
        }
        blocks[chosen_at] = ~chosen; /* placed: keeps its start for the bisection */
        remaining--;
        if (++dropped * 2 > live) { /* compact the placed ones away */
            i64 kept = 0;
            for (i64 j = 0; j < live; j++)
                if (blocks[j] >= 0) blocks[kept++] = blocks[j];
            live = kept, dropped = 0;
        }
        i64 offset = align_up(height, alignment);
        offsets[chosen] = offset;
        i64 pieces[3][3];
        int num = 0;
        if (first[chosen] > low) {
            pieces[num][0] = low, pieces[num][1] = first[chosen] - 1, pieces[num][2] = height;
            num++;
        }
        pieces[num][0] = first[chosen], pieces[num][1] = last[chosen];
        pieces[num][2] = offset + sizes[chosen];
        num++;
        if (last[chosen] < high) {
            pieces[num][0] = last[chosen] + 1, pieces[num][1] = high, pieces[num][2] = height;
            num++;
        }
        if (skyline_replace(&k, segment, pieces, num) < 0) goto nomem;
    }
    result = PyBytes_FromStringAndSize((const char *)offsets, (Py_ssize_t)(n * sizeof(i64)));
    goto done;
nomem:
    PyErr_NoMemory();
done:
    free(offsets);
    free(blocks);
    free(k.start), free(k.end), free(k.height), free(k.previous), free(k.next);
    free(k.alive), free(k.heap);
    for (int a = 0; a < 4; a++)
        if (arrays[a].held) PyBuffer_Release(&arrays[a].view);
    return result;
}

static PyMethodDef methods[] = {
    {"place", place, METH_VARARGS, place_doc},
    {"skyline_best_fit", skyline_best_fit, METH_VARARGS, skyline_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_placement_ext",
    "The compiled placement loops of the offset planners (see optplan.heuristics._placement).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__placement_ext(void)
{
    return PyModule_Create(&module);
}
