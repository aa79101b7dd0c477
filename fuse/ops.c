/* The operations of the mount: each takes a client from the pool, calls
 * the client library, gives the client back and turns the library's error
 * into the errno the kernel gets (fs_err, the one place that does).
 * Names and attributes go to the metadata rank; data to the I/O nodes. */
#include "fuse/fusefs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/log.h"

static struct fusefs *fs_state(void)
{
    return fuse_get_context()->private_data;
}

/* The library's error as the kernel's errno: failures of the servers'
 * reach (time limits, closed or refused connections, a malformed reply,
 * another protocol version) are EIO, so a dead or hung server never looks
 * like a missing file; the servers' own refusals pass as they are.
 * Logged unless expected (ENOENT, EEXIST: probes). */
static int fs_err(const struct ipvfs_error *err, const char *op)
{
    int code = err->code ? err->code : EIO;

    switch (code) {
    case ETIMEDOUT: case ECONNREFUSED: case ECONNRESET: case ECONNABORTED: case EPIPE:
    case EPROTO: case EPROTONOSUPPORT: case EHOSTUNREACH: case ENETUNREACH: case ENXIO:
    case ESTALE: case EBADMSG:
        log_warn("%s: %s (EIO)", op, err->msg);
        return -EIO;
    case ENOENT: case EEXIST:
        return -code;
    default:
        log_info("%s: %s", op, err->msg);
        return -code;
    }
}

static void fill_stat(const struct ipvfs_stat *s, struct stat *out)
{
    const struct ipvfs_attr *a = &s->attr;

    memset(out, 0, sizeof(*out));
    out->st_mode = (a->entry.type == IPVFS_TYPE_DIR ? S_IFDIR : S_IFREG) | (a->mode & 07777);
    out->st_nlink = a->entry.type == IPVFS_TYPE_DIR ? 2 : 1;
    out->st_uid = a->uid;
    out->st_gid = a->gid;
    out->st_size = (off_t)s->size;
    out->st_blksize = FUSEFS_MAX_IO;
    out->st_blocks = (blkcnt_t)((s->size + 511) / 512);
    out->st_atim = (struct timespec){ a->atime_ns / 1000000000, a->atime_ns % 1000000000 };
    out->st_mtim = (struct timespec){ a->mtime_ns / 1000000000, a->mtime_ns % 1000000000 };
    out->st_ctim = (struct timespec){ a->ctime_ns / 1000000000, a->ctime_ns % 1000000000 };
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct ipvfs_error err;
    struct ipvfs_stat s;
    int rc;

    (void)fi;
    rc = ipvfs_stat_path(c, path, &s, &err);
    fusefs_pool_put(&fs->pool, c);
    if (rc < 0)
        return fs_err(&err, "getattr");
    fill_stat(&s, st);
    return 0;
}

struct dir_fill {
    void *buf;
    fuse_fill_dir_t filler;
};

static int dir_entry(void *arg, const char *name, uint32_t type)
{
    struct dir_fill *d = arg;

    (void)type;
    return d->filler(d->buf, name, NULL, 0, 0) ? 1 : 0;   /* 1: the buffer is full */
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    struct fusefs *fs = fs_state();
    struct dir_fill d = { buf, filler };
    struct ipvfs_client *c;
    struct ipvfs_error err;
    int rc;

    (void)off;
    (void)fi;
    (void)flags;
    if (filler(buf, ".", NULL, 0, 0) || filler(buf, "..", NULL, 0, 0))
        return -ENOMEM;
    c = fusefs_pool_get(&fs->pool);
    rc = ipvfs_readdir(c, path, dir_entry, &d, &err);
    fusefs_pool_put(&fs->pool, c);
    if (rc < 0)
        return fs_err(&err, "readdir");
    return rc > 0 ? -ENOMEM : 0;
}

/* SETATTR of path with the pool's client. */
static int set_attr(const char *path, const struct ipvfs_setattr_req *req, const char *op)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct ipvfs_error err;
    int rc;

    rc = ipvfs_setattr(c, path, req, NULL, &err);
    fusefs_pool_put(&fs->pool, c);
    return rc < 0 ? fs_err(&err, op) : 0;
}

