/* Connecting to a server rank as a client: connect, HELLO (the server's
 * proof of the key, its window) and AUTH (common/proto.h): the proof of
 * the cluster key, the kernel's word on the server's host, a MUNGE
 * credential, or nobody.  Over wire.c's exchanges, which know nothing of
 * this. */
#include "common/wire.h"

#include <errno.h>
#include <munge.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/auth.h"
#include "common/net.h"

/* One AUTH request with its credential; the server's refusal comes back
 * as -status with its message. */
static int send_auth(int fd, const struct ipvfs_auth_req *req, const char *cred,
                     uint64_t req_id, int hello_ms, char *msg, size_t msglen)
{
    struct iovec body[2] = { { (void *)req, sizeof(*req) }, { (void *)cred, req->cred_len } };
    struct wire_reply rep;
    int rc;

    rc = wire_call(fd, IPVFS_OP_AUTH, 0, req_id, body, req->cred_len ? 2 : 1, hello_ms, &rep);
    if (rc < 0) {
        snprintf(msg, msglen, "AUTH: %s", rc == -EPROTO ? "malformed reply" : strerror(-rc));
        return rc;
    }
    if (rep.status) {
        rc = -(int)rep.status;
        snprintf(msg, msglen, "AUTH refused%s%s", rep.len && rep.body[0] ? ": " : "",
                 rep.len ? (const char *)rep.body : "");
    }
    wire_reply_free(&rep);
    return rc;
}

/* KERNEL: hands nonce_s to the rank's local socket, whose kernel tells the
 * rank who we are.  -ECONNREFUSED: no such socket here (another host). */
static int kernel_claim(uint16_t port, const uint8_t nonce_s[IPVFS_NONCE_LEN], int wait_ms,
                        char *msg, size_t msglen)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct pollfd pfd;
    uint32_t answer;
    int fd, n, rc;

    n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "%s%u", IPVFS_CRED_SOCKET,
                 (unsigned)port);
    if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) < 0)
        return -errno;
    pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
    if (connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) < 0 ||
        send(fd, nonce_s, IPVFS_NONCE_LEN, MSG_NOSIGNAL) != IPVFS_NONCE_LEN) {
        rc = -errno;
        snprintf(msg, msglen, "kernel credentials: %s", rc == -ECONNREFUSED || rc == -ENOENT
                 ? "not on the server's host" : strerror(-rc));
        goto close_fd;
    }
    if ((rc = poll(&pfd, 1, wait_ms)) <= 0) {
        rc = rc < 0 ? -errno : -ETIMEDOUT;
        snprintf(msg, msglen, "kernel credentials: no answer: %s", strerror(-rc));
        goto close_fd;
    }
    if (recv(fd, &answer, sizeof(answer), 0) != (ssize_t)sizeof(answer)) {
        rc = -EPROTO;
        snprintf(msg, msglen, "kernel credentials: no answer from the server");
        goto close_fd;
    }
    rc = -(int)answer;
    if (rc < 0)
        snprintf(msg, msglen, "kernel credentials refused: %s", strerror(-rc));
close_fd:
    close(fd);
    return rc;
}

/* MUNGE: a credential of this process's uid and gid whose payload names
 * this connection (nonce_s then nonce_c).  *out is munge's (free()). */
