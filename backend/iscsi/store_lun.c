/* LUNs over the backing stores: the store table (file and block:
 * store_fd.c; memory: store_mem.c), opening and closing a LUN through its
 * store's template, and the read-only mapping through which a READ is
 * sent from the page cache (see "Reads from the page cache" in tgt.h). */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/log.h"

static const struct tgt_store_ops *const store_table[] = {
    [TGT_BACKING_FILE] = &tgt_file_store,
    [TGT_BACKING_BLOCK] = &tgt_block_store,
    [TGT_BACKING_MEMORY] = &tgt_mem_store,
};

const struct tgt_store_ops *tgt_store_lookup(enum tgt_backing kind)
{
    if ((unsigned)kind >= sizeof(store_table) / sizeof(store_table[0]))
        return NULL;
    return store_table[kind];
}

/* Without the mapping every READ goes through a buffer. */
static void lun_map(struct tgt_lun *lun)
{
    void *p = mmap(NULL, lun->size, PROT_READ, MAP_SHARED, lun->fd, 0);

    if (p == MAP_FAILED) {
        log_info("target: LUN %d: cannot map the store (%s), reads are buffered",
                 lun->index, strerror(errno));
        return;
    }
    lun->map = p;
}

int tgt_lun_cached(const struct tgt_lun *lun, uint64_t off, size_t len)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t pos = off & ~(page - 1), end = off + len;
    unsigned char vec[256];

    if (!lun->map || end > lun->size)
        return 0;
    while (pos < end) {
        size_t pages = (size_t)((end - pos + page - 1) / page);

        if (pages > sizeof(vec))
            pages = sizeof(vec);
        if (mincore(lun->map + pos, pages * page, vec) < 0)
            return 0;
        for (size_t i = 0; i < pages; i++)
            if (!(vec[i] & 1))
                return 0;
        pos += pages * page;
    }
    return 1;
}

int tgt_lun_open(struct tgt_server *srv, struct tgt_lun *lun, const struct tgt_lun_config *cfg)
{
    const struct tgt_store_ops *ops = cfg->disk && cfg->kind == TGT_BACKING_FILE
                                          ? &tgt_disk_store : tgt_store_lookup(cfg->kind);
    const char *what = cfg->kind == TGT_BACKING_MEMORY ? "memory" : cfg->path;
    int rc;

    lun->srv = srv;
    lun->fd = -1;
    lun->dfd = -1;
    lun->direct = srv->l2 != NULL && cfg->kind != TGT_BACKING_MEMORY;
    if (!ops || (cfg->kind != TGT_BACKING_MEMORY && !cfg->path)) {
        log_error("target: LUN %d: invalid backing store description", lun->index);
        return -EINVAL;
    }
    rc = ops->open(lun, cfg);
    if (rc < 0) {
        log_error("target: LUN %d: cannot open %s store %s: %s", lun->index, ops->name, what,
                  strerror(-rc));
        return rc;
    }
    lun->ops = ops;
    lun->block_size = TGT_BLOCK_SIZE;
    lun->nblocks = lun->size / TGT_BLOCK_SIZE;
    lun->size = lun->nblocks * TGT_BLOCK_SIZE;
    if (lun->nblocks == 0) {
        log_error("target: LUN %d: %s store %s is smaller than one block", lun->index,
                  ops->name, what);
        ops->close(lun);
        lun->ops = NULL;
        return -EINVAL;
    }
    /* Pages sent from the mapping would be the page cache again; an
     * emulated disk must see every READ. */
    if (lun->fd >= 0 && !lun->direct && !lun->disk)
        lun_map(lun);
    return 0;
}

void tgt_lun_drain(struct tgt_lun *lun)
{
    if (lun->ops && lun->ops->drain)
        lun->ops->drain(lun);
}

void tgt_lun_close(struct tgt_lun *lun)
{
    if (!lun->ops)
        return;
    int rc = lun->ops->flush(lun);

    if (rc < 0)
        log_error("target: LUN %d: flush at close failed: %s", lun->index, strerror(-rc));
    if (lun->wb_starts)
        log_info("target: LUN %d: write-behind started writeback %llu times, %llu MiB",
                 lun->index, (unsigned long long)lun->wb_starts,
                 (unsigned long long)(lun->wb_started_bytes >> 20));
    if (lun->map && munmap(lun->map, lun->size) < 0)
        log_warn("target: LUN %d: unmapping: %s", lun->index, strerror(errno));
    lun->map = NULL;
    lun->ops->close(lun);
    lun->ops = NULL;
}