static int fs_mkdir(const char *path, mode_t mode)
{
    struct fusefs *fs = fs_state();
    const struct fuse_context *ctx = fuse_get_context();
    struct ipvfs_setattr_req own = { .valid = IPVFS_SETATTR_UID | IPVFS_SETATTR_GID,
                                     .uid = ctx->uid, .gid = ctx->gid };
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct ipvfs_error err;
    int rc;

    rc = ipvfs_mkdir(c, path, mode & 07777, &err);
    fusefs_pool_put(&fs->pool, c);
    if (rc < 0)
        return fs_err(&err, "mkdir");
    /* ipvfs_mkdir names the mount's user; another caller (allow_other) owns it */
    if (ctx->uid != geteuid() || ctx->gid != getegid())
        return set_attr(path, &own, "mkdir");
    return 0;
}

/* Opens (creating with args->create) and stores the entry in fi->fh. */
static int open_entry(const char *path, const struct ipvfs_open_args *args,
                      struct fuse_file_info *fi)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct fusefs_handle *h = calloc(1, sizeof(*h) + strlen(path) + 1);
    struct ipvfs_open_args a = *args;
    struct ipvfs_error err;
    struct ipvfs_file *f;
    int rc;

    /* the rights open(2)'s flags ask for (a mount without the key needs them) */
    a.access = (fi->flags & O_ACCMODE) == O_RDONLY ? IPVFS_OPEN_READ
               : (fi->flags & O_ACCMODE) == O_WRONLY ? IPVFS_OPEN_WRITE
                                                     : IPVFS_OPEN_READ | IPVFS_OPEN_WRITE;
    if (!h) {
        fusefs_pool_put(&fs->pool, c);
        return -ENOMEM;
    }
    strcpy(h->path, path);
    rc = ipvfs_file_open(c, path, &a, &f, &err);
    if (rc == 0 && (fi->flags & O_TRUNC) && !f->entry.created) {
        rc = ipvfs_resize(f, 0, &err);
        h->written = 1;
    }
    if (rc == 0) {
        h->entry = f->entry;
        h->cap = f->cap;
        ipvfs_file_close(f);
    }
    fusefs_pool_put(&fs->pool, c);
    if (rc < 0) {
        free(h);
        return fs_err(&err, args->create ? "create" : "open");
    }
    fi->fh = (uint64_t)(uintptr_t)h;
    fi->keep_cache = 0;   /* close-to-open: see fusefs.h */
    return 0;
}

static int fs_release(const char *path, struct fuse_file_info *fi);

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    const struct fuse_context *ctx = fuse_get_context();
    struct ipvfs_open_args args = {
        .create = 1, .excl = !!(fi->flags & O_EXCL), .mode = mode & 07777,
        .owner_set = 1, .uid = ctx->uid, .gid = ctx->gid,
    };
    struct ipvfs_setattr_req none = { .valid = IPVFS_SETATTR_MODE, .mode = 0 };
    int rc = open_entry(path, &args, fi);

    /* the library reads mode 0 as "default" (0644): mode 0 itself follows */
    if (rc == 0 && args.mode == 0 && (rc = set_attr(path, &none, "create")) < 0)
        fs_release(path, fi);
    return rc;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
    struct ipvfs_open_args args = { 0 };

    return open_entry(path, &args, fi);
}

static struct fusefs_handle *handle_of(const struct fuse_file_info *fi)
{
    return (struct fusefs_handle *)(uintptr_t)fi->fh;
}

/* The open file on client c, with 1 MiB schedule blocks (one request per
 * I/O node for a whole FUSE request). */
static int attach(struct ipvfs_client *c, const struct fusefs_handle *h, struct ipvfs_file **out,
                  struct ipvfs_error *out_err)
{
    struct ipvfs_io_opts opts = { .schedule = IPVFS_SCHED_HASH, .block = FUSEFS_MAX_IO };
    int rc = ipvfs_file_attach(c, h->path, &h->entry, &h->cap, out, out_err);

    if (rc == 0 && (rc = ipvfs_file_set_opts(*out, &opts, out_err)) < 0)
        ipvfs_file_close(*out);
    return rc;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct ipvfs_error err;
    struct ipvfs_file *f;
    uint64_t got = 0;
    int rc;

    (void)path;
    if ((rc = attach(c, handle_of(fi), &f, &err)) == 0) {
        rc = ipvfs_read(f, (uint64_t)off, buf, size, &got, &err);
        ipvfs_file_close(f);
    }
    fusefs_pool_put(&fs->pool, c);
    return rc < 0 ? fs_err(&err, "read") : (int)got;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct fusefs_handle *h = handle_of(fi);
    struct ipvfs_error err;
    struct ipvfs_file *f;
    uint64_t done = 0;
    int rc;

