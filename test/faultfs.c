/* faultfs: a test fixture that serves one backing file through FUSE as a
 * disk with bad sectors would: a read that touches a sector marked bad
 * fails with EIO, until a write covers that sector (a drive remaps a bad
 * sector when it is written, as dm-dust does).  Everything else is passed
 * through to the backing file.
 *
 *   faultfs BACKING MOUNTPOINT [--bad OFF:LEN]...
 *
 * MOUNTPOINT is an existing regular file: the mount puts BACKING in its
 * place, so a program opens the same path as before (test/t_raid_tgtd.sh
 * restarts tgtd on its backing file this way).  OFF and LEN are bytes
 * (suffix K, M or G allowed), multiples of 512 inside the file: tgtd
 * reads and writes whole 512-byte logical blocks, so the sector is the
 * unit of the bad marks.  faultfs returns once the file system is mounted
 * and serves it in the background; `fusermount3 -u MOUNTPOINT` ends it.
 *
 * The file is opened with direct_io: each read and write reaches faultfs
 * with the offset and length the program used, not as page-cache pages
 * (a page read would fail good sectors next to a bad one, and a cached
 * page could hide a bad sector).  A read fails as a whole when any sector
 * of it is bad, like one SCSI READ command.  A write clears the marks of
 * the sectors it covers entirely; a sector it covers in part stays bad,
 * since the rest of that sector was never rewritten.
 *
 * One thread (-s): the bad marks need no lock. */
#define FUSE_USE_VERSION 312
#include <fuse.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECTOR 512u

struct faultfs {
    int fd;               /* the backing file, read-write */
    uint64_t nsectors;    /* sectors the bad map covers: the file at the start */
    uint8_t *bad;         /* one bit per sector: 1 = reads fail until written */
};

static struct faultfs *fs_of_context(void)
{
    return fuse_get_context()->private_data;
}

static int sector_bad(const struct faultfs *fs, uint64_t s)
{
    return s < fs->nsectors && (fs->bad[s / 8] >> (s % 8) & 1);
}

/* Whether any sector touched by [off, off + len) is marked bad. */
static int range_bad(const struct faultfs *fs, uint64_t off, uint64_t len)
{
    uint64_t s;

    if (len == 0)
        return 0;
    for (s = off / SECTOR; s <= (off + len - 1) / SECTOR; s++)
        if (sector_bad(fs, s))
            return 1;
    return 0;
}

/* Marks (bad = 1) or clears the sectors [first, end). */
static void mark_sectors(struct faultfs *fs, uint64_t first, uint64_t end, int bad)
{
    uint64_t s;

    for (s = first; s < end && s < fs->nsectors; s++) {
        if (bad)
            fs->bad[s / 8] |= (uint8_t)(1u << (s % 8));
        else
            fs->bad[s / 8] &= (uint8_t)~(1u << (s % 8));
    }
}

static int is_root(const char *path)
{
    return strcmp(path, "/") == 0;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    cfg->direct_io = 1;
    cfg->attr_timeout = 0;
    return fs_of_context();
}

static int fs_getattr(const char *path, struct stat *out_st, struct fuse_file_info *fi)
{
    if (!is_root(path))
        return -ENOENT;
    return fstat(fs_of_context()->fd, out_st) < 0 ? -errno : 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
    return is_root(path) ? 0 : -ENOENT;
}

static int fs_read(const char *path, char *out_buf, size_t size, off_t off,
                   struct fuse_file_info *fi)
{
    struct faultfs *fs = fs_of_context();
    size_t done = 0;
    ssize_t n;

