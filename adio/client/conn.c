/* Clients (one per map path, shared) and their connections to server ranks. */
#include "adio/client/client_internal.h"
#include "adio/client/retry.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/wire.h"

static struct ipvfs_client *registry;

const char *ipvfs_client_map_path(const char *hint_map)
{
    const char *env;

    if (hint_map && hint_map[0])
        return hint_map;
    env = getenv("IPVFS_MAP");
    return env && env[0] ? env : NULL;
}

int client_env_ms(const char *name, int dflt)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !s[0])
        return dflt;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v <= 0 || v > INT_MAX)
        return dflt;
    return (int)v;
}

static void close_all(struct ipvfs_client *c)
{
    for (uint32_t r = 0; r < c->map.nranks; r++)
        conn_drop(c, r);
}

static int same_map(const struct ipvfs_map *a, const struct ipvfs_map *b)
{
    return a->nranks == b->nranks && a->nio == b->nio && a->nt == b->nt &&
           a->have_key == b->have_key &&
           memcmp(a->secret, b->secret, sizeof(a->secret)) == 0 &&
           memcmp(a->ranks, b->ranks, a->nranks * sizeof(*a->ranks)) == 0;
}

/* Reads the map into c (mapsrc.c), replacing what c had unless nothing
 * changed (then the connections stay). */
static int load_map(struct ipvfs_client *c, char *msg, size_t msglen)
{
    struct u64map *shown;
    struct ipvfs_map map;
    struct stat st;
    int *fds;
    int rc;

    rc = client_map_load(c->map_path, c->connect_ms, c->request_ms, &map, &st, msg, msglen);
    if (rc < 0)
        return rc;
    if (c->fds && same_map(&map, &c->map)) {
        ipvfs_map_free(&map);
        c->map_stat = st;
        return 0;
    }
    fds = malloc(map.nranks * sizeof(*fds));
    shown = map.have_key ? NULL : calloc(map.nranks, sizeof(*shown));
    if (!fds || (!map.have_key && !shown)) {
        free(fds);
        ipvfs_map_free(&map);
        snprintf(msg, msglen, "out of memory");
        return -ENOMEM;
    }
    for (uint32_t r = 0; r < map.nranks; r++)
        fds[r] = -1;
    if (c->fds) {
        close_all(c);
        free(c->fds);
        free(c->wins);
        free(c->shown);
        c->wins = NULL;
        ipvfs_map_free(&c->map);
    }
    c->map = map;
    c->fds = fds;
    c->shown = shown;
    c->map_stat = st;
    return 0;
}

/* Re-reads the map when it changed since it was read (a restarted cluster
 * listens on new ports).  The number of I/O nodes must not change: open
 * files depend on it.  A map from a metadata rank that does not answer now
 * (restarting) is kept: connecting will tell. */
int conn_refresh(struct ipvfs_client *c, char *msg, size_t msglen)
{
    uint32_t nio = c->map.nio;
    int rc;

    if (!client_map_changed(c->map_path, &c->map_stat))
        return 0;
    rc = load_map(c, msg, msglen);
    if (rc < 0 && client_map_remote(c->map_path))
        return 0;
    if (rc == 0 && c->map.nio != nio) {
        snprintf(msg, msglen, "server map %s now lists %u I/O nodes instead of %u",
                 c->map_path, c->map.nio, nio);
        return -ESTALE;
    }
    return rc;
}

int client_make(const char *map_path, uint32_t client_id, struct ipvfs_client **out_client,
                struct ipvfs_error *out_err)
{
    struct ipvfs_client *c = calloc(1, sizeof(*c));
    char msg[256] = "";
    int rc;

