/* The embedded iSCSI target: the same code serves the target ranks of
 * ipvfs-server and the standalone ipvfs-target program.
 *
 * Contract:
 * - A target lives on the caller's struct evloop: tgt_server_create()
 *   registers the portal's listening socket there and every connection it
 *   accepts; all work happens in callbacks of that loop, on its thread.
 * - LUNs are numbered from 0 in the order given.  Backing stores are opened
 *   (and created, for files with a size) by tgt_server_create().
 * - A malformed PDU, an oversized segment or a wrong digest ends only that
 *   connection, with a log line.
 * - tgt_server_flush() makes every acknowledged write durable on the
 *   backing stores (fdatasync), synchronously.
 * - tgt_server_destroy() closes every connection and the portal, flushes and
 *   closes the backing stores, and frees the target.  The loop itself stays
 *   the caller's.
 */
#ifndef IPVFS_TARGET_H
#define IPVFS_TARGET_H

#include <stdint.h>

#include "common/evloop.h"

enum tgt_backing {
    TGT_BACKING_FILE,    /* regular (sparse) file, created if missing */
    TGT_BACKING_BLOCK,   /* block device */
    TGT_BACKING_MEMORY,  /* anonymous memory, lost at exit */
};

/* An emulated disk (a benchmark and test feature, store_disk.c): a file
 * LUN whose every READ and WRITE also takes the time a disk would, one at
 * a time per LUN in arrival order: a seek of 15/8 seek sqrt(d) for the
 * distance d from the end of the previous io (a fraction of the LUN; 0
 * when it starts there), a rotational latency drawn uniformly over a
 * turn (mean rot), and len / rate of transfer.  The data is the file's. */
struct tgt_disk_params {
    char name[32];       /* for the log */
    double rate;         /* bytes/s of media transfer */
    double seek;         /* mean seek over the LUN, s */
    double rot;          /* mean rotational latency (half a turn), s */
};
/* The presets by name: "st318452lw", the iPVFS papers' disk (51 MB/s,
 * 3.8 ms mean seek, 2 ms mean rotational latency).  0, or -EINVAL for an
 * unknown name. */
int tgt_disk_preset(const char *name, struct tgt_disk_params *out);

struct tgt_lun_config {
    enum tgt_backing kind;
    const char *path;    /* file or device; ignored for memory */
    uint64_t size;       /* bytes; 0 keeps an existing file's size */
    const struct tgt_disk_params *disk;  /* a FILE LUN behind an emulated
                                          * disk; NULL: none */
};

struct tgt_config {
    const char *iqn;           /* target name, e.g. iqn.2026-11.org.ipvfs:t0 */
    const char *portal_host;   /* address to listen on */
    uint16_t portal_port;      /* 0: pick a free port */
    int listen_fd;             /* > 0: a socket already bound to the portal and
                                * listening, used instead of binding; the
                                * target owns it from tgt_server_create on,
                                * even when that fails; 0 (zeroed config): bind */
    const struct tgt_lun_config *luns;
    int nluns;
    const char *chap_user;     /* NULL: no authentication */
    const char *chap_secret;
    const char *mutual_user;   /* NULL: one-way CHAP */
    const char *mutual_secret;
    int chap_discovery;        /* discovery sessions need CHAP too (else open,
                                * as tgt's and LIO's are by default) */
    uint64_t cache_l2;         /* bytes of L2 cache (whole 64 KiB blocks);
                                * 0: none.  With an L2, file and block
                                * stores are opened with O_DIRECT */
    const char *cache_l2_policy; /* cache/ policy name; NULL: TGT_L2_DEFAULT_POLICY */
};
/* The L2 policy of a target not told one (ipvfs-cachesim's traces name it). */
#define TGT_L2_DEFAULT_POLICY "demote"

/* uCache's DEMOTE (issue 13), a vendor-specific command of this target:
 * an I/O node hands a clean block its L1 evicts down to the L2 of the
 * target that stores it, so that the levels stay exclusive.
 *   CDB (16 bytes, laid out as WRITE(16)): byte 0 TGT_OP_DEMOTE, bytes
 *   2-9 the LBA, bytes 10-13 the number of blocks; Data-Out: the blocks,
 *   exactly as they are on the medium.
 * The target never writes them: whole 64 KiB blocks of the range are
 * offered to the L2 policy (kept under demote, demote-mq), the rest is
 * ignored, and the status is GOOD whether kept or not (a hint).  A new
 * opcode in the vendor range 0xC0-0xFF rather than a WRITE with a vendor
 * bit: a foreign target (tgtd, an external LUN) that ignored the bit
 * would write the data again; an unknown opcode it refuses without
 * touching the medium.  Initiators send it only to a target whose
 * vendor VPD page TGT_VPD_UCACHE (4 bytes of header, then byte 4: bit 0
 * set when an L2 keeps demoted blocks) says so.
 * The same page tells an initiator whether a write can still fail for
 * want of backing space (a thin LUN over a full disk): byte 4 bit 1 set
 * when bytes 8-15 (the backing file system's free bytes) and 16-23 (the
 * LUN's bytes not yet allocated on it), big-endian, are known (memory:
 * both 0; a file: statvfs and st_blocks; a block device: not known).  An
 * I/O node keeps new blocks' first writes in its L1 only while the free
 * bytes cover what its members could still allocate (iraid/volume.h). */
#define TGT_OP_DEMOTE 0xc0
#define TGT_VPD_UCACHE 0xc0

struct tgt_stats {
    uint64_t commands;
    uint64_t bytes_read;       /* Data-In payload */
    uint64_t bytes_written;    /* Data-Out and immediate data */
    uint32_t sessions;
    /* L2 cache (zero without one), in 64 KiB blocks */
    uint64_t l2_capacity, l2_resident;
    uint64_t l2_hits, l2_misses;
    uint64_t l2_dropped;       /* DPO reads that gave a block up */
    uint64_t l2_demotes;       /* blocks demoted into it */
    uint64_t l2_evictions;
};

struct tgt_server;

/* Returns 0 and the target in *out (and the bound port in *out_port), or a
 * negative errno after logging what failed. */
int tgt_server_create(struct evloop *loop, const struct tgt_config *cfg,
                      struct tgt_server **out, uint16_t *out_port);
int tgt_server_flush(struct tgt_server *tgt);
void tgt_server_stats(const struct tgt_server *tgt, struct tgt_stats *out);
void tgt_server_destroy(struct tgt_server *tgt);

/* --cache-l2 SIZE of ipvfs-target and ipvfs-server: 0 (none) or whole
 * 64 KiB blocks, at most half of this machine's memory.  0, or -EINVAL
 * with the reason in err. */
int tgt_cache_l2_parse(const char *arg, uint64_t *out_bytes, char *err, size_t errlen);
/* --cache-l2-policy NAME: 0 when name is a cache/ policy, or -EINVAL with
 * the reason in err. */
int tgt_cache_l2_policy_check(const char *name, char *err, size_t errlen);

#endif
