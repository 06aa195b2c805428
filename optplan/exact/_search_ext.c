/* The compiled core of ``search``: the decision "is there a packing with arena <= C?".
 *
 * The same depth-first search over canonical packings as the reference implementation in
 * ``optplan/exact/_search_core.py`` (after MiniMalloc, Moffitt ASPLOS'23), node for node: the
 * same candidates in the same order, the same section inference, dominance, sibling pruning,
 * dynamic decomposition and round-robin preorders, so that both count the same nodes. The
 * recursion of the reference is an explicit stack of frames here, which lets a search pause
 * after every SLICE_NODES nodes and resume where it stopped (the round robin).
 *
 * Everything is in scaled integers (int64). Python hands in flat int64 arrays built by
 * ``_search_core.decide``; see ``decide_compiled`` below for the argument list.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_ext_common.h"

typedef int64_t i64;

#define PLACED ((i64)1 << 40) /* a placed buffer's lowest offset: above every capacity */

enum { KIND_NODE, KIND_PARTS };
enum { MODE_ENTER, MODE_RETURN };
enum { STEP_PAUSE, STEP_DONE, STEP_NOMEM };

typedef struct {
    i64 n, sections, alignment;
    const i64 *sizes;            /* n + 1 entries, the last 0 */
    const i64 *width;            /* lifetime length in ops */
    const i64 *start, *end;      /* section span [start, end) of each buffer */
    const i64 *nb_ptr, *nb_idx;  /* neighbours, compressed rows */
    const i64 *sec_ptr, *sec_idx;/* section members, compressed rows */
} Instance;

typedef struct {
    int canonical, section_inference, unplaced_floor, dominance, sibling_pruning,
        dynamic_decomposition, transposition;
} Params;

/* Failed nodes (the ``transposition`` switch): entries [hash, after, lo, hi, m, members[m],
 * lowest[m]] in an arena, found through an open-addressing index of (hash, arena offset + 1)
 * slots. When ``max_entries`` are stored the table is emptied (as the reference empties its
 * dict). */
typedef struct {
    uint64_t hash;
    i64 entry; /* arena offset + 1; 0: empty */
} Slot;

typedef struct {
    i64 *arena;
    i64 used, capacity;
    Slot *slots;
    i64 mask, entries, max_entries, min_nodes;
} Table;

/* One frame of the explicit recursion. A NODE frame places one more buffer of its part
 * (the reference's ``_node``); a PARTS frame solves independent parts one after another
 * (``_solve_part`` over the result of ``_split``). Arrays live in the search's pool; frames
 * hold offsets into it, because the pool may move when it grows. */
typedef struct {
    int kind;
    i64 mark;          /* pool top when the frame was pushed: popped back to it */
    /* NODE */
    i64 part, last_offset, last_rank;
    i64 nodes_before; /* the search's node count when the node was entered */
    uint64_t hash;    /* of its state (the same when it fails: children are undone) */
    i64 keys, num_keys, next_key;
    i64 candidate_mark; /* pool top after the keys */
    i64 b, place, lifted, num_lifted, saved_floors;
    int lonely;        /* b overlaps no unplaced buffer */
    int decomposed;    /* the cut counts of b's sections were lowered */
    i64 sequence_mark; /* the length of the placement sequence before b */
    /* PARTS */
    i64 parts, num_parts, next_part;
} Frame;

typedef struct {
    const Instance *in;
    Params p;
    i64 capacity;
    char preorder[3];
    i64 *lowest, *total, *floor, *cuts, *solution;
    i64 *witness;      /* per section: where its member scan last succeeded */
    i64 *failures;     /* NULL, or per section: the checks that failed there (added to) */
    i64 *sequence, length;   /* NULL, or the buffers placed on the current path, in order */
    i64 *deepest, deepest_length; /* the longest sequence that passed the section check */
    i64 nodes;
    int counted;       /* the current node was counted before a pause */
    Frame *frames;
    i64 num_frames, frames_cap;
    i64 *pool;
    i64 pool_top, pool_cap;
    int mode, ret;
    int started;
    Table table;
} Search;

/* -- small helpers ---------------------------------------------------------------------- */
static i64 pool_alloc(Search *s, i64 count)
{
    if (s->pool_top + count > s->pool_cap) {
        i64 cap = s->pool_cap ? s->pool_cap : 1024;
        while (cap < s->pool_top + count) cap *= 2;
        i64 *grown = realloc(s->pool, (size_t)cap * sizeof(i64));
        if (!grown) return -1;
        s->pool = grown;
        s->pool_cap = cap;
    }
    i64 at = s->pool_top;
    s->pool_top += count;
    return at;
}

