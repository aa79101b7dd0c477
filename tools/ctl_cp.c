/* ipvfs-ctl cp: copies files and trees between iPVFS (ipvfs:/PATH), local
 * files and standard input/output (-), through the client library's file
 * calls: no wire code of its own.
 *
 * Streaming: the file is moved in chunks of CP_CHUNK bytes through two
 * buffers.  The iPVFS side of chunk k+1 is started asynchronously
 * (ipvfs_aio_start: one request per I/O node and schedule block of
 * CP_BLOCK, all in flight at once) before the local side of chunk k is
 * done, so the network and the local disk work together.
 *
 * Size and holes: the copy has exactly the source's size.  Runs of zeros
 * of at least CP_ZERO_RUN bytes are not written: iPVFS and local files
 * read unwritten ranges as zeros, so they become holes (a destination is
 * new, or emptied first with -f).  Local sources are read by their data
 * extents (SEEK_DATA/SEEK_HOLE), so their holes are never read.  Standard
 * output gets every byte.
 *
 * Overwriting: an existing destination file is refused (EEXIST) unless
 * -f; an existing device or FIFO (/dev/null) is simply written.  A destination that is a directory receives the source under its
 * name, as with cp(1).  -r copies a tree; without it a directory source
 * is refused.  Symbolic links met inside a local tree are skipped with a
 * warning (the namespace has none, and following them could loop or leave
 * the tree); a link named on the command line is followed, as by cp(1). */
#include "tools/ctl_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CP_CHUNK    (16u << 20)
#define CP_BLOCK    (1u << 20)
#define CP_ZERO_RUN (64u << 10)

enum cp_kind { CP_LOCAL, CP_IPVFS, CP_STDIO };

struct cp_end {
    enum cp_kind kind;
    char path[IPVFS_MAX_PATH + 1];
};

/* One copy job's state, passed to every step. */
struct cp_job {
    struct ipvfs_client *client;
    int force;
    int recursive;
    uint8_t *buf[2];
};

/* One side of a file copy: an open iPVFS file or a local descriptor. */
struct cp_file {
    enum cp_kind kind;
    struct ipvfs_file *f;
    int fd;
    const char *name;      /* for messages */
};

static int cp_fail(const char *what, const char *name, const char *detail)
{
    fprintf(stderr, "ipvfs-ctl: cp: %s %s: %s\n", what, name, detail);
    return -1;
}

static int cp_errno(const char *what, const char *name, int err)
{
    return cp_fail(what, name, strerror(err));
}

static int parse_end(const char *text, struct cp_end *out)
{
    int rc;

    if (strcmp(text, "-") == 0) {
        out->kind = CP_STDIO;
        snprintf(out->path, sizeof(out->path), "-");
        return 0;
    }
    rc = ctl_ipvfs_path(text, 0, out->path, sizeof(out->path));
    if (rc < 0)
        return cp_fail("path", text, "an iPVFS path is ipvfs:/ABSOLUTE/PATH, below 4096 bytes");
    if (rc == 1) {
        out->kind = CP_IPVFS;
        return 0;
    }
    if (strlen(text) >= sizeof(out->path))
        return cp_fail("path", text, "too long");
    out->kind = CP_LOCAL;
    snprintf(out->path, sizeof(out->path), "%s", text);
    return 0;
}

/* ---- what an end is -------------------------------------------------------- */

/* Type of path: IPVFS_TYPE_FILE/DIR, 0 when missing, -1 after a message.
 * *out_mode gets the permission bits. */
static int end_type(struct cp_job *job, const struct cp_end *e, uint32_t *out_mode)
{
    struct ipvfs_error err;
    struct ipvfs_attr a;
    struct stat st;

    *out_mode = 0644;
    if (e->kind == CP_STDIO)
        return IPVFS_TYPE_FILE;
    if (e->kind == CP_LOCAL) {
        if (stat(e->path, &st) < 0)
            return errno == ENOENT ? 0 : cp_errno("stat", e->path, errno);
        *out_mode = st.st_mode & 07777;
        if (S_ISDIR(st.st_mode))
            return IPVFS_TYPE_DIR;
        if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
            return IPVFS_TYPE_FILE;
        return cp_fail("copy", e->path, "neither a file nor a directory");
    }
    if (ipvfs_getattr(job->client, e->path, &a, &err) < 0)
        return err.code == ENOENT ? 0 : cp_fail("stat", e->path, err.msg);
    *out_mode = a.mode;
    return (int)a.entry.type;
}

