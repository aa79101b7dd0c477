/* Free-space bitmap of the datafile store (see space.h). */
#include "backend/dfstore/space.h"

#include <errno.h>
#include <stdlib.h>

int df_space_init(struct df_space *sp, uint64_t total_blocks)
{
    *sp = (struct df_space){ .total_blocks = total_blocks, .zero_from = total_blocks };
    /* one word more: never a zero-size allocation, whose NULL means nothing */
    if (!(sp->bitmap = calloc((total_blocks + 63) / 64 + 1, sizeof(*sp->bitmap))))
        return -ENOMEM;
    return 0;
}

void df_space_fini(struct df_space *sp)
{
    free(sp->bitmap);
    sp->bitmap = NULL;
}

int df_space_test(const struct df_space *sp, uint64_t b)
{
    return (int)(sp->bitmap[b / 64] >> (b % 64) & 1);
}

void df_space_set(struct df_space *sp, uint64_t b)
{
    sp->bitmap[b / 64] |= 1ull << (b % 64);
    sp->used_blocks++;
}

void df_space_clear(struct df_space *sp, uint64_t b)
{
    sp->bitmap[b / 64] &= ~(1ull << (b % 64));
    sp->used_blocks--;
    if (b < sp->alloc_cursor)
        sp->alloc_cursor = b;
}

/* Lowest free block first: every block below alloc_cursor is in use
 * (df_space_clear moves the cursor back).  Reusing freed blocks before
 * fresh ones keeps a sparse (thin) target's backing files as small as the
 * live data: a volume block never written costs the target new space, one
 * freed by a remove does not, so removing files makes room again on a
 * full backing disk. */
uint64_t df_space_alloc(struct df_space *sp)
{
    uint64_t b = sp->alloc_cursor < sp->total_blocks ? sp->alloc_cursor : 0;

    for (uint64_t n = 0; n < sp->total_blocks; n++, b = (b + 1) % sp->total_blocks) {
        if (b % 64 == 0 && sp->bitmap[b / 64] == ~0ull && b + 64 <= sp->total_blocks) {
            b += 63;
            n += 63;
            continue;
        }
        if (!df_space_test(sp, b)) {
            df_space_set(sp, b);
            sp->alloc_cursor = b + 1;
            return b;
        }
    }
    return UINT64_MAX;
}

/* One watermark, not a bitmap: lowest-free-first allocation of a store
 * that started empty hands out blocks from 0 upwards, so the blocks never
 * handed out are (nearly) all above the highest one ever handed out.
 * Blocks below it that were never written only count as written: safe. */
int df_space_take_zeroed(struct df_space *sp, uint64_t b)
{
    int zeroed = b >= sp->zero_from && b < sp->total_blocks;

    if (zeroed)
        sp->zero_from = b + 1;
    return zeroed;
}