static Frame *push_frame(Search *s, int kind)
{
    if (s->num_frames == s->frames_cap) {
        i64 cap = s->frames_cap ? 2 * s->frames_cap : 64;
        Frame *grown = realloc(s->frames, (size_t)cap * sizeof(Frame));
        if (!grown) return NULL;
        s->frames = grown;
        s->frames_cap = cap;
    }
    Frame *f = &s->frames[s->num_frames++];
    memset(f, 0, sizeof(*f));
    f->kind = kind;
    f->mark = s->pool_top;
    return f;
}

static void pop_frame(Search *s, int ret)
{
    s->pool_top = s->frames[--s->num_frames].mark;
    s->ret = ret;
    s->mode = MODE_RETURN;
}

/* Move the least key of keys[0, count) to keys[0]. A node usually descends into its first
 * candidates, so its candidates are ordered lazily, one selection at a time. */
static void select_least(i64 *keys, i64 count)
{
    i64 best = 0;
    for (i64 j = 1; j < count; j++)
        if (keys[j] < keys[best]) best = j;
    i64 least = keys[best];
    keys[best] = keys[0];
    keys[0] = least;
}

/* A part in the pool: [section_lo, section_hi, m, members[m], ranks[m], order[m]]. */
#define PART_LO(pool, at) ((pool)[(at)])
#define PART_HI(pool, at) ((pool)[(at) + 1])
#define PART_M(pool, at) ((pool)[(at) + 2])
#define PART_MEMBERS(pool, at) ((pool) + (at) + 3)
#define PART_RANKS(pool, at) ((pool) + (at) + 3 + PART_M(pool, at))
#define PART_ORDER(pool, at) ((pool) + (at) + 3 + 2 * PART_M(pool, at))

typedef struct {
    __int128 key[3];
    i64 buffer;
} RankKey;

static int compare_rank_keys(const void *a, const void *b)
{
    const RankKey *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x->key[k] != y->key[k]) return x->key[k] < y->key[k] ? -1 : 1;
    return (x->buffer > y->buffer) - (x->buffer < y->buffer);
}

/* The static preorder of a part (the reference's ``_solve_part``): each letter is a key,
 * largest first, ties to the lower buffer index. Fills ranks and order. */
static int rank_part(Search *s, i64 at)
{
    const Instance *in = s->in;
    i64 m = PART_M(s->pool, at);
    RankKey *keys = malloc((size_t)(m ? m : 1) * sizeof(RankKey));
    if (!keys) return -1;
    const i64 *members = PART_MEMBERS(s->pool, at);
    for (i64 j = 0; j < m; j++) {
        i64 b = members[j];
        i64 most = 0;
        for (i64 k = in->start[b]; k < in->end[b]; k++)
            if (s->total[k] > most || k == in->start[b]) most = s->total[k];
        for (int letter = 0; letter < 3; letter++) {
            __int128 value;
            switch (s->preorder[letter]) {
            case 'W': value = in->width[b]; break;
            case 'A': value = (__int128)in->width[b] * in->sizes[b]; break;
            default: value = most; break;
            }
            keys[j].key[letter] = -value;
        }
        keys[j].buffer = b;
    }
    qsort(keys, (size_t)m, sizeof(RankKey), compare_rank_keys);
    i64 *ranks = PART_RANKS(s->pool, at), *order = PART_ORDER(s->pool, at);
    for (i64 r = 0; r < m; r++) {
        order[r] = keys[r].buffer;
        /* members are listed in increasing index order: find b's position by bisection */
        i64 lo = 0, hi = m;
        while (lo < hi) {
            i64 mid = (lo + hi) / 2;
            if (members[mid] < keys[r].buffer) lo = mid + 1; else hi = mid;
        }
        ranks[lo] = r;
    }
    free(keys);
    return 0;
}

/* The independent parts of the unplaced buffers of ``members`` between consecutive cut
 * points (the reference's ``_split``). ``cutpoints`` (count ``num_cuts``) may be NULL: then
 * every boundary no unplaced buffer crosses. Returns the pool offset of an array
 * [num_parts, part offsets...], or -1 when out of memory. Members keep increasing order. */
