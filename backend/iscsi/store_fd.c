/* The file and block stores: a LUN in a regular (sparse) file or on a
 * block device, its ios run by the descriptor engine of store.c
 * (tgt_aio_submit), with write-behind for buffered WRITEs and, beside an
 * L2, a second descriptor opened with O_DIRECT.  The store table is in
 * store.c. */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/log.h"

static int fd_store_flush(struct tgt_lun *lun)
{
    return fdatasync(lun->fd) < 0 ? -errno : 0;
}

/* Write-behind.  A buffered WRITE only dirties the page cache, and the
 * kernel starts writing dirty pages out only past
 * vm.dirty_background_ratio (10% of memory: gigabytes here) or once they
 * are 30 s old.  So the SYNCHRONIZE CACHE that ends a large write would
 * wait for the disk to take all of it, after the transfer instead of
 * during it.  Every TGT_WRITEBEHIND_BYTES of buffered writes completed on
 * a LUN, the span they cover is handed to sync_file_range: the disk works
 * while data still arrives, and the FLUSH finds little left.  Nothing
 * waits for it and it makes nothing durable (FLUSH and FUA still do);
 * pages rewritten after their writeback are written again, which is the
 * cost.  Not for O_DIRECT (an L2) nor for FUA writes, which leave no
 * dirty pages; the memory store has none either. */
#define TGT_WRITEBEHIND_BYTES (8u << 20)

static void writebehind_done(struct tgt_io *io, int err);

/* Starts writeback of the span written since the last start, when it
 * holds enough and no start is in flight. */
static void writebehind_start(struct tgt_lun *lun)
{
    struct tgt_io *io = &lun->wb_io;

    if (lun->wb_busy || lun->wb_off || lun->wb_bytes < TGT_WRITEBEHIND_BYTES)
        return;
    *io = (struct tgt_io){ .op = TGT_IO_WRITEBACK, .off = lun->wb_lo,
                           .len = (size_t)(lun->wb_hi - lun->wb_lo), .lun = lun,
                           .cb = writebehind_done };
    lun->wb_starts++;
    lun->wb_started_bytes += lun->wb_bytes;
    lun->wb_bytes = 0;
    lun->wb_busy = 1;
    tgt_aio_submit(lun->srv->aio, lun->fd, io);
}

static void writebehind_done(struct tgt_io *io, int err)
{
    struct tgt_lun *lun = io->lun;

    lun->wb_busy = 0;
    if (err < 0) {
        /* the file system has no writeback to start: FLUSH does it all */
        log_warn("target: LUN %d: sync_file_range refused (%s): no write-behind", lun->index,
                 strerror(-err));
        lun->wb_off = 1;
        return;
    }
    writebehind_start(lun);
}

/* A buffered WRITE's completion: its span joins the next writeback. */
static void written(struct tgt_io *io, int err)
{
    struct tgt_lun *lun = io->lun;

    io->cb = io->store_cb;
    if (err == 0 && io->len) {
        if (lun->wb_bytes == 0 || io->off < lun->wb_lo)
            lun->wb_lo = io->off;
        if (lun->wb_bytes == 0 || io->off + io->len > lun->wb_hi)
            lun->wb_hi = io->off + io->len;
        lun->wb_bytes += io->len;
        writebehind_start(lun);
    }
    io->cb(io, err);
}

/* O_DIRECT wants the buffer, offset and length aligned to the device's
 * logical block; 4 KiB covers every device we meet.  Other ios (a
 * connection's odd buffer, a 512-byte write) take the buffered
 * descriptor, whose pages l2cache.c then drops. */
#define DIRECT_ALIGN 4096u

static void fd_store_submit(struct tgt_lun *lun, struct tgt_io *io)
{
    int aligned = ((uintptr_t)io->buf | io->off | io->len) % DIRECT_ALIGN == 0;
    int fd = lun->dfd >= 0 && aligned && io->op != TGT_IO_PUNCH ? lun->dfd : lun->fd;

    if (io->op == TGT_IO_WRITE && !io->fua && !lun->direct && !lun->wb_off) {
        io->store_cb = io->cb;
        io->cb = written;
    }
    tgt_aio_submit(lun->srv->aio, fd, io);
}

static void fd_store_close(struct tgt_lun *lun)
{
    if (lun->dfd >= 0)
        close(lun->dfd);
    lun->dfd = -1;
    if (lun->fd >= 0)
        close(lun->fd);
    lun->fd = -1;
}

/* With an L2 the kernel's page cache must not be a hidden third level:
 * a second descriptor with O_DIRECT.  A file system that refuses it
 * (EINVAL: tmpfs before Linux 6.6, some FUSE ones) is said in the log,
 * and I/O stays buffered with its pages dropped after each io. */