/* dst/NAME into out (local or iPVFS syntax alike). */
static int join(const struct cp_end *dir, const char *name, struct cp_end *out)
{
    size_t n = strlen(dir->path);
    int len;

    out->kind = dir->kind;
    len = snprintf(out->path, sizeof(out->path), "%s%s%s", dir->path,
                   n && dir->path[n - 1] == '/' ? "" : "/", name);
    if (len < 0 || (size_t)len >= sizeof(out->path))
        return cp_fail("path", dir->path, "too long with the source's name");
    return 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash && slash[1] ? slash + 1 : path;
}

/* ---- opening the two sides ------------------------------------------------- */

static int open_src(struct cp_job *job, const struct cp_end *e, struct cp_file *out,
                    uint64_t *out_size)
{
    struct ipvfs_open_args args = { .access = IPVFS_OPEN_READ };
    struct ipvfs_io_opts opts = { .schedule = IPVFS_SCHED_HASH, .block = CP_BLOCK };
    struct ipvfs_error err;
    struct stat st;

    memset(out, 0, sizeof(*out));
    out->kind = e->kind;
    out->name = e->path;
    out->fd = -1;
    *out_size = 0;
    if (e->kind == CP_STDIO) {
        out->fd = STDIN_FILENO;
        return 0;
    }
    if (e->kind == CP_LOCAL) {
        if ((out->fd = open(e->path, O_RDONLY)) < 0)
            return cp_errno("open", e->path, errno);
        if (fstat(out->fd, &st) < 0)
            return cp_errno("stat", e->path, errno);
        *out_size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
        if (!S_ISREG(st.st_mode))
            out->kind = CP_STDIO;   /* a pipe or device: read to its end */
        return 0;
    }
    if (ipvfs_file_open(job->client, e->path, &args, &out->f, &err) < 0 ||
        ipvfs_file_set_opts(out->f, &opts, &err) < 0 ||
        ipvfs_get_size(out->f, out_size, &err) < 0)
        return cp_fail("open", e->path, err.msg);
    return 0;
}

static int open_dst(struct cp_job *job, const struct cp_end *e, uint32_t mode,
                    struct cp_file *out)
{
    struct ipvfs_open_args args = { .create = 1, .excl = !job->force, .mode = mode,
                                    .access = IPVFS_OPEN_WRITE };
    struct ipvfs_io_opts opts = { .schedule = IPVFS_SCHED_HASH, .block = CP_BLOCK };
    struct ipvfs_error err;
    struct stat st;