static i64 split(Search *s, const i64 *members_in, i64 m, i64 section_lo, i64 section_hi,
                 const i64 *cutpoints_in, i64 num_cuts)
{
    const Instance *in = s->in;
    i64 *members = malloc((size_t)(m ? m : 1) * sizeof(i64));
    i64 *bounds = malloc((size_t)(section_hi - section_lo + 2) * sizeof(i64));
    if (!members || !bounds) {
        free(members);
        free(bounds);
        return -1;
    }
    memcpy(members, members_in, (size_t)m * sizeof(i64));
    i64 num_bounds = 0;
    bounds[num_bounds++] = section_lo;
    if (cutpoints_in) {
        for (i64 c = 0; c < num_cuts; c++) bounds[num_bounds++] = cutpoints_in[c];
    } else {
        for (i64 k = section_lo; k < section_hi - 1; k++)
            if (s->cuts[k] == 0) bounds[num_bounds++] = k + 1;
    }
    bounds[num_bounds++] = section_hi;
    i64 intervals = num_bounds - 1;
    i64 table = pool_alloc(s, 1 + intervals);
    if (table < 0) goto fail;
    i64 num_parts = 0;
    for (i64 t = 0; t < intervals; t++) {
        i64 lo = bounds[t], hi = bounds[t + 1], count = 0;
        for (i64 j = 0; j < m; j++) {
            i64 u = members[j];
            if (s->lowest[u] < PLACED && in->start[u] < hi && lo < in->end[u]) count++;
        }
        if (!count) continue;
        i64 at = pool_alloc(s, 3 + 3 * count);
        if (at < 0) goto fail;
        i64 *pool = s->pool;
        PART_LO(pool, at) = lo;
        PART_HI(pool, at) = hi;
        PART_M(pool, at) = count;
        i64 *out = PART_MEMBERS(pool, at), c = 0;
        for (i64 j = 0; j < m; j++) {
            i64 u = members[j];
            if (s->lowest[u] < PLACED && in->start[u] < hi && lo < in->end[u]) out[c++] = u;
        }
        if (rank_part(s, at) < 0) goto fail;
        s->pool[table + 1 + num_parts++] = at;
    }
    s->pool[table] = num_parts;
    free(members);
    free(bounds);
    return table;
fail:
    free(members);
    free(bounds);
    return -1;
}

/* Section inference over sections [lo, hi) with the current placement at ``offset``; a
 * failure is counted in the first section that fails (``failures``). */
static int sections_fit(Search *s, i64 lo, i64 hi, i64 offset)
{
    const Instance *in = s->in;
    const Params *p = &s->p;
    i64 capacity = s->capacity;
    if (!p->section_inference) return 1;
    if (p->unplaced_floor) {
        /* max(min(least lowest offset, C), offset) + total <= C, decided without the whole
         * minimum: a section with nothing unplaced passes; otherwise one member at or below
         * C - total suffices */
        for (i64 k = lo; k < hi; k++) {
            if (!s->total[k]) continue;
            i64 threshold = capacity - s->total[k];
            if (threshold < 0 || (p->canonical && offset > threshold)) goto failed;
            /* start from the member that passed last time (a hint only: any member at or
             * below the threshold decides the same) and go round the section's list */
            i64 first = in->sec_ptr[k], last = in->sec_ptr[k + 1], w = s->witness[k], j = w;
            while (j < last && s->lowest[in->sec_idx[j]] > threshold) j++;
            if (j == last) {
                j = first;
                while (j < w && s->lowest[in->sec_idx[j]] > threshold) j++;
                if (j == w) goto failed;
            }
            s->witness[k] = j;
            continue;
        failed:
            if (s->failures) s->failures[k]++;
            return 0;
        }
        return 1;
    }
    for (i64 k = lo; k < hi; k++) {
        i64 floor = s->floor[k];
        if (p->canonical && floor < offset) floor = offset;
        if (s->total[k] > 0 && floor + s->total[k] > capacity) {
            if (s->failures) s->failures[k]++;
            return 0;
        }
    }
    return 1;
}

/* -- the table of failed nodes ---------------------------------------------------------- */
/* A hash of part ``at``'s state from the sum over its members b of lowest[b] + 1 times a
 * per-buffer odd constant (independent terms: the loop pipelines), mixed at the end. */
static uint64_t state_term(i64 b, i64 lowest)
{
    return (uint64_t)(lowest + 1) * (((uint64_t)b * 0x9E3779B97F4A7C15ULL) | 1);
}

static uint64_t state_hash(const Search *s, i64 at, uint64_t sum)
{
    uint64_t h = sum ^ ((uint64_t)PART_LO(s->pool, at) * 0xBF58476D1CE4E5B9ULL) ^
                 ((uint64_t)PART_HI(s->pool, at) * 0x94D049BB133111EBULL);
    h ^= h >> 31;
    h *= 0xD6E8FEB86659FD93ULL;
    return h ^ (h >> 32);
}

