/* Datafile store: open (the journal's records loaded into the block maps
 * and the bitmap), the settings made before the first operation, the
 * counters, and close (a final sync of everything in flight).  The
 * operations themselves are dfstore.c's. */
#include "backend/dfstore/dfstore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dfstore/internal.h"
#include "backend/dfstore/plan.h"
#include "common/log.h"

/* ---- counters and settings ---- */

uint64_t dfstore_size(const struct dfstore *ds, uint64_t handle)
{
    uint64_t v = u64map_get(&ds->files, handle);

    return v == U64MAP_NONE ? 0 : ((const struct datafile *)(uintptr_t)v)->size;
}

void dfstore_stats(const struct dfstore *ds, struct dfstore_stats *out)
{
    uint64_t n = 0, pos = 0, handle, v;

    while (u64map_next(&ds->files, &pos, &handle, &v))
        if (((const struct datafile *)(uintptr_t)v)->exists)
            n++;
    *out = (struct dfstore_stats){ .datafiles = n, .blocks_used = ds->space.used_blocks,
                                   .blocks_total = ds->space.total_blocks, .writes = ds->writes,
                                   .writes_gathered = ds->writes_gathered,
                                   .reads_overlapped = ds->reads_overlapped,
                                   .zero_fill_bytes = ds->zero_fill_bytes };
    df_l1_get_stats(&ds->l1, &out->l1);
}

int dfstore_set_l1(struct dfstore *ds, uint64_t bytes)
{
    int rc, room;

    if (ds->gfirst)
        return -EBUSY;
    df_l1_fini(&ds->l1);
    if ((rc = df_l1_init(&ds->l1, ds->loop, ds->vol, bytes)) < 0 || bytes < DFSTORE_BLOCK)
        return rc;
    /* at start; io.c asks again for each write, as members return */
    room = iraid_room_for_new_blocks(ds->vol);
    log_info("dfstore: L1 %s first writes into new blocks (%s)", room ? "keeps" : "writes through",
             room ? "the targets have room for every block of the volume"
                  : "a target may run out of backing space, or did not say");
    return 0;
}

void dfstore_set_trace(struct dfstore *ds, FILE *trace)
{
    df_l1_set_trace(&ds->l1, trace);
}

int dfstore_set_readahead(struct dfstore *ds, uint64_t bytes)
{
    int rc;

    if (ds->gfirst)
        return -EBUSY;
    if (bytes == 0)
        return 0;
    /* the pool: a quarter of the L1, whatever the window (several streams) */
    if ((rc = df_l1_set_readahead(&ds->l1, UINT64_MAX)) < 0)
        return rc;
    ds->ra_default = bytes;
    return 0;
}

/* ---- open / close ---- */

/* The journal's records at open: every datafile, then every block. */
static int load_file(void *user, uint64_t handle, uint64_t size)
{
    struct dfstore *ds = user;
    struct datafile *df = df_get(ds, handle);

    if (!df)
        return -ENOMEM;
    df->size = size;
    df->exists = 1;
    return 0;
}

/* Rebuilds block maps and the bitmap; refuses a map that points outside
 * the volume or gives one block to two owners. */
static int load_block(void *user, uint64_t h, uint64_t fb, uint64_t vb)
{
    struct dfstore *ds = user;
    uint64_t d = u64map_get(&ds->files, h);
    int rc;

    if (d == U64MAP_NONE || vb >= ds->space.total_blocks || df_space_test(&ds->space, vb)) {
        log_error("dfstore: datafile %" PRIu64 " block %" PRIu64 " -> volume block %" PRIu64
                  ": %s", h, fb, vb, d == U64MAP_NONE ? "no such datafile" :
                  vb >= ds->space.total_blocks ? "past the volume's end" : "block used twice");
        return -EUCLEAN;
    }
    if ((rc = u64map_put(&((struct datafile *)(uintptr_t)d)->blocks, fb, vb)) < 0 ||
        (rc = df_plan_note_run((struct datafile *)(uintptr_t)d, fb, vb)) < 0)
        return rc;
    df_space_set(&ds->space, vb);
    return 0;
}

static const struct df_journal_loader loader = { load_file, load_block };

