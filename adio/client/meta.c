/* Namespace operations: open (LOOKUP), attach, close, remove. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Paths are checked once, here at the public boundary. */
static int check_path(const char *path, const char *op, struct ipvfs_error *out_err)
{
    size_t len = path ? strlen(path) : 0;

    if (!path || path[0] != '/')
        return client_error(out_err, EINVAL, op, path, NULL, -1,
                            "the path must be absolute (ipvfs:/dir/file)");
    if (len > IPVFS_MAX_PATH)
        return client_error(out_err, ENAMETOOLONG, op, path, NULL, -1, NULL);
    return 0;
}

long client_meta_rank(const struct ipvfs_client *c)
{
    const struct ipvfs_map_rank *r = ipvfs_map_metadata(&c->map);

    return r ? (long)r->rank : -1;
}

/* LOOKUP's and REMOVE's reply. */
struct entry_cap {
    struct ipvfs_entry entry;
    struct ipvfs_cap cap;
};

/* Sends a metadata request with body (fixed part, path) and reads back an
 * entry and its capability.  once: the request must not go twice (retry.h); *out_in_doubt
 * (may be NULL) says whether a failed request may have been done. */
static int meta_call(struct ipvfs_client *c, uint16_t op, const char *opname, const void *fixed,
                     size_t fixed_len, const char *path, int once, int *out_in_doubt,
                     struct entry_cap *out_entry, struct ipvfs_error *out_err)
{
    struct iovec send[3] = {
        { 0 },
        { .iov_base = (void *)fixed, .iov_len = fixed_len },
        { .iov_base = (void *)path, .iov_len = strlen(path) },
    };
    struct iovec recv = { .iov_base = out_entry, .iov_len = sizeof(*out_entry) };
    struct xfer_req req = {
        .op = op, .send_iov = send, .send_cnt = 3, .recv_iov = &recv, .recv_cnt = 1,
        .once = once,
    };
    long rank = client_meta_rank(c);

    if (out_in_doubt)
        *out_in_doubt = 0;
    if (rank < 0)
        return client_error(out_err, ENXIO, opname, path, c, -1,
                            "the server map names no metadata rank");
    req.rank = (uint32_t)rank;
    if (xfer_run(c, &req, 1) >= 0) {
        if (out_in_doubt)
            *out_in_doubt = req.in_doubt;
        return client_xfer_error(out_err, &req, opname, path, c);
    }
    return 0;
}

