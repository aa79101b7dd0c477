/* libFuzzer harness over the target's PDU and CDB parsing.
 *
 * Input byte 0 picks the mode, byte 1 the negotiated parameters:
 *   mode 0: the rest is a byte stream on a connection in login phase
 *   mode 1: the rest is a byte stream on a connection in full feature phase
 *   mode 2: the rest is a CDB (16 bytes), an expected length (4 bytes) and
 *           immediate data, wrapped in a SCSI Command PDU
 * The connection reads through a memory transport and discards what the
 * target sends; the LUN is a 1 MiB memory store, so every command runs to
 * completion inside the call.  Built by test/t_target_fuzz.sh with
 * clang -fsanitize=fuzzer,address,undefined. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/iscsi/tgt.h"
#include "common/evloop.h"

struct feed {
    const uint8_t *p;
    size_t n;
};

static struct evloop *loop;
static struct tgt_server *srv;

static ssize_t feed_recv(struct tgt_conn *c, void *buf, size_t len)
{
    struct feed *f = c->tp_user;

    if (f->n == 0)
        return -EAGAIN;
    if (len > f->n)
        len = f->n;
    memcpy(buf, f->p, len);
    f->p += len;
    f->n -= len;
    return (ssize_t)len;
}

static ssize_t feed_sendv(struct tgt_conn *c, const struct iovec *iov, int iovcnt, int more)
{
    size_t n = 0;

    for (int i = 0; i < iovcnt; i++)
        n += iov[i].iov_len;
    return (ssize_t)n;
}

static const struct tgt_transport feed_transport = { feed_recv, feed_sendv, NULL };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static struct tgt_lun_config lun = { .kind = TGT_BACKING_MEMORY, .size = 1 << 20 };
    static struct tgt_config cfg = { .iqn = "iqn.2026-01.org.ipvfs:fuzz",
                                     .portal_host = "127.0.0.1", .luns = &lun, .nluns = 1 };
    uint16_t port;

    setenv("IPVFS_LOG", "error", 0);
    loop = evloop_create();
    if (!loop || tgt_server_create(loop, &cfg, &srv, &port) < 0)
        abort();
    return 0;
}

static void full_feature(struct tgt_conn *c, uint8_t flags)
{
    c->state = CONN_FULL;
    strcpy(c->initiator, "iqn.2026-01.org.ipvfs:fuzzer");
    c->p.immediate_data = flags & 1;
    c->p.initial_r2t = (flags & 2) != 0;
    c->p.header_digest = (flags & 4) != 0;
    c->p.data_digest = (flags & 8) != 0;
    c->digests_on = 1;
    c->p.peer_mrdsl = 512u << ((flags >> 4) & 7);
    c->p.max_burst = 4096u << ((flags >> 4) & 7);
    c->p.first_burst = c->p.max_burst;
    c->p.max_r2t = 1u + (flags >> 7) * 3u;
    c->exp_cmdsn = 0;
    c->max_cmdsn = TGT_CMD_WINDOW - 1;
}

/* Mode 2: wrap CDB, EDTL and data in one SCSI Command PDU. */
static uint8_t *wrap_cdb(const uint8_t *d, size_t n, size_t *out_len)
{
    uint32_t dlen = n > 20 ? (uint32_t)(n - 20) : 0;
    uint8_t *p;

    if (dlen > 65536)
        dlen = 65536;
    p = calloc(1, 48 + dlen + 3);
    if (!p)
        return NULL;
    p[0] = 0x41;                      /* immediate SCSI command */
    p[1] = 0x80 | 0x40 | 0x20;        /* F, R, W */
    put_be24(p + 5, dlen);
    put_be32(p + 16, 1);
    if (n >= 20)
        memcpy(p + 20, d + 16, 4);    /* EDTL */
    memcpy(p + 32, d, n < 16 ? n : 16);
    if (dlen)
        memcpy(p + 48, d + 20, dlen);
    *out_len = 48 + dlen + pad4(dlen);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tgt_conn *c;
    struct feed f;
    uint8_t *wrapped = NULL;
    int mode;

    if (size < 2)
        return 0;
    mode = data[0] % 3;
    f = (struct feed){ data + 2, size - 2 };
    if (mode == 2) {
        size_t len = 0;
        wrapped = wrap_cdb(data + 2, size - 2, &len);
        if (!wrapped)
            return 0;
        f = (struct feed){ wrapped, len };
    }
    if (tgt_conn_create(srv, -1, &feed_transport, &f, &c) < 0)
        abort();
    if (mode > 0) {
        full_feature(c, data[1]);
        if (mode == 2)
            c->p.header_digest = c->p.data_digest = 0;
    }
    c->refs++;
    while (c->state != CONN_CLOSED && f.n > 0) {
        size_t before = f.n;
        tgt_conn_rx(c);
        if (f.n == before)
            break;
    }
    tgt_conn_close(c, NULL);
    tgt_conn_put(c);
    free(wrapped);
    return 0;
}