    (void)path;
    if ((rc = attach(c, h, &f, &err)) == 0) {
        rc = ipvfs_write(f, (uint64_t)off, buf, size, &done, &err);
        ipvfs_file_close(f);
    }
    fusefs_pool_put(&fs->pool, c);
    if (rc < 0)
        return fs_err(&err, "write");
    __atomic_store_n(&h->written, 1, __ATOMIC_RELAXED);   /* writes may run in parallel */
    return (int)done;
}

/* mtime after writes: once per close, not per write (one SETATTR).  path
 * is libfuse's current name of the file (a file unlinked while open has
 * been renamed to .fuse_hidden*); one gone meanwhile is no error. */
static int touch_written(const char *path, struct fusefs_handle *h)
{
    struct ipvfs_setattr_req req = { .valid = IPVFS_SETATTR_MTIME_NOW };
    int rc;

    if (!__atomic_exchange_n(&h->written, 0, __ATOMIC_RELAXED) || !path)
        return 0;
    rc = set_attr(path, &req, "mtime");
    return rc == -ENOENT ? 0 : rc;
}

static int fs_flush(const char *path, struct fuse_file_info *fi)
{
    return touch_written(path, handle_of(fi));
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
    struct fusefs_handle *h = handle_of(fi);

    (void)touch_written(path, h);
    free(h);
    return 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct ipvfs_error err;
    struct ipvfs_file *f;
    int rc;

    (void)path;
    (void)datasync;
    if ((rc = attach(c, handle_of(fi), &f, &err)) == 0) {
        rc = ipvfs_sync(f, &err);
        ipvfs_file_close(f);
    }
    fusefs_pool_put(&fs->pool, c);
    return rc < 0 ? fs_err(&err, "fsync") : 0;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_setattr_req req = { .valid = IPVFS_SETATTR_MTIME_NOW };
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct ipvfs_open_args args = { 0 };
    struct ipvfs_error err;
    struct ipvfs_file *f;
    int rc;

    rc = fi ? ipvfs_file_attach(c, path, &handle_of(fi)->entry, &handle_of(fi)->cap, &f, &err)
            : ipvfs_file_open(c, path, &args, &f, &err);
    if (rc == 0) {
        rc = ipvfs_resize(f, (uint64_t)size, &err);
        ipvfs_file_close(f);
    }
    if (rc == 0)
        rc = ipvfs_setattr(c, path, &req, NULL, &err);
    fusefs_pool_put(&fs->pool, c);
    return rc < 0 ? fs_err(&err, "truncate") : 0;
}

static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    struct ipvfs_setattr_req req = { .valid = IPVFS_SETATTR_MODE, .mode = mode & 07777 };

    (void)fi;
    return set_attr(path, &req, "chmod");
}

static int fs_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    struct ipvfs_setattr_req req = { .uid = uid, .gid = gid };

    (void)fi;
    if (uid != (uid_t)-1)
        req.valid |= IPVFS_SETATTR_UID;
    if (gid != (gid_t)-1)
        req.valid |= IPVFS_SETATTR_GID;
    return set_attr(path, &req, "chown");
}

/* One time of utimensat(2): now, omitted, or a value. */
static void set_time(const struct timespec *ts, uint32_t now_bit, uint32_t value_bit,
                     int64_t *out_ns, uint32_t *io_valid)
{
    if (ts->tv_nsec == UTIME_OMIT)
        return;
    if (ts->tv_nsec == UTIME_NOW) {
        *io_valid |= now_bit;
        return;
    }
    *io_valid |= value_bit;
    *out_ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    struct ipvfs_setattr_req req = { 0 };

    (void)fi;
    set_time(&tv[0], IPVFS_SETATTR_ATIME_NOW, IPVFS_SETATTR_ATIME, &req.atime_ns, &req.valid);
    set_time(&tv[1], IPVFS_SETATTR_MTIME_NOW, IPVFS_SETATTR_MTIME, &req.mtime_ns, &req.valid);
    return set_attr(path, &req, "utimens");
}

static int fs_unlink(const char *path)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct ipvfs_error err;
    int rc;

    rc = ipvfs_remove(c, path, &err);
    fusefs_pool_put(&fs->pool, c);
    return rc < 0 ? fs_err(&err, "unlink") : 0;
}

static int fs_rmdir(const char *path)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    struct ipvfs_error err;
    struct ipvfs_attr a;
    int rc;

    rc = ipvfs_getattr(c, path, &a, &err);
    if (rc == 0 && a.entry.type != IPVFS_TYPE_DIR) {
        fusefs_pool_put(&fs->pool, c);
        return -ENOTDIR;
    }
    if (rc == 0)
        rc = ipvfs_remove_flags(c, path, IPVFS_RM_DIR, &err);
    fusefs_pool_put(&fs->pool, c);
    return rc < 0 ? fs_err(&err, "rmdir") : 0;
}

