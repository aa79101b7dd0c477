#include "adio/client/plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Where the walk stands on the memory side. */
struct mem_cursor {
    const struct iovec *mem;
    int memcnt;
    int idx;
    size_t off;      /* bytes used of mem[idx] */
};

struct plan_state {
    const struct plan_limits *limits;
    struct plan *plan;
    long *open_req;  /* per server: index of the request being filled, -1 */
    struct mem_cursor cur;
};

struct plan_limits plan_limits_for(uint64_t block, int writing)
{
    return (struct plan_limits){ writing ? IPVFS_MAX_IO_BYTES : IPVFS_LIST_READ_BYTES,
                                 IPVFS_MAX_PAIRS, block };
}

void plan_free(struct plan *plan)
{
    for (size_t i = 0; i < plan->nreqs; i++) {
        free(plan->reqs[i].pairs);
        free(plan->reqs[i].iov);
    }
    free(plan->reqs);
    memset(plan, 0, sizeof(*plan));
}

static int grow(void **arr, size_t elem, size_t need, size_t *cap)
{
    size_t ncap = *cap ? *cap : 4;
    void *p;

    if (need <= *cap)
        return 0;
    while (ncap < need)
        ncap *= 2;
    p = realloc(*arr, ncap * elem);
    if (!p)
        return -ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
}

static long new_req(struct plan_state *st, uint32_t server)
{
    struct plan *p = st->plan;

    if (grow((void **)&p->reqs, sizeof(*p->reqs), p->nreqs + 1, &p->cap) < 0)
        return -ENOMEM;
    memset(&p->reqs[p->nreqs], 0, sizeof(p->reqs[0]));
    p->reqs[p->nreqs].server = server;
    st->open_req[server] = (long)p->nreqs;
    return (long)p->nreqs++;
}

/* Adds the pair, merging it into the last one when they touch. */
static int add_pair(struct plan_req *r, uint64_t df_offset, uint64_t len)
{
    size_t cap = r->pairs_cap;
    int rc;

    if (r->npairs && r->pairs[r->npairs - 1].offset + r->pairs[r->npairs - 1].len == df_offset) {
        r->pairs[r->npairs - 1].len += len;
        return 0;
    }
    rc = grow((void **)&r->pairs, sizeof(*r->pairs), r->npairs + 1u, &cap);
    if (rc < 0)
        return rc;
    r->pairs_cap = (uint32_t)cap;
    r->pairs[r->npairs].offset = df_offset;
    r->pairs[r->npairs].len = len;
    r->npairs++;
    return 0;
}

static int add_mem(struct plan_req *r, char *base, size_t len)
{
    size_t cap = (size_t)r->iov_cap;
    int rc;

    if (r->niov && (char *)r->iov[r->niov - 1].iov_base + r->iov[r->niov - 1].iov_len == base) {
        r->iov[r->niov - 1].iov_len += len;
        return 0;
    }
    rc = grow((void **)&r->iov, sizeof(*r->iov), (size_t)r->niov + 1, &cap);
    if (rc < 0)
        return rc;
    r->iov_cap = (int)cap;
    r->iov[r->niov].iov_base = base;
    r->iov[r->niov].iov_len = len;
    r->niov++;
    return 0;
}

/* Moves len bytes of the memory side into request r. */
static int take_mem(struct plan_state *st, struct plan_req *r, uint64_t len)
{
    struct mem_cursor *c = &st->cur;

    while (len) {
        size_t avail, n;
        int rc;

        if (c->idx >= c->memcnt)
            return -EINVAL;
        avail = c->mem[c->idx].iov_len - c->off;
        if (avail == 0) {
            c->idx++;
            c->off = 0;
            continue;
        }
        n = avail < len ? avail : (size_t)len;
        rc = add_mem(r, (char *)c->mem[c->idx].iov_base + c->off, n);
        if (rc < 0)
            return rc;
        c->off += n;
        len -= n;
    }
    return 0;
}

