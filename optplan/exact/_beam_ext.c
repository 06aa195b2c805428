/* A beam search over the canonical packings of ``search`` (see ``optplan/exact/beam.py``).
 *
 * A state is a partial canonical packing: which buffers are placed, and each section's floor
 * (the highest top placed in it, lifted to the last placement's offset, as the depth-first
 * search's ``canonical`` switch does). Level d of the beam holds states with d buffers placed.
 * A child places one unplaced buffer at its lowest offset, subject to the search's rules:
 * dominance, section inference and the unplaced floor. Children are ranked by the waste they
 * force (a section's effective floor minus the sizes placed in it, each section weighted by
 * 1 / (its slack + 1), per unit of placed area). Only the POOL * width children first in
 * the waste added along their path are built and ranked so; the best ``width`` distinct
 * states, at most ``per_parent`` from any one parent, make the next level.
 *
 * A beam that empties proves nothing (it dropped states); a full level n is a packing.
 * Everything is in scaled integers; Python hands in flat int64 arrays.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_ext_common.h"

typedef int64_t i64;

typedef struct {
    i64 n, sections, alignment, capacity, words;
    const i64 *sizes, *start, *end, *nb_ptr, *nb_idx, *sec_ptr, *sec_idx, *totals;
    const i64 *floors;  /* each section's floor before any placement (0 but for a repack) */
    double *weight;  /* 1 / (slack + 1) per section */
} Problem;

/* One level of the beam: per state, its section floors, unplaced sums per section, placed
 * mask, lowest offsets of its unplaced buffers (-1 when placed) and, per section, the least
 * lowest offset of its unplaced members (-1 when it has none). */
typedef struct {
    i64 count;
    i64 *floor, *unplaced, *lowest, *least;
    uint64_t *placed;
} Level;

typedef struct {
    double score;    /* what the child is ranked by */
    double running;  /* the waste added along its path, weighted (the first ranking) */
    i64 state, buffer, offset, order;
    uint64_t hash, tie;  /* equal scores go by ``tie`` */
} Child;

