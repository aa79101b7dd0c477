/* Administrative calls across a server restart (ipvfs_admin_call in
 * adio/client/admin.c, rules in retry.h), against a scripted one-rank
 * server in a child process over real sockets: a STATUS and a READDIR whose
 * connection is lost before the reply are sent again on a new connection
 * and answered; a MKDIR in doubt is not sent twice (the caller gets the
 * lost connection, naming the rank); a STATUS to a server gone for good
 * (refused) fails at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "adio/client/ipvfs_client.h"
#include "common/net.h"
#include "common/wire.h"

#define SECRET_BYTE 0x5A
#include "test/script_server.h"

#define CALL_MS 3000

/* ---- the scripted server (child process) ------------------------------ */

static void server_script(int l)
{
    struct srv_req r;
    int fd;

    alarm(20);   /* a client that fails early leaves it waiting: never forever */
    /* 1: a STATUS arrives, the process "dies" before answering */
    fd = srv_accept(l);
    srv_read(fd, IPVFS_OP_STATUS, &r);
    close(fd);
    /* 2: the new incarnation answers it, then loses a READDIR */
    fd = srv_accept(l);
    srv_read(fd, IPVFS_OP_STATUS, &r);
    srv_reply(fd, &r, "status", 6);
    srv_read(fd, IPVFS_OP_READDIR, &r);
    close(fd);
    /* 3: the READDIR again, answered; then a MKDIR is lost */
    fd = srv_accept(l);
    srv_read(fd, IPVFS_OP_READDIR, &r);
    srv_reply(fd, &r, "entries", 7);
    srv_read(fd, IPVFS_OP_MKDIR, &r);
    close(fd);
    /* 4: the next request on a new connection is the STATUS after it,
     * never the MKDIR again; then gone for good */
    fd = srv_accept(l);
    srv_read(fd, IPVFS_OP_STATUS, &r);
    close(l);
    close(fd);
    _exit(0);
}

/* ---- the client side --------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One call; its reply body must be want (NULL: the call must fail). */
static int call(struct ipvfs_client *c, uint16_t op, const char *want, struct ipvfs_error *err)
{
    struct iovec body = { .iov_base = "/d", .iov_len = 2 };
    struct wire_reply rep;
    int rc = ipvfs_admin_call(c, 0, op, 0, &body, 1, CALL_MS, &rep, err);

    if (rc == 0) {
        assert_non_null(want);
        assert_int_equal(rep.status, 0);
        assert_int_equal(rep.len, strlen(want));
        assert_memory_equal(rep.body, want, rep.len);
        wire_reply_free(&rep);
    }
    return rc;
}

static void test_admin_retry_script(void **state)
{
    struct srv_run run;
    struct ipvfs_client *c;
    struct ipvfs_error err;
    double t0;
    int rc;

    (void)state;
    srv_run_start(&run, server_script);
    write_map(run.map_path, run.port);
    assert_int_equal(ipvfs_client_get(run.map_path, 0, &c, &err), 0);
    /* 1, 2: idempotent calls go again on a new connection */
    if (call(c, IPVFS_OP_STATUS, "status", &err) < 0)
        fail_msg("STATUS across a reconnect: %s", err.msg);
    if (call(c, IPVFS_OP_READDIR, "entries", &err) < 0)
        fail_msg("READDIR across a reconnect: %s", err.msg);
    /* 3: a MKDIR in doubt is the caller's to judge */
    rc = call(c, IPVFS_OP_MKDIR, NULL, &err);
    printf("MKDIR in doubt: %s\n", err.msg);
    assert_int_equal(rc, -ECONNRESET);
    assert_non_null(strstr(err.msg, "server rank 0"));
    /* 4: refused: at once */
    t0 = now_s();
    rc = call(c, IPVFS_OP_STATUS, NULL, &err);
    printf("STATUS to a server gone for good: %s\n", err.msg);
    assert_int_equal(rc, -ECONNREFUSED);
    assert_true(now_s() - t0 < 2.0);
    ipvfs_client_put(c);
    srv_run_end(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admin_retry_script),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