    if (range_bad(fs, (uint64_t)off, size))
        return -EIO;
    while (done < size) {
        n = pread(fs->fd, out_buf + done, size - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;      /* end of file */
        done += (size_t)n;
    }
    return (int)done;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
    struct faultfs *fs = fs_of_context();
    size_t done = 0;
    ssize_t n;

    while (done < size) {
        n = pwrite(fs->fd, buf + done, size - done, off + (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        done += (size_t)n;
    }
    /* Only whole sectors are rewritten: round the start up, the end down. */
    mark_sectors(fs, ((uint64_t)off + SECTOR - 1) / SECTOR, ((uint64_t)off + size) / SECTOR, 0);
    return (int)done;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    return ftruncate(fs_of_context()->fd, size) < 0 ? -errno : 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    int fd = fs_of_context()->fd;

    return (datasync ? fdatasync(fd) : fsync(fd)) < 0 ? -errno : 0;
}

static const struct fuse_operations faultfs_ops = {
    .init = fs_init,
    .getattr = fs_getattr,
    .open = fs_open,
    .read = fs_read,
    .write = fs_write,
    .truncate = fs_truncate,
    .fsync = fs_fsync,
};

/* A byte count with an optional K, M or G suffix; -1 when malformed. */
static int parse_bytes(const char *s, const char *end, uint64_t *out_bytes)
{
    char *stop;
    unsigned long long v;
    unsigned shift = 0;

    if (s == end || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &stop, 10);
    if (errno != 0)
        return -1;
    if (stop < end) {
        switch (*stop++) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        default: return -1;
        }
    }
    if (stop != end || v > (UINT64_MAX >> shift))
        return -1;
    *out_bytes = (uint64_t)v << shift;
    return 0;
}

/* --bad OFF:LEN: marks those sectors; -1 with a message on bad input. */
static int add_bad_range(struct faultfs *fs, const char *arg)
{
    const char *colon = strchr(arg, ':');
    uint64_t off, len;

    if (!colon || parse_bytes(arg, colon, &off) < 0 ||
        parse_bytes(colon + 1, colon + strlen(colon), &len) < 0) {
        fprintf(stderr, "faultfs: --bad %s: expected OFF:LEN in bytes (suffix K, M or G)\n", arg);
        return -1;
    }
    if (off % SECTOR || len % SECTOR || len == 0) {
        fprintf(stderr, "faultfs: --bad %s: offset and length must be multiples of %u, "
                "the length not 0\n", arg, SECTOR);
        return -1;
    }
    if (off > fs->nsectors * SECTOR || len > fs->nsectors * SECTOR - off) {
        fprintf(stderr, "faultfs: --bad %s: past the end of the file (%" PRIu64 " bytes)\n",
                arg, fs->nsectors * SECTOR);
        return -1;
    }
    mark_sectors(fs, off / SECTOR, (off + len) / SECTOR, 1);
    return 0;
}

/* Opens BACKING and reads the --bad ranges of argv[3..]. */
static int faultfs_setup(struct faultfs *fs, const char *backing, int argc, char **argv)
{
    struct stat st;
    int i;

    fs->fd = open(backing, O_RDWR);
    if (fs->fd < 0 || fstat(fs->fd, &st) < 0) {
        fprintf(stderr, "faultfs: %s: %s\n", backing, strerror(errno));
        goto close_fd;
    }
    if (!S_ISREG(st.st_mode)) {
        fprintf(stderr, "faultfs: %s: not a regular file\n", backing);
        goto close_fd;
    }
    fs->nsectors = (uint64_t)st.st_size / SECTOR;
    fs->bad = calloc(fs->nsectors / 8 + 1, 1);
    if (!fs->bad) {
        fprintf(stderr, "faultfs: out of memory for %" PRIu64 " sectors\n", fs->nsectors);
        goto close_fd;
    }
    for (i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--bad") != 0 || i + 1 == argc) {
            fprintf(stderr, "faultfs: unexpected argument %s\n"
                    "usage: faultfs BACKING MOUNTPOINT [--bad OFF:LEN]...\n", argv[i]);
            goto free_bad;
        }
        if (add_bad_range(fs, argv[++i]) < 0)
            goto free_bad;
    }
    return 0;

free_bad:
    free(fs->bad);
close_fd:
    if (fs->fd >= 0)
        close(fs->fd);
    return -1;
}

int main(int argc, char **argv)
{
    struct faultfs fs = { .fd = -1 };
    /* -s: one thread; without -f fuse_main returns to the shell once mounted. */
    char *fuse_argv[] = { argv[0], "-s", "-o", "fsname=faultfs,subtype=faultfs", NULL, NULL };
    int rc;

    if (argc < 3) {
        fprintf(stderr, "usage: faultfs BACKING MOUNTPOINT [--bad OFF:LEN]...\n");
        return 2;
    }
    if (faultfs_setup(&fs, argv[1], argc, argv) < 0)
        return 2;
    fuse_argv[4] = argv[2];
    rc = fuse_main(5, fuse_argv, &faultfs_ops, &fs);
    free(fs.bad);
    close(fs.fd);
    return rc;
}
