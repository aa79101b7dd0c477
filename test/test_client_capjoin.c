/* A capability shown without blocking (adio/client/xfer_engine.h): a
 * client without the cluster key, against a scripted I/O node in a child
 * process over a real socket (test/script_server.h).
 * 1. A read of file A begins alone (the connection's greeting and A's CAP
 *    are blocking exchanges) and stays unanswered.
 * 2. A read of file B, whose capability the connection does not hold,
 *    still goes at once: its CAP and then its READ reach the server
 *    while A's READ is unanswered (a client that shows capabilities only
 *    between batches leaves both behind A, and the server's next read
 *    times out).  A second read of B sends no second CAP.
 * 3. A read of file C whose CAP the server refuses fails with the CAP's
 *    reason, not with the READ's "without a capability".
 * 4. Replies come last first; every read lands byte-exact.
 * 5. C read again once nothing runs: its refused capability was not kept
 *    as shown, so the client shows it again (blocking), and the read
 *    succeeds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adio/client/ipvfs_client.h"
#include "common/net.h"

#define SECRET_BYTE 0x5A
#include "test/script_server.h"

#define LEN 4096u
#define HANDLE_A 0xA1
#define HANDLE_B 0xB2
#define HANDLE_C 0xC3

static uint8_t pattern(uint64_t handle, uint64_t offset)
{
    return (uint8_t)(handle * 31 + offset * 7 + 1);
}

/* The next request must be a CAP of handle. */
static void srv_read_cap(int fd, uint64_t handle, struct srv_req *r)
{
    struct ipvfs_cap cap;

    srv_read(fd, IPVFS_OP_CAP, r);
    WANT(r->h.body_len == sizeof(cap));
    memcpy(&cap, r->body, sizeof(cap));
    WANT(cap.handle == handle);
}

/* The next request must be a READ of handle. */
static void srv_read_read(int fd, uint64_t handle, struct srv_req *r)
{
    struct ipvfs_io_req req;

    srv_read(fd, IPVFS_OP_READ, r);
    memcpy(&req, r->body, sizeof(req));
    WANT(req.handle == handle && req.npairs == 1);
}

/* Answers READ r (one pair) with the pattern of its handle. */
static void srv_answer_read(int fd, const struct srv_req *r)
{
    static uint8_t data[LEN];
    struct ipvfs_io_req req;
    struct ipvfs_pair p;
    struct ipvfs_io_rep rep = { .df_size = LEN, .verifier = 5 };

    memcpy(&req, r->body, sizeof(req));
    memcpy(&p, r->body + sizeof(req), sizeof(p));
    WANT(p.len <= LEN && p.offset + p.len <= LEN);
    for (uint64_t i = 0; i < p.len; i++)
        data[i] = pattern(req.handle, p.offset + i);
    rep.bytes = p.len;
    srv_send(fd, r, r->h.req_id, &rep, sizeof(rep), data, p.len);
}

/* Refuses r with status err and the message text. */
static void srv_refuse(int fd, const struct srv_req *r, int err, const char *text)
{
    struct ipvfs_hdr h = { .magic = IPVFS_PROTO_MAGIC, .version = IPVFS_PROTO_VERSION,
                           .op = (uint16_t)(r->h.op | IPVFS_OP_REPLY), .req_id = r->h.req_id,
                           .status = (uint32_t)err, .body_len = strlen(text) + 1 };

    WANT(net_write_full(fd, &h, sizeof(h), 5000) == 0);
    WANT(net_write_full(fd, text, h.body_len, 5000) == 0);
}

static void server_script(int l)
{
    struct srv_req cap_a, read_a, cap_b, read_b, read_b2, cap_c, read_c;
    int fd;

    alarm(60);   /* not left behind by a client that failed early */
    fd = srv_accept_nobody(l, 8);

    /* 1 */
    srv_read_cap(fd, HANDLE_A, &cap_a);
    srv_reply(fd, &cap_a, NULL, 0);
    srv_read_read(fd, HANDLE_A, &read_a);
    /* 2: B's CAP and READs arrive while A's READ is unanswered */
    srv_read_cap(fd, HANDLE_B, &cap_b);
    srv_read_read(fd, HANDLE_B, &read_b);
    srv_read_read(fd, HANDLE_B, &read_b2);
    /* 3 */
    srv_read_cap(fd, HANDLE_C, &cap_c);
    srv_read_read(fd, HANDLE_C, &read_c);
    srv_refuse(fd, &cap_c, EACCES, "capability for handle 195 is forged or damaged");
    srv_refuse(fd, &read_c, EACCES, "READ of handle 195 without a capability");
    /* 4 */
    srv_reply(fd, &cap_b, NULL, 0);
    srv_answer_read(fd, &read_b2);
    srv_answer_read(fd, &read_b);
    srv_answer_read(fd, &read_a);
    /* 5 */
    srv_read_cap(fd, HANDLE_C, &cap_c);
    srv_reply(fd, &cap_c, NULL, 0);
    srv_read_read(fd, HANDLE_C, &read_c);
    srv_answer_read(fd, &read_c);
    close(fd);
    close(l);
    _exit(0);
}