static i64 round_up(i64 value, i64 alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

static int by_score(const void *a, const void *b)
{
    const Child *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? -1 : 1;
    return x->tie < y->tie ? -1 : x->tie > y->tie;
}

static int by_hash(const void *a, const void *b)
{
    const Child *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return by_score(a, b);
}

static int level_alloc(Level *level, const Problem *p, i64 width)
{
    level->count = 0;
    level->floor = malloc((size_t)(width * p->sections) * sizeof(i64));
    level->unplaced = malloc((size_t)(width * p->sections) * sizeof(i64));
    level->lowest = malloc((size_t)(width * p->n) * sizeof(i64));
    level->least = malloc((size_t)(width * p->sections) * sizeof(i64));
    level->placed = malloc((size_t)(width * p->words) * sizeof(uint64_t));
    return level->floor && level->unplaced && level->lowest && level->least && level->placed
               ? 0 : -1;
}

static void level_free(Level *level)
{
    free(level->floor);
    free(level->unplaced);
    free(level->lowest);
    free(level->least);
    free(level->placed);
}

static int is_placed(const uint64_t *placed, i64 b)
{
    return (int)(placed[b >> 6] >> (b & 63) & 1);
}

/* The least lowest offset of section s's unplaced members (-1 when there is none). */
static i64 section_least(const Problem *p, const i64 *lowest, i64 s)
{
    i64 least = -1;
    for (i64 j = p->sec_ptr[s]; j < p->sec_ptr[s + 1]; j++) {
        i64 x = p->sec_idx[j];
        if (lowest[x] >= 0 && (least < 0 || lowest[x] < least)) least = lowest[x];
    }
    return least;
}

/* Lowest offsets of the unplaced buffers of a state (-1 for placed ones). */
static void lowest_offsets(const Problem *p, const i64 *floor, const uint64_t *placed,
                           i64 *lowest)
{
    for (i64 b = 0; b < p->n; b++) {
        if (is_placed(placed, b)) {
            lowest[b] = -1;
            continue;
        }
        i64 top = 0;
        for (i64 s = p->start[b]; s < p->end[b]; s++)
            if (floor[s] > top) top = floor[s];
        lowest[b] = round_up(top, p->alignment);
    }
}

/* Per section of each state of a level: how many unplaced members hold its least lowest
 * offset, and the next larger lowest offset among them (-1: none). */
static void least_counts(const Problem *p, const i64 *lowest, const i64 *least, i64 *count,
                         i64 *second)
{
    for (i64 s = 0; s < p->sections; s++) {
        i64 holders = 0, next = -1;
        for (i64 j = p->sec_ptr[s]; j < p->sec_ptr[s + 1]; j++) {
            i64 value = lowest[p->sec_idx[j]];
            if (value < 0) continue;
            if (value == least[s]) holders++;
            else if (next < 0 || value < next) next = value;
        }
        count[s] = holders;
        second[s] = next;
    }
}

/* Scratch rows of make_child, stamped with ``tag`` (one per child): b's neighbours, and per
 * section how many holders of its least lowest offset the child moved and whether one of
 * them was raised (not b). */
typedef struct {
    i64 tag, *mark, *moved_tag, *moved;
    char *raised_one;
} Scratch;

/* Builds the child (state, b at offset) into the given rows; returns its rank score, or -1
 * when the unplaced floor rules it out. ``count`` and ``second`` are the state's rows of
 * :c:func:`least_counts`.
 *
 * The child lifts every lowest offset to at least ``offset`` and b's neighbours' to b's top;
 * every section floor is at least ``offset`` too, so a section's least lowest offset changes
 * beyond that lift only when the child moved every holder of it (b, or raised neighbours).
 * Then the next larger offset is the new least, or the top a holder was raised to, whichever
 * is lower, unless raised neighbours may hold that next offset too: only then is the section
 * scanned again. */
static double make_child(const Problem *p, const Level *from, i64 state, i64 b, i64 offset,
                         i64 *floor, i64 *unplaced, uint64_t *placed, i64 *lowest,
                         i64 *least, const i64 *count, const i64 *second, Scratch *scratch)
{
    const i64 tag = ++scratch->tag;
    i64 *mark = scratch->mark, *moved_tag = scratch->moved_tag, *moved = scratch->moved;
    char *raised_one = scratch->raised_one;
    const i64 S = p->sections, *f = from->floor + state * S, *u = from->unplaced + state * S;
    const i64 top = offset + p->sizes[b], raised = round_up(top, p->alignment);
    for (i64 s = 0; s < S; s++) {
        floor[s] = f[s] > offset ? f[s] : offset;
        unplaced[s] = u[s];
    }
    for (i64 s = p->start[b]; s < p->end[b]; s++) {
        floor[s] = top;
        unplaced[s] -= p->sizes[b];
    }
    memcpy(placed, from->placed + state * p->words, (size_t)p->words * sizeof(uint64_t));
    placed[b >> 6] |= (uint64_t)1 << (b & 63);
    for (i64 j = p->nb_ptr[b]; j < p->nb_ptr[b + 1]; j++) mark[p->nb_idx[j]] = tag;
    const i64 *low = from->lowest + state * p->n, *held = from->least + state * S;
    for (i64 x = 0; x < p->n; x++) {
        if (x == b || low[x] < 0) {
            lowest[x] = -1;
            continue;
        }
        i64 at_least = mark[x] == tag ? raised : offset;
        lowest[x] = low[x] > at_least ? low[x] : at_least;
    }
    for (i64 j = p->nb_ptr[b] - 1; j < p->nb_ptr[b + 1]; j++) {
        i64 x = j < p->nb_ptr[b] ? b : p->nb_idx[j];  /* b itself, then its neighbours */
        if (low[x] < 0 || (x != b && low[x] >= raised)) continue;
        for (i64 s = p->start[x]; s < p->end[x]; s++) {
            if (low[x] != held[s]) continue;
            if (moved_tag[s] != tag) {
                moved_tag[s] = tag;
                moved[s] = 0;
                raised_one[s] = 0;
            }
            moved[s]++;
            raised_one[s] |= x != b;
        }
    }
    double waste = 0.0, area = 0.0;
    for (i64 s = 0; s < S; s++) {
        i64 at = held[s];
        if (moved_tag[s] == tag && moved[s] == count[s]) {  /* every holder moved */
            if (second[s] >= 0 && second[s] < raised) {
                at = section_least(p, lowest, s);
            } else {
                at = second[s];
                if (raised_one[s] && (at < 0 || raised < at)) at = raised;
            }
        }
        least[s] = at < 0 ? -1 : at > offset ? at : offset;
        i64 effective = least[s] > floor[s] ? least[s] : floor[s];
        if (effective + unplaced[s] > p->capacity) return -1.0;
        i64 filled = p->totals[s] - unplaced[s];
        waste += (double)(effective - p->floors[s] - filled) * p->weight[s];
        area += (double)filled;
    }
    return waste / (area > 1.0 ? area : 1.0);
}

/* A 64-bit finaliser (splitmix64): the seeded tie-break among equal scores. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t state_hash(const Problem *p, const i64 *floor, const uint64_t *placed)
{
    uint64_t h = 1469598103934665603ULL;
    for (i64 s = 0; s < p->sections; s++) h = (h ^ (uint64_t)floor[s]) * 1099511628211ULL;
    for (i64 w = 0; w < p->words; w++) h = (h ^ placed[w]) * 1099511628211ULL;
    return h;
}

#define POOL 10 /* children fully built per kept state */

enum { BEAM_PACKED = 1, BEAM_EMPTY = 0, BEAM_STOPPED = -1, BEAM_NOMEM = -2 };

/* Runs the beam; on BEAM_PACKED fills ``offsets``. ``expanded`` counts children built,
 * ``placed`` the buffers placed in the last full level (n when it packed). */
static int run_beam(const Problem *p, i64 width, i64 per_parent, uint64_t seed, double deadline,
                    const volatile char *stop, i64 *offsets, i64 *expanded, i64 *placed)
{
    const i64 n = p->n, S = p->sections, pool = POOL * width;
    int status = BEAM_NOMEM;
    Level levels[2];
    memset(levels, 0, sizeof(levels));
    i64 *parent = malloc((size_t)(n * width) * sizeof(i64));
    i64 *chosen = malloc((size_t)(n * width) * sizeof(i64));
    i64 *at = malloc((size_t)(n * width) * sizeof(i64));
    i64 *mark = calloc((size_t)n, sizeof(i64)), *kept = calloc((size_t)width, sizeof(i64));
    i64 *moved_tag = calloc((size_t)S, sizeof(i64)), *moved = calloc((size_t)S, sizeof(i64));
    char *raised_one = calloc((size_t)S, 1), *counted = calloc((size_t)width, 1);
    i64 *holders = malloc((size_t)(width * S) * sizeof(i64));  /* least_counts per state */
    i64 *next_least = malloc((size_t)(width * S) * sizeof(i64));
    Scratch scratch = {0, mark, moved_tag, moved, raised_one};
    size_t capacity = (size_t)pool;
    Child *children = malloc(capacity * sizeof(Child));
    double *score = calloc((size_t)width, sizeof(double));  /* running scores of a level */
    Level pooled;
    memset(&pooled, 0, sizeof(pooled));
    if (!parent || !chosen || !at || !mark || !moved_tag || !moved || !raised_one || !counted ||
        !holders || !next_least || !kept || !children || !score ||
        level_alloc(&levels[0], p, width) < 0 || level_alloc(&levels[1], p, width) < 0 ||
        level_alloc(&pooled, p, pool) < 0)
        goto done;
    Level *current = &levels[0], *next = &levels[1];
    current->count = 1;
    memcpy(current->floor, p->floors, (size_t)S * sizeof(i64));
    memcpy(current->unplaced, p->totals, (size_t)S * sizeof(i64));
    memset(current->placed, 0, (size_t)p->words * sizeof(uint64_t));
    lowest_offsets(p, current->floor, current->placed, current->lowest);
    for (i64 s = 0; s < S; s++) current->least[s] = section_least(p, current->lowest, s);
    for (i64 depth = 0; depth < n; depth++) {
        if ((deadline >= 0 && now_seconds() > deadline) || (stop && *stop)) {
            status = BEAM_STOPPED;
            break;
        }
        /* Children of every state, with a first score: the waste the placement adds. */
        size_t count = 0;
        for (i64 k = 0; k < current->count; k++) {
            const i64 *f = current->floor + k * S, *u = current->unplaced + k * S;
            const i64 *low = current->lowest + k * n;
            i64 dominance = INT64_MAX;
            for (i64 b = 0; b < n; b++)
                if (low[b] >= 0 && low[b] + p->sizes[b] < dominance)
                    dominance = low[b] + p->sizes[b];
            for (i64 b = 0; b < n; b++) {
                i64 o = low[b];
                if (o < 0 || o + p->sizes[b] > p->capacity || o >= dominance) continue;
                double added = 0.0;
                int fits = 1;
                for (i64 s = 0; s < S; s++) {
                    if (f[s] >= o) continue;
                    if (o + u[s] > p->capacity) {
                        fits = 0;
                        break;
                    }
                    added += (double)(o - f[s]) * p->weight[s];
                }
                if (!fits) continue;
                if (count == capacity) {
                    Child *grown = realloc(children, 2 * capacity * sizeof(Child));
                    if (!grown) goto done;
                    children = grown;
                    capacity *= 2;
                }
                double running = score[k] + added;
                children[count] = (Child){running, running, k, b, o, (i64)count, 0,
                                          (uint64_t)count};
                count++;
            }
        }
        *expanded += (i64)count;
        qsort(children, count, sizeof(Child), by_score);
        if (count > (size_t)pool) count = (size_t)pool;
        /* Build the best ``pool`` children; rank them by the waste they force. */
        size_t built = 0;
        memset(counted, 0, (size_t)current->count);
        for (size_t c = 0; c < count; c++) {
            Child child = children[c];
            if (!counted[child.state]) {
                counted[child.state] = 1;
                least_counts(p, current->lowest + child.state * n,
                             current->least + child.state * S, holders + child.state * S,
                             next_least + child.state * S);
            }
            double forced = make_child(p, current, child.state, child.buffer, child.offset,
                                       pooled.floor + built * S, pooled.unplaced + built * S,
                                       pooled.placed + built * p->words,
                                       pooled.lowest + built * n, pooled.least + built * S,
                                       holders + child.state * S,
                                       next_least + child.state * S, &scratch);
            if (forced < 0) continue;
            child.hash = state_hash(p, pooled.floor + built * S,
                                    pooled.placed + built * p->words);
            child.order = (i64)built;  /* its rows in ``pooled`` */
            child.tie = mix(child.hash ^ seed);
            child.score = forced;
            children[built++] = child;
        }
        if (!built) {
            status = BEAM_EMPTY;
            break;
        }
        qsort(children, built, sizeof(Child), by_hash);
        size_t distinct = 0;
        for (size_t c = 0; c < built; c++)
            if (!distinct || children[distinct - 1].hash != children[c].hash)
                children[distinct++] = children[c];
        qsort(children, distinct, sizeof(Child), by_score);
        memset(kept, 0, (size_t)current->count * sizeof(i64));
        i64 taken = 0;
        for (size_t c = 0; c < distinct && taken < width; c++) {
            const Child *child = &children[c];
            if (kept[child->state] >= per_parent) continue;
            kept[child->state]++;
            i64 row = child->order;
            memcpy(next->floor + taken * S, pooled.floor + row * S, (size_t)S * sizeof(i64));
            memcpy(next->unplaced + taken * S, pooled.unplaced + row * S,
                   (size_t)S * sizeof(i64));
            memcpy(next->lowest + taken * n, pooled.lowest + row * n, (size_t)n * sizeof(i64));
            memcpy(next->least + taken * S, pooled.least + row * S, (size_t)S * sizeof(i64));
            memcpy(next->placed + taken * p->words, pooled.placed + row * p->words,
                   (size_t)p->words * sizeof(uint64_t));
            score[taken] = child->running;
            parent[depth * width + taken] = child->state;
            chosen[depth * width + taken] = child->buffer;
            at[depth * width + taken] = child->offset;
            taken++;
        }
        next->count = taken;
        *placed = depth + 1;
        Level *swap = current;
        current = next;
        next = swap;
        if (depth == n - 1) {
            i64 state = 0;
            for (i64 d = n - 1; d >= 0; d--) {
                offsets[chosen[d * width + state]] = at[d * width + state];
                state = parent[d * width + state];
            }
            status = BEAM_PACKED;
        }
    }
done:
    free(score);
    free(parent);
    free(chosen);
    free(at);
    free(mark);
    free(moved_tag);
    free(moved);
    free(raised_one);
    free(counted);
    free(holders);
    free(next_least);
    free(kept);
    free(children);
    level_free(&levels[0]);
    level_free(&levels[1]);
    level_free(&pooled);
    return status;
}

PyDoc_STRVAR(beam_doc,
"beam(n, sections, alignment, sizes, start, end, nb_ptr, nb_idx, sec_ptr, sec_idx, totals,\n"
"     capacity, width, per_parent, seed, seconds, stop, floors)\n"
"--\n\n"
"Beam search for a packing with every top <= capacity (scaled units; int64 arrays as for\n"
"``_search_ext.decide``). Keeps ``width`` states per level, at most ``per_parent`` children\n"
"of one state, equal scores in an order drawn from ``seed``; ``seconds`` the time left (negative: none); ``stop`` None or a writable\n"
"buffer whose first byte, once non-zero, stops the beam (read once per level); ``floors``\n"
"None (floors of 0) or int64 section floors to start from (skyline repacking). Returns\n"
"(code, offsets, children, depth): code 1 packed (offsets a list), 0 the beam emptied\n"
"(nothing proven), -1 out of time or stopped; depth the buffers placed in its last full\n"
"level (n when it packed).");

static PyObject *beam(PyObject *self, PyObject *args)
{
    (void)self;
    Py_ssize_t n, sections;
    long long alignment, capacity, width, per_parent, seed;
    double seconds;
    PyObject *objects[8], *stop_object, *floors_object;
    if (!PyArg_ParseTuple(args, "nnLOOOOOOOOLLLLdOO", &n, &sections, &alignment, &objects[0],
                          &objects[1], &objects[2], &objects[3], &objects[4], &objects[5],
                          &objects[6], &objects[7], &capacity, &width, &per_parent, &seed,
                          &seconds, &stop_object, &floors_object))
        return NULL;
    if (n < 1 || sections < 1 || alignment < 1 || width < 1 || per_parent < 1) {
        PyErr_SetString(PyExc_ValueError, "n, sections, alignment, width and per_parent "
                        "must be positive");
        return NULL;
    }
    Py_buffer stop_view;
    const volatile char *stop;
    if (get_stop(stop_object, &stop_view, &stop) < 0) return NULL;
    static const char *names[8] = {"sizes", "start", "end", "nb_ptr", "nb_idx", "sec_ptr",
                                   "sec_idx", "totals"};
    Py_ssize_t least[8] = {n, n, n, n + 1, 0, sections + 1, 0, sections};
    Array arrays[8], floors_array;
    memset(arrays, 0, sizeof(arrays));
    memset(&floors_array, 0, sizeof(floors_array));
    i64 *zeros = NULL;
    PyObject *result = NULL;
    double *weight = NULL;
    i64 *offsets = NULL;
    for (int k = 0; k < 8; k++)
        if (get_array(objects[k], &arrays[k], least[k], names[k]) < 0) goto done;
    Problem p = {n, sections, alignment, capacity, (n + 63) / 64,
                 arrays[0].view.buf, arrays[1].view.buf, arrays[2].view.buf,
                 arrays[3].view.buf, arrays[4].view.buf, arrays[5].view.buf,
                 arrays[6].view.buf, arrays[7].view.buf, NULL, NULL};
    if (floors_object == Py_None) {
        zeros = calloc((size_t)sections, sizeof(i64));
        if (!zeros) {
            PyErr_NoMemory();
            goto done;
        }
        p.floors = zeros;
    } else {
        if (get_array(floors_object, &floors_array, sections, "floors") < 0) goto done;
        p.floors = floors_array.view.buf;
    }
    weight = malloc((size_t)sections * sizeof(double));
    offsets = calloc((size_t)n, sizeof(i64));
    if (!weight || !offsets) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t s = 0; s < sections; s++) {
        i64 slack = capacity - p.floors[s] - p.totals[s];
        weight[s] = 1.0 / (double)((slack > 0 ? slack : 0) + 1);
    }
    p.weight = weight;
    double deadline = seconds < 0 ? -1.0 : now_seconds() + seconds;
    i64 expanded = 0, placed = 0;
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = run_beam(&p, width, per_parent, mix((uint64_t)seed + 1), deadline, stop, offsets,
                      &expanded, &placed);
    Py_END_ALLOW_THREADS
    if (status == BEAM_NOMEM) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *packing = Py_None;
    if (status == BEAM_PACKED) {
        packing = PyList_New(n);
        if (!packing) goto done;
        for (Py_ssize_t b = 0; b < n; b++) {
            PyObject *value = PyLong_FromLongLong(offsets[b]);
            if (!value) {
                Py_DECREF(packing);
                goto done;
            }
            PyList_SET_ITEM(packing, b, value);
        }
    } else {
        Py_INCREF(packing);
    }
    result = Py_BuildValue("iNLL", status, packing, (long long)expanded, (long long)placed);
done:
    free(weight);
    free(offsets);
    free(zeros);
    if (floors_array.held) PyBuffer_Release(&floors_array.view);
    for (int k = 0; k < 8; k++)
        if (arrays[k].held) PyBuffer_Release(&arrays[k].view);
    if (stop) PyBuffer_Release(&stop_view);
    return result;
}

ONE_FUNCTION_MODULE(_beam_ext,
                    "The beam search over canonical packings (see optplan.exact.beam).",
                    beam, beam_doc)