    memset(out, 0, sizeof(*out));
    out->kind = e->kind;
    out->name = e->path;
    out->fd = -1;
    if (e->kind == CP_STDIO) {
        out->fd = STDOUT_FILENO;
        return 0;
    }
    if (e->kind == CP_LOCAL) {
        /* a device or FIFO (/dev/null, a named pipe) is written, never refused */
        if (stat(e->path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
            out->fd = open(e->path, O_WRONLY);
        else
            out->fd = open(e->path, O_WRONLY | O_CREAT | (job->force ? O_TRUNC : O_EXCL), mode);
        if (out->fd < 0 && errno == EEXIST)
            return cp_fail("copy to", e->path, "exists (-f overwrites it)");
        if (out->fd < 0)
            return cp_errno("create", e->path, errno);
        if (fstat(out->fd, &st) < 0)
            return cp_errno("stat", e->path, errno);
        if (!S_ISREG(st.st_mode))
            out->kind = CP_STDIO;   /* a pipe or device: every byte, in order */
        return 0;
    }
    if (ipvfs_file_open(job->client, e->path, &args, &out->f, &err) < 0) {
        if (err.code == EEXIST)
            return cp_fail("copy to", e->path, "exists (-f overwrites it)");
        return cp_fail("create", e->path, err.msg);
    }
    /* Emptied, so the zero runs left unwritten read as zeros. */
    if (ipvfs_file_set_opts(out->f, &opts, &err) < 0 ||
        (!out->f->entry.created && ipvfs_resize(out->f, 0, &err) < 0))
        return cp_fail("truncate", e->path, err.msg);
    return 0;
}

static void close_side(struct cp_file *s)
{
    if (s->f)
        ipvfs_file_close(s->f);
    else if (s->fd > STDERR_FILENO)
        close(s->fd);
    s->f = NULL;
    s->fd = -1;
}

/* ---- moving bytes ---------------------------------------------------------- */

static int all_zero(const uint8_t *p, size_t len)
{
    return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

/* Reads up to len bytes of a local source at off (a stream ignores off);
 * *out_got 0 at its end. */
static int local_read(struct cp_file *s, uint64_t off, uint8_t *buf, size_t len,
                      size_t *out_got)
{
    size_t got = 0;
    ssize_t n;

    while (got < len) {
        n = s->kind == CP_STDIO ? read(s->fd, buf + got, len - got)
                                : pread(s->fd, buf + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cp_errno("read", s->name, errno);
        if (n == 0)
            break;
        got += (size_t)n;
    }
    *out_got = got;
    return 0;
}

static int local_write(struct cp_file *d, uint64_t off, const uint8_t *buf, size_t len)
{
    size_t done = 0;
    ssize_t n;

    while (done < len) {
        n = d->kind == CP_STDIO ? write(d->fd, buf + done, len - done)
                                : pwrite(d->fd, buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cp_errno("write", d->name, errno);
        done += (size_t)n;
    }
    return 0;
}

/* The extents of buf[0, len) that are not long zero runs (all of it for a
 * stream), as file extents at off with their memory; *out_n of them. */
static size_t data_extents(const uint8_t *buf, size_t len, uint64_t off, int keep_zeros,
                           struct ipvfs_extent *ext, struct iovec *mem)
{
    size_t n = 0, start = 0, pos;

    if (keep_zeros) {
        ext[0] = (struct ipvfs_extent){ off, len };
        mem[0] = (struct iovec){ (void *)buf, len };
        return len ? 1 : 0;
    }
    for (pos = 0; pos < len; pos += CP_ZERO_RUN) {
        size_t run = len - pos < CP_ZERO_RUN ? len - pos : CP_ZERO_RUN;

        if (!all_zero(buf + pos, run))
            continue;
        if (pos > start) {
            ext[n] = (struct ipvfs_extent){ off + start, pos - start };
            mem[n++] = (struct iovec){ (void *)(buf + start), pos - start };
        }
        start = pos + run;
    }
    if (len > start) {
        ext[n] = (struct ipvfs_extent){ off + start, len - start };
        mem[n++] = (struct iovec){ (void *)(buf + start), len - start };
    }
    return n;
}

#define CP_MAX_EXT (CP_CHUNK / CP_ZERO_RUN + 1)

/* Writes the non-zero parts of a chunk to a local destination. */
static int local_put(struct cp_file *d, const uint8_t *buf, size_t len, uint64_t off)
{
    struct ipvfs_extent ext[CP_MAX_EXT];
    struct iovec mem[CP_MAX_EXT];
    size_t n = data_extents(buf, len, off, d->kind == CP_STDIO, ext, mem);

    for (size_t i = 0; i < n; i++)
        if (local_write(d, ext[i].offset, mem[i].iov_base, mem[i].iov_len) < 0)
            return -1;
    return 0;
}

/* iPVFS to a local file or standard output: the read of chunk k+1 is in
 * flight while chunk k is written. */
static int copy_out(struct cp_job *job, struct cp_file *s, struct cp_file *d, uint64_t size)
{
    struct ipvfs_aio *aio = NULL;
    struct ipvfs_error err;
    uint64_t off = 0, got;
    int cur = 0, rc = 0;

    while (off < size && rc == 0) {
        size_t len = size - off < CP_CHUNK ? (size_t)(size - off) : CP_CHUNK;
        struct ipvfs_extent ext = { off, len };
        struct iovec mem = { job->buf[cur], len };

        if (!aio && ipvfs_aio_start(s->f, 0, &ext, 1, &mem, 1, &aio, &err) < 0)
            return cp_fail("read", s->name, err.msg);
        if (ipvfs_aio_finish(aio, &got, &err) < 0)
            return cp_fail("read", s->name, err.msg);
        aio = NULL;
        if (off + len < size) {   /* the next chunk moves while this one is written */
            size_t nlen = size - off - len < CP_CHUNK ? (size_t)(size - off - len) : CP_CHUNK;
            struct ipvfs_extent next = { off + len, nlen };
            struct iovec nmem = { job->buf[!cur], nlen };

            if (ipvfs_aio_start(s->f, 0, &next, 1, &nmem, 1, &aio, &err) < 0)
                return cp_fail("read", s->name, err.msg);
        }
        rc = local_put(d, job->buf[cur], len, off);
        off += len;
        cur = !cur;
    }
    if (aio)
        (void)ipvfs_aio_finish(aio, &got, &err);
    if (rc == 0 && d->kind == CP_LOCAL && ftruncate(d->fd, (off_t)size) < 0)
        return cp_errno("truncate", d->name, errno);
    return rc;
}

/* Starts the write of a chunk's data extents (none: *out_aio stays NULL). */
static int put_start(struct cp_file *d, const uint8_t *buf, size_t len, uint64_t off,
                     struct ipvfs_aio **out_aio)
{
    struct ipvfs_extent ext[CP_MAX_EXT];
    struct iovec mem[CP_MAX_EXT];
    size_t n = data_extents(buf, len, off, 0, ext, mem);
    struct ipvfs_error err;

    *out_aio = NULL;
    if (n && ipvfs_aio_start(d->f, 1, ext, n, mem, (int)n, out_aio, &err) < 0)
        return cp_fail("write", d->name, err.msg);
    return 0;
}

static int put_finish(struct cp_file *d, struct ipvfs_aio **aio)
{
    struct ipvfs_error err;
    uint64_t done;
    int rc;

    if (!*aio)
        return 0;
    rc = ipvfs_aio_finish(*aio, &done, &err);
    *aio = NULL;
    return rc < 0 ? cp_fail("write", d->name, err.msg) : 0;
}

/* Next data extent of a local file at or after off: [*out_start,
 * *out_end); both size at the end.  Streams and file systems without
 * SEEK_DATA are one extent. */
static void next_data(struct cp_file *s, uint64_t off, uint64_t size, uint64_t *out_start,
                      uint64_t *out_end)
{
    off_t data, hole;

    *out_start = off;
    *out_end = size;
    if (s->kind != CP_LOCAL || off >= size)
        return;
    data = lseek(s->fd, (off_t)off, SEEK_DATA);
    if (data < 0) {
        if (errno == ENXIO)       /* only a hole is left */
            *out_start = size;
        return;
    }
    hole = lseek(s->fd, data, SEEK_HOLE);
    *out_start = (uint64_t)data;
    *out_end = hole < 0 ? size : (uint64_t)hole;
}

/* A local file or standard input to iPVFS: chunk k is written while
 * chunk k+1 is read.  *io_size: the source's size (a stream: its length
 * once read). */
static int copy_in(struct cp_job *job, struct cp_file *s, struct cp_file *d, uint64_t *io_size)
{
    struct ipvfs_aio *aio = NULL;
    uint64_t off = 0, start, end, size = *io_size;
    int cur = 0, stream = s->kind == CP_STDIO;
    size_t got;

    for (;;) {
        if (!stream) {
            next_data(s, off, size, &start, &end);
            if (start >= size)
                break;
            off = start;
        } else {
            end = UINT64_MAX;
        }
        got = end - off < CP_CHUNK ? (size_t)(end - off) : CP_CHUNK;
        if (local_read(s, off, job->buf[cur], got, &got) < 0)
            goto fail;
        if (put_finish(d, &aio) < 0)
            return -1;
        if (got == 0)
            break;
        if (put_start(d, job->buf[cur], got, off, &aio) < 0)
            return -1;
        off += got;
        cur = !cur;
    }
    if (put_finish(d, &aio) < 0)
        return -1;
    *io_size = stream ? off : size;
    return 0;
fail:
    (void)put_finish(d, &aio);
    return -1;
}

/* Sets the final size and mtime of an iPVFS destination. */
static int settle_dst(struct cp_job *job, struct cp_file *d, uint64_t size)
{
    struct ipvfs_setattr_req req = { .valid = IPVFS_SETATTR_MTIME_NOW };
    struct ipvfs_error err;

    if (ipvfs_resize(d->f, size, &err) < 0 ||
        ipvfs_setattr(job->client, d->f->path, &req, NULL, &err) < 0)
        return cp_fail("finish", d->name, err.msg);
    return 0;
}

/* iPVFS to iPVFS: through the buffers, chunk by chunk. */
static int copy_between(struct cp_job *job, struct cp_file *s, struct cp_file *d, uint64_t size)
{
    struct ipvfs_aio *aio = NULL;
    struct ipvfs_error err;
    uint64_t off, got;
    int cur = 0;

    for (off = 0; off < size; off += got, cur = !cur) {
        size_t len = size - off < CP_CHUNK ? (size_t)(size - off) : CP_CHUNK;

        if (ipvfs_read(s->f, off, job->buf[cur], len, &got, &err) < 0) {
            (void)put_finish(d, &aio);
            return cp_fail("read", s->name, err.msg);
        }
        if (put_finish(d, &aio) < 0 || put_start(d, job->buf[cur], len, off, &aio) < 0)
            return -1;
        got = len;
    }
    return put_finish(d, &aio);
}

static int copy_file(struct cp_job *job, const struct cp_end *src, const struct cp_end *dst,
                     uint32_t mode)
{
    struct cp_file s, d;
    uint64_t size;
    int rc = -1;

    if (src->kind != CP_IPVFS && dst->kind != CP_IPVFS)
        return cp_fail("copy", src->path, "one side must be ipvfs:/PATH (else use cp(1))");
    if (src->kind == CP_IPVFS && dst->kind == CP_IPVFS && strcmp(src->path, dst->path) == 0)
        return cp_fail("copy", src->path, "source and destination are the same file");
    if (open_src(job, src, &s, &size) < 0)
        goto close_src;
    if (open_dst(job, dst, mode, &d) < 0)
        goto close_dst;
    if (s.kind == CP_IPVFS && d.kind == CP_IPVFS)
        rc = copy_between(job, &s, &d, size);
    else if (s.kind == CP_IPVFS)
        rc = copy_out(job, &s, &d, size);
    else
        rc = copy_in(job, &s, &d, &size);
    if (rc == 0 && d.kind == CP_IPVFS)
        rc = settle_dst(job, &d, size);
close_dst:
    close_side(&d);
close_src:
    close_side(&s);
    return rc;
}

/* ---- trees ----------------------------------------------------------------- */

static int copy_tree(struct cp_job *job, const struct cp_end *src, const struct cp_end *dst,
                     uint32_t mode);

struct tree_walk {
    struct cp_job *job;
    const struct cp_end *src;
    const struct cp_end *dst;
    int rc;
};

/* 1 (after a warning) when local path e is a symbolic link, 0 when not,
 * -1 after a message. */
static int is_link(const struct cp_end *e)
{
    struct stat st;

    if (lstat(e->path, &st) < 0)
        return cp_errno("stat", e->path, errno);
    if (!S_ISLNK(st.st_mode))
        return 0;
    fprintf(stderr, "ipvfs-ctl: cp: skipping symbolic link %s (iPVFS keeps none)\n", e->path);
    return 1;
}

static int tree_entry(void *arg, const char *name, uint32_t type)
{
    struct tree_walk *w = arg;
    struct cp_end s, d;
    uint32_t mode;
    int t;

    (void)type;
    if (join(w->src, name, &s) < 0 || join(w->dst, name, &d) < 0)
        return w->rc = -1;
    if (s.kind == CP_LOCAL && (t = is_link(&s)) != 0)
        return t < 0 ? (w->rc = -1) : 0;
    if ((t = end_type(w->job, &s, &mode)) <= 0)
        return w->rc = -1;
    if ((t == IPVFS_TYPE_DIR ? copy_tree(w->job, &s, &d, mode)
                             : copy_file(w->job, &s, &d, mode)) < 0)
        w->rc = -1;   /* go on with the rest, as cp -r does; fail at the end */
    return 0;
}

static int make_dir(struct cp_job *job, const struct cp_end *dst, uint32_t mode)
{
    struct ipvfs_error err;

    if (dst->kind == CP_LOCAL) {
        if (mkdir(dst->path, mode | 0700) < 0 && errno != EEXIST)
            return cp_errno("mkdir", dst->path, errno);
        return 0;
    }
    if (ipvfs_mkdir(job->client, dst->path, mode | 0700, &err) < 0 && err.code != EEXIST)
        return cp_fail("mkdir", dst->path, err.msg);
    return 0;
}

static int list_local(const struct cp_end *dir, ipvfs_dir_fn each, void *arg)
{
    DIR *d = opendir(dir->path);
    struct dirent *de;

    if (!d)
        return cp_errno("list", dir->path, errno);
    while ((errno = 0, de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            (void)each(arg, de->d_name, 0);
    if (errno)
        (void)cp_errno("list", dir->path, errno);
    closedir(d);
    return 0;
}

static int copy_tree(struct cp_job *job, const struct cp_end *src, const struct cp_end *dst,
                     uint32_t mode)
{
    struct tree_walk w = { job, src, dst, 0 };
    struct ipvfs_error err;

    if (!job->recursive)
        return cp_fail("copy", src->path, "is a directory (-r copies trees)");
    if (dst->kind == CP_STDIO)
        return cp_fail("copy", src->path, "a directory cannot go to standard output");
    if (make_dir(job, dst, mode) < 0)
        return -1;
    if (src->kind == CP_LOCAL)
        return list_local(src, tree_entry, &w) < 0 ? -1 : w.rc;
    if (ipvfs_readdir(job->client, src->path, tree_entry, &w, &err) < 0 && w.rc == 0)
        return cp_fail("list", src->path, err.msg);
    return w.rc;
}

static int cp_run(struct cp_job *job, struct cp_end *src, struct cp_end *dst)
{
    uint32_t smode, dmode;
    int stype, dtype;
    struct cp_end into;

    if ((stype = end_type(job, src, &smode)) < 0)
        return -1;
    if (stype == 0)
        return cp_fail("copy", src->path, "no such file or directory");
    if ((dtype = end_type(job, dst, &dmode)) < 0)
        return -1;
    if (dtype == IPVFS_TYPE_DIR && src->kind != CP_STDIO) {
        if (join(dst, base_name(src->path), &into) < 0)
            return -1;
        *dst = into;
    } else if (dtype == IPVFS_TYPE_DIR) {
        return cp_fail("copy to", dst->path, "is a directory");
    }
    if (stype == IPVFS_TYPE_DIR)
        return copy_tree(job, src, dst, smode);
    return copy_file(job, src, dst, smode);
}

int ctl_cp(struct ipvfs_client *c, int argc, char **argv)
{
    struct cp_job job = { .client = c };
    struct cp_end src, dst;
    int i, rc;

    for (i = 1; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        for (const char *o = argv[i] + 1; *o; o++) {
            if (*o == 'r' || *o == 'R')
                job.recursive = 1;
            else if (*o == 'f')
                job.force = 1;
            else
                goto usage;
        }
    }
    if (argc - i != 2)
        goto usage;
    if (parse_end(argv[i], &src) < 0 || parse_end(argv[i + 1], &dst) < 0)
        return 1;
    job.buf[0] = malloc(CP_CHUNK);
    job.buf[1] = malloc(CP_CHUNK);
    rc = job.buf[0] && job.buf[1] ? cp_run(&job, &src, &dst)
                                  : cp_fail("copy", src.path, "out of memory");
    free(job.buf[0]);
    free(job.buf[1]);
    return rc < 0 ? 1 : 0;
usage:
    fputs("usage: ipvfs-ctl cp [-r] [-f] SRC DST   (SRC, DST: ipvfs:/PATH, a local path, -)\n",
          stderr);
    return 2;
}
