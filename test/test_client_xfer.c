/* The request engine's reply reader (adio/client/xfer_rx.c): a reply
 * stream cut into pieces of every size must land the same way: header
 * checked, body in the request's iovecs (more of them than one recvmsg
 * takes), error messages kept up to xfer_req.msg, keepalives skipped,
 * foreign replies refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "adio/client/xfer_rx.h"

#define REQ_ID 77
#define OP IPVFS_OP_READ

/* Appends a header (and body) to the stream buffer at *pos. */
static void put_reply(uint8_t *buf, size_t *pos, uint16_t op, uint64_t req_id, uint32_t status,
                      const void *body, size_t len)
{
    struct ipvfs_hdr h = { .magic = IPVFS_PROTO_MAGIC, .version = IPVFS_PROTO_VERSION,
                           .op = op, .status = status, .req_id = req_id, .body_len = len };

    memcpy(buf + *pos, &h, sizeof(h));
    *pos += sizeof(h);
    if (len)
        memcpy(buf + *pos, body, len);
    *pos += len;
}

static void put_progress(uint8_t *buf, size_t *pos)
{
    put_reply(buf, pos, IPVFS_OP_PROGRESS | IPVFS_OP_REPLY, REQ_ID, 0, NULL, 0);
}

/* Feeds the stream to the reader as recvmsg would, at most chunk bytes a
 * time.  Returns what rx_advance returned last (1: reply complete) and the
 * bytes consumed in *used. */
static int feed(struct xfer_rx *x, struct xfer_req *r, const uint8_t *s, size_t len,
                size_t chunk, size_t *used)
{
    size_t pos = 0, rounds = 0;
    int rc = 0;

    while (rc == 0) {
        /* every round takes a byte or an empty iovec: more means a reader
         * that no longer moves (a bug), not a long stream */
        if (++rounds > len + IOV_MAX * 4 + 100)
            fail_msg("the reader stopped moving after %zu of %zu bytes", pos, len);
        struct iovec scratch, *iov;
        int cnt;
        size_t room = rx_target(x, r, &scratch, &iov, &cnt), got = 0;

        assert_true(cnt >= 1 && cnt <= IOV_MAX);
        for (int i = 0; i < cnt && got < chunk && pos < len; i++) {
            size_t n = iov[i].iov_len;

            if (n > chunk - got)
                n = chunk - got;
            if (n > len - pos)
                n = len - pos;
            memcpy(iov[i].iov_base, s + pos, n);
            pos += n;
            got += n;
        }
        if (room > 0 && got == 0)
            break;   /* the stream ran out */
        rc = rx_advance(x, r, got);
    }
    *used = pos;
    return rc;
}

static void init_req(struct xfer_req *r, struct iovec *recv, int cnt)
{
    memset(r, 0, sizeof(*r));
    r->op = OP;
    r->hdr.req_id = REQ_ID;
    r->recv_iov = recv;
    r->recv_cnt = cnt;
}

/* A body spread over more iovecs than IOV_MAX, in pieces of 1 byte up to
 * the whole, with keepalives before it. */
static void test_body_any_chunking(void **state)
{
    enum { NIOV = IOV_MAX + 300, BODY = NIOV * 3 };
    static const size_t chunks[] = { 1, 2, 7, 31, 32, 33, 4096, 1u << 30 };
    uint8_t *stream = malloc(BODY + 4 * sizeof(struct ipvfs_hdr)), *body = malloc(BODY);
    uint8_t *dest = malloc(BODY);
    struct iovec *recv = malloc(NIOV * sizeof(*recv));
    size_t len = 0;

    (void)state;
    assert_non_null(stream);
    assert_non_null(body);
    assert_non_null(dest);
    assert_non_null(recv);
    for (size_t i = 0; i < BODY; i++)
        body[i] = (uint8_t)(i * 131 + 7);
    put_progress(stream, &len);
    put_progress(stream, &len);
    put_reply(stream, &len, OP | IPVFS_OP_REPLY, REQ_ID, 0, body, BODY);
    for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
        struct xfer_req r;
        struct xfer_rx x;
        size_t used, off = 0;

        /* iovecs of 0 to 5 bytes, some empty, BODY bytes in all */
        for (int i = 0; i < NIOV; i++) {
            size_t n = (size_t)(i % 6 == 5 ? 3 : i % 6);

            if (i == NIOV - 1)
                n = BODY - off;
            recv[i] = (struct iovec){ .iov_base = dest + off, .iov_len = n };
            off += n;
        }
        assert_int_equal(off, BODY);
        memset(dest, 0, BODY);
        init_req(&r, recv, NIOV);
        rx_reset(&x);
        assert_int_equal(feed(&x, &r, stream, len, chunks[c], &used), 1);
        assert_int_equal(used, len);
        assert_int_equal(r.err, 0);
        assert_memory_equal(dest, body, BODY);
        assert_int_equal(x.phase, RX_HDR);
    }
    free(recv);
    free(dest);
    free(body);
    free(stream);
}