/* Bytes a pair at df_offset may still add to r's run of adjacent bytes:
 * the run continues r's last pair when they touch. */
static uint64_t run_room(const struct plan_state *st, const struct plan_req *r, uint64_t df_offset)
{
    uint64_t max = st->limits->max_run ? st->limits->max_run : st->limits->max_bytes;
    const struct ipvfs_pair *last = r->npairs ? &r->pairs[r->npairs - 1] : NULL;

    if (!last || last->offset + last->len != df_offset)
        return max;
    return last->len < max ? max - last->len : 0;
}

/* The request of server that can take a pair at df_offset, opening a new
 * one when the current one is full or its run reached max_run. */
static long req_for(struct plan_state *st, uint32_t server, uint64_t df_offset)
{
    long i = st->open_req[server];
    struct plan_req *r;

    if (i < 0)
        return new_req(st, server);
    r = &st->plan->reqs[i];
    if (r->bytes >= st->limits->max_bytes || run_room(st, r, df_offset) == 0)
        return new_req(st, server);
    if (r->npairs >= st->limits->max_pairs &&
        r->pairs[r->npairs - 1].offset + r->pairs[r->npairs - 1].len != df_offset)
        return new_req(st, server);
    return i;
}

/* One piece that lies inside one stripe unit. */
static int add_piece(struct plan_state *st, const struct stripe_pos *pos, uint64_t len)
{
    uint64_t df_offset = pos->df_offset;

    while (len) {
        long i = req_for(st, pos->server, df_offset);
        struct plan_req *r;
        uint64_t room, n;
        int rc;

        if (i < 0)
            return (int)i;
        r = &st->plan->reqs[i];
        room = st->limits->max_bytes - r->bytes;
        if (run_room(st, r, df_offset) < room)
            room = run_room(st, r, df_offset);
        n = len < room ? len : room;
        rc = add_pair(r, df_offset, n);
        if (rc == 0)
            rc = take_mem(st, r, n);
        if (rc < 0)
            return rc;
        r->bytes += n;
        df_offset += n;
        len -= n;
    }
    return 0;
}

static int add_extent(struct plan_state *st, const struct stripe_layout *layout,
                      const struct ipvfs_extent *e)
{
    uint64_t off = e->offset, left = e->len;

    if (e->len && e->offset + e->len - 1 < e->offset)
        return -EINVAL;
    while (left) {
        struct stripe_pos pos;
        uint64_t n;
        int rc;

        stripe_map(layout, off, &pos);
        n = left < pos.run ? left : pos.run;
        rc = add_piece(st, &pos, n);
        if (rc < 0)
            return rc;
        off += n;
        left -= n;
    }
    return 0;
}

/* True when the memory cursor has used every byte. */
static int mem_exhausted(const struct mem_cursor *c)
{
    int i = c->idx;

    if (i < c->memcnt && c->off < c->mem[i].iov_len)
        return 0;
    for (i = i + 1; i < c->memcnt; i++)
        if (c->mem[i].iov_len)
            return 0;
    return 1;
}

int plan_build(const struct stripe_layout *layout, const struct ipvfs_extent *ext, size_t next,
               const struct iovec *mem, int memcnt, const struct plan_limits *limits,
               struct plan *out_plan)
{
    struct plan_state st = {
        .limits = limits,
        .plan = out_plan,
        .cur = { .mem = mem, .memcnt = memcnt },
    };
    int rc = 0;

    memset(out_plan, 0, sizeof(*out_plan));
    st.open_req = malloc(layout->nio * sizeof(*st.open_req));
    if (!st.open_req)
        return -ENOMEM;
    for (uint32_t s = 0; s < layout->nio; s++)
        st.open_req[s] = -1;
    for (size_t i = 0; i < next && rc == 0; i++)
        rc = add_extent(&st, layout, &ext[i]);
    if (rc == 0 && !mem_exhausted(&st.cur))
        rc = -EINVAL;
    free(st.open_req);
    return rc;
}
