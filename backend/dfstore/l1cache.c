/* The I/O node's L1 cache of volume blocks (see l1cache.h). */
#include "backend/dfstore/l1cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/dfstore.h"

_Static_assert(DFSTORE_BLOCK == CACHE_BLOCK_SIZE, "the L1 block is the store's block");

enum { SLOT_FREE, SLOT_FILLING, SLOT_VALID, SLOT_ORPHAN, SLOT_STALE };

/* A hit's completion, deferred: the contract calls cb from the loop. */
struct hit_ctx {
    struct df_l1 *l1;
    iraid_cb cb;
    void *user;
};

/* A fill: the whole block into slot, then the wanted bytes to the caller. */
struct fill_ctx {
    struct df_l1 *l1;
    uint32_t slot;
    uint32_t in;                /* offset of the read in the block */
    iraid_cb cb;
    void *user;
    int niov;
    struct iovec iov[];
};

/* A write in flight: on failure its blocks are dropped. */
struct write_ctx {
    struct df_l1 *l1;
    uint64_t off, len;
    iraid_cb cb;
    void *user;
};

int df_l1_init(struct df_l1 *l1, struct evloop *loop, struct iraid_volume *vol, uint64_t bytes)
{
    uint64_t n = bytes / DFSTORE_BLOCK;

    memset(l1, 0, sizeof(*l1));
    l1->loop = loop;
    l1->vol = vol;
    if (n == 0)
        return 0;
    if (n >= (1ull << 31))
        return -EINVAL;
    if (cache_init(&l1->policy, cache_policy_find("lru"), n) < 0)
        return -ENOMEM;
    /* calloc: pages are committed as blocks are first used. */
    l1->data = calloc(n, DFSTORE_BLOCK);
    l1->slot_key = calloc(n, sizeof(*l1->slot_key));
    l1->slot_state = calloc(n, sizeof(*l1->slot_state));
    l1->free_slots = calloc(n, sizeof(*l1->free_slots));
    if (!l1->data || !l1->slot_key || !l1->slot_state || !l1->free_slots ||
        u64map_reserve(&l1->slot_of, n) < 0)
        goto free_all;
    for (uint64_t i = 0; i < n; i++)
        l1->free_slots[i] = (uint32_t)(n - 1 - i);
    l1->nfree = n;
    l1->capacity = l1->stats.capacity = n;
    return 0;

free_all:
    df_l1_fini(l1);
    return -ENOMEM;
}

void df_l1_fini(struct df_l1 *l1)
{
    cache_fini(&l1->policy);
    u64map_free(&l1->slot_of);
    free(l1->data);
    free(l1->slot_key);
    free(l1->slot_state);
    free(l1->free_slots);
    memset(l1, 0, sizeof(*l1));
}

static uint8_t *slot_data(struct df_l1 *l1, uint32_t slot)
{
    return l1->data + (size_t)slot * DFSTORE_BLOCK;
}

static void slot_free(struct df_l1 *l1, uint32_t slot)
{
    l1->slot_state[slot] = SLOT_FREE;
    l1->free_slots[l1->nfree++] = slot;
}

/* Takes vb out of the map and the policy.  Its slot is freed, or, while a
 * volume read into it is in flight, left in state to be freed by the
 * read's completion (ORPHAN: evicted; STALE: written meanwhile or failed). */
static void block_forget(struct df_l1 *l1, uint64_t vb, uint8_t state)
{
    uint64_t s = u64map_get(&l1->slot_of, vb);

    if (s == U64MAP_NONE)
        return;
    u64map_del(&l1->slot_of, vb);
    cache_remove(&l1->policy, vb);
    if (l1->slot_state[s] == SLOT_FILLING)
        l1->slot_state[s] = state;
    else
        slot_free(l1, (uint32_t)s);
}

/* Makes vb resident (the policy may evict a block for it) and gives it a
 * slot in state; UINT32_MAX when no slot is free (vb is then not cached). */
static uint32_t block_add(struct df_l1 *l1, uint64_t vb, uint8_t state)
{
    struct cache_victim v;
    uint32_t slot;

    (void)cache_access(&l1->policy, vb, 0, &v);
    if (v.valid) {
        /* Out of the policy already; its slot follows. */
        block_forget(l1, v.key, SLOT_ORPHAN);
        l1->stats.evictions++;
    }
    if (l1->nfree == 0) {
        cache_remove(&l1->policy, vb);
        return UINT32_MAX;
    }
    slot = l1->free_slots[--l1->nfree];
    l1->slot_state[slot] = state;
    l1->slot_key[slot] = vb;
    (void)u64map_put(&l1->slot_of, vb, slot);  /* reserved for capacity */
    return slot;
}

