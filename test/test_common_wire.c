/* The blocking protocol exchange (common/wire.c) against a scripted peer:
 * requests go out as the protocol says, keepalives are skipped, replies
 * of another version, op or request are refused, and HELLO's outcomes
 * (accepted, refused with a message, a silent server) come back as
 * documented. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/net.h"
#include "common/wire.h"

static int sp[2];   /* [0] the code under test, [1] the scripted peer */

static int setup(void **state)
{
    (void)state;
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
}

static int teardown(void **state)
{
    (void)state;
    close(sp[0]);
    close(sp[1]);
    return 0;
}

static struct ipvfs_hdr hdr(uint16_t op, uint64_t req_id, uint32_t status, uint64_t len)
{
    return (struct ipvfs_hdr){ .magic = IPVFS_PROTO_MAGIC, .version = IPVFS_PROTO_VERSION,
                               .op = op, .status = status, .req_id = req_id, .body_len = len };
}

static void peer_put(int fd, struct ipvfs_hdr h, const void *body)
{
    assert_int_equal(net_write_full(fd, &h, sizeof(h), 1000), 0);
    if (h.body_len)
        assert_int_equal(net_write_full(fd, body, h.body_len, 1000), 0);
}

static void test_send_layout(void **state)
{
    struct iovec body[2] = { { (void *)"abc", 3 }, { (void *)"defg", 4 } };
    struct ipvfs_hdr h;
    char got[8] = "";

    (void)state;
    assert_int_equal(wire_send(sp[0], IPVFS_OP_MKDIR, 0x5, 99, body, 2, 1000), 0);
    assert_int_equal(net_read_full(sp[1], &h, sizeof(h), 1000), 0);
    assert_int_equal(h.magic, IPVFS_PROTO_MAGIC);
    assert_int_equal(h.version, IPVFS_PROTO_VERSION);
    assert_int_equal(h.op, IPVFS_OP_MKDIR);
    assert_int_equal(h.flags, 0x5);
    assert_int_equal(h.req_id, 99);
    assert_int_equal(h.body_len, 7);
    assert_int_equal(net_read_full(sp[1], got, 7, 1000), 0);
    assert_string_equal(got, "abcdefg");
    /* the caller's iovecs are left as they were */
    assert_int_equal(body[0].iov_len, 3);
}

static void test_reply_after_keepalives(void **state)
{
    struct wire_reply rep;

    (void)state;
    for (int i = 0; i < 3; i++)
        peer_put(sp[1], hdr(IPVFS_OP_PROGRESS | IPVFS_OP_REPLY, 7, 0, 0), NULL);
    peer_put(sp[1], hdr(IPVFS_OP_SCRUB | IPVFS_OP_REPLY, 7, ENOSPC, 5), "full!");
    assert_int_equal(wire_recv(sp[0], IPVFS_OP_SCRUB, 7, 1000, &rep), 0);
    assert_int_equal(rep.status, ENOSPC);
    assert_int_equal(rep.len, 5);
    assert_string_equal((const char *)rep.body, "full!");   /* NUL past the end */
    wire_reply_free(&rep);
    assert_null(rep.body);
}

static void test_foreign_replies(void **state)
{
    struct ipvfs_hdr bad[5];
    struct wire_reply rep;

    (void)state;
    for (int i = 0; i < 5; i++)
        bad[i] = hdr(IPVFS_OP_STATUS | IPVFS_OP_REPLY, 7, 0, 0);
    bad[0].magic ^= 1;
    bad[1].version = IPVFS_PROTO_VERSION + 1;
    bad[2].op = IPVFS_OP_SHUTDOWN | IPVFS_OP_REPLY;
    bad[3].req_id = 8;
    bad[4].body_len = IPVFS_MAX_BODY + 1;
    for (int i = 0; i < 5; i++) {
        /* another version is told apart: a peer of another iPVFS */
        int want = i == 1 ? -EPROTONOSUPPORT : -EPROTO;

        assert_int_equal(net_write_full(sp[1], &bad[i], sizeof(bad[i]), 1000), 0);
        if (wire_recv(sp[0], IPVFS_OP_STATUS, 7, 1000, &rep) != want)
            fail_msg("foreign reply %d accepted", i);
        assert_null(rep.body);
    }
}

static void test_silent_and_closed(void **state)
{
    struct wire_reply rep;

    (void)state;
    assert_int_equal(wire_recv(sp[0], IPVFS_OP_STATUS, 1, 50, &rep), -ETIMEDOUT);
    /* a keepalive, then silence: the wait started again and ends again */
    peer_put(sp[1], hdr(IPVFS_OP_PROGRESS | IPVFS_OP_REPLY, 1, 0, 0), NULL);
    assert_int_equal(wire_recv(sp[0], IPVFS_OP_STATUS, 1, 50, &rep), -ETIMEDOUT);
    /* a reply whose body ends early: the peer closes after 5 of 10 bytes */
    peer_put(sp[1], hdr(IPVFS_OP_STATUS | IPVFS_OP_REPLY, 1, 0, 0), NULL);
    assert_int_equal(wire_recv(sp[0], IPVFS_OP_STATUS, 1, 1000, &rep), 0);
    wire_reply_free(&rep);
    {
        struct ipvfs_hdr h = hdr(IPVFS_OP_STATUS | IPVFS_OP_REPLY, 2, 0, 10);

        assert_int_equal(net_write_full(sp[1], &h, sizeof(h), 1000), 0);
        assert_int_equal(net_write_full(sp[1], "12345", 5, 1000), 0);
    }
    close(sp[1]);
    sp[1] = -1;
    assert_int_equal(wire_recv(sp[0], IPVFS_OP_STATUS, 2, 1000, &rep), -ECONNRESET);
    assert_null(rep.body);
}