static int64_t wall_ms(void)
{
    struct timespec now;

    if (clock_gettime(CLOCK_REALTIME, &now) < 0)
        return 0;
    return (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

int ipvfs_file_attach(struct ipvfs_client *c, const char *path, const struct ipvfs_entry *entry,
                      const struct ipvfs_cap *cap, struct ipvfs_file **out_file,
                      struct ipvfs_error *out_err)
{
    struct ipvfs_file *f;
    int rc = check_path(path, "open", out_err);

    if (rc < 0)
        return rc;
    if (entry->type == IPVFS_TYPE_DIR)
        return client_error(out_err, EISDIR, "open", path, NULL, -1, NULL);
    if (entry->type != IPVFS_TYPE_FILE || entry->stripe_unit == 0 || entry->stripe_factor == 0 ||
        entry->stripe_factor > c->map.nio || entry->first_server >= c->map.nio)
        return client_error(out_err, EINVAL, "open", path, c, -1,
                            "the file's layout does not fit this cluster");
    f = calloc(1, sizeof(*f) + strlen(path) + 1);
    if (f && !(f->verf = calloc(entry->stripe_factor, sizeof(*f->verf)))) {
        free(f);
        f = NULL;
    }
    if (!f)
        return client_error(out_err, ENOMEM, "open", path, NULL, -1, NULL);
    strcpy(f->path, path);
    f->entry = *entry;
    if (cap) {
        f->cap = *cap;
        f->cap_ms = wall_ms();
    }
    f->layout.unit = entry->stripe_unit;
    f->layout.factor = entry->stripe_factor;
    f->layout.first_server = entry->first_server;
    f->layout.nio = c->map.nio;
    f->opts.schedule = IPVFS_SCHED_HASH;
    f->opts.block = IPVFS_DEFAULT_SCHED_BLOCK;
    f->client = c;
    c->refs++;
    *out_file = f;
    return 0;
}

int ipvfs_file_open(struct ipvfs_client *c, const char *path, const struct ipvfs_open_args *args,
                    struct ipvfs_file **out_file, struct ipvfs_error *out_err)
{
    struct ipvfs_lookup_req req = { 0 };
    unsigned access = args->access ? args->access : IPVFS_OPEN_READ | IPVFS_OPEN_WRITE;
    struct ipvfs_error first;
    struct entry_cap ec;
    int in_doubt, rc = check_path(path, "open", out_err);

    if (rc < 0)
        return rc;
    if (args->create)
        req.flags |= IPVFS_LOOKUP_CREATE;
    if (args->create && args->excl)
        req.flags |= IPVFS_LOOKUP_EXCL;
    if (access & IPVFS_OPEN_READ)
        req.flags |= IPVFS_LOOKUP_READ;
    if (access & IPVFS_OPEN_WRITE)
        req.flags |= IPVFS_LOOKUP_WRITE;
    req.stripe_unit = args->stripe_unit;
    req.stripe_factor = args->stripe_factor;
    req.path_len = (uint32_t)strlen(path);
    req.mode = args->mode ? args->mode : 0644;
    req.uid = args->owner_set ? args->uid : (uint32_t)geteuid();
    req.gid = args->owner_set ? args->gid : (uint32_t)getegid();
    if (req.mode & ~07777u)
        return client_error(out_err, EINVAL, "create", path, NULL, -1,
                            "the mode has bits beyond 07777");
    rc = meta_call(c, IPVFS_OP_LOOKUP, args->create ? "create" : "open", &req, sizeof(req), path,
                   (req.flags & IPVFS_LOOKUP_EXCL) != 0, &in_doubt, &ec, &first);
    if (rc < 0 && !(in_doubt && (req.flags & IPVFS_LOOKUP_EXCL)) && out_err)
        *out_err = first;
    if (rc < 0 && in_doubt && (req.flags & IPVFS_LOOKUP_EXCL)) {
        /* the metadata rank went away after an exclusive create reached it:
         * the file may be ours already, so open-or-create it (retry.h).
         * Only a concurrent creator of the same name in that moment would
         * be taken for us. */
        req.flags &= ~(uint32_t)IPVFS_LOOKUP_EXCL;
        rc = meta_call(c, IPVFS_OP_LOOKUP, "create", &req, sizeof(req), path, 0, NULL, &ec,
                       out_err);
    }
    if (rc < 0)
        return rc;
    if ((rc = ipvfs_file_attach(c, path, &ec.entry, &ec.cap, out_file, out_err)) < 0)
        return rc;
    /* the LOOKUP's connection: the incarnation whose pointers and locks
     * this open will use */
    if (ipvfs_map_metadata(&c->map))
        (*out_file)->meta_verifier = conn_verifier(c, ipvfs_map_metadata(&c->map)->rank);
    return 0;
}

int client_cap_fresh(struct ipvfs_file *f, struct ipvfs_error *out_err)
{
    struct ipvfs_lookup_req req = { 0 };
    struct ipvfs_client *c = f->client;
    int64_t now = wall_ms();
    struct entry_cap ec;
    int rc;

    if (c->map.have_key || f->cap.expires_ms == 0 ||
        f->cap.expires_ms - now > (f->cap.expires_ms - f->cap_ms) / 4)
        return 0;
    req.flags = (f->cap.rights & IPVFS_CAP_READ ? IPVFS_LOOKUP_READ : 0) |
                (f->cap.rights & IPVFS_CAP_WRITE ? IPVFS_LOOKUP_WRITE : 0);
    req.path_len = (uint32_t)strlen(f->path);
    if ((rc = meta_call(c, IPVFS_OP_LOOKUP, "renew the capability of", &req, sizeof(req),
                        f->path, 0, NULL, &ec, out_err)) < 0)
        return rc;
    if (ec.entry.handle != f->entry.handle)
        return client_error(out_err, ESTALE, "renew the capability of", f->path, c, -1,
                            "the path names another file than the one opened");
    f->cap = ec.cap;
    f->cap_ms = now;
    return 0;
}

int ipvfs_file_set_opts(struct ipvfs_file *f, const struct ipvfs_io_opts *opts,
                        struct ipvfs_error *out_err)
{
    if (opts->block == 0)
        return client_error(out_err, EINVAL, "set options of", f->path, NULL, -1,
                            "the schedule block must be at least 1 byte");
    if (opts->schedule != IPVFS_SCHED_HASH && opts->schedule != IPVFS_SCHED_FIRST &&
        opts->schedule != IPVFS_SCHED_RANDOM)
        return client_error(out_err, EINVAL, "set options of", f->path, NULL, -1,
                            "unknown I/O schedule");
    if (opts->readahead_set && opts->readahead > IPVFS_MAX_READAHEAD)
        return client_error(out_err, EINVAL, "set options of", f->path, NULL, -1,
                            "a read-ahead window over 1 GiB");
    f->opts = *opts;
    return 0;
}

void ipvfs_file_close(struct ipvfs_file *f)
{
    if (!f)
        return;
    ipvfs_client_put(f->client);
    free(f->verf);
    free(f);
}

/* DF_REMOVE on every datafile of the removed entry; missing ones are fine. */
static int remove_datafiles(struct ipvfs_client *c, const char *path,
                            const struct ipvfs_entry *e, const struct ipvfs_cap *cap,
                            struct ipvfs_error *out_err)
{
    uint32_t n = e->stripe_factor;
    struct xfer_req *reqs = calloc(n, sizeof(*reqs));
    struct iovec *iov = calloc(3u * n, sizeof(*iov));
    struct ipvfs_df_req *body = calloc(n, sizeof(*body));
    struct ipvfs_df_rep *rep = calloc(n, sizeof(*rep));
    int rc = 0;

    if (!reqs || !iov || !body || !rep) {
        rc = client_error(out_err, ENOMEM, "remove", path, NULL, -1, NULL);
        goto free_all;
    }
    for (uint32_t i = 0; i < n; i++) {
        long rank = client_io_rank(c, (e->first_server + i) % c->map.nio);

        if (rank < 0) {
            rc = client_error(out_err, ENXIO, "remove", path, c, -1,
                              "the server map lacks an I/O node of the file");
            goto free_all;
        }
        body[i].handle = e->handle;
        iov[3 * i + 1] = (struct iovec){ .iov_base = &body[i], .iov_len = sizeof(body[i]) };
        iov[3 * i + 2] = (struct iovec){ .iov_base = &rep[i], .iov_len = sizeof(rep[i]) };
        reqs[i] = (struct xfer_req){ .rank = (uint32_t)rank, .op = IPVFS_OP_DF_REMOVE,
                                     .send_iov = &iov[3 * i], .send_cnt = 2,
                                     .recv_iov = &iov[3 * i + 2], .recv_cnt = 1, .cap = cap };
    }
    (void)xfer_run(c, reqs, n);
    for (uint32_t i = 0; i < n && rc == 0; i++)
        if (reqs[i].err && reqs[i].err != ENOENT)
            rc = client_xfer_error(out_err, &reqs[i], "remove (datafile)", path, c);
free_all:
    free(rep);
    free(body);
    free(iov);
    free(reqs);
    return rc;
}

/* ORPHANS (common/proto.h): forgets done, returns up to max orphans. */
static int orphans_call(struct ipvfs_client *c, uint64_t done, uint32_t max,
                        struct ipvfs_entry *out, uint32_t *out_n, struct ipvfs_error *out_err)
{
    struct ipvfs_orphans_req req = { .done = done, .max = max };
    uint32_t head[2];
    struct iovec send[2] = { { 0 }, { .iov_base = &req, .iov_len = sizeof(req) } };
    struct iovec recv[2] = {
        { .iov_base = head, .iov_len = sizeof(head) },
        { .iov_base = out, .iov_len = (size_t)max * sizeof(*out) },
    };
    struct xfer_req xr = {
        .op = IPVFS_OP_ORPHANS, .send_iov = send, .send_cnt = 2,
        .recv_iov = recv, .recv_cnt = max ? 2 : 1,
    };
    long rank = client_meta_rank(c);

    *out_n = 0;
    if (rank < 0)
        return client_error(out_err, ENXIO, "orphans", "/", c, -1,
                            "the server map names no metadata rank");
    xr.rank = (uint32_t)rank;
    if (xfer_run(c, &xr, 1) >= 0)
        return client_xfer_error(out_err, &xr, "orphans", "/", c);
    *out_n = head[0] < max ? head[0] : max;
    return 0;
}

static int layout_fits(const struct ipvfs_client *c, const struct ipvfs_entry *e)
{
    return e->stripe_factor > 0 && e->stripe_factor <= c->map.nio &&
           e->first_server < c->map.nio;
}

/* Says done's datafiles are gone (done 0: none) and deletes the datafiles
 * of orphans, files whose removers died before doing so: one batch of at
 * most max, or with all, batch after batch until none is left or one makes
 * no progress.  What fails stays listed for the next cleaner.  *out_left
 * gets the orphans of the last batch still left. */
static int settle_orphans(struct ipvfs_client *c, uint64_t done, uint32_t max, int all,
                          uint32_t *out_left, struct ipvfs_error *out_err)
{
    struct ipvfs_entry orphans[IPVFS_MAX_ORPHANS];
    struct ipvfs_error ignored;
    uint32_t n, cleaned, dummy;
    int rc;

    do {
        rc = orphans_call(c, done, max, orphans, &n, out_err);
        if (rc < 0)
            return rc;
        cleaned = 0;
        for (uint32_t i = 0; i < n; i++)
            if (orphans[i].handle != done && layout_fits(c, &orphans[i]) &&
                remove_datafiles(c, "(orphan)", &orphans[i], NULL, &ignored) == 0 &&
                orphans_call(c, orphans[i].handle, 0, NULL, &dummy, &ignored) == 0)
                cleaned++;
        done = 0;
    } while (all && n > 0 && cleaned == n);
    *out_left = n - cleaned;
    return 0;
}

int ipvfs_gc(struct ipvfs_client *c, uint32_t *out_left, struct ipvfs_error *out_err)
{
    return settle_orphans(c, 0, IPVFS_MAX_ORPHANS, 1, out_left, out_err);
}

/* After a name went away (REMOVE, or RENAME over a file): deletes the
 * file's datafiles, then orphans. */
int client_settle_removed(struct ipvfs_client *c, const char *path,
                          const struct ipvfs_entry *entry, const struct ipvfs_cap *cap,
                          int all_orphans, struct ipvfs_error *out_err)
{
    struct ipvfs_error ignored;
    uint32_t left;
    int rc;

    if (!layout_fits(c, entry))
        return client_error(out_err, EPROTO, "remove", path, c, client_meta_rank(c),
                            "the removed file's layout does not fit this cluster");
    if ((rc = remove_datafiles(c, path, entry, cap, out_err)) < 0)
        return rc;   /* the file stays an orphan: a later remove deletes its data */
    if (all_orphans)
        return settle_orphans(c, entry->handle, IPVFS_MAX_ORPHANS, 1, &left, out_err);
    (void)settle_orphans(c, entry->handle, IPVFS_CLIENT_ORPHANS_PER_REMOVE, 0, &left, &ignored);
    return 0;
}

/* The remove worker: REMOVE, the file's datafiles, then orphans. */
static int remove_path(struct ipvfs_client *c, const char *path, unsigned flags,
                       struct ipvfs_error *out_err)
{
    struct ipvfs_path_req req = { 0 };
    struct ipvfs_error first;
    struct entry_cap ec;
    uint32_t left;
    int in_doubt, rc = check_path(path, "remove", out_err);

    if (rc < 0)
        return rc;
    req.path_len = (uint32_t)strlen(path);
    req.flags = (flags & IPVFS_RM_DIR) ? IPVFS_REMOVE_DIR : 0;
    rc = meta_call(c, IPVFS_OP_REMOVE, "remove", &req, sizeof(req), path, 1, &in_doubt, &ec,
                   &first);
    if (rc < 0 && !in_doubt && out_err)
        *out_err = first;
    if (rc < 0 && in_doubt) {
        /* the metadata rank went away after the REMOVE reached it: ask
         * again; ENOENT then means the first one did it (the name and its
         * orphan record go in one transaction), and the orphan sweep below
         * deletes its datafiles */
        rc = meta_call(c, IPVFS_OP_REMOVE, "remove", &req, sizeof(req), path, 1, NULL, &ec,
                       out_err);
        if (rc == -ENOENT)
            return settle_orphans(c, 0, IPVFS_MAX_ORPHANS, 1, &left, out_err);
    }
    if (rc < 0 || ec.entry.type != IPVFS_TYPE_FILE)
        return rc;
    return client_settle_removed(c, path, &ec.entry, &ec.cap, !!(flags & IPVFS_RM_ALL_ORPHANS),
                                 out_err);
}

int ipvfs_remove(struct ipvfs_client *c, const char *path, struct ipvfs_error *out_err)
{
    return remove_path(c, path, 0, out_err);
}

int ipvfs_remove_flags(struct ipvfs_client *c, const char *path, unsigned flags,
                       struct ipvfs_error *out_err)
{
    return remove_path(c, path, flags, out_err);
}