static void free_files(struct dfstore *ds)
{
    uint64_t pos = 0, handle, v;

    while (u64map_next(&ds->files, &pos, &handle, &v)) {
        struct datafile *df = (struct datafile *)(uintptr_t)v;
        u64map_free(&df->blocks);
        u64map_free(&df->runs);
        free(df);
    }
    u64map_free(&ds->files);
}

static int open_store(struct evloop *loop, struct iraid_volume *vol, const char *dir,
                      int zeroed, struct dfstore **out)
{
    struct dfstore *ds;
    int rc;

    if (!loop || !vol || !dir || !out)
        return -EINVAL;
    if (DFSTORE_BLOCK % iraid_block_size(vol)) {
        log_error("dfstore: volume block %u does not divide %u", iraid_block_size(vol),
                  DFSTORE_BLOCK);
        return -EINVAL;
    }
    if (!(ds = calloc(1, sizeof(*ds))))
        return -ENOMEM;
    ds->loop = loop;
    ds->vol = vol;
    ds->vbs = iraid_block_size(vol);
    (void)df_l1_init(&ds->l1, loop, vol, 0);   /* off: cannot fail */
    if ((rc = df_space_init(&ds->space, iraid_size(vol) / DFSTORE_BLOCK)) < 0)
        goto free_ds;
    ds->zeros = calloc(1, DFSTORE_BLOCK);
    ds->discard = malloc(ds->vbs);
    if (!ds->zeros || !ds->discard) {
        rc = -ENOMEM;
        goto free_buffers;
    }
    if ((rc = df_journal_open(&ds->journal, dir, &loader, ds)) < 0)
        goto free_files;
    df_plan_runs_loaded(ds);
    if ((rc = df_commit_init(&ds->commit, loop, &ds->l1, &ds->journal, &ds->space,
                             df_commit_round_done, ds)) < 0)
        goto close_journal;
    df_unmap_init(&ds->unmap, vol, &ds->space);
    ds->commit.unmap = &ds->unmap;
    log_info("dfstore: %s: %" PRIu64 " of %" PRIu64 " blocks in use", dir,
             ds->space.used_blocks, ds->space.total_blocks);
    if (zeroed && ds->space.used_blocks == 0)
        ds->space.zero_known = 1;
    else if (zeroed)
        log_warn("dfstore: %s: the volume is said to be new but the store has blocks in "
                 "use; every new block is zero-filled", dir);
    *out = ds;
    return 0;

close_journal:
    df_journal_close(&ds->journal);
free_files:
    free_files(ds);
free_buffers:
    free(ds->discard);
    free(ds->zeros);
    df_space_fini(&ds->space);
free_ds:
    free(ds);
    return rc;
}

int dfstore_open(struct evloop *loop, struct iraid_volume *vol, const char *dir,
                 struct dfstore **out)
{
    return open_store(loop, vol, dir, 0, out);
}

int dfstore_open_zeroed(struct evloop *loop, struct iraid_volume *vol, const char *dir,
                        struct dfstore **out)
{
    return open_store(loop, vol, dir, 1, out);
}

static void close_done(int status, uint64_t value, void *user)
{
    int *done = user;

    *done = status < 0 ? status : 1;
}

void dfstore_close(struct dfstore *ds)
{
    int done = 0;

    if (!ds)
        return;
    /* A final sync of everything: it runs after all that is in flight. */
    if (dfstore_sync(ds, 0, close_done, &done) < 0)
        log_error("dfstore: cannot queue the final sync: unsynced changes are lost");
    else
        while (done == 0 || ds->gfirst || ds->commit.state != COMMIT_IDLE ||
               df_l1_busy(&ds->l1) || df_unmap_busy(&ds->unmap))
            evloop_run_once(ds->loop, -1);
    if (done < 0)
        log_error("dfstore: final sync failed (%s): unsynced changes are lost",
                  strerror(-done));
    log_info("dfstore: %" PRIu64 " writes, %" PRIu64 " of them gathered into an earlier one's "
             "volume I/O", ds->writes, ds->writes_gathered);
    if (ds->deliver_timer)
        evloop_del_timer(ds->loop, ds->deliver_timer);
    df_commit_fini(&ds->commit);
    df_unmap_fini(&ds->unmap);
    df_journal_close(&ds->journal);
    free_files(ds);
    df_l1_fini(&ds->l1);
    free(ds->discard);
    free(ds->zeros);
    df_space_fini(&ds->space);
    free(ds);
}