/* An error reply: the message is kept up to sizeof(msg) - 1 and
 * NUL-terminated; the rest is read and dropped, so the next reply on the
 * stream is read from its start. */
static void test_error_message(void **state)
{
    static const size_t lens[] = { 0, 5, 255, 256, 5000 };
    uint8_t stream[8192];
    char text[6000];

    (void)state;
    for (size_t i = 0; i < sizeof(text); i++)
        text[i] = (char)('a' + i % 26);
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        for (size_t chunk = 1; chunk <= 4096; chunk *= 8) {
            uint8_t data[4] = { 1, 2, 3, 4 }, dest[4] = { 0 };
            struct iovec recv = { .iov_base = dest, .iov_len = sizeof(dest) };
            struct xfer_req r;
            struct xfer_rx x;
            size_t len = 0, used, keep = lens[k] < 255 ? lens[k] : 255;

            put_reply(stream, &len, OP | IPVFS_OP_REPLY, REQ_ID, ENOSPC, text, lens[k]);
            put_reply(stream, &len, OP | IPVFS_OP_REPLY, REQ_ID + 1, 0, data, sizeof(data));
            init_req(&r, &recv, 1);
            rx_reset(&x);
            assert_int_equal(feed(&x, &r, stream, len, chunk, &used), 1);
            assert_int_equal(r.err, ENOSPC);
            assert_int_equal(strlen(r.msg), keep);
            assert_memory_equal(r.msg, text, keep);
            /* the next request's reply follows */
            init_req(&r, &recv, 1);
            r.hdr.req_id = REQ_ID + 1;
            assert_int_equal(feed(&x, &r, stream + used, len - used, chunk, &used), 1);
            assert_int_equal(r.err, 0);
            assert_memory_equal(dest, data, sizeof(data));
        }
    }
}

/* An empty body completes without reading. */
static void test_empty_body(void **state)
{
    struct iovec recv = { .iov_base = NULL, .iov_len = 0 };
    uint8_t stream[64];
    struct xfer_req r;
    struct xfer_rx x;
    size_t len = 0, used;

    (void)state;
    put_reply(stream, &len, OP | IPVFS_OP_REPLY, REQ_ID, 0, NULL, 0);
    init_req(&r, &recv, 1);
    rx_reset(&x);
    assert_int_equal(feed(&x, &r, stream, len, 5, &used), 1);
    assert_int_equal(used, len);
    assert_int_equal(r.err, 0);
}

/* Replies that are not the request's: refused once the header is whole. */
static void test_foreign_replies(void **state)
{
    uint8_t dest[8];
    struct iovec recv = { .iov_base = dest, .iov_len = sizeof(dest) };
    struct ipvfs_hdr good = { .magic = IPVFS_PROTO_MAGIC, .version = IPVFS_PROTO_VERSION,
                              .op = OP | IPVFS_OP_REPLY, .req_id = REQ_ID,
                              .body_len = sizeof(dest) };
    struct ipvfs_hdr bad[6];

    (void)state;
    for (int i = 0; i < 6; i++)
        bad[i] = good;
    bad[0].magic ^= 1;
    bad[1].version = IPVFS_PROTO_VERSION + 1;
    bad[2].op = IPVFS_OP_WRITE | IPVFS_OP_REPLY;
    bad[3].req_id = REQ_ID + 1;
    bad[4].body_len = sizeof(dest) + 1;            /* not what recv_iov holds */
    bad[5].status = EIO;
    bad[5].body_len = XFER_MAX_ERR_BODY + 1;       /* an endless "message" */
    for (int i = 0; i < 6; i++) {
        struct xfer_req r;
        struct xfer_rx x;
        size_t used;

        init_req(&r, &recv, 1);
        rx_reset(&x);
        assert_int_equal(feed(&x, &r, (const uint8_t *)&bad[i], sizeof(bad[i]), 3, &used),
                         -EPROTO);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_body_any_chunking),
        cmocka_unit_test(test_error_message),
        cmocka_unit_test(test_empty_body),
        cmocka_unit_test(test_foreign_replies),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