/* The arena offset of the entry of the current state of part ``at``, or -1. */
static i64 table_find(const Search *s, i64 at, uint64_t hash)
{
    const Table *t = &s->table;
    if (!t->slots) return -1;
    const i64 *members = PART_MEMBERS(s->pool, at);
    i64 m = PART_M(s->pool, at);
    for (i64 slot = (i64)(hash & (uint64_t)t->mask);; slot = (slot + 1) & t->mask) {
        i64 entry = t->slots[slot].entry - 1;
        if (entry < 0) return -1;
        if (t->slots[slot].hash != hash) continue;
        const i64 *e = t->arena + entry;
        if (e[2] != PART_LO(s->pool, at) || e[3] != PART_HI(s->pool, at) || e[4] != m)
            continue;
        const i64 *stored = e + 5;
        i64 j = 0;
        while (j < m && stored[j] == members[j] && stored[m + j] == s->lowest[members[j]]) j++;
        if (j == m) return entry;
    }
}

/* Remember that the current state of part ``at`` failed with candidates after ``after``. */
static int table_store(Search *s, i64 at, uint64_t hash, i64 after)
{
    Table *t = &s->table;
    i64 entry = table_find(s, at, hash);
    if (entry >= 0) {
        if (after < t->arena[entry + 1]) t->arena[entry + 1] = after;
        return 0;
    }
    if (!t->slots) {
        i64 slots = 1;
        while (slots < 2 * t->max_entries) slots *= 2;
        t->slots = calloc((size_t)slots, sizeof(Slot));
        if (!t->slots) return -1;
        t->mask = slots - 1;
    }
    if (t->entries >= t->max_entries) {  /* full: start afresh */
        memset(t->slots, 0, (size_t)(t->mask + 1) * sizeof(Slot));
        t->entries = 0;
        t->used = 0;
    }
    i64 m = PART_M(s->pool, at), words = 5 + 2 * m;
    if (t->used + words > t->capacity) {
        i64 capacity = t->capacity ? t->capacity : 4096;
        while (capacity < t->used + words) capacity *= 2;
        i64 *grown = realloc(t->arena, (size_t)capacity * sizeof(i64));
        if (!grown) return -1;
        t->arena = grown;
        t->capacity = capacity;
    }
    i64 *e = t->arena + t->used;
    const i64 *members = PART_MEMBERS(s->pool, at);
    e[0] = (i64)hash;
    e[1] = after;
    e[2] = PART_LO(s->pool, at);
    e[3] = PART_HI(s->pool, at);
    e[4] = m;
    for (i64 j = 0; j < m; j++) {
        e[5 + j] = members[j];
        e[5 + m + j] = s->lowest[members[j]];
    }
    i64 slot = (i64)(hash & (uint64_t)t->mask);
    while (t->slots[slot].entry) slot = (slot + 1) & t->mask;
    t->slots[slot] = (Slot){hash, t->used + 1};
    t->used += words;
    t->entries++;
    return 0;
}

static i64 after_key(const Search *s, const Frame *f)
{
    return s->p.canonical ? f->last_offset * (s->in->n + 1) + f->last_rank : 0;
}

/* Pop NODE frame f as failed; remember it when its subtree was big enough. */
static int fail_node(Search *s, Frame *f)
{
    if (s->p.transposition && s->nodes - f->nodes_before >= s->table.min_nodes &&
        table_store(s, f->part, f->hash, after_key(s, f)) < 0)
        return -1;
    pop_frame(s, 0);
    return 0;
}

/* Undo the placement of frame f's current candidate. */
static void undo_candidate(Search *s, Frame *f)
{
    s->length = f->sequence_mark;
    const Instance *in = s->in;
    i64 b = f->b, lo = in->start[b], hi = in->end[b], size = in->sizes[b];
    if (f->decomposed) {
        for (i64 k = lo; k < hi - 1; k++) s->cuts[k]++;
        f->decomposed = 0;
    }
    for (i64 k = lo; k < hi; k++) s->total[k] += size;
    if (!s->p.unplaced_floor) {
        const i64 *saved = s->pool + f->saved_floors;
        for (i64 k = lo; k < hi; k++) s->floor[k] = saved[k - lo];
    }
    const i64 *lifted = s->pool + f->lifted;
    for (i64 j = 0; j < f->num_lifted; j++) s->lowest[lifted[2 * j]] = lifted[2 * j + 1];
    s->lowest[b] = f->place;
    s->pool_top = f->candidate_mark;
}

static int push_node(Search *s, i64 part, i64 last_offset, i64 last_rank)
{
    Frame *f = push_frame(s, KIND_NODE);
    if (!f) return -1;
    f->part = part;
    f->last_offset = last_offset;
    f->last_rank = last_rank;
    s->mode = MODE_ENTER;
    return 0;
}

static int push_parts(Search *s, i64 table)
{
    /* the table lies below the frame's mark: the parent's undo frees it */
    Frame *f = push_frame(s, KIND_PARTS);
    if (!f) return -1;
    f->parts = table;
    f->num_parts = s->pool[table];
    f->next_part = 0;
    s->mode = MODE_ENTER;
    return 0;
}

