/* cache/mq.c: the Multi-Queue policy of Zhou, Philbin and Li (USENIX ATC
 * 2001), designed for second-level buffer caches whose accesses L1 has
 * filtered: frequency matters there more than recency.
 *
 * Queues 0..CACHE_MQ_QUEUES-1 are LRU lists (head = least recent); a block
 * seen f times lives in queue min(floor(log2 f), QUEUES - 1).  Each block
 * carries an expiry time (c->clock + lifetime at its last access); a queue
 * head whose time has passed falls one queue, so blocks that were hot once
 * age out.  Eviction takes the head of the lowest non-empty queue and
 * moves its entry to the history (CACHE_LIST_HISTORY, FIFO, at most
 * capacity entries, key still mapped), which remembers its frequency: a
 * block that comes back resumes it.  lifetime is CACHE_MQ_LIFETIME x the
 * capacity in accesses (the paper tunes it to the peak temporal distance;
 * a fixed multiple keeps the policy pure and repeatable). */
#include "cache/internal.h"

static uint8_t mq_queue(uint32_t freq)
{
    uint8_t q = 0;

    while (freq > 1 && q < CACHE_MQ_QUEUES - 1) {
        freq >>= 1;
        q++;
    }
    return q;
}

/* Moves the victim (head of the lowest non-empty queue) to the history,
 * dropping the oldest history entry when the history is full. */
static void mq_evict(struct cache *c, struct cache_victim *out)
{
    struct cache_list *hist = &c->lists[CACHE_LIST_HISTORY];
    uint8_t q = 0;
    uint32_t e;

    while (c->lists[q].len == 0)
        q++;
    e = c->lists[q].head;
    if (hist->len == c->capacity * c->ops->history)
        cache_release(c, hist->head);
    out->valid = 1;
    out->key = c->ents[e].key;
    out->dirty = c->ents[e].dirty;
    c->stats.evictions++;
    c->stats.dirty_evictions += out->dirty;
    c->ents[e].dirty = 0;
    c->resident--;
    cache_move(c, e, CACHE_LIST_HISTORY);
}

/* The queue heads whose lifetime ran out fall one queue (Adjust). */
static void mq_adjust(struct cache *c)
{
    uint64_t lifetime = CACHE_MQ_LIFETIME * c->capacity;

    for (uint8_t q = 1; q < CACHE_MQ_QUEUES; q++) {
        uint32_t e = c->lists[q].head;
        if (e != CACHE_NIL && c->ents[e].expire < c->clock) {
            cache_move(c, e, q - 1);
            c->ents[e].expire = c->clock + lifetime;
        }
    }
}

/* One reference to key; returns 1 if it was resident. */
static int mq_touch(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out)
{
    uint32_t e = cache_find(c, key), freq = 0;
    int hit = e != CACHE_NIL && c->ents[e].list != CACHE_LIST_HISTORY;

    if (!hit) {
        if (e != CACHE_NIL) {
            /* Taken out of the history before evicting, which may trim it. */
            freq = c->ents[e].freq;
            cache_release(c, e);
        }
        if (c->resident == c->capacity)
            mq_evict(c, out);
        c->resident++;
        e = cache_take(c, key, CACHE_MQ_QUEUES - 1);
        c->ents[e].freq = freq;
    }
    if (c->ents[e].freq < UINT32_MAX)
        c->ents[e].freq++;
    if (flags & CACHE_DIRTY)
        c->ents[e].dirty = 1;
    cache_move(c, e, mq_queue(c->ents[e].freq));
    c->ents[e].expire = c->clock + CACHE_MQ_LIFETIME * c->capacity;
    mq_adjust(c);
    return hit;
}

static int mq_access(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out)
{
    return mq_touch(c, key, flags, out);
}

static void mq_store(struct cache *c, uint64_t key, struct cache_victim *out)
{
    (void)mq_touch(c, key, 0, out);
}

/* Inclusive, like LRU: L1's clean victims are not wanted. */
static int mq_demote(struct cache *c, uint64_t key, struct cache_victim *out)
{
    return 0;
}

/* demote-mq: the exclusive data flow of DEMOTE with MQ's queues.  L2 only
 * learns a block's frequency from L1's misses (its DPO reads), which the
 * history keeps while the block is up in L1; a block offered down (a
 * demote or a write-back) is admitted only if it was read at least as
 * often as the block it would push out, so a scan of blocks seen once
 * cannot flush blocks L1 keeps missing. */

/* Bumps key's frequency and puts it at the history's tail: entry e (a
 * resident block given up, or a history entry) or a new one. */
static void history_count(struct cache *c, uint64_t key, uint32_t e)
{
    struct cache_list *hist = &c->lists[CACHE_LIST_HISTORY];

    /* Room first when key joins the history (it is not its head then). */
    if ((e == CACHE_NIL || c->ents[e].list != CACHE_LIST_HISTORY) &&
        hist->len == c->capacity * c->ops->history)
        cache_release(c, hist->head);
    if (e == CACHE_NIL)
        e = cache_take(c, key, CACHE_LIST_HISTORY);
    else
        cache_move(c, e, CACHE_LIST_HISTORY);
    if (c->ents[e].freq < UINT32_MAX)
        c->ents[e].freq++;
}

static int dmq_access(struct cache *c, uint64_t key, unsigned flags, struct cache_victim *out)
{
    uint32_t e = cache_find(c, key);
    int hit = e != CACHE_NIL && c->ents[e].list != CACHE_LIST_HISTORY;

    if (!(flags & CACHE_DPO))
        return mq_touch(c, key, flags, out);
    if (hit) {
        /* Given up to L1: the data go, the frequency stays. */
        c->stats.dropped++;
        c->resident--;
        c->ents[e].dirty = 0;
    }
    history_count(c, key, e);
    mq_adjust(c);
    return hit;
}

/* The queue of the block the next eviction would take (aging moves blocks
 * down queues, so an old frequency does not keep a block for ever). */
static uint8_t victim_queue(const struct cache *c)
{
    uint8_t q = 0;

    while (q < CACHE_MQ_QUEUES - 1 && c->lists[q].len == 0)
        q++;
    return q;
}

static int dmq_offer(struct cache *c, uint64_t key, struct cache_victim *out)
{
    uint32_t e = cache_find(c, key), freq = 0;

    if (e != CACHE_NIL && c->ents[e].list != CACHE_LIST_HISTORY) {
        cache_move(c, e, mq_queue(c->ents[e].freq));
        return 1;
    }
    if (e != CACHE_NIL)
        freq = c->ents[e].freq;
    if (c->resident == c->capacity && mq_queue(freq) < victim_queue(c))
        return 0;
    if (e != CACHE_NIL)
        cache_release(c, e);
    if (c->resident == c->capacity)
        mq_evict(c, out);
    c->resident++;
    e = cache_take(c, key, mq_queue(freq));
    c->ents[e].freq = freq;
    c->ents[e].expire = c->clock + CACHE_MQ_LIFETIME * c->capacity;
    return 1;
}

static void dmq_store(struct cache *c, uint64_t key, struct cache_victim *out)
{
    (void)dmq_offer(c, key, out);
}

static int dmq_demote(struct cache *c, uint64_t key, struct cache_victim *out)
{
    return dmq_offer(c, key, out);
}

const struct cache_ops cache_ops_demote_mq = {
    .name = "demote-mq", .history = 4, .access = dmq_access, .store = dmq_store,
    .demote = dmq_demote,
};

const struct cache_ops cache_ops_mq = {
    .name = "mq", .history = 1, .access = mq_access, .store = mq_store, .demote = mq_demote,
};