static int munge_cred(const uint8_t nonce_s[IPVFS_NONCE_LEN],
                      const uint8_t nonce_c[IPVFS_NONCE_LEN], char **out, char *msg,
                      size_t msglen)
{
    const char *sock = getenv("IPVFS_MUNGE_SOCKET");
    uint8_t payload[2 * IPVFS_NONCE_LEN];
    munge_ctx_t ctx;
    munge_err_t e;

    *out = NULL;
    if (!(ctx = munge_ctx_create())) {
        snprintf(msg, msglen, "MUNGE: out of memory");
        return -ENOMEM;
    }
    memcpy(payload, nonce_s, IPVFS_NONCE_LEN);
    memcpy(payload + IPVFS_NONCE_LEN, nonce_c, IPVFS_NONCE_LEN);
    e = sock && sock[0] ? munge_ctx_set(ctx, MUNGE_OPT_SOCKET, sock) : EMUNGE_SUCCESS;
    if (e == EMUNGE_SUCCESS)
        e = munge_encode(out, ctx, payload, sizeof(payload));
    if (e != EMUNGE_SUCCESS)
        snprintf(msg, msglen, "MUNGE: %s", munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx)
                                                                   : munge_strerror(e));
    munge_ctx_destroy(ctx);
    return e == EMUNGE_SUCCESS ? 0 : (e == EMUNGE_SOCKET ? -EHOSTDOWN : -EACCES);
}

/* The user's proof: KERNEL on the server's host, else MUNGE, unless
 * IPVFS_AUTH names one. */
static int say_user(int fd, struct ipvfs_auth_req *req, uint16_t port, uint64_t req_id,
                    int hello_ms, const uint8_t nonce_c[IPVFS_NONCE_LEN],
                    const struct ipvfs_hello_rep *hello, char *msg, size_t msglen)
{
    const char *pick = getenv("IPVFS_AUTH");
    char kmsg[160] = "", *cred = NULL;
    int rc = -ENOENT;

    if (pick && pick[0] && strcmp(pick, "kernel") != 0 && strcmp(pick, "munge") != 0) {
        snprintf(msg, msglen, "IPVFS_AUTH=%s: not kernel or munge", pick);
        return -EINVAL;
    }
    if (!pick || !pick[0] || strcmp(pick, "kernel") == 0) {
        rc = kernel_claim(port, hello->nonce, hello_ms, kmsg, sizeof(kmsg));
        if (rc == 0) {
            req->method = IPVFS_AUTH_KERNEL;
            return send_auth(fd, req, NULL, req_id, hello_ms, msg, msglen);
        }
        if (pick && pick[0]) {
            snprintf(msg, msglen, "%s", kmsg);
            return rc;
        }
    }
    if ((rc = munge_cred(hello->nonce, nonce_c, &cred, msg, msglen)) < 0) {
        char both[400];

        snprintf(both, sizeof(both), "cannot prove who you are%s%s; %s (other hosts need "
                 "munged; or IPVFS_KEY names the key)", kmsg[0] ? ": " : "", kmsg, msg);
        snprintf(msg, msglen, "%s", both);
        return rc;
    }
    req->method = IPVFS_AUTH_MUNGE;
    req->cred_len = (uint32_t)strlen(cred);
    rc = send_auth(fd, req, cred, req_id, hello_ms, msg, msglen);
    free(cred);
    return rc;
}

int wire_say_auth(int fd, const struct wire_id *id, uint16_t port, uint32_t client_id,
                  uint64_t req_id, int hello_ms, const uint8_t nonce_c[IPVFS_NONCE_LEN],
                  const struct ipvfs_hello_rep *hello, char *msg, size_t msglen)
{
    struct ipvfs_auth_req req;

    memset(&req, 0, sizeof(req));
    switch (id->who) {
    case WIRE_AS_KEY:
        req.method = IPVFS_AUTH_KEY;
        auth_client_proof(id->key, hello->nonce, nonce_c, client_id, req.proof);
        return send_auth(fd, &req, NULL, req_id, hello_ms, msg, msglen);
    case WIRE_AS_USER:
        return say_user(fd, &req, port, req_id, hello_ms, nonce_c, hello, msg, msglen);
    default:
        req.method = IPVFS_AUTH_NONE;
        return send_auth(fd, &req, NULL, req_id, hello_ms, msg, msglen);
    }
}