/* Enter a NODE frame: count it, gather and sort its candidates. Returns 1 when it popped
 * (answered at once), 0 when its candidates are ready, -1 on no memory. */
static int enter_node(Search *s, Frame *f)
{
    const Instance *in = s->in;
    const Params *p = &s->p;
    i64 capacity = s->capacity, width = in->n + 1;
    i64 at = f->part;
    i64 m = PART_M(s->pool, at), lo = PART_LO(s->pool, at), hi = PART_HI(s->pool, at);
    i64 keys = pool_alloc(s, m);  /* (popping the frame frees it) */
    if (keys < 0) return -1;
    const i64 *members = PART_MEMBERS(s->pool, at), *ranks = PART_RANKS(s->pool, at);
    i64 *out = s->pool + keys, count = 0, limit = capacity + 1;
    uint64_t sum = 0;
    for (i64 j = 0; j < m; j++) {  /* one pass: the unplaced members' keys, hash, dominance */
        i64 b = members[j], place = s->lowest[b];
        sum += state_term(b, place);
        if (place >= PLACED) continue;
        if (p->dominance && place + in->sizes[b] < limit) limit = place + in->sizes[b];
        out[count++] = place * width + ranks[j];
    }
    if (!count) {  /* every member placed */
        pop_frame(s, 1);
        return 1;
    }
    if (p->transposition) {
        f->hash = state_hash(s, at, sum);
        i64 entry = table_find(s, at, f->hash);
        if (entry >= 0 && after_key(s, f) >= s->table.arena[entry + 1]) {
            pop_frame(s, 0); /* the same state failed with candidates after a lower key */
            return 1;
        }
        f->nodes_before = s->nodes;
    }
    if (p->section_inference && p->canonical) {
        i64 most = s->total[lo];
        for (i64 k = lo + 1; k < hi; k++)
            if (s->total[k] > most) most = s->total[k];
        if (capacity + 1 - most < limit) limit = capacity + 1 - most;
    }
    i64 ceiling = limit * width, last = f->last_offset * width + f->last_rank, kept = 0;
    for (i64 j = 0; j < count; j++)
        if (out[j] < ceiling && (!p->canonical || out[j] > last)) out[kept++] = out[j];
    if (!kept) return fail_node(s, f) < 0 ? -1 : 1;
    f->keys = keys;
    f->num_keys = kept;
    f->next_key = 0;
    f->candidate_mark = s->pool_top;
    return 0;
}

/* Try the next candidates of NODE frame f until one opens a child frame (returns 0), the
 * frame pops (returns 0), or memory runs out (-1). */
static int next_candidate(Search *s, Frame *f)
{
    const Instance *in = s->in;
    const Params *p = &s->p;
    i64 capacity = s->capacity, width = in->n + 1;
    while (f->next_key < f->num_keys) {
        i64 *keys = s->pool + f->keys + f->next_key;
        select_least(keys, f->num_keys - f->next_key);
        i64 key = keys[0];
        f->next_key++;
        i64 place = key / width, rank = key % width;
        i64 at = f->part;
        i64 b = PART_ORDER(s->pool, at)[rank];
        i64 size = in->sizes[b], top = place + size;
        if (top > capacity) continue;
        s->solution[b] = place;
        s->lowest[b] = PLACED;
        f->sequence_mark = s->length;
        if (s->sequence) s->sequence[s->length++] = b;
        i64 lifted_to = in->alignment == 1 ? top
                        : (top + in->alignment - 1) / in->alignment * in->alignment;
        i64 degree = in->nb_ptr[b + 1] - in->nb_ptr[b];
        i64 lifted = pool_alloc(s, 2 * degree + (p->unplaced_floor ? 0 : in->end[b] - in->start[b]));
        if (lifted < 0) return -1;
        f->b = b;
        f->place = place;
        f->lifted = lifted;
        f->decomposed = 0;
        i64 *record = s->pool + lifted, num_lifted = 0;
        int lonely = 1;
        i64 lo = in->start[b], hi = in->end[b], check_lo = lo, check_hi = hi;
        for (i64 j = in->nb_ptr[b]; j < in->nb_ptr[b + 1]; j++) {
            i64 u = in->nb_idx[j], value = s->lowest[u];
            if (value < PLACED) lonely = 0;
            if (value < lifted_to) {
                record[2 * num_lifted] = u;
                record[2 * num_lifted + 1] = value;
                num_lifted++;
                s->lowest[u] = lifted_to;
                if (in->start[u] < check_lo) check_lo = in->start[u];
                if (in->end[u] > check_hi) check_hi = in->end[u];
            }
        }
        f->num_lifted = num_lifted;
        f->lonely = lonely;
        if (!p->unplaced_floor) {
            f->saved_floors = lifted + 2 * degree;
            i64 *saved = s->pool + f->saved_floors;
            for (i64 k = lo; k < hi; k++) {
                saved[k - lo] = s->floor[k];
                s->floor[k] = top;
            }
        }
        for (i64 k = lo; k < hi; k++) s->total[k] -= size;
        if (sections_fit(s, check_lo, check_hi, place)) {
            if (s->length > s->deepest_length) {  /* (length stays 0 without a sequence) */
                s->deepest_length = s->length;
                memcpy(s->deepest, s->sequence, (size_t)s->length * sizeof(i64));
            }
            if (p->dynamic_decomposition) {
                /* the reference's ``_decompose``: split where no unplaced buffer crosses a
                 * section boundary any more */
                i64 part_lo = PART_LO(s->pool, at), part_hi = PART_HI(s->pool, at);
                i64 cutpoints = pool_alloc(s, hi - lo > 0 ? hi - lo : 1), num_cuts = 0;
                if (cutpoints < 0) return -1;
                for (i64 k = lo; k < hi - 1; k++) {
                    s->cuts[k]--;
                    if (s->cuts[k] == 0 && part_lo <= k && k < part_hi - 1)
                        s->pool[cutpoints + num_cuts++] = k + 1;
                }
                f->decomposed = 1;
                if (num_cuts) {
                    i64 table = split(s, PART_MEMBERS(s->pool, at), PART_M(s->pool, at),
                                      part_lo, part_hi, s->pool + cutpoints, num_cuts);
                    if (table < 0) return -1;
                    return push_parts(s, table);
                }
            }
            return push_node(s, at, place, rank);
        }
        undo_candidate(s, f);
        if (p->sibling_pruning && lonely) return fail_node(s, f);
    }
    return fail_node(s, f);
}

