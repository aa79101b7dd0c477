/* The request engine's reconnect and resend (adio/client/xfer.c, rules in
 * retry.h) and the write verifier check of ipvfs_sync, against a scripted
 * one-rank server in a child process over real sockets: a connection
 * closed with a WRITE unanswered is reconnected and the WRITE sent again;
 * a DF_SYNC whose reply is lost is sent again, and the new incarnation's
 * verifier fails the sync naming the rank; an exclusive create whose reply
 * is lost is asked again as open-or-create; a server that is gone for good
 * (refused) fails the request at once. */
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
#define HANDLE 0x77
#define LEN 4096u
#define SCRIPT_BODY (LEN + 256)
#include "test/script_server.h"


/* ---- the scripted server (child process) ------------------------------ */

static void srv_write_reply(int fd, const struct srv_req *r, uint64_t verifier)
{
    struct ipvfs_io_rep rep = { .bytes = LEN, .df_size = LEN, .verifier = verifier };

    srv_reply(fd, r, &rep, sizeof(rep));
}

static void srv_sync_reply(int fd, const struct srv_req *r, uint64_t verifier)
{
    struct ipvfs_df_rep rep = { .value = LEN, .verifier = verifier };

    srv_reply(fd, r, &rep, sizeof(rep));
}

static uint32_t lookup_flags(const struct srv_req *r)
{
    struct ipvfs_lookup_req req;

    memcpy(&req, r->body, sizeof(req));
    return req.flags;
}

static void server_script(int l)
{
    /* LOOKUP's reply: the entry and a capability (unused with the key) */
    struct {
        struct ipvfs_entry e;
        struct ipvfs_cap cap;
    } ec = { .e = { .handle = HANDLE, .stripe_unit = 65536, .stripe_factor = 1,
                    .type = IPVFS_TYPE_FILE } };
    const uint32_t create_excl = IPVFS_LOOKUP_CREATE | IPVFS_LOOKUP_EXCL;
    struct srv_req r;
    int fd;

    /* 1: a WRITE arrives, the process "dies" before answering */
    fd = srv_accept(l);
    srv_read(fd, IPVFS_OP_WRITE, &r);
    close(fd);
    /* 2: the new incarnation (111) gets it again, then a sync */
    fd = srv_accept(l);
    srv_read(fd, IPVFS_OP_WRITE, &r);
    srv_write_reply(fd, &r, 111);
    srv_read(fd, IPVFS_OP_DF_SYNC, &r);
    srv_sync_reply(fd, &r, 111);
    /* 3: a write acknowledged by 111, its sync lost in a crash */
    srv_read(fd, IPVFS_OP_WRITE, &r);
    srv_write_reply(fd, &r, 111);
    srv_read(fd, IPVFS_OP_DF_SYNC, &r);
    close(fd);
    /* 4: incarnation 222 answers the sync again */
    fd = srv_accept(l);
    srv_read(fd, IPVFS_OP_DF_SYNC, &r);
    srv_sync_reply(fd, &r, 222);
    /* 5: an exclusive create in doubt, then asked as open-or-create */
    srv_read(fd, IPVFS_OP_LOOKUP, &r);
    WANT((lookup_flags(&r) & create_excl) == create_excl);
    close(fd);
    fd = srv_accept(l);
    srv_read(fd, IPVFS_OP_LOOKUP, &r);
    WANT((lookup_flags(&r) & create_excl) == IPVFS_LOOKUP_CREATE);
    srv_reply(fd, &r, &ec, sizeof(ec));
    /* 6: gone for good: the port closes with the connection */
    srv_read(fd, IPVFS_OP_WRITE, &r);
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

static void test_reconnect_script(void **state)
{
    struct ipvfs_entry e = { .handle = HANDLE, .stripe_unit = 65536, .stripe_factor = 1,
                             .type = IPVFS_TYPE_FILE };
    struct ipvfs_open_args excl = { .create = 1, .excl = 1 };
    struct srv_run run;
    static uint8_t buf[LEN];
    struct ipvfs_client *c;
    struct ipvfs_file *f, *g;
    struct ipvfs_error err;
    uint64_t n;
    double t0;

    (void)state;
    srv_run_start(&run, server_script);
    write_map(run.map_path, run.port);
    assert_int_equal(ipvfs_client_get(run.map_path, 0, &c, &err), 0);
    assert_int_equal(ipvfs_file_attach(c, "/f", &e, NULL, &f, &err), 0);
    /* 1, 2: the WRITE goes again on a new connection; the sync agrees */
    if (ipvfs_write(f, 0, buf, LEN, &n, &err) < 0)
        fail_msg("write across a reconnect: %s", err.msg);
    if (ipvfs_sync(f, &err) < 0)
        fail_msg("sync by the same incarnation: %s", err.msg);
    /* 3, 4: the sync is sent again and sees another incarnation */
    assert_int_equal(ipvfs_write(f, 0, buf, LEN, &n, &err), 0);
    assert_int_equal(ipvfs_sync(f, &err), -EIO);
    printf("sync after the restart: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "server rank 0 restarted; writes acknowledged since the "
                                    "last sync may be lost"));
    /* 5: no EEXIST for a create that may have happened */
    if (ipvfs_file_open(c, "/g", &excl, &g, &err) < 0)
        fail_msg("exclusive create in doubt: %s", err.msg);
    assert_int_equal(g->entry.handle, HANDLE);
    ipvfs_file_close(g);
    /* 6: refused: at once, with what happened */
    t0 = now_s();
    assert_int_equal(ipvfs_write(f, 0, buf, LEN, &n, &err), -ECONNREFUSED);
    printf("write to a server gone for good: %s\n", err.msg);
    assert_true(now_s() - t0 < 2.0);
    assert_non_null(strstr(err.msg, "server rank 0"));
    assert_non_null(strstr(err.msg, "reconnecting"));
    ipvfs_file_close(f);
    ipvfs_client_put(c);
    srv_run_end(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconnect_script),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
