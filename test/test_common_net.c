/* The TCP helpers (common/net.c): listen/connect/accept on loopback, whole
 * transfers through many iovecs (more than one sendmsg takes), the time
 * limit on a silent peer, an early close, a refused connect, and the iovec
 * arithmetic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/net.h"

static void test_iov_advance(void **state)
{
    char a[4], b[6], c[3];
    struct iovec iov[3];

    (void)state;
#define RESET()                                                                              \
    do {                                                                                     \
        iov[0] = (struct iovec){ a, sizeof(a) };                                             \
        iov[1] = (struct iovec){ b, sizeof(b) };                                             \
        iov[2] = (struct iovec){ c, sizeof(c) };                                             \
    } while (0)
    RESET();
    assert_int_equal(net_iov_advance(iov, 3, 0, 0), 0);
    assert_ptr_equal(iov[0].iov_base, a);
    assert_int_equal(net_iov_advance(iov, 3, 0, 3), 0);
    assert_ptr_equal(iov[0].iov_base, a + 3);
    assert_int_equal(iov[0].iov_len, 1);
    RESET();
    assert_int_equal(net_iov_advance(iov, 3, 0, 4), 1);     /* exactly the first */
    assert_int_equal(iov[0].iov_len, 0);
    assert_ptr_equal(iov[1].iov_base, b);
    assert_int_equal(iov[1].iov_len, 6);
    RESET();
    assert_int_equal(net_iov_advance(iov, 3, 0, 12), 2);    /* into the third */
    assert_ptr_equal(iov[2].iov_base, c + 2);
    assert_int_equal(iov[2].iov_len, 1);
    RESET();
    assert_int_equal(net_iov_advance(iov, 3, 0, 13), 3);    /* all of it */
    RESET();
    assert_int_equal(net_iov_advance(iov, 3, 1, 6), 2);     /* from a later start */
    assert_int_equal(iov[2].iov_len, 3);
#undef RESET
}

/* A listener on loopback and a connected pair through it. */
static void connected_pair(int *out_client, int *out_server, int *out_listener)
{
    uint16_t port = 0;
    int l = net_listen("127.0.0.1", 0, &port);

    assert_true(l >= 0);
    assert_true(port > 0);
    *out_client = net_connect("127.0.0.1", port, 2000);
    assert_true(*out_client >= 0);
    *out_server = net_accept(l);
    assert_true(*out_server >= 0);
    *out_listener = l;
}

static uint8_t pattern(size_t i)
{
    return (uint8_t)(i * 2654435761u >> 13);
}

/* More iovecs than IOV_MAX, several MiB in all (more than a socket
 * buffer): a child reads it all back and checks every byte. */
static void test_writev_many(void **state)
{
    enum { NIOV = IOV_MAX * 2 + 17 };
    size_t total = 0;
    struct iovec *iov = malloc(NIOV * sizeof(*iov));
    uint8_t *data;
    int cfd, sfd, lfd, status;
    pid_t pid;

    (void)state;
    assert_non_null(iov);
    for (int i = 0; i < NIOV; i++)
        total += (size_t)(i % 7) * 1000;
    data = malloc(total);
    assert_non_null(data);
    for (size_t i = 0; i < total; i++)
        data[i] = pattern(i);
    for (size_t i = 0, off = 0; i < NIOV; i++) {
        iov[i] = (struct iovec){ data + off, (i % 7) * 1000 };
        off += iov[i].iov_len;
    }
    connected_pair(&cfd, &sfd, &lfd);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint8_t *got = malloc(total);
        int ok = got && net_read_full(sfd, got, total, 10000) == 0;

        for (size_t i = 0; ok && i < total; i++)
            ok = got[i] == pattern(i);
        _exit(ok ? 0 : 1);
    }
    assert_int_equal(net_writev_full(cfd, iov, NIOV, 10000), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(cfd);
    close(sfd);
    close(lfd);
    free(data);
    free(iov);
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A peer that sends nothing: -ETIMEDOUT after the limit, not before. */
static void test_read_timeout(void **state)
{
    int cfd, sfd, lfd;
    char buf[8];
    int64_t t0;

    (void)state;
    connected_pair(&cfd, &sfd, &lfd);
    assert_int_equal(write(sfd, "abc", 3), 3);   /* less than asked for */
    t0 = now_ms();
    assert_int_equal(net_read_full(cfd, buf, sizeof(buf), 100), -ETIMEDOUT);
    assert_true(now_ms() - t0 >= 100);
    close(cfd);
    close(sfd);
    close(lfd);
}

/* A peer that closes early: -ECONNRESET, never a short success. */
static void test_early_close(void **state)
{
    int cfd, sfd, lfd;
    char buf[8];

    (void)state;
    connected_pair(&cfd, &sfd, &lfd);
    assert_int_equal(write(sfd, "abc", 3), 3);
    close(sfd);
    assert_int_equal(net_read_full(cfd, buf, sizeof(buf), 2000), -ECONNRESET);
    close(cfd);
    close(lfd);
}

/* Nobody listens: the connect fails at once with the errno. */
static void test_connect_refused(void **state)
{
    uint16_t port = 0;
    int l = net_listen("127.0.0.1", 0, &port);

    (void)state;
    assert_true(l >= 0);
    close(l);
    assert_int_equal(net_connect("127.0.0.1", port, 2000), -ECONNREFUSED);
    assert_true(net_connect("no-such-host.invalid", port, 2000) < 0);
}

/* A non-blocking listener with nobody waiting says so. */
static void test_accept_none(void **state)
{
    uint16_t port = 0;
    int l = net_listen("127.0.0.1", 0, &port);

    (void)state;
    assert_true(l >= 0);
    assert_int_equal(net_set_nonblock(l, 1), 0);
    assert_int_equal(net_accept(l), -EAGAIN);
    close(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iov_advance),
        cmocka_unit_test(test_writev_many),
        cmocka_unit_test(test_read_timeout),
        cmocka_unit_test(test_early_close),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_accept_none),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