/* Start part number ``next_part`` of PARTS frame f, or pop with True after the last. */
static int next_part(Search *s, Frame *f)
{
    if (f->next_part == f->num_parts) {
        pop_frame(s, 1);
        return 0;
    }
    i64 at = s->pool[f->parts + 1 + f->next_part++];
    return push_node(s, at, 0, -1);
}

/* Run the search until it pauses (after a multiple of slice nodes) or answers. */
static int step(Search *s, i64 slice)
{
    const Instance *in = s->in;
    if (!s->started) {
        s->started = 1;
        if (!sections_fit(s, 0, in->sections, 0)) {
            s->ret = 0;
            return STEP_DONE;
        }
        i64 all = pool_alloc(s, in->n);
        if (all < 0) return STEP_NOMEM;
        for (i64 b = 0; b < in->n; b++) s->pool[all + b] = b;
        i64 table;
        if (s->p.dynamic_decomposition) {
            table = split(s, s->pool + all, in->n, 0, in->sections, NULL, 0);
        } else {
            table = pool_alloc(s, 2);
            i64 at = pool_alloc(s, 3 + 3 * in->n);
            if (table < 0 || at < 0) return STEP_NOMEM;
            s->pool[table] = 1;
            s->pool[table + 1] = at;
            PART_LO(s->pool, at) = 0;
            PART_HI(s->pool, at) = in->sections;
            PART_M(s->pool, at) = in->n;
            memcpy(PART_MEMBERS(s->pool, at), s->pool + all, (size_t)in->n * sizeof(i64));
            if (rank_part(s, at) < 0) return STEP_NOMEM;
        }
        if (table < 0 || push_parts(s, table) < 0) return STEP_NOMEM;
    }
    for (;;) {
        if (s->num_frames == 0) return STEP_DONE;
        Frame *f = &s->frames[s->num_frames - 1];
        int status = 0;
        if (f->kind == KIND_PARTS) {
            if (s->mode == MODE_RETURN && !s->ret) {
                pop_frame(s, 0);
                continue;
            }
            status = next_part(s, f);
        } else if (s->mode == MODE_ENTER) {
            if (!s->counted) {
                s->nodes++;
                if (s->nodes % slice == 0) {
                    s->counted = 1;
                    return STEP_PAUSE;
                }
            }
            s->counted = 0;
            status = enter_node(s, f);
            if (status == 0) status = next_candidate(s, &s->frames[s->num_frames - 1]);
            else if (status == 1) status = 0;
        } else {
            int found = s->ret;
            i64 length = s->length;
            undo_candidate(s, f);
            if (found) {
                s->length = length;  /* a packed part's placements stay in the sequence */
                pop_frame(s, 1);
                continue;
            }
            if (s->p.sibling_pruning && f->lonely) {
                if (fail_node(s, f) < 0) return STEP_NOMEM;
                continue;
            }
            status = next_candidate(s, f);
        }
        if (status < 0) return STEP_NOMEM;
    }
}

