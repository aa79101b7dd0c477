/* The memory store: a LUN in anonymous memory (ipvfs-target --lun
 * mem:SIZE), gone when the target stops.  Its ios copy and complete
 * inline, before tgt_io_submit() returns (tgt_io_done_fn says so);
 * FLUSH has nothing to do.  The store table is in store.c. */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int mem_open(struct tgt_lun *lun, const struct tgt_lun_config *cfg)
{
    void *p;

    if (cfg->size == 0)
        return -EINVAL;
    /* Anonymous pages: untouched blocks cost nothing and read as zeros. */
    p = mmap(NULL, cfg->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
             -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    lun->mem = p;
    lun->size = cfg->size;
    lun->can_punch = 1;
    return 0;
}

static void mem_close(struct tgt_lun *lun)
{
    if (lun->mem)
        munmap(lun->mem, lun->size);
    lun->mem = NULL;
}

/* UNMAP of a memory LUN: whole pages go back to the kernel (they read as
 * zeros afterwards and cost nothing, like a hole); only the partial pages
 * at the edges are cleared by hand.  lun->mem is page aligned (mmap). */
static void mem_zero(struct tgt_lun *lun, uint64_t off, size_t len)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t first = (off + page - 1) / page * page, end = (off + len) / page * page;

    if (first >= end) {
        memset(lun->mem + off, 0, len);
        return;
    }
    memset(lun->mem + off, 0, first - off);
    /* Should the kernel refuse, the range must read as zeros all the same. */
    if (madvise(lun->mem + first, end - first, MADV_DONTNEED) < 0)
        memset(lun->mem + first, 0, end - first);
    memset(lun->mem + end, 0, off + len - end);
}

static void mem_submit(struct tgt_lun *lun, struct tgt_io *io)
{
    switch (io->op) {
    case TGT_IO_READ:
        memcpy(io->buf, lun->mem + io->off, io->len);
        break;
    case TGT_IO_WRITE:
        memcpy(lun->mem + io->off, io->buf, io->len);
        break;
    case TGT_IO_PUNCH:
        mem_zero(lun, io->off, io->len);
        break;
    case TGT_IO_FLUSH:
    case TGT_IO_WRITEBACK:
        break;
    }
    io->done = io->len;
    io->cb(io, 0);
}

static int mem_flush(struct tgt_lun *lun)
{
    return 0;
}

const struct tgt_store_ops tgt_mem_store = {
    .name = "memory", .open = mem_open, .close = mem_close,
    .submit = mem_submit, .flush = mem_flush,
};