static void open_direct(struct tgt_lun *lun, const char *path)
{
    lun->dfd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
    if (lun->dfd >= 0) {
        log_info("target: LUN %d: %s opened with O_DIRECT", lun->index, path);
        return;
    }
    log_warn("target: LUN %d: the file system of %s refuses O_DIRECT (%s): falling back to "
             "buffered I/O with posix_fadvise(DONTNEED)", lun->index, path, strerror(errno));
}

static int file_open(struct tgt_lun *lun, const struct tgt_lun_config *cfg)
{
    struct stat st;
    int fd, rc;

    fd = open(cfg->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        goto undo_open;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = -EINVAL;
        goto undo_open;
    }
    if (cfg->size > (uint64_t)st.st_size && ftruncate(fd, (off_t)cfg->size) < 0) {
        rc = -errno;
        goto undo_open;
    }
    lun->size = cfg->size ? cfg->size : (uint64_t)st.st_size;
    lun->fd = fd;
    lun->can_punch = 1;
    if (lun->direct)
        open_direct(lun, cfg->path);
    return 0;
undo_open:
    close(fd);
    return rc;
}

/* GET LBA STATUS of a sparse file: holes are deallocated blocks.  lseek
 * asks the file system's extent map, a metadata lookup that does not wait
 * for data, so it runs on the loop thread.  Offsets are rounded to whole
 * blocks: a block partly in a hole still holds data, so it is mapped. */
static int file_lba_status(struct tgt_lun *lun, uint64_t lba, uint64_t *nblocks, int *mapped)
{
    uint64_t bs = lun->block_size, pos = lba * bs, end = lun->size;
    off_t d = lseek(lun->fd, (off_t)pos, SEEK_DATA), h;

    if (d < 0 && errno != ENXIO)
        return -errno;
    if (d < 0 || (uint64_t)d >= end)
        d = (off_t)end;   /* ENXIO: only a hole up to the end of the file */
    if ((uint64_t)d / bs > lba) {
        *mapped = 0;
        *nblocks = (uint64_t)d / bs - lba;
        return 0;
    }
    h = lseek(lun->fd, (off_t)pos, SEEK_HOLE);
    if (h < 0)
        return -errno;
    if ((uint64_t)h > end)
        h = (off_t)end;
    *mapped = 1;
    *nblocks = ((uint64_t)h + bs - 1) / bs - lba;
    if (*nblocks == 0)
        *nblocks = 1;
    return 0;
}

/* UNMAP of a block LUN is fallocate(PUNCH_HOLE) on the device, which the
 * kernel turns into WRITE ZEROES with unmapping allowed and never emulates
 * (so it is quick, and the blocks read as zeros after, as LBPRZ says).
 * It needs a device that takes WRITE ZEROES and whose logical blocks are
 * no larger than ours, since our ranges are aligned only to 512 bytes.
 * Without that the LUN reports no logical block provisioning. */
static int block_can_punch(int fd, const struct stat *st)
{
    static const char *const where[] = { "queue", "../queue" };   /* disk, partition */
    char path[96];
    unsigned long long max = 0;
    int lbs;

    if (ioctl(fd, BLKSSZGET, &lbs) < 0 || lbs > (int)TGT_BLOCK_SIZE)
        return 0;
    for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
        FILE *f;
        int ok;

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/%s/write_zeroes_max_bytes",
                 major(st->st_rdev), minor(st->st_rdev), where[i]);
        f = fopen(path, "re");
        if (!f)
            continue;
        ok = fscanf(f, "%llu", &max) == 1;
        fclose(f);
        return ok && max > 0;
    }
    return 0;
}

static int block_open(struct tgt_lun *lun, const struct tgt_lun_config *cfg)
{
    uint64_t bytes;
    struct stat st;
    int fd, rc;

    fd = open(cfg->path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        goto undo_open;
    }
    if (!S_ISBLK(st.st_mode)) {
        rc = -ENOTBLK;
        goto undo_open;
    }
    if (ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
        rc = -errno;
        goto undo_open;
    }
    lun->size = cfg->size && cfg->size < bytes ? cfg->size : bytes;
    lun->fd = fd;
    if (lun->direct)
        open_direct(lun, cfg->path);
    lun->can_punch = block_can_punch(fd, &st);
    if (!lun->can_punch)
        log_info("target: LUN %d: %s cannot zero ranges (WRITE ZEROES), UNMAP is not offered",
                 lun->index, cfg->path);
    return 0;
undo_open:
    close(fd);
    return rc;
}

const struct tgt_store_ops tgt_file_store = {
    .name = "file", .open = file_open, .close = fd_store_close,
    .submit = fd_store_submit, .flush = fd_store_flush, .lba_status = file_lba_status,
};
const struct tgt_store_ops tgt_block_store = {
    .name = "block", .open = block_open, .close = fd_store_close,
    .submit = fd_store_submit, .flush = fd_store_flush,
};