    if (!c)
        return client_error(out_err, ENOMEM, "client setup", NULL, NULL, -1, NULL);
    c->map_path = strdup(map_path);
    if (!c->map_path) {
        rc = client_error(out_err, ENOMEM, "client setup", NULL, NULL, -1, NULL);
        goto free_client;
    }
    c->connect_ms = client_env_ms("IPVFS_TIMEOUT_MS", IPVFS_CLIENT_CONNECT_MS);
    c->request_ms = client_env_ms("IPVFS_TIMEOUT_MS", IPVFS_CLIENT_REQUEST_MS);
    rc = load_map(c, msg, sizeof(msg));
    if (rc < 0) {
        rc = client_error(out_err, -rc, "reading the server map", NULL, NULL, -1, msg);
        goto free_path;
    }
    if ((rc = client_qos_init(c, msg, sizeof(msg))) < 0) {
        rc = client_error(out_err, -rc, "client setup", NULL, NULL, -1, msg);
        goto free_map;
    }
    c->client_id = client_id;
    /* random-IOS: different clients must draw different sequences */
    c->sched_rng = ((uint64_t)client_id + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 20;
    c->reconnect_ms = client_env_ms("IPVFS_RECONNECT_MS", IPVFS_CLIENT_RECONNECT_MS);
    c->refs = 1;
    *out_client = c;
    return 0;

free_map:
    free(c->fds);
    free(c->shown);
    ipvfs_map_free(&c->map);
free_path:
    free(c->map_path);
free_client:
    free(c);
    return rc;
}

int ipvfs_client_get(const char *map_path, uint32_t client_id,
                     struct ipvfs_client **out_client, struct ipvfs_error *out_err)
{
    struct ipvfs_client *c;
    int rc;