static uint64_t iov_len(const struct iovec *iov, int niov)
{
    uint64_t n = 0;

    for (int i = 0; i < niov; i++)
        n += iov[i].iov_len;
    return n;
}

/* Copies src into the buffers of iov, in order, until they are full. */
static void copy_out(const struct iovec *iov, int niov, const uint8_t *src)
{
    for (int i = 0; i < niov; i++) {
        memcpy(iov[i].iov_base, src, iov[i].iov_len);
        src += iov[i].iov_len;
    }
}

/* Copies len bytes of the iov stream, from byte skip on, to dst. */
static void copy_in(uint8_t *dst, const struct iovec *iov, int niov, uint64_t skip, uint64_t len)
{
    for (int i = 0; i < niov && len > 0; i++) {
        uint64_t n = iov[i].iov_len;
        if (skip >= n) {
            skip -= n;
            continue;
        }
        n -= skip;
        if (n > len)
            n = len;
        memcpy(dst, (const uint8_t *)iov[i].iov_base + skip, n);
        dst += n;
        len -= n;
        skip = 0;
    }
}

static int bypass_read(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov,
                       iraid_cb cb, void *user)
{
    l1->stats.bypasses++;
    return iraid_readv(l1->vol, off, iov, niov, cb, user);
}

static void hit_done(struct evloop *loop, uint64_t id, void *user)
{
    struct hit_ctx ctx = *(struct hit_ctx *)user;

    free(user);
    ctx.cb(ctx.l1->vol, 0, ctx.user);
}

static int read_hit(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov,
                    iraid_cb cb, void *user)
{
    struct hit_ctx *ctx = malloc(sizeof(*ctx));
    uint64_t vb = off / DFSTORE_BLOCK, slot = u64map_get(&l1->slot_of, vb);
    struct cache_victim v;

    if (!ctx)
        return bypass_read(l1, off, iov, niov, cb, user);
    *ctx = (struct hit_ctx){ l1, cb, user };
    if (evloop_defer(l1->loop, hit_done, ctx) == 0) {
        free(ctx);
        return bypass_read(l1, off, iov, niov, cb, user);
    }
    copy_out(iov, niov, slot_data(l1, (uint32_t)slot) + off % DFSTORE_BLOCK);
    (void)cache_access(&l1->policy, vb, 0, &v);  /* a hit: no victim */
    l1->stats.hits++;
    return 0;
}

static void fill_done(struct iraid_volume *vol, int status, void *user)
{
    struct fill_ctx *ctx = user;
    struct df_l1 *l1 = ctx->l1;
    iraid_cb cb = ctx->cb;
    void *cb_user = ctx->user;
    uint32_t slot = ctx->slot;

    if (status == 0)
        copy_out(ctx->iov, ctx->niov, slot_data(l1, slot) + ctx->in);
    if (l1->slot_state[slot] != SLOT_FILLING)
        slot_free(l1, slot);            /* evicted or written meanwhile */
    else if (status == 0)
        l1->slot_state[slot] = SLOT_VALID;
    else {
        /* Failed: out of the map (the slot, still FILLING, becomes
         * STALE and is not freed there), then freed here. */
        block_forget(l1, l1->slot_key[slot], SLOT_STALE);
        slot_free(l1, slot);
    }
    free(ctx);
    cb(vol, status, cb_user);
}

