/* Free-space bitmap and placement rule of the datafile store (see space.h). */
#include "backend/dfstore/space.h"

#include <errno.h>
#include <stdlib.h>

_Static_assert(64 % DF_RUN_BLOCKS == 0, "a bitmap word holds whole runs");

/* The bits of one run, at the bottom of a word. */
#define RUN_MASK (~0ull >> (64 - DF_RUN_BLOCKS))

static uint64_t bit(uint64_t b) { return 1ull << (b % 64); }

int df_space_init(struct df_space *sp, uint64_t total_blocks)
{
    /* one word more: never a zero-size allocation, whose NULL means nothing */
    size_t words = (total_blocks + 63) / 64 + 1;

    *sp = (struct df_space){ .total_blocks = total_blocks };
    sp->bitmap = calloc(words, sizeof(*sp->bitmap));
    sp->reserved = calloc(words, sizeof(*sp->reserved));
    sp->handed = calloc(words, sizeof(*sp->handed));
    if (!sp->bitmap || !sp->reserved || !sp->handed) {
        df_space_fini(sp);
        return -ENOMEM;
    }
    return 0;
}

void df_space_fini(struct df_space *sp)
{
    free(sp->bitmap);
    free(sp->reserved);
    free(sp->handed);
    sp->bitmap = sp->reserved = sp->handed = NULL;
}

int df_space_test(const struct df_space *sp, uint64_t b)
{
    return (sp->bitmap[b / 64] & bit(b)) != 0;
}

int df_space_reserved(const struct df_space *sp, uint64_t b)
{
    return (sp->reserved[b / 64] & bit(b)) != 0;
}

void df_space_set(struct df_space *sp, uint64_t b)
{
    sp->bitmap[b / 64] |= bit(b);
    sp->used_blocks++;
}

/* A block became free or unreserved: the cursors may not skip it. */
static void cursors_back(struct df_space *sp, uint64_t b)
{
    if (b < sp->free_cursor && !df_space_test(sp, b))
        sp->free_cursor = b;
    if (b < sp->alloc_cursor)
        sp->alloc_cursor = b;
    if (b / DF_RUN_BLOCKS < sp->run_cursor)
        sp->run_cursor = b / DF_RUN_BLOCKS;
}

void df_space_clear(struct df_space *sp, uint64_t b)
{
    sp->bitmap[b / 64] &= ~bit(b);
    sp->used_blocks--;
    cursors_back(sp, b);
}

/* Marks a free block used for a datafile; its reservation is spent. */
static void take(struct df_space *sp, uint64_t b)
{
    df_space_set(sp, b);
    sp->reserved[b / 64] &= ~bit(b);
    if (b == sp->free_cursor)
        sp->free_cursor = b + 1;
}

/* The lowest block at or above from that is free (and not reserved, when
 * skip_reserved), or UINT64_MAX; a word at a time. */
static uint64_t find_free(const struct df_space *sp, uint64_t from, int skip_reserved)
{
    for (uint64_t w = from / 64; w * 64 < sp->total_blocks; w++) {
        uint64_t busy = sp->bitmap[w] | (skip_reserved ? sp->reserved[w] : 0);

        if (w == from / 64)
            busy |= bit(from) - 1;        /* the blocks below from */
        if (busy != ~0ull) {
            uint64_t b = w * 64 + (uint64_t)__builtin_ctzll(~busy);
            return b < sp->total_blocks ? b : UINT64_MAX;
        }
    }
    return UINT64_MAX;
}

/* Lowest free block that is not reserved; when every free block is
 * reserved, the lowest free one: a reservation gives way to a datafile
 * that needs the space. */
uint64_t df_space_alloc(struct df_space *sp)
{
    uint64_t b = find_free(sp, sp->alloc_cursor, 1);

    if (b != UINT64_MAX) {
        sp->alloc_cursor = b + 1;
    } else {
        sp->alloc_cursor = sp->total_blocks;
        if ((b = find_free(sp, sp->free_cursor, 0)) == UINT64_MAX)
            return b;
        sp->free_cursor = b;          /* every block below b is in use */
    }
    take(sp, b);
    return b;
}

/* Reserves the lowest aligned run with no block used or reserved and
 * returns its first block, or DF_NO_RUN (a partial run at the volume's
 * end never counts). */
static uint64_t run_reserve_free(struct df_space *sp)
{
    uint64_t nruns = sp->total_blocks / DF_RUN_BLOCKS;

    for (uint64_t k = sp->run_cursor; k < nruns; k++) {
        uint64_t w = k * DF_RUN_BLOCKS / 64, shift = k * DF_RUN_BLOCKS % 64;

        if (((sp->bitmap[w] | sp->reserved[w]) >> shift & RUN_MASK) == 0) {
            sp->reserved[w] |= RUN_MASK << shift;
            sp->run_cursor = k + 1;
            return k * DF_RUN_BLOCKS;
        }
    }
    sp->run_cursor = nruns;
    return DF_NO_RUN;
}

uint64_t df_space_place(struct df_space *sp, uint64_t *run, uint64_t fb)
{
    uint64_t b;

    if (!run) {
        /* lowest free first, reserved or not: the rule before runs */
        if ((b = find_free(sp, sp->free_cursor, 0)) != UINT64_MAX) {
            sp->free_cursor = b;      /* every block below b is in use */
            take(sp, b);
        }
        return b;
    }
    if (*run == DF_NO_RUN)
        *run = run_reserve_free(sp);
    if (*run != DF_NO_RUN) {
        b = *run + fb % DF_RUN_BLOCKS;
        if (b < sp->total_blocks && !df_space_test(sp, b)) {
            take(sp, b);
            return b;
        }
    }
    return df_space_alloc(sp);
}

void df_space_unreserve_run(struct df_space *sp, uint64_t base)
{
    for (uint64_t b = base; b < base + DF_RUN_BLOCKS && b < sp->total_blocks; b++)
        if (df_space_reserved(sp, b)) {
            sp->reserved[b / 64] &= ~bit(b);
            cursors_back(sp, b);
        }
}

void df_space_reserve_run(struct df_space *sp, uint64_t base)
{
    /* cursors stay: more reserved blocks never make one of them wrong */
    for (uint64_t b = base; b < base + DF_RUN_BLOCKS && b < sp->total_blocks; b++)
        if (!df_space_test(sp, b))
            sp->reserved[b / 64] |= bit(b);
}

/* A bitmap, not a watermark: runs hand out blocks above holes that still
 * hold their zeros.  A block handed out once counts as written for good
 * (a failed write may have left bytes; a discard need not read as zeros). */
int df_space_take_zeroed(struct df_space *sp, uint64_t b)
{
    int zeroed;

    if (b >= sp->total_blocks)
        return 0;
    zeroed = sp->zero_known && !(sp->handed[b / 64] & bit(b));
    sp->handed[b / 64] |= bit(b);
    return zeroed;
}