/* A one-connection server in a child: reads HELLO, then answers as told:
 * mode 0 proves the key 0xEE... and takes the client's proof; 1 refuses
 * HELLO with a message; 2 answers in an old protocol version; 3 says
 * nothing; 4 proves another key (not our cluster); 5 takes the HELLO but
 * refuses the AUTH. */
static pid_t fake_server(int mode, uint16_t *out_port)
{
    int l = net_listen("127.0.0.1", 0, out_port);
    pid_t pid;

    assert_true(l >= 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint8_t key[IPVFS_SECRET_LEN] = { 0xEE }, want[IPVFS_PROOF_LEN];
        struct ipvfs_hello_rep rep = { .rank = 3, .role = IPVFS_ROLE_IO };
        struct ipvfs_hello_req req;
        struct ipvfs_auth_req auth;
        struct ipvfs_hdr h;
        int fd = net_accept(l), ok;

        ok = fd >= 0 && net_read_full(fd, &h, sizeof(h), 5000) == 0 &&
             h.op == IPVFS_OP_HELLO && h.body_len == sizeof(req) &&
             net_read_full(fd, &req, sizeof(req), 5000) == 0 && req.client_id == 42;
        if (!ok)
            _exit(1);
        if (mode == 4)
            key[1] = 1;
        if (mode == 0 || mode == 4 || mode == 5) {
            if (auth_nonce(rep.nonce) < 0)
                _exit(1);
            auth_server_proof(key, req.nonce, rep.nonce, rep.proof);
            peer_put(fd, hdr(IPVFS_OP_HELLO | IPVFS_OP_REPLY, h.req_id, 0, sizeof(rep)), &rep);
        }
        if ((mode == 0 || mode == 5) &&
            (net_read_full(fd, &h, sizeof(h), 5000) < 0 || h.op != IPVFS_OP_AUTH ||
             h.body_len != sizeof(auth) || net_read_full(fd, &auth, sizeof(auth), 5000) < 0))
            _exit(1);
        if (mode == 0) {
            auth_client_proof(key, rep.nonce, req.nonce, 42, want);
            if (!auth_proof_equal(auth.proof, want))
                _exit(2);
            peer_put(fd, hdr(IPVFS_OP_AUTH | IPVFS_OP_REPLY, h.req_id, 0, 0), NULL);
        }
        if (mode == 5)
            peer_put(fd, hdr(IPVFS_OP_AUTH | IPVFS_OP_REPLY, h.req_id, EACCES, 11), "wrong proo");
        if (mode == 1)
            peer_put(fd, hdr(IPVFS_OP_HELLO | IPVFS_OP_REPLY, h.req_id, EACCES, 11),
                     "bad secret");
        if (mode == 2) {
            struct ipvfs_hdr old = hdr(IPVFS_OP_HELLO | IPVFS_OP_REPLY, h.req_id, 0, 0);

            old.version = IPVFS_PROTO_VERSION - 1;
            peer_put(fd, old, NULL);
        }
        /* hold the connection until the client is done with it */
        (void)net_read_full(fd, &h, 1, 5000);
        _exit(0);
    }
    close(l);
    return pid;
}

static void test_connect_hello(void **state)
{
    static const int want[] = { 0, -EACCES, -EPROTONOSUPPORT, -ETIMEDOUT, -EACCES, -EACCES };
    static const char *const msgs[] = { "", "HELLO refused: bad secret",
                                        "HELLO: the server speaks another protocol version",
                                        "HELLO: ",
                                        "HELLO: the server does not prove the cluster key",
                                        "AUTH refused: wrong proo" };
    uint8_t secret[IPVFS_SECRET_LEN] = { 0xEE };

    (void)state;
    for (int mode = 0; mode < 6; mode++) {
        char msg[256] = "";
        uint16_t port;
        pid_t pid = fake_server(mode, &port);
        int status, fd;

        fd = wire_connect("127.0.0.1", port, secret, 42, 1, 2000, mode == 3 ? 100 : 2000, msg,
                          sizeof(msg));
        if (mode == 0) {
            assert_true(fd >= 0);
            close(fd);
        } else {
            assert_int_equal(fd, want[mode]);
            assert_non_null(strstr(msg, msgs[mode]));
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_send_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_after_keepalives, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_replies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_and_closed, setup, teardown),
        cmocka_unit_test(test_connect_hello),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