static int fs_rename(const char *from, const char *to, unsigned int flags)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c;
    struct ipvfs_error err;
    int rc;

    if (flags & ~(unsigned)RENAME_NOREPLACE)
        return -EINVAL;   /* RENAME_EXCHANGE, RENAME_WHITEOUT: not supported */
    c = fusefs_pool_get(&fs->pool);
    rc = ipvfs_rename(c, from, to, (flags & RENAME_NOREPLACE) ? IPVFS_RENAME_NOREPLACE : 0, &err);
    fusefs_pool_put(&fs->pool, c);
    return rc < 0 ? fs_err(&err, "rename") : 0;
}

/* The sums of the I/O nodes' datafile stores (DF_STATFS, all at once):
 * df's size and free space.  Blocks of FUSEFS_MAX_IO bytes; files are
 * not counted (f_files 0: df -i shows nothing). */
static int fs_statfs(const char *path, struct statvfs *st)
{
    struct fusefs *fs = fs_state();
    struct ipvfs_client *c = fusefs_pool_get(&fs->pool);
    uint32_t nio = ipvfs_client_map(c)->nio;
    struct ipvfs_statfs_rep *io = calloc(nio ? nio : 1, sizeof(*io));
    uint64_t total = 0, free_bytes = 0;
    struct ipvfs_error err;
    int rc;

    (void)path;
    if (!io) {
        fusefs_pool_put(&fs->pool, c);
        return -ENOMEM;
    }
    rc = ipvfs_statfs(c, io, &err);
    fusefs_pool_put(&fs->pool, c);
    for (uint32_t i = 0; rc == 0 && i < nio; i++) {
        total += io[i].total_bytes;
        free_bytes += io[i].free_bytes;
    }
    free(io);
    if (rc < 0)
        return fs_err(&err, "statfs");
    memset(st, 0, sizeof(*st));
    st->f_bsize = st->f_frsize = FUSEFS_MAX_IO;
    st->f_blocks = total / FUSEFS_MAX_IO;
    st->f_bfree = st->f_bavail = free_bytes / FUSEFS_MAX_IO;
    st->f_namemax = IPVFS_MAX_NAME;
    return 0;
}

/* Symbolic and hard links, device nodes and FIFOs: the namespace keeps
 * files and directories only. */
static int fs_symlink(const char *target, const char *path)
{
    (void)target;
    (void)path;
    return -ENOTSUP;
}

static int fs_link(const char *from, const char *to)
{
    (void)from;
    (void)to;
    return -ENOTSUP;
}

static int fs_mknod(const char *path, mode_t mode, dev_t dev)
{
    (void)path;
    (void)mode;
    (void)dev;
    return -ENOTSUP;
}

/* What the kernel may keep in flight.  max_readahead is an upper bound:
 * the kernel takes the smaller of it and the bdi's read_ahead_kb, which
 * main.c raised before this INIT for a root mount (a user's mount keeps
 * the kernel's 128 KiB).  Without auto_inval_data the kernel does not send
 * a GETATTR (a metadata and an I/O node round trip) before every read;
 * close-to-open holds anyway (keep_cache off: open drops the pages), and
 * a read past the cached size still refreshes it. */
static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    conn->max_write = FUSEFS_MAX_IO;
    conn->max_read = FUSEFS_MAX_IO;
    conn->max_readahead = FUSEFS_READAHEAD_KB * 1024u;
    conn->max_background = FUSEFS_MAX_BACKGROUND;
    conn->congestion_threshold = FUSEFS_MAX_BACKGROUND * 3 / 4;
    conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
    cfg->kernel_cache = 0;
    cfg->auto_cache = 0;
    cfg->use_ino = 0;
    return fuse_get_context()->private_data;
}

const struct fuse_operations fusefs_ops = {
    .init = fs_init,
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .mkdir = fs_mkdir,
    .create = fs_create,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .flush = fs_flush,
    .release = fs_release,
    .fsync = fs_fsync,
    .truncate = fs_truncate,
    .chmod = fs_chmod,
    .chown = fs_chown,
    .utimens = fs_utimens,
    .unlink = fs_unlink,
    .rmdir = fs_rmdir,
    .rename = fs_rename,
    .statfs = fs_statfs,
    .symlink = fs_symlink,
    .link = fs_link,
    .mknod = fs_mknod,
};