static void free_search(Search *s)
{
    free(s->lowest);
    free(s->total);
    free(s->floor);
    free(s->cuts);
    free(s->witness);
    free(s->solution);
    free(s->sequence);
    free(s->deepest);
    free(s->frames);
    free(s->pool);
    free(s->table.arena);
    free(s->table.slots);
}

static int init_search(Search *s, const Instance *in, const Params *p, i64 capacity,
                       const char *preorder, const i64 *totals, const i64 *cuts,
                       i64 table_entries, i64 table_min_nodes, i64 *failures, int track)
{
    memset(s, 0, sizeof(*s));
    s->failures = failures;
    s->table.max_entries = table_entries;
    s->table.min_nodes = table_min_nodes;
    s->in = in;
    s->p = *p;
    s->capacity = capacity;
    memcpy(s->preorder, preorder, 3);
    i64 n = in->n, sections = in->sections;
    s->lowest = calloc((size_t)n + 1, sizeof(i64));
    s->total = malloc((size_t)(sections ? sections : 1) * sizeof(i64));
    s->floor = calloc((size_t)(sections ? sections : 1), sizeof(i64));
    s->cuts = malloc((size_t)(sections ? sections : 1) * sizeof(i64));
    s->solution = calloc((size_t)n + 1, sizeof(i64));
    s->witness = malloc((size_t)(sections ? sections : 1) * sizeof(i64));
    if (track) {
        s->sequence = malloc((size_t)(n + 1) * sizeof(i64));
        s->deepest = malloc((size_t)(n + 1) * sizeof(i64));
        if (!s->sequence || !s->deepest) return -1;
    }
    if (!s->lowest || !s->total || !s->floor || !s->cuts || !s->solution || !s->witness)
        return -1;
    for (i64 k = 0; k < sections; k++) s->witness[k] = in->sec_ptr[k];
    s->lowest[n] = PLACED;
    memcpy(s->total, totals, (size_t)sections * sizeof(i64));
    if (sections > 1) memcpy(s->cuts, cuts, (size_t)(sections - 1) * sizeof(i64));
    s->mode = MODE_ENTER;
    return 0;
}

PyDoc_STRVAR(decide_doc,
"decide(n, sections, alignment, sizes, width, start, end, nb_ptr, nb_idx, sec_ptr, sec_idx,\n"
"       totals, cuts, capacity, switches, preorders, slice_nodes, seconds, stop,\n"
"       table_entries, table_min_nodes, failures, deepest)\n"
"--\n\n"
"Search for a packing with every top <= capacity (scaled units). Arrays are int64;\n"
"``switches`` is (canonical, section_inference, unplaced_floor, dominance,\n"
"sibling_pruning, dynamic_decomposition, transposition); ``preorders`` a tuple of 3-letter strings run\n"
"round-robin ``slice_nodes`` nodes at a time; ``seconds`` the time left (negative: none);\n"
"``stop`` None or a writable buffer whose first byte, once non-zero, stops the search (it\n"
"is read between slices, so another thread may set it). Returns (code, offsets, nodes):\n"
"code 1 packed (offsets a list), 0 no packing, -1 out of time or stopped. A search keeps\n"
"at most ``table_entries`` failed nodes, those with >= ``table_min_nodes`` nodes below.\n"
"``failures`` is None or a writable int64 array of >= ``sections`` values: each failed\n"
"section check adds one at the first section that failed (every preorder's search).\n"
"``deepest`` is None or a writable int64 array of >= n + 1 values: on return it holds the\n"
"length and then the buffers, in the order placed, of the longest sequence of placements\n"
"that passed the section check on one path of the first preorder's search.");