int wire_connect(const char *host, uint16_t port, const uint8_t secret[IPVFS_SECRET_LEN],
                 uint32_t client_id, uint64_t req_id, int connect_ms, int hello_ms, char *msg,
                 size_t msglen)
{
    struct wire_id id = { .who = WIRE_AS_KEY, .key = secret };
    struct ipvfs_hello_rep unused;

    return wire_connect_hello(host, port, &id, client_id, req_id, connect_ms, hello_ms, &unused,
                              msg, msglen);
}

/* HELLO: sends our challenge nonce_c, checks the server's proof when we
 * hold the key (secret not NULL), fills *out_rep. */
static int say_hello(int fd, const uint8_t *secret, uint32_t client_id,
                     uint64_t req_id, int hello_ms, const uint8_t nonce_c[IPVFS_NONCE_LEN],
                     struct ipvfs_hello_rep *out_rep, char *msg, size_t msglen)
{
    struct ipvfs_hello_req hello = { .client_id = client_id };
    struct iovec body = { .iov_base = &hello, .iov_len = sizeof(hello) };
    uint8_t want[IPVFS_PROOF_LEN];
    struct wire_reply rep;
    int rc;

    memcpy(hello.nonce, nonce_c, sizeof(hello.nonce));
    rc = wire_call(fd, IPVFS_OP_HELLO, 0, req_id, &body, 1, hello_ms, &rep);
    if (rc < 0) {
        if (rc == -EPROTONOSUPPORT)
            snprintf(msg, msglen, "HELLO: the server speaks another protocol version than "
                     "this client's %u (mixed builds?)", IPVFS_PROTO_VERSION);
        else
            snprintf(msg, msglen, "HELLO: %s",
                     rc == -EPROTO ? "malformed reply" : strerror(-rc));
        return rc;
    }
    if (rep.status) {
        rc = -(int)rep.status;
        snprintf(msg, msglen, "HELLO refused%s%s", rep.len && rep.body[0] ? ": " : "",
                 rep.len ? (const char *)rep.body : "");
        wire_reply_free(&rep);
        return rc;
    }
    if (rep.len != sizeof(*out_rep)) {
        snprintf(msg, msglen, "HELLO: a reply of %llu bytes, not %zu",
                 (unsigned long long)rep.len, sizeof(*out_rep));
        wire_reply_free(&rep);
        return -EPROTO;
    }
    memcpy(out_rep, rep.body, sizeof(*out_rep));
    wire_reply_free(&rep);
    if (secret)
        auth_server_proof(secret, hello.nonce, out_rep->nonce, want);
    if (secret && !auth_proof_equal(out_rep->proof, want)) {
        snprintf(msg, msglen, "HELLO: the server does not prove the cluster key of this map "
                 "(another cluster at that address?)");
        return -EACCES;
    }
    if (out_rep->max_inflight == 0)
        out_rep->max_inflight = 1;
    return 0;
}

int wire_connect_hello(const char *host, uint16_t port, const struct wire_id *id,
                       uint32_t client_id, uint64_t req_id, int connect_ms, int hello_ms,
                       struct ipvfs_hello_rep *out_rep, char *msg, size_t msglen)
{
    uint8_t nonce_c[IPVFS_NONCE_LEN];
    int fd, rc;

    if ((rc = auth_nonce(nonce_c)) < 0) {
        snprintf(msg, msglen, "HELLO: no random bytes for the challenge: %s", strerror(-rc));
        return rc;
    }
    if ((fd = net_connect(host, port, connect_ms)) < 0) {
        snprintf(msg, msglen, "connecting: %s", strerror(-fd));
        return fd;
    }
    rc = say_hello(fd, id->who == WIRE_AS_KEY ? id->key : NULL, client_id, req_id, hello_ms,
                   nonce_c, out_rep, msg, msglen);
    if (rc == 0)
        rc = wire_say_auth(fd, id, port, client_id, req_id, hello_ms, nonce_c, out_rep, msg,
                           msglen);
    if (rc == 0)
        return fd;
    close(fd);
    return rc;
}
