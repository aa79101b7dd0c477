/* Names and attributes outside MPI-IO: GETATTR, SETATTR, RENAME, MKDIR and
 * READDIR on the metadata rank, and DF_STATFS on the I/O nodes (df), for
 * ipvfs-ctl and the FUSE mount.  Uses
 * the request engine (xfer.c) for fixed-size replies, the administrative
 * call (admin.c) for READDIR's variable one, and meta.c to delete the
 * datafiles of a file a rename replaced. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check_path(const char *path, const char *op, struct ipvfs_error *out_err)
{
    if (!path || path[0] != '/')
        return client_error(out_err, EINVAL, op, path, NULL, -1,
                            "the path must be absolute (ipvfs:/dir/file)");
    if (strlen(path) >= IPVFS_MAX_PATH)
        return client_error(out_err, ENAMETOOLONG, op, path, NULL, -1, NULL);
    return 0;
}

/* One request to the metadata rank: fixed part, up to two paths, and a
 * reply of exactly out_len bytes (0: none). */
static int meta_req(struct ipvfs_client *c, uint16_t op, const char *opname, const void *fixed,
                    size_t fixed_len, const char *p1, const char *p2, void *out, size_t out_len,
                    struct ipvfs_error *out_err)
{
    struct iovec send[4] = {
        { 0 },
        { .iov_base = (void *)fixed, .iov_len = fixed_len },
        { .iov_base = (void *)p1, .iov_len = strlen(p1) },
        { .iov_base = (void *)p2, .iov_len = p2 ? strlen(p2) : 0 },
    };
    struct iovec recv = { .iov_base = out, .iov_len = out_len };
    struct xfer_req req = {
        .op = op, .send_iov = send, .send_cnt = p2 ? 4 : 3,
        .recv_iov = &recv, .recv_cnt = out_len ? 1 : 0,
    };
    long rank = client_meta_rank(c);

    if (rank < 0)
        return client_error(out_err, ENXIO, opname, p1, c, -1,
                            "the server map names no metadata rank");
    req.rank = (uint32_t)rank;
    if (xfer_run(c, &req, 1) >= 0)
        return client_xfer_error(out_err, &req, opname, p1, c);
    return 0;
}

int ipvfs_getattr(struct ipvfs_client *c, const char *path, struct ipvfs_attr *out_attr,
                  struct ipvfs_error *out_err)
{
    struct ipvfs_path_req req = { 0 };
    int rc = check_path(path, "stat", out_err);

    if (rc < 0)
        return rc;
    req.path_len = (uint32_t)strlen(path);
    return meta_req(c, IPVFS_OP_GETATTR, "stat", &req, sizeof(req), path, NULL, out_attr,
                    sizeof(*out_attr), out_err);
}

int ipvfs_stat_path(struct ipvfs_client *c, const char *path, struct ipvfs_stat *out_stat,
                    struct ipvfs_error *out_err)
{
    struct ipvfs_file *f;
    int rc;

    memset(out_stat, 0, sizeof(*out_stat));
    if ((rc = ipvfs_getattr(c, path, &out_stat->attr, out_err)) < 0)
        return rc;
    if (out_stat->attr.entry.type != IPVFS_TYPE_FILE)
        return 0;
    /* the size needs a capability for the handle, with no rights */
    if ((rc = ipvfs_file_open(c, path, &(struct ipvfs_open_args){ .access = IPVFS_OPEN_STAT }, &f,
                              out_err)) < 0)
        return rc;
    rc = ipvfs_get_size(f, &out_stat->size, out_err);
    ipvfs_file_close(f);
    return rc;
}

int ipvfs_setattr(struct ipvfs_client *c, const char *path, const struct ipvfs_setattr_req *req,
                  struct ipvfs_attr *out_attr, struct ipvfs_error *out_err)
{
    struct ipvfs_setattr_req body = *req;
    struct ipvfs_attr ignored;
    int rc = check_path(path, "setattr", out_err);

    if (rc < 0)
        return rc;
    body.path_len = (uint32_t)strlen(path);
    return meta_req(c, IPVFS_OP_SETATTR, "setattr", &body, sizeof(body), path, NULL,
                    out_attr ? out_attr : &ignored, sizeof(ignored), out_err);
}

int ipvfs_rename(struct ipvfs_client *c, const char *src, const char *dst, uint32_t flags,
                 struct ipvfs_error *out_err)
{
    struct ipvfs_rename_req req = { .flags = flags };
    struct ipvfs_rename_rep rep;
    int rc;

    if ((rc = check_path(src, "rename", out_err)) < 0 ||
        (rc = check_path(dst, "rename", out_err)) < 0)
        return rc;
    req.src_len = (uint32_t)strlen(src);
    req.dst_len = (uint32_t)strlen(dst);
    rc = meta_req(c, IPVFS_OP_RENAME, "rename", &req, sizeof(req), src, dst, &rep, sizeof(rep),
                  out_err);
    if (rc < 0 || !rep.replaced)
        return rc;
    return client_settle_removed(c, dst, &rep.entry, &rep.cap, 0, out_err);
}