static PyObject *decide(PyObject *self, PyObject *args)
{
    (void)self;
    Py_ssize_t n, sections;
    long long alignment, capacity, slice, table_entries, table_min_nodes;
    double seconds;
    PyObject *objects[10], *switches, *preorders, *stop_object, *failures_object,
             *deepest_object;
    if (!PyArg_ParseTuple(args, "nnLOOOOOOOOOOLOOLdOLLOO", &n, &sections, &alignment,
                          &objects[0], &objects[1], &objects[2], &objects[3], &objects[4],
                          &objects[5], &objects[6], &objects[7], &objects[8], &objects[9],
                          &capacity, &switches, &preorders, &slice, &seconds, &stop_object,
                          &table_entries, &table_min_nodes, &failures_object,
                          &deepest_object))
        return NULL;
    Py_buffer stop_view;
    const volatile char *stop;
    if (get_stop(stop_object, &stop_view, &stop) < 0) return NULL;
    Array failures = {0}, deepest = {0};
    if (get_output(failures_object, &failures, sections, "failures") < 0 ||
        get_output(deepest_object, &deepest, n + 1, "deepest") < 0) {
        if (failures.held) PyBuffer_Release(&failures.view);
        if (stop) PyBuffer_Release(&stop_view);
        return NULL;
    }
    static const char *names[10] = {"sizes", "width", "start", "end", "nb_ptr", "nb_idx",
                                    "sec_ptr", "sec_idx", "totals", "cuts"};
    Py_ssize_t least[10] = {n + 1, n, n, n, n + 1, 0, sections + 1, 0, sections, 0};
    Array arrays[10];
    memset(arrays, 0, sizeof(arrays));
    PyObject *result = NULL;
    Search *searches = NULL;
    int num_searches = 0;
    for (int k = 0; k < 10; k++)
        if (get_array(objects[k], &arrays[k], least[k], names[k]) < 0) goto done;
    Params p;
    if (!PyArg_ParseTuple(switches, "ppppppp", &p.canonical, &p.section_inference,
                          &p.unplaced_floor, &p.dominance, &p.sibling_pruning,
                          &p.dynamic_decomposition, &p.transposition))
        goto done;
    if (table_entries < 1 || slice < 1 || alignment < 1 || !PyTuple_Check(preorders) || !PyTuple_GET_SIZE(preorders)) {
        PyErr_SetString(PyExc_ValueError, "bad slice, alignment or preorders");
        goto done;
    }
    Instance in = {n, sections, alignment,
                   arrays[0].view.buf, arrays[1].view.buf, arrays[2].view.buf,
                   arrays[3].view.buf, arrays[4].view.buf, arrays[5].view.buf,
                   arrays[6].view.buf, arrays[7].view.buf};
    num_searches = (int)PyTuple_GET_SIZE(preorders);
    searches = calloc((size_t)num_searches, sizeof(Search));
    if (!searches) {
        PyErr_NoMemory();
        goto done;
    }
    for (int k = 0; k < num_searches; k++) {
        const char *letters = PyUnicode_AsUTF8(PyTuple_GET_ITEM(preorders, k));
        if (!letters) goto done;
        if (strlen(letters) != 3) {
            PyErr_SetString(PyExc_ValueError, "a preorder has 3 letters of W, A, T");
            goto done;
        }
        if (init_search(&searches[k], &in, &p, capacity, letters, arrays[8].view.buf,
                        arrays[9].view.buf, table_entries, table_min_nodes,
                        failures.held ? failures.view.buf : NULL,
                        k == 0 && deepest.held) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    }
    double deadline = seconds < 0 ? -1.0 : now_seconds() + seconds;
    int answer = -2;
    const Search *winner = NULL;
    while (answer == -2) {
        for (int k = 0; k < num_searches && answer == -2; k++) {
            int status;
            Py_BEGIN_ALLOW_THREADS
            status = step(&searches[k], slice);
            Py_END_ALLOW_THREADS
            if (status == STEP_NOMEM) {
                PyErr_NoMemory();
                goto done;
            }
            if (status == STEP_DONE) {
                answer = searches[k].ret;
                winner = &searches[k];
            } else {  /* paused at a slice boundary: the reference checks its deadline here */
                if ((deadline >= 0 && now_seconds() > deadline) || (stop && *stop))
                    answer = -1;
                else if (PyErr_CheckSignals() < 0) goto done;
            }
        }
    }
    long long nodes = 0;
    for (int k = 0; k < num_searches; k++) nodes += searches[k].nodes;
    if (deepest.held) {
        i64 *out = deepest.view.buf;
        out[0] = searches[0].deepest_length;
        memcpy(out + 1, searches[0].deepest, (size_t)searches[0].deepest_length * sizeof(i64));
    }
    PyObject *offsets;
    if (answer == 1) {
        offsets = PyList_New(n);
        if (!offsets) goto done;
        for (Py_ssize_t b = 0; b < n; b++) {
            PyObject *value = PyLong_FromLongLong(winner->solution[b]);
            if (!value) {
                Py_DECREF(offsets);
                goto done;
            }
            PyList_SET_ITEM(offsets, b, value);
        }
    } else {
        offsets = Py_NewRef(Py_None);
    }
    result = Py_BuildValue("iNL", answer, offsets, nodes);
done:
    if (searches) {
        for (int k = 0; k < num_searches; k++) free_search(&searches[k]);
        free(searches);
    }
    for (int k = 0; k < 10; k++)
        if (arrays[k].held) PyBuffer_Release(&arrays[k].view);
    if (stop) PyBuffer_Release(&stop_view);
    if (failures.held) PyBuffer_Release(&failures.view);
    if (deepest.held) PyBuffer_Release(&deepest.view);
    return result;
}

ONE_FUNCTION_MODULE(_search_ext,
                    "The compiled core of the offsets search (see optplan.exact._search_core).",
                    decide, decide_doc)