static int read_fill(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov,
                     iraid_cb cb, void *user)
{
    struct fill_ctx *ctx = malloc(sizeof(*ctx) + (size_t)niov * sizeof(*iov));
    uint64_t vb = off / DFSTORE_BLOCK;
    struct iovec whole;
    uint32_t slot;
    int rc;

    if (!ctx)
        return bypass_read(l1, off, iov, niov, cb, user);
    if ((slot = block_add(l1, vb, SLOT_FILLING)) == UINT32_MAX) {
        free(ctx);
        return bypass_read(l1, off, iov, niov, cb, user);
    }
    *ctx = (struct fill_ctx){ .l1 = l1, .slot = slot, .in = (uint32_t)(off % DFSTORE_BLOCK),
                              .cb = cb, .user = user, .niov = niov };
    memcpy(ctx->iov, iov, (size_t)niov * sizeof(*iov));
    whole = (struct iovec){ slot_data(l1, slot), DFSTORE_BLOCK };
    if ((rc = iraid_readv(l1->vol, vb * DFSTORE_BLOCK, &whole, 1, fill_done, ctx)) < 0) {
        l1->slot_state[slot] = SLOT_VALID;  /* nothing in flight: free it at once */
        block_forget(l1, vb, SLOT_STALE);
        free(ctx);
        return rc;
    }
    l1->stats.misses++;
    return 0;
}

int df_l1_readv(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, iraid_cb cb,
                void *user)
{
    uint64_t len = iov_len(iov, niov), vb = off / DFSTORE_BLOCK, slot;

    if (l1->capacity == 0)
        return iraid_readv(l1->vol, off, iov, niov, cb, user);
    /* The store reads within one block; anything else goes around. */
    if (!cb || len == 0 || (off + len - 1) / DFSTORE_BLOCK != vb)
        return bypass_read(l1, off, iov, niov, cb, user);
    slot = u64map_get(&l1->slot_of, vb);
    if (slot == U64MAP_NONE)
        return read_fill(l1, off, iov, niov, cb, user);
    if (l1->slot_state[slot] == SLOT_VALID)
        return read_hit(l1, off, iov, niov, cb, user);
    return bypass_read(l1, off, iov, niov, cb, user);  /* being filled */
}

static void write_done(struct iraid_volume *vol, int status, void *user)
{
    struct write_ctx ctx = *(struct write_ctx *)user;

    free(user);
    /* The volume's bytes are unknown after a failed write: drop ours. */
    if (status < 0)
        for (uint64_t vb = ctx.off / DFSTORE_BLOCK; vb * DFSTORE_BLOCK < ctx.off + ctx.len; vb++)
            block_forget(ctx.l1, vb, SLOT_STALE);
    ctx.cb(vol, status, ctx.user);
}

/* The cached blocks a submitted write covers take its bytes; whole blocks
 * not cached are added; a block being filled is forgotten (stale). */
static void write_update(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov,
                         uint64_t len)
{
    for (uint64_t done = 0; done < len;) {
        uint64_t vb = (off + done) / DFSTORE_BLOCK, in = (off + done) % DFSTORE_BLOCK;
        uint64_t n = DFSTORE_BLOCK - in < len - done ? DFSTORE_BLOCK - in : len - done;
        uint64_t slot = u64map_get(&l1->slot_of, vb);
        struct cache_victim v;

        if (slot != U64MAP_NONE && l1->slot_state[slot] == SLOT_FILLING) {
            block_forget(l1, vb, SLOT_STALE);
            slot = U64MAP_NONE;
        }
        if (slot != U64MAP_NONE)
            (void)cache_access(&l1->policy, vb, 0, &v);  /* a hit: no victim */
        else if (n == DFSTORE_BLOCK)
            slot = block_add(l1, vb, SLOT_VALID);
        if (slot != U64MAP_NONE && slot != UINT32_MAX) {
            copy_in(slot_data(l1, (uint32_t)slot) + in, iov, niov, done, n);
            l1->stats.write_updates++;
        }
        done += n;
    }
}

int df_l1_writev(struct df_l1 *l1, uint64_t off, const struct iovec *iov, int niov, iraid_cb cb,
                 void *user)
{
    struct write_ctx *ctx;
    uint64_t len = iov_len(iov, niov);
    int rc;

    if (l1->capacity == 0)
        return iraid_writev(l1->vol, off, iov, niov, cb, user);
    if (!(ctx = malloc(sizeof(*ctx))))
        return -ENOMEM;
    *ctx = (struct write_ctx){ l1, off, len, cb, user };
    if ((rc = iraid_writev(l1->vol, off, iov, niov, write_done, ctx)) < 0) {
        free(ctx);
        return rc;
    }
    write_update(l1, off, iov, niov, len);
    return 0;
}

void df_l1_get_stats(const struct df_l1 *l1, struct df_l1_stats *out)
{
    *out = l1->stats;
    out->resident = l1->policy.resident;
}
