/* Shared by the files of one connection only (conn.c, conn_rx.c,
 * conn_tx.c, ffp.c): what they call of each other beyond tgt.h, listed
 * bottom-up (a file calls only the sections above its own):
 *
 *   conn.c     lifecycle: close, references, freeing the transmit queue;
 *              tasks
 *   conn_tx.c  transmit queue, batching, responses (Data-In, SCSI Response,
 *              Reject)
 *   ffp.c      full feature phase PDUs, CmdSN window, tgt_pdu_ops[]
 *   conn_rx.c  PDU receive state machine, dispatch through tgt_pdu_ops[]
 */
#ifndef IPVFS_TGT_CONN_H
#define IPVFS_TGT_CONN_H

#include <isa-l/crc.h>
#include <stdint.h>
#include <string.h>

#include "backend/iscsi/tgt.h"

/* ---- CRC32C digests (RFC 7143 12.1) ---- */

static inline uint32_t crc_begin(void)
{
    return 0xffffffffu;
}

static inline uint32_t crc_add(uint32_t crc, const void *p, size_t n)
{
    return crc32_iscsi((unsigned char *)p, (int)n, crc);
}

/* The digest travels least significant byte first. */
static inline void crc_put(uint8_t *p, uint32_t crc)
{
    crc = ~crc;
    p[0] = (uint8_t)crc;
    p[1] = (uint8_t)(crc >> 8);
    p[2] = (uint8_t)(crc >> 16);
    p[3] = (uint8_t)(crc >> 24);
}

static inline int crc_check(const uint8_t *p, uint32_t crc)
{
    uint8_t want[4];

    crc_put(want, crc);
    return memcmp(p, want, 4) == 0;
}

/* ---- conn.c ---- */

/* Logs why and closes c (nothing when already closed). */
void tgt_conn_fail(struct tgt_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Tasks: see the ownership notes at the top of conn.c. */
struct tgt_task *tgt_task_new(struct tgt_conn *c);
/* The live (not aborted) task with this initiator task tag, or NULL. */
struct tgt_task *tgt_task_find(struct tgt_conn *c, uint32_t itt);
/* Takes t off c->tasks (it no longer counts in the CmdSN window). */
void tgt_task_unlink(struct tgt_task *t);
/* Frees t when nothing holds it any more. */
void tgt_task_release(struct tgt_task *t);
/* Keeps t allocated across calls that may close its connection. */
void tgt_task_hold(struct tgt_task *t);
void tgt_task_drop(struct tgt_task *t);
void tgt_task_abort(struct tgt_task *t);
/* Frees a queued PDU (sent or not), releasing its task reference. */
void tgt_txpdu_free(struct tgt_txpdu *p);
/* Frees every queued PDU unsent (the connection is closing). */
void tgt_conn_tx_drop_all(struct tgt_conn *c);

/* ---- conn_rx.c's dispatch table (filled by ffp.c) ---- */

/* How conn_rx.c receives a PDU of one opcode.  header(), when set, runs
 * in full feature phase once the header is in and chooses where the data
 * segment goes (c->rx_dst, c->rx_keep, c->rx_task); without it the data
 * goes to c->rx_seg.  done() acts on the whole PDU (data: c->rx_seg).
 * Both return 0 or a negative errno; header() fails the connection
 * itself, an error from done() fails it with the errno's text.  An opcode
 * without done() is answered with a Reject. */
struct tgt_pdu_op {
    int (*header)(struct tgt_conn *c, const uint8_t *h, uint32_t dlen);
    int (*done)(struct tgt_conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen);
};

/* ---- conn_tx.c ---- */

/* Sends c's queue now, or at the end of the current receive run or batch. */
void tgt_conn_tx_kick(struct tgt_conn *c);
/* Queues a Reject carrying the bad header. */
void tgt_conn_reject(struct tgt_conn *c, const uint8_t *bad, uint8_t reason);
/* tgt_conn_queue(), failing the connection when out of memory.  Returns 0,
 * or -ENOMEM after the connection was closed (which frees the tasks
 * nobody holds: see tgt_task_hold()). */
int tgt_conn_queue_or_fail(struct tgt_conn *c, const uint8_t *h, const void *data,
                           uint32_t dlen, struct tgt_task *t, int copy);

/* ---- ffp.c ---- */

/* Indexed by opcode (6 bits). */
extern const struct tgt_pdu_op tgt_pdu_ops[64];

#endif
