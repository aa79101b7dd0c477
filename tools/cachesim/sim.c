/* tools/cachesim/sim.c: PVFS's one level and uCache's two levels over the
 * same block accesses (the model and mapping are in cachesim.h). */
#include "tools/cachesim/cachesim.h"

#include <stdlib.h>

#include "common/layout.h"
#include "common/u64map.h"
#include "iraid/layout.h"

/* All simulated levels together hold at most this many blocks, so that a
 * mistyped size is an error rather than an out-of-memory kill. */
#define SIM_MAX_BLOCKS (1ull << 25)
/* Each datafile's room on the simulated volume: 2^24 chunks (1 TiB). */
#define SIM_FILE_CHUNKS_SHIFT 24

struct sim {
    struct sim_config cfg;
    uint32_t nio;                   /* uCache I/O nodes */
    struct cache *pvfs;             /* [servers] */
    struct cache *l1;               /* [nio] */
    struct cache *l2;               /* [nio * targets] */
    struct iraid_layout vol;
    uint64_t period;                /* chunks after which members repeat */
    struct sim_result res;
};

static int blocks_of(uint64_t bytes, const char *what, uint64_t *out, char *err, size_t errlen)
{
    *out = bytes / CACHE_BLOCK_SIZE;
    if (*out == 0 || *out >= (1ull << 31)) {
        snprintf(err, errlen, "%s of %llu bytes: need 64 KiB to 128 TiB", what,
                 (unsigned long long)bytes);
        return -1;
    }
    return 0;
}

static int check_config(const struct sim_config *cfg, uint64_t blocks[3], char *err, size_t errlen)
{
    uint64_t nio, total;

    if (cfg->targets == 0 || cfg->targets > 64) {
        snprintf(err, errlen, "targets per I/O node must be 1 to 64, not %u", cfg->targets);
        return -1;
    }
    if (cfg->servers < 1 + cfg->targets || cfg->servers > 4096) {
        snprintf(err, errlen, "%u servers: need 1 to 4096, and at least one I/O node with its "
                 "%u targets", cfg->servers, cfg->targets);
        return -1;
    }
    if (!cfg->l2_policy) {
        snprintf(err, errlen, "no L2 policy");
        return -1;
    }
    if (blocks_of(cfg->l1_bytes, "L1", &blocks[0], err, errlen) < 0 ||
        blocks_of(cfg->l2_bytes, "L2", &blocks[1], err, errlen) < 0 ||
        blocks_of(cfg->pvfs_bytes, "PVFS cache", &blocks[2], err, errlen) < 0)
        return -1;
    nio = cfg->servers / (1 + cfg->targets);
    total = blocks[2] * cfg->servers + (blocks[0] + blocks[1] * cfg->targets) * nio;
    if (total > SIM_MAX_BLOCKS) {
        snprintf(err, errlen, "caches of %llu blocks in all: at most %llu (2 TiB of 64 KiB "
                 "blocks, about 2.5 GiB of metadata)", (unsigned long long)total,
                 (unsigned long long)SIM_MAX_BLOCKS);
        return -1;
    }
    return 0;
}

/* n levels of ops over blocks each; NULL when out of memory. */
static struct cache *levels_new(uint32_t n, const struct cache_ops *ops, uint64_t blocks)
{
    struct cache *levels = calloc(n, sizeof(*levels));

    for (uint32_t i = 0; levels && i < n; i++) {
        if (cache_init(&levels[i], ops, blocks) < 0) {
            while (i-- > 0)
                cache_fini(&levels[i]);
            free(levels);
            return NULL;
        }
    }
    return levels;
}

static void levels_free(struct cache *levels, uint32_t n)
{
    for (uint32_t i = 0; levels && i < n; i++)
        cache_fini(&levels[i]);
    free(levels);
}

struct sim *sim_new(const struct sim_config *cfg, char *err, size_t errlen)
{
    uint64_t blocks[3];
    struct sim *s;

    if (check_config(cfg, blocks, err, errlen) < 0)
        return NULL;
    if (!(s = calloc(1, sizeof(*s))))
        goto no_memory;
    s->cfg = *cfg;
    s->nio = cfg->servers / (1 + cfg->targets);
    s->res.io_nodes = s->nio;
    /* Members large enough for any key: only the arithmetic is used. */
    if (iraid_layout_init(&s->vol, cfg->targets >= 3 ? 5 : 0, cfg->targets, CACHE_BLOCK_SIZE,
                          1ull << 40) < 0) {
        snprintf(err, errlen, "no iRAID layout for %u targets", cfg->targets);
        free(s);
        return NULL;
    }
    /* RAID-5 rotates parity every nmembers stripes of n - 1 data chunks. */
    s->period = (uint64_t)cfg->targets * (cfg->targets >= 3 ? cfg->targets - 1 : 1);
    if (!(s->pvfs = levels_new(cfg->servers, cache_policy_find("lru"), blocks[2])))
        goto free_sim;
    if (!(s->l1 = levels_new(s->nio, cache_policy_find("lru"), blocks[0])))
        goto free_pvfs;
    if (!(s->l2 = levels_new(s->nio * cfg->targets, cfg->l2_policy, blocks[1])))
        goto free_l1;
    return s;

free_l1:
    levels_free(s->l1, s->nio);
free_pvfs:
    levels_free(s->pvfs, cfg->servers);
free_sim:
    free(s);
no_memory:
    snprintf(err, errlen, "out of memory for the simulated caches");
    return NULL;
}