    if (!map_path)
        return client_error(out_err, ENOENT, "finding the server map", NULL, NULL, -1,
                            "neither the hint ipvfs_map nor the environment variable "
                            "IPVFS_MAP names the server map");
    for (c = registry; c; c = c->next) {
        if (strcmp(c->map_path, map_path) == 0) {
            c->refs++;
            *out_client = c;
            return 0;
        }
    }
    if ((rc = client_make(map_path, client_id, &c, out_err)) < 0)
        return rc;
    c->next = registry;
    registry = c;
    *out_client = c;
    return 0;
}

void ipvfs_client_put(struct ipvfs_client *c)
{
    struct ipvfs_client **pp;

    if (!c || --c->refs > 0)
        return;
    for (pp = &registry; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    close_all(c);
    free(c->fds);
    free(c->wins);
    free(c->shown);
    ipvfs_map_free(&c->map);
    free(c->map_path);
    free(c);
}

uint32_t ipvfs_client_nio(const struct ipvfs_client *c)
{
    return c->map.nio;
}

long client_io_rank(const struct ipvfs_client *c, uint32_t io_index)
{
    const struct ipvfs_map_rank *r = ipvfs_map_io_node(&c->map, io_index);

    return r ? (long)r->rank : -1;
}

void conn_drop(struct ipvfs_client *c, uint32_t rank)
{
    if (rank < c->map.nranks && c->fds[rank] >= 0) {
        close(c->fds[rank]);
        c->fds[rank] = -1;
    }
    if (rank < c->map.nranks && c->shown)
        u64map_free(&c->shown[rank]);
}

/* A cached connection is usable when nothing is waiting on it: between
 * requests the server sends nothing, so readable means closed. */
static int conn_alive(int fd)
{
    struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLRDHUP };

    return poll(&pfd, 1, 0) == 0;
}

int conn_cached(struct ipvfs_client *c, uint32_t rank)
{
    if (rank >= c->map.nranks || c->fds[rank] < 0)
        return 0;
    if (conn_alive(c->fds[rank]))
        return 1;
    conn_drop(c, rank);
    return 0;
}

int conn_get_within(struct ipvfs_client *c, uint32_t rank, int connect_ms, int hello_ms,
                    char *msg, size_t msglen)
{
    const struct ipvfs_map_rank *mr;
    struct ipvfs_hello_rep hello;
    struct wire_id id;
    int fd, rc;

    if (conn_cached(c, rank))
        return c->fds[rank];
    if (rank >= c->map.nranks) {
        snprintf(msg, msglen, "server map %s has no rank %u", c->map_path, rank);
        return -ENXIO;
    }
    mr = &c->map.ranks[rank];
    /* without the key, a user proves who it is to the metadata rank and
     * shows capabilities to the I/O nodes */
    id = (struct wire_id){ .who = c->map.have_key ? WIRE_AS_KEY
                                  : (mr->role & IPVFS_ROLE_METADATA) ? WIRE_AS_USER
                                                                     : WIRE_AS_NOBODY,
                           .key = c->map.secret };
    fd = wire_connect_hello(mr->host, mr->port, &id, c->client_id, ++c->next_req_id, connect_ms,
                            hello_ms, &hello, msg, msglen);
    if (fd == -EACCES && strstr(msg, "does not prove"))
        snprintf(msg, msglen, "the server at %s:%u holds another cluster key than map %s "
                 "(a stale map, or another cluster at that address?)", mr->host, mr->port,
                 c->map_path);
    else if (fd == -EACCES && c->map.have_key)
        snprintf(msg, msglen, "the server rejected the cluster key of map %s (stale or "
                 "wrong map?)", c->map_path);
    if (fd < 0)
        return fd;
    /* the application class its READs and WRITEs count for there */
    if ((mr->role & IPVFS_ROLE_IO) && (rc = conn_send_qos_class(c, fd, msg, msglen)) < 0) {
        close(fd);
        return rc;
    }
    c->fds[rank] = fd;
    /* without memory for the windows, requests go one at a time */
    if (!c->wins)
        c->wins = calloc(c->map.nranks, sizeof(*c->wins));
    if (c->wins)
        c->wins[rank] = hello;
    return fd;
}

uint64_t conn_verifier(const struct ipvfs_client *c, uint32_t rank)
{
    return c->wins && rank < c->map.nranks && c->fds[rank] >= 0 ? c->wins[rank].verifier : 0;
}

void conn_window(const struct ipvfs_client *c, uint32_t rank, uint32_t *out_reqs,
                 uint64_t *out_bytes)
{
    const struct ipvfs_hello_rep *w = c->wins && rank < c->map.nranks ? &c->wins[rank] : NULL;

    *out_reqs = w && w->max_inflight ? w->max_inflight : 1;
    *out_bytes = w ? w->window_bytes : 0;
}

int conn_get(struct ipvfs_client *c, uint32_t rank, char *msg, size_t msglen)
{
    return conn_get_within(c, rank, c->connect_ms, c->request_ms, msg, msglen);
}

int conn_cap_held(const struct ipvfs_client *c, uint32_t rank, const struct ipvfs_cap *cap)
{
    uint64_t held, want = (uint64_t)cap->expires_ms << 3 | cap->rights;

    if (!c->shown || rank >= c->map.nranks)
        return 1;
    held = u64map_get(&c->shown[rank], cap->handle);
    return held != U64MAP_NONE && (held >> 3) >= (want >> 3) &&
           (held & cap->rights) == cap->rights;
}

uint64_t conn_cap_mark(struct ipvfs_client *c, uint32_t rank, const struct ipvfs_cap *cap)
{
    uint64_t want = (uint64_t)cap->expires_ms << 3 | cap->rights;

    if (!c->shown || rank >= c->map.nranks)
        return 0;
    return u64map_put(&c->shown[rank], cap->handle, want) < 0 ? 0 : want;
}

void conn_cap_unmark(struct ipvfs_client *c, uint32_t rank, const struct ipvfs_cap *cap,
                     uint64_t val)
{
    if (c->shown && rank < c->map.nranks && val &&
        u64map_get(&c->shown[rank], cap->handle) == val)
        u64map_del(&c->shown[rank], cap->handle);
}

int conn_show_cap(struct ipvfs_client *c, uint32_t rank, int fd, const struct ipvfs_cap *cap,
                  char *msg, size_t msglen)
{
    struct iovec body = { .iov_base = (void *)cap, .iov_len = sizeof(*cap) };
    struct wire_reply rep;
    int rc;

    if (conn_cap_held(c, rank, cap))
        return 0;
    rc = wire_call(fd, IPVFS_OP_CAP, 0, ++c->next_req_id, &body, 1, c->request_ms, &rep);
    if (rc < 0) {
        snprintf(msg, msglen, "CAP: %s", strerror(-rc));
        return rc;
    }
    if (rep.status) {
        rc = -(int)rep.status;
        snprintf(msg, msglen, "%s", rep.len ? (const char *)rep.body : strerror(-rc));
    } else if (!conn_cap_mark(c, rank, cap)) {
        rc = -ENOMEM;
        snprintf(msg, msglen, "out of memory");
    }
    wire_reply_free(&rep);
    return rc;
}