static struct ipvfs_file *attach(struct ipvfs_client *c, const char *path, uint64_t handle)
{
    struct ipvfs_entry e = { .handle = handle, .stripe_unit = 65536, .stripe_factor = 1,
                             .first_server = 1, .type = IPVFS_TYPE_FILE };
    struct ipvfs_cap cap = { .handle = handle, .rights = IPVFS_CAP_READ,
                             .expires_ms = (int64_t)time(NULL) * 1000 + 3600 * 1000 };
    struct ipvfs_file *f;
    struct ipvfs_error err;

    if (ipvfs_file_attach(c, path, &e, &cap, &f, &err) < 0)
        fail_msg("attach %s: %s", path, err.msg);
    return f;
}

static struct ipvfs_aio *start_read(struct ipvfs_file *f, uint8_t *buf)
{
    struct ipvfs_extent ext = { .offset = 0, .len = LEN };
    struct iovec mem = { .iov_base = buf, .iov_len = LEN };
    struct ipvfs_aio *aio;
    struct ipvfs_error err;

    memset(buf, 0, LEN);
    if (ipvfs_aio_start(f, 0, &ext, 1, &mem, 1, &aio, &err) < 0)
        fail_msg("aio start: %s", err.msg);
    return aio;
}

/* Finishes aio, which must have read handle's pattern. */
static void finish_exact(struct ipvfs_aio *aio, const uint8_t *buf, uint64_t handle)
{
    struct ipvfs_error err;
    uint64_t n = 0;

    if (ipvfs_aio_finish(aio, &n, &err) < 0)
        fail_msg("read of handle %llx: %s", (unsigned long long)handle, err.msg);
    assert_int_equal(n, LEN);
    for (uint64_t i = 0; i < LEN; i++)
        if (buf[i] != pattern(handle, i))
            fail_msg("handle %llx byte %llu is %u, not %u", (unsigned long long)handle,
                     (unsigned long long)i, buf[i], pattern(handle, i));
}

static void test_capjoin_script(void **state)
{
    struct srv_run run;
    static uint8_t a[LEN], b[LEN], b2[LEN], cbuf[LEN];
    struct ipvfs_aio *ra, *rb, *rb2, *rc;
    struct ipvfs_file *fa, *fb, *fc;
    struct ipvfs_client *c;
    struct ipvfs_error err;
    uint64_t n;

    (void)state;
    srv_run_start(&run, server_script);
    write_map_keyless(run.map_path, run.port);
    if (ipvfs_client_new(run.map_path, 0, &c, &err) < 0)
        fail_msg("client: %s", err.msg);
    fa = attach(c, "/a", HANDLE_A);
    fb = attach(c, "/b", HANDLE_B);
    fc = attach(c, "/c", HANDLE_C);
    ra = start_read(fa, a);
    rb = start_read(fb, b);
    rb2 = start_read(fb, b2);
    rc = start_read(fc, cbuf);
    assert_int_equal(ipvfs_aio_finish(rc, &n, &err), -EACCES);
    printf("refused capability: %s\n", err.msg);
    if (!strstr(err.msg, "forged or damaged"))
        fail_msg("the read of C failed with \"%s\", not the CAP's reason", err.msg);
    finish_exact(rb, b, HANDLE_B);
    finish_exact(rb2, b2, HANDLE_B);
    finish_exact(ra, a, HANDLE_A);
    finish_exact(start_read(fc, cbuf), cbuf, HANDLE_C);
    ipvfs_file_close(fc);
    ipvfs_file_close(fb);
    ipvfs_file_close(fa);
    ipvfs_client_put(c);
    srv_run_end(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capjoin_script),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
