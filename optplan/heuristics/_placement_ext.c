/* The compiled placement loop of the offset planners (``optplan.heuristics._placement``).
 *
 * Records are placed one by one in a given order; each goes where a gap rule puts it among
 * the chunks [offset, offset + size) of the already placed records that overlap it in time.
 * The rules are those of the Python reference in ``_placement.py`` (``lowest_fit``,
 * ``xla_best_fit_offset``, ``tflite_best_fit_offset``), which the tests compare this with;
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

enum { RULE_LOWEST, RULE_XLA, RULE_TFLITE };

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
"fit, 1 XLA best fit, 2 TFLite best fit) among the placed records overlapping it in time.\n"
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
    if (rule < RULE_LOWEST || rule > RULE_TFLITE || alignment < 1 || num_times < 0) {
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

static PyMethodDef methods[] = {
    {"place", place, METH_VARARGS, place_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_placement_ext",
    "The compiled placement loop of the offset planners (see optplan.heuristics._placement).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__placement_ext(void)
{
    return PyModule_Create(&module);
}
