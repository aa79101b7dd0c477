/* The scripted server of the client unit tests (test_client_admin.c,
 * test_client_reconnect.c, test_client_tagged.c): a child process that
 * plays one server rank, request by request, over a real socket.
 *
 * Before including: SECRET_BYTE (every byte of the cluster secret the map
 * names) and, optionally, SCRIPT_BODY (the largest request body a script
 * reads; default 4096), and cmocka.  A step that does not hold ends the
 * child with exit status 100 and the line of the step (WANT), which
 * srv_run_end sees. */
#ifndef IPVFS_TEST_SCRIPT_SERVER_H
#define IPVFS_TEST_SCRIPT_SERVER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adio/client/ipvfs_client.h"
#include "common/auth.h"
#include "common/net.h"

#ifndef SCRIPT_BODY
#define SCRIPT_BODY 4096
#endif

#define WANT(cond) do { if (!(cond)) { fprintf(stderr, "server: line %d\n", __LINE__); \
                                        _exit(100); } } while (0)

struct srv_req {
    struct ipvfs_hdr h;
    uint8_t body[SCRIPT_BODY];
};

/* A reply to r tagged req_id: body (len bytes), then data (dlen). */
static inline void srv_send(int fd, const struct srv_req *r, uint64_t req_id, const void *body,
                            size_t len, const void *data, size_t dlen)
{
    struct ipvfs_hdr h = { .magic = IPVFS_PROTO_MAGIC, .version = IPVFS_PROTO_VERSION,
                           .op = (uint16_t)(r->h.op | IPVFS_OP_REPLY), .req_id = req_id,
                           .body_len = len + dlen };

    WANT(net_write_full(fd, &h, sizeof(h), 5000) == 0);
    WANT(len == 0 || net_write_full(fd, body, len, 5000) == 0);
    WANT(dlen == 0 || net_write_full(fd, data, dlen, 5000) == 0);
}

/* The reply to r under its own tag. */
static inline void srv_reply(int fd, const struct srv_req *r, const void *body, size_t len)
{
    srv_send(fd, r, r->h.req_id, body, len, NULL, 0);
}

/* The next request must be op. */
static inline void srv_read(int fd, uint16_t op, struct srv_req *r)
{
    WANT(net_read_full(fd, &r->h, sizeof(r->h), 5000) == 0);
    WANT(r->h.op == op && r->h.body_len <= sizeof(r->body));
    WANT(net_read_full(fd, r->body, r->h.body_len, 5000) == 0);
}

/* Accepts a connection and answers its HELLO, AUTH and QOS_CLASS as a
 * server (metadata rank and I/O node 0) of the key SECRET_BYTE..., stating
 * a window of inflight requests (0: none, the
 * client sends one at a time). */
static inline int srv_accept_window(int l, uint32_t inflight)
{
    struct ipvfs_hello_rep rep = { .rank = 0, .role = IPVFS_ROLE_METADATA | IPVFS_ROLE_IO };
    uint8_t key[IPVFS_SECRET_LEN], want[IPVFS_PROOF_LEN];
    struct ipvfs_hello_req hello;
    struct srv_req r;
    int fd = net_accept(l);

    if (inflight) {
        rep.max_inflight = inflight;
        rep.window_bytes = 8u << 20;
        rep.max_body = IPVFS_MAX_BODY;
    }
    memset(key, SECRET_BYTE, sizeof(key));
    WANT(fd >= 0);
    srv_read(fd, IPVFS_OP_HELLO, &r);
    WANT(r.h.body_len == sizeof(hello));
    memcpy(&hello, r.body, sizeof(hello));
    WANT(auth_nonce(rep.nonce) == 0);
    auth_server_proof(key, hello.nonce, rep.nonce, rep.proof);
    srv_reply(fd, &r, &rep, sizeof(rep));
    srv_read(fd, IPVFS_OP_AUTH, &r);
    auth_client_proof(key, rep.nonce, hello.nonce, hello.client_id, want);
    WANT(r.h.body_len == sizeof(struct ipvfs_auth_req) &&
         ((struct ipvfs_auth_req *)r.body)->method == IPVFS_AUTH_KEY &&
         auth_proof_equal(((struct ipvfs_auth_req *)r.body)->proof, want));
    srv_reply(fd, &r, NULL, 0);
    /* an I/O node's connection names its QoS class next (protocol 9) */
    srv_read(fd, IPVFS_OP_QOS_CLASS, &r);
    WANT(r.h.body_len > 0 && r.h.body_len <= IPVFS_QOS_NAME_MAX);
    srv_reply(fd, &r, NULL, 0);
    return fd;
}