void sim_free(struct sim *s)
{
    if (!s)
        return;
    levels_free(s->pvfs, s->cfg.servers);
    levels_free(s->l1, s->nio);
    levels_free(s->l2, s->nio * s->cfg.targets);
    free(s);
}

/* Which server holds byte off of file among nio, and the datafile block. */
static uint32_t stripe_block(uint32_t file, uint64_t off, uint32_t nio, uint64_t *out_block)
{
    struct stripe_layout l = {
        .unit = CACHE_BLOCK_SIZE, .factor = nio, .first_server = file % nio, .nio = nio,
    };
    struct stripe_pos pos;

    stripe_map(&l, off, &pos);
    *out_block = pos.df_offset / CACHE_BLOCK_SIZE;
    return pos.server;
}

/* The L2 (target) of I/O node io that holds the datafile block of key. */
static struct cache *target_of(struct sim *s, uint32_t io, uint64_t key)
{
    uint64_t file = key >> CACHE_BLOCK_BITS, block = key & ((1ull << CACHE_BLOCK_BITS) - 1);
    /* Datafile file starts at a pseudo-random chunk of its room, as the
     * datafile store's allocator would put it: not always on member 0. */
    uint64_t start = u64map_hash(file) & ((1ull << SIM_FILE_CHUNKS_SHIFT) - 1);
    unsigned __int128 chunk = ((unsigned __int128)file << SIM_FILE_CHUNKS_SHIFT) + start + block;
    struct iraid_loc loc;

    /* The member of a chunk repeats every period chunks: only that
     * remainder goes through the layout (the volume is not that large). */
    iraid_layout_map(&s->vol, (uint64_t)(chunk % s->period) * CACHE_BLOCK_SIZE, &loc);
    return &s->l2[(size_t)io * s->cfg.targets + loc.member];
}

/* L1's victim goes down to its target: written back if dirty, offered as a
 * demote if clean. */
static void victim_down(struct sim *s, uint32_t io, const struct cache_victim *v)
{
    struct cache_victim v2;

    if (!v->valid)
        return;
    if (v->dirty) {
        cache_store(target_of(s, io, v->key), v->key, &v2);
        s->res.writebacks++;
    } else {
        s->res.demotions += cache_demote(target_of(s, io, v->key), v->key, &v2);
    }
}

static void ucache_block(struct sim *s, uint32_t file, uint64_t off, int write)
{
    struct cache_victim v, v2;
    uint64_t block;
    uint32_t io = stripe_block(file, off, s->nio, &block);
    uint64_t key = cache_key(file, block);

    if (cache_access(&s->l1[io], key, write ? CACHE_DIRTY : 0, &v)) {
        s->res.l1_hits++;
    } else {
        /* The block comes up before the victim goes down, so a demote can
         * never push out the block being read. */
        s->res.l2_reads++;
        s->res.l2_hits += cache_access(target_of(s, io, key), key, CACHE_DPO, &v2);
    }
    victim_down(s, io, &v);
}

static void pvfs_block(struct sim *s, uint32_t file, uint64_t off, int write)
{
    struct cache_victim v;
    uint64_t block;
    uint32_t srv = stripe_block(file, off, s->cfg.servers, &block);

    s->res.pvfs_hits += cache_access(&s->pvfs[srv], cache_key(file, block),
                                     write ? CACHE_DIRTY : 0, &v);
}

void sim_play(struct sim *s, const struct sim_req *r)
{
    uint64_t first = r->offset / CACHE_BLOCK_SIZE;
    uint64_t last = (r->offset + r->length - 1) / CACHE_BLOCK_SIZE;

    for (uint64_t b = first; b <= last; b++) {
        s->res.accesses++;
        ucache_block(s, r->file, b * CACHE_BLOCK_SIZE, r->write);
        pvfs_block(s, r->file, b * CACHE_BLOCK_SIZE, r->write);
    }
}

void sim_result(const struct sim *s, struct sim_result *out)
{
    *out = s->res;
}
