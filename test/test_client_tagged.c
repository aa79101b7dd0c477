/* Tagged replies at the client (adio/client/xfer.c, xfer_rx.c; protocol 5
 * in common/proto.h), against a scripted one-rank server in a child
 * process over real sockets:
 * - a read cut into 4 pieces whose replies come back in reverse order
 *   lands each piece in its place of the user's buffer;
 * - the client keeps no more requests in flight than the server's HELLO
 *   allowed (2 here): the third piece goes only after a reply;
 * - a reply with a tag (req_id) that names no unanswered request fails
 *   the read with a message naming the rank and the tag, and the client
 *   closes that connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adio/client/ipvfs_client.h"
#include "common/net.h"

#define SECRET_BYTE 0x5A
#define HANDLE 0x99
#include "test/script_server.h"

#define PIECE 65536u          /* the schedule block the test sets: one request each */
#define NPIECES 4u
#define FILE_LEN (PIECE * NPIECES)

/* The byte the file holds at offset: no two pieces alike. */
static uint8_t pattern(uint64_t offset)
{
    return (uint8_t)(offset * 7 + offset / PIECE * 13 + 1);
}

/* Answers READ r (one pair) with the pattern, tagged req_id. */
static void srv_read_reply(int fd, const struct srv_req *r, uint64_t req_id)
{
    static uint8_t data[PIECE];
    struct ipvfs_io_req req;
    struct ipvfs_pair p;
    struct ipvfs_io_rep rep = { .df_size = FILE_LEN, .verifier = 5 };

    memcpy(&req, r->body, sizeof(req));
    WANT(req.handle == HANDLE && req.npairs == 1);
    memcpy(&p, r->body + sizeof(req), sizeof(p));
    WANT(p.len <= PIECE && p.offset + p.len <= FILE_LEN);
    for (uint64_t i = 0; i < p.len; i++)
        data[i] = pattern(p.offset + i);
    rep.bytes = p.len;
    srv_send(fd, r, req_id, &rep, sizeof(rep), data, p.len);
}

/* 1 when nothing arrives on fd within ms (the client holds back). */
static int srv_quiet(int fd, int ms)
{
    struct pollfd pfd = { .fd = fd, .events = POLLIN };

    return poll(&pfd, 1, ms) == 0;
}

static void server_script(int l)
{
    struct srv_req r[NPIECES];
    int fd;

    /* 1: window 8: all four pieces come at once; answered last first */
    fd = srv_accept_window(l, 8);
    for (unsigned i = 0; i < NPIECES; i++)
        srv_read(fd, IPVFS_OP_READ, &r[i]);
    for (unsigned i = NPIECES; i-- > 0;)
        srv_read_reply(fd, &r[i], r[i].h.req_id);
    close(fd);
    /* 2: window 2: the third piece waits for a reply */
    fd = srv_accept_window(l, 2);
    srv_read(fd, IPVFS_OP_READ, &r[0]);
    srv_read(fd, IPVFS_OP_READ, &r[1]);
    WANT(srv_quiet(fd, 300));
    srv_read_reply(fd, &r[1], r[1].h.req_id);
    srv_read(fd, IPVFS_OP_READ, &r[2]);
    WANT(srv_quiet(fd, 300));
    srv_read_reply(fd, &r[0], r[0].h.req_id);
    srv_read(fd, IPVFS_OP_READ, &r[3]);
    srv_read_reply(fd, &r[3], r[3].h.req_id);
    srv_read_reply(fd, &r[2], r[2].h.req_id);
    close(fd);
    /* 3: a reply to no request: the client closes the connection */
    fd = srv_accept_window(l, 8);
    for (unsigned i = 0; i < NPIECES; i++)
        srv_read(fd, IPVFS_OP_READ, &r[i]);
    /* a bare header: the client closes on reading it, and a body still
     * being written would then fail here (EPIPE) */
    srv_send(fd, &r[2], r[3].h.req_id + 1000, NULL, 0, NULL, 0);
    {
        uint8_t b;
        WANT(net_read_full(fd, &b, 1, 5000) < 0);   /* closed, not timed out */
    }
    close(fd);
    close(l);
    _exit(0);
}

static void check_buffer(const uint8_t *buf)
{
    for (uint64_t i = 0; i < FILE_LEN; i++)
        if (buf[i] != pattern(i))
            fail_msg("byte %llu is %u, not %u: a reply landed in the wrong place",
                     (unsigned long long)i, buf[i], pattern(i));
}

static void test_tagged_script(void **state)
{
    struct ipvfs_entry e = { .handle = HANDLE, .stripe_unit = 65536, .stripe_factor = 1,
                             .type = IPVFS_TYPE_FILE };
    struct srv_run run;
    static uint8_t buf[FILE_LEN];
    struct ipvfs_client *c;
    struct ipvfs_file *f;
    struct ipvfs_error err;
    uint64_t n;

    (void)state;
    srv_run_start(&run, server_script);
    write_map(run.map_path, run.port);
    /* a private client: its connection is closed with it, for the next step */
    for (int step = 1; step <= 2; step++) {
        assert_int_equal(ipvfs_client_new(run.map_path, 0, &c, &err), 0);
        assert_int_equal(ipvfs_file_attach(c, "/f", &e, NULL, &f, &err), 0);
        f->opts.block = PIECE;
        memset(buf, 0, sizeof(buf));
        if (ipvfs_read(f, 0, buf, FILE_LEN, &n, &err) < 0)
            fail_msg("step %d: read of replies out of order: %s", step, err.msg);
        assert_int_equal(n, FILE_LEN);
        check_buffer(buf);
        ipvfs_file_close(f);
        ipvfs_client_put(c);
    }
    /* 3 */
    assert_int_equal(ipvfs_client_new(run.map_path, 0, &c, &err), 0);
    assert_int_equal(ipvfs_file_attach(c, "/f", &e, NULL, &f, &err), 0);
    f->opts.block = PIECE;
    assert_int_equal(ipvfs_read(f, 0, buf, FILE_LEN, &n, &err), -EPROTO);
    printf("reply with an unknown tag: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "unknown tag"));
    assert_non_null(strstr(err.msg, "rank 0"));
    ipvfs_file_close(f);
    ipvfs_client_put(c);
    srv_run_end(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tagged_script),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