static inline int srv_accept(int l)
{
    return srv_accept_window(l, 0);
}

/* Accepts a connection from a client without the key (an I/O node's
 * greeting to anybody: HELLO, AUTH of method NONE, QOS_CLASS), stating a
 * window of inflight requests. */
static inline int srv_accept_nobody(int l, uint32_t inflight)
{
    struct ipvfs_hello_rep rep = { .rank = 1, .role = IPVFS_ROLE_IO, .max_inflight = inflight,
                                   .window_bytes = 8u << 20, .max_body = IPVFS_MAX_BODY };
    struct srv_req r;
    int fd = net_accept(l);

    WANT(fd >= 0);
    srv_read(fd, IPVFS_OP_HELLO, &r);
    WANT(auth_nonce(rep.nonce) == 0);
    srv_reply(fd, &r, &rep, sizeof(rep));
    srv_read(fd, IPVFS_OP_AUTH, &r);
    WANT(r.h.body_len == sizeof(struct ipvfs_auth_req) &&
         ((struct ipvfs_auth_req *)r.body)->method == IPVFS_AUTH_NONE);
    srv_reply(fd, &r, NULL, 0);
    srv_read(fd, IPVFS_OP_QOS_CLASS, &r);
    srv_reply(fd, &r, NULL, 0);
    return fd;
}

/* A map naming one rank (metadata and I/O node 0) at port. */
static inline void write_map(const char *path, uint16_t port)
{
    struct ipvfs_map_rank rank = { .rank = 0, .role = IPVFS_ROLE_METADATA | IPVFS_ROLE_IO,
                                   .io_index = 0, .target_index = -1, .host = "127.0.0.1",
                                   .port = port, .pid = 1 };
    struct ipvfs_map map = { .nio = 1, .nt = 0, .stripe_unit = 65536, .nranks = 1,
                             .ranks = &rank };

    memset(map.secret, SECRET_BYTE, sizeof(map.secret));
    assert_int_equal(ipvfs_map_write(path, &map), 0);
}

/* A map whose key file the client cannot read (so it shows capabilities):
 * rank 0 the metadata rank and I/O node 0 (never asked: give files
 * first_server 1), rank 1 I/O node 1 at port. */
static inline void write_map_keyless(const char *path, uint16_t port)
{
    struct ipvfs_map_rank ranks[2] = {
        { .rank = 0, .role = IPVFS_ROLE_METADATA | IPVFS_ROLE_IO, .io_index = 0,
          .target_index = -1, .host = "127.0.0.1", .port = 1, .pid = 1 },
        { .rank = 1, .role = IPVFS_ROLE_IO, .io_index = 1, .target_index = -1,
          .host = "127.0.0.1", .port = port, .pid = 1 },
    };
    struct ipvfs_map map = { .nio = 2, .nt = 0, .stripe_unit = 65536, .nranks = 2,
                             .ranks = ranks };

    snprintf(map.key_path, sizeof(map.key_path), "%s.no-such-key", path);
    assert_int_equal(ipvfs_map_write(path, &map), 0);
}

/* A scripted server running: its child, its port, the directory of the
 * map the test writes there (write_map or write_map_keyless). */
struct srv_run {
    char dir[64];
    char map_path[80];
    uint16_t port;
    pid_t pid;
};

/* Runs script (which must end with _exit) in a child on a new listening
 * socket. */
static inline void srv_run_start(struct srv_run *run, void (*script)(int l))
{
    int l;

    snprintf(run->dir, sizeof(run->dir), "/tmp/ipvfs-script.XXXXXX");
    assert_non_null(mkdtemp(run->dir));
    snprintf(run->map_path, sizeof(run->map_path), "%s/map", run->dir);
    l = net_listen("127.0.0.1", 0, &run->port);
    assert_true(l >= 0);
    run->pid = fork();
    assert_true(run->pid >= 0);
    if (run->pid == 0)
        script(l);
    close(l);
}

/* Waits for the script, which must have run to its end, and removes the
 * map. */
static inline void srv_run_end(struct srv_run *run)
{
    int status;

    assert_int_equal(waitpid(run->pid, &status, 0), run->pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    unlink(run->map_path);
    rmdir(run->dir);
}

#endif