int ipvfs_mkdir(struct ipvfs_client *c, const char *path, uint32_t mode,
                struct ipvfs_error *out_err)
{
    struct ipvfs_mkdir_req req = { .mode = mode, .uid = (uint32_t)geteuid(),
                                   .gid = (uint32_t)getegid() };
    int rc = check_path(path, "mkdir", out_err);

    if (rc < 0)
        return rc;
    if (mode & ~07777u)
        return client_error(out_err, EINVAL, "mkdir", path, NULL, -1,
                            "the mode has bits beyond 07777");
    req.path_len = (uint32_t)strlen(path);
    return meta_req(c, IPVFS_OP_MKDIR, "mkdir", &req, sizeof(req), path, NULL, NULL, 0, out_err);
}

/* Walks READDIR's reply body (proto.h); EPROTO when it is malformed. */
static int walk_listing(const uint8_t *p, size_t len, ipvfs_dir_fn each, void *arg)
{
    char name[IPVFS_MAX_NAME + 1];
    uint32_t count, head[2];
    size_t off = sizeof(count);
    int rc;

    if (len < sizeof(count))
        return -EPROTO;
    memcpy(&count, p, sizeof(count));
    for (uint32_t i = 0; i < count; i++) {
        if (len - off < sizeof(head))
            return -EPROTO;
        memcpy(head, p + off, sizeof(head));
        off += sizeof(head);
        if (head[1] >= sizeof(name) || len - off < head[1])
            return -EPROTO;
        memcpy(name, p + off, head[1]);
        name[head[1]] = '\0';
        off += head[1];
        if ((rc = each(arg, name, head[0])) != 0)
            return rc;
    }
    return 0;
}

int ipvfs_readdir(struct ipvfs_client *c, const char *path, ipvfs_dir_fn each, void *arg,
                  struct ipvfs_error *out_err)
{
    struct ipvfs_path_req req = { 0 };
    struct iovec body[2] = { { &req, sizeof(req) }, { (void *)path, 0 } };
    long rank = client_meta_rank(c);
    struct wire_reply rep;
    int rc = check_path(path, "list", out_err);

    if (rc < 0)
        return rc;
    if (rank < 0)
        return client_error(out_err, ENXIO, "list", path, c, -1,
                            "the server map names no metadata rank");
    req.path_len = (uint32_t)strlen(path);
    body[1].iov_len = req.path_len;
    rc = ipvfs_admin_call(c, (uint32_t)rank, IPVFS_OP_READDIR, 0, body, 2, c->request_ms, &rep,
                          out_err);
    if (rc < 0)
        return rc;
    if (rep.status)
        rc = client_error(out_err, (int)rep.status, "list", path, c, rank,
                          rep.len ? (const char *)rep.body : NULL);
    else if ((rc = walk_listing(rep.body, rep.len, each, arg)) == -EPROTO)
        rc = client_error(out_err, EPROTO, "list", path, c, rank, "malformed directory listing");
    wire_reply_free(&rep);
    return rc;
}

/* The reply of DF_STATFS sent to I/O node io under req_id. */
static int statfs_recv(struct ipvfs_client *c, uint32_t rank, uint64_t req_id,
                       struct ipvfs_statfs_rep *out, struct ipvfs_error *out_err)
{
    struct wire_reply rep;
    int rc = ipvfs_admin_recv(c, rank, IPVFS_OP_DF_STATFS, req_id, c->request_ms, &rep, out_err);

    if (rc < 0)
        return rc;
    if (rep.status)
        rc = client_error(out_err, (int)rep.status, "statfs", NULL, c, rank,
                          rep.len ? (const char *)rep.body : NULL);
    else if (rep.len != sizeof(*out))
        rc = client_error(out_err, EPROTO, "statfs", NULL, c, rank, "malformed DF_STATFS reply");
    else
        memcpy(out, rep.body, sizeof(*out));
    wire_reply_free(&rep);
    return rc;
}

int ipvfs_statfs(struct ipvfs_client *c, struct ipvfs_statfs_rep *out_io,
                 struct ipvfs_error *out_err)
{
    uint32_t nio = c->map.nio, sent;
    uint64_t *ids = calloc(nio ? nio : 1, sizeof(*ids));
    int rc = 0, r;

    if (!ids)
        return client_error(out_err, ENOMEM, "statfs", NULL, c, -1, NULL);
    /* all I/O nodes at once (one outstanding call per rank), then the replies */
    for (sent = 0; sent < nio; sent++) {
        long rank = client_io_rank(c, sent);

        if (rank < 0) {
            rc = client_error(out_err, ENXIO, "statfs", NULL, c, -1, "the map lacks an I/O node");
            break;
        }
        if ((rc = ipvfs_admin_send(c, (uint32_t)rank, IPVFS_OP_DF_STATFS, 0, NULL, 0,
                                   c->request_ms, &ids[sent], out_err)) < 0)
            break;
    }
    for (uint32_t i = 0; i < sent; i++) {
        r = statfs_recv(c, (uint32_t)client_io_rank(c, i), ids[i], &out_io[i],
                        rc < 0 ? NULL : out_err);
        rc = rc < 0 ? rc : r;
    }
    free(ids);
    return rc;
}
