/* Unit tests of the ordering and window rules of a server connection
 * (backend/server/reqorder.c; the rules are common/proto.h's): which
 * requests of one connection may run at once, and when a connection or
 * the server must stop reading or wait before starting a READ. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "backend/server/reqorder.h"

/* Describes a READ or WRITE of handle with npairs pairs (offset, len). */
static void io_shape(uint16_t op, uint64_t handle, const uint64_t *pairs, uint32_t npairs,
                     struct req_shape *out)
{
    uint8_t body[sizeof(struct ipvfs_io_req) + 8 * sizeof(struct ipvfs_pair)];
    struct ipvfs_io_req req = { .handle = handle, .npairs = npairs };
    struct ipvfs_hdr h = { .magic = IPVFS_PROTO_MAGIC, .version = IPVFS_PROTO_VERSION, .op = op };
    uint64_t data = 0;

    memcpy(body, &req, sizeof(req));
    for (uint32_t i = 0; i < npairs; i++) {
        struct ipvfs_pair p = { pairs[2 * i], pairs[2 * i + 1] };

        memcpy(body + sizeof(req) + i * sizeof(p), &p, sizeof(p));
        data += p.len;
    }
    h.body_len = sizeof(req) + npairs * sizeof(struct ipvfs_pair);
    /* a WRITE's data follows its pairs; describing looks at the pairs only */
    if (op == IPVFS_OP_WRITE)
        h.body_len += data;
    reqorder_describe(&h, body, out);
}

static void test_describe(void **state)
{
    const uint64_t pairs[] = { 4096, 100, 0, 10, 65536, 4096 };
    struct req_shape s;

    (void)state;
    io_shape(IPVFS_OP_READ, 9, pairs, 3, &s);
    assert_int_equal(s.kind, REQ_READ);
    assert_int_equal(s.handle, 9);
    assert_int_equal(s.lo, 0);
    assert_int_equal(s.hi, 65536 + 4096);
    assert_int_equal(s.reply_bytes, 100 + 10 + 4096);
    io_shape(IPVFS_OP_WRITE, 9, pairs, 1, &s);
    assert_int_equal(s.kind, REQ_WRITE);
    assert_int_equal(s.reply_bytes, 0);
}

/* Anything but READ and WRITE, and a READ whose body is too short for its
 * pairs, is a barrier. */
static void test_barriers(void **state)
{
    struct ipvfs_hdr h = { .op = IPVFS_OP_DF_SYNC, .body_len = 16 };
    uint8_t body[64] = { 0 };
    struct ipvfs_io_req req = { .handle = 1, .npairs = 3 };
    struct req_shape sync, bad, rd;
    const uint64_t pairs[] = { 0, 10 };

    (void)state;
    reqorder_describe(&h, body, &sync);
    assert_int_equal(sync.kind, REQ_BARRIER);
    memcpy(body, &req, sizeof(req));
    h.op = IPVFS_OP_READ;
    h.body_len = sizeof(req) + 16;      /* room for 1 pair, 3 claimed */
    reqorder_describe(&h, body, &bad);
    assert_int_equal(bad.kind, REQ_BARRIER);
    io_shape(IPVFS_OP_READ, 1, pairs, 1, &rd);
    assert_true(reqorder_must_wait(&sync, &rd));
    assert_true(reqorder_must_wait(&rd, &sync));
    assert_true(reqorder_must_wait(&sync, &sync));
}

static void test_overlap_rules(void **state)
{
    const uint64_t a[] = { 0, 1 << 20 }, b[] = { 1 << 20, 1 << 20 }, c[] = { 4096, 1 };
    struct req_shape ra, rb, wa, wb, wc, wc_other;

    (void)state;
    io_shape(IPVFS_OP_READ, 5, a, 1, &ra);
    io_shape(IPVFS_OP_READ, 5, b, 1, &rb);
    io_shape(IPVFS_OP_WRITE, 5, a, 1, &wa);
    io_shape(IPVFS_OP_WRITE, 5, b, 1, &wb);
    io_shape(IPVFS_OP_WRITE, 5, c, 1, &wc);
    io_shape(IPVFS_OP_WRITE, 6, c, 1, &wc_other);
    /* reads never wait for reads, even of the same bytes */
    assert_false(reqorder_must_wait(&ra, &ra));
    /* adjacent pieces of one stream run at once */
    assert_false(reqorder_must_wait(&wa, &wb));
    assert_false(reqorder_must_wait(&ra, &wb));
    /* an overlapping write orders both ways */
    assert_true(reqorder_must_wait(&wa, &ra));
    assert_true(reqorder_must_wait(&ra, &wc));
    assert_true(reqorder_must_wait(&wa, &wc));
    /* another handle never */
    assert_false(reqorder_must_wait(&wa, &wc_other));
}

static void test_windows(void **state)
{
    (void)state;
    assert_true(reqorder_may_admit(0, 0, 0));
    assert_true(reqorder_may_admit(IPVFS_CONN_MAX_INFLIGHT - 1, IPVFS_CONN_WINDOW_BYTES - 1,
                                   IPVFS_SERVER_INFLIGHT_BYTES - 1));
    assert_false(reqorder_may_admit(IPVFS_CONN_MAX_INFLIGHT, 0, 0));
    assert_false(reqorder_may_admit(1, IPVFS_CONN_WINDOW_BYTES, 0));
    assert_false(reqorder_may_admit(0, 0, IPVFS_SERVER_INFLIGHT_BYTES));
    /* a lone READ of the largest size starts; a second one waits */
    assert_true(reqorder_may_start(IPVFS_MAX_IO_BYTES, 4096, 0, 4096, 0));
    assert_false(reqorder_may_start(IPVFS_MAX_IO_BYTES, 4096, 1, 4096, 1));
    assert_true(reqorder_may_start(1 << 20, 1 << 20, 1, 1 << 20, 1));
    /* the server's bound holds across connections */
    assert_false(reqorder_may_start(1 << 20, 0, 0, IPVFS_SERVER_INFLIGHT_BYTES, 3));
    assert_true(reqorder_may_start(1 << 20, 0, 0, IPVFS_SERVER_INFLIGHT_BYTES, 0));
    assert_true(reqorder_may_start(0, IPVFS_CONN_WINDOW_BYTES, 8, IPVFS_SERVER_INFLIGHT_BYTES, 9));
    /* WRITE data has a bound of its own: writes stuck on a slow volume
     * never hold back what is charged to the other one */
    assert_int_equal(reqorder_pool(IPVFS_OP_WRITE), REQ_POOL_WRITE);
    assert_int_equal(reqorder_pool(IPVFS_OP_READ), REQ_POOL_OTHER);
    assert_int_equal(reqorder_pool(IPVFS_OP_HELLO), REQ_POOL_OTHER);
    assert_int_equal(reqorder_pool(IPVFS_OP_LOOKUP), REQ_POOL_OTHER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_barriers),
        cmocka_unit_test(test_overlap_rules),
        cmocka_unit_test(test_windows),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
