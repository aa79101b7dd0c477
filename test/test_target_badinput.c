/* Bad input ends only the offending connection: garbage before login, an
 * oversized data segment, a wrong header or data digest, a malformed login
 * key and an absurd AHS length each close (or reject) that connection with
 * a log line, while a libiscsi session opened before keeps reading and
 * writing.  Also on raw sockets: a LUN RESET from another session while a
 * write's data segment is half received, a burst of pipelined NOP-Outs, and
 * a write and read with header and data digests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <isa-l/crc.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "test/test_target_helpers.h"

#define IQN "iqn.2026-01.org.ipvfs:test-bad"

static struct srv_proc sp;
static struct iscsi_context *good;
static char logpath[] = "/tmp/ipvfs-tbad.XXXXXX";

static int raw_connect(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(sp.port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct timeval tv = { .tv_sec = 5 };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

/* True when the target closed fd (EOF or reset) within the timeout. */
static int closed_by_target(int fd)
{
    char buf[4096];

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return 1;
        if (n < 0)
            return 0;   /* timeout */
    }
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static void digest(uint8_t *out, const uint8_t *p, size_t n)
{
    uint32_t c = ~crc32_iscsi((unsigned char *)p, (int)n, 0xffffffffu);

    out[0] = (uint8_t)c; out[1] = (uint8_t)(c >> 8); out[2] = (uint8_t)(c >> 16);
    out[3] = (uint8_t)(c >> 24);
}

/* Logs in on a raw socket (one PDU, straight to full feature); keys
 * appended to the defaults, several separated by '\n'.  Returns the login
 * status. */
static int raw_login(int fd, const char *extra)
{
    uint8_t h[48] = { 0 }, r[48];
    char text[512];
    int len = snprintf(text, sizeof(text),
                       "InitiatorName=iqn.2026-01.org.ipvfs:raw%cTargetName=%s%c"
                       "SessionType=Normal%c%s", 0, IQN, 0, 0, extra);
    uint32_t dlen, padded = (uint32_t)(len + 3) & ~3u;

    for (char *p = text; p < text + len; p++)
        if (*p == '\n')
            *p = 0;
    if (*extra)
        len++;   /* NUL after the extra key */
    padded = (uint32_t)(len + 3) & ~3u;
    memset(text + len, 0, padded - (uint32_t)len);
    h[0] = 0x43;
    h[1] = 0x87;   /* T, CSG operational, NSG full feature */
    h[5] = (uint8_t)(len >> 16); h[6] = (uint8_t)(len >> 8); h[7] = (uint8_t)len;
    h[8] = 0x80; h[13] = 1;
    put32(h + 16, 1);
    put32(h + 24, 1);
    assert_int_equal(write(fd, h, 48), 48);
    assert_int_equal(write(fd, text, padded), (ssize_t)padded);
    assert_int_equal(recv(fd, r, 48, MSG_WAITALL), 48);
    dlen = (uint32_t)r[5] << 16 | (uint32_t)r[6] << 8 | r[7];
    dlen = (dlen + 3) & ~3u;
    while (dlen > 0) {
        char junk[512];
        ssize_t n = recv(fd, junk, dlen < sizeof(junk) ? dlen : sizeof(junk), 0);
        assert_true(n > 0);
        dlen -= (uint32_t)n;
    }
    return r[36] << 8 | r[37];
}

/* Bytes the target has not read yet from its end of our connection fd:
 * the receive queue of the socket from the portal port to fd's port, in
 * /proc/net/tcp.  -1 while that socket is not listed. */
static long target_unread(int fd)
{
    struct sockaddr_in me;
    socklen_t len = sizeof(me);
    char line[512];
    long unread = -1;
    FILE *f;

    assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &len), 0);
    f = fopen("/proc/net/tcp", "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        unsigned lport, rport;
        unsigned long txq, rxq;

        if (sscanf(line, " %*u: %*x:%x %*x:%x %*x %lx:%lx", &lport, &rport, &txq, &rxq) == 4 &&
            lport == sp.port && rport == ntohs(me.sin_port)) {
            unread = (long)rxq;
            break;
        }
    }
    fclose(f);
    return unread;
}

/* Waits until the target has read every byte sent on fd so far: first
 * none left unacknowledged in fd's send queue (all arrived), then none
 * unread at the target's end.  Fails the test after 10 s. */
static void wait_target_read_all(int fd)
{
    struct timespec start, now;

    assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &start), 0);
    for (;;) {
        int outq;

        assert_int_equal(ioctl(fd, SIOCOUTQ, &outq), 0);
        if (outq == 0 && target_unread(fd) == 0)
            return;
        assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &now), 0);
        assert_true(now.tv_sec - start.tv_sec < 10);
        poll(NULL, 0, 1);
    }
}

static void good_session_works(void)
{
    unsigned char w[65536];
    struct scsi_task *t;
    static int seed;

    fill_pattern(w, sizeof(w), (uint64_t)++seed);
    t = iscsi_write16_sync(good, 0, 64, w, sizeof(w), 512, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);
    t = iscsi_read16_sync(good, 0, 64, sizeof(w), 512, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    assert_memory_equal(t->datain.data, w, sizeof(w));
    scsi_free_scsi_task(t);
}

static uint32_t get24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Receives one PDU: header into h, data (up to cap bytes, the rest must
 * not exist) into data; with digests, checks both.  Returns the data
 * segment length. */
static uint32_t recv_pdu(int fd, uint8_t *h, uint8_t *data, uint32_t cap, int digests)
{
    uint8_t d[4], pad[4];
    uint32_t dlen, padded;

    assert_int_equal(recv(fd, h, 48, MSG_WAITALL), 48);
    if (digests) {
        assert_int_equal(recv(fd, d, 4, MSG_WAITALL), 4);
        digest(pad, h, 48);
        assert_memory_equal(d, pad, 4);
    }
    dlen = get24(h + 5);
    assert_true(dlen <= cap);
    padded = (dlen + 3) & ~3u;
    if (dlen) {
        assert_int_equal(recv(fd, data, dlen, MSG_WAITALL), (ssize_t)dlen);
        if (padded > dlen)
            assert_int_equal(recv(fd, pad, padded - dlen, MSG_WAITALL),
                             (ssize_t)(padded - dlen));
        if (digests) {
            uint32_t c = crc32_iscsi(data, (int)dlen, 0xffffffffu);
            c = ~crc32_iscsi(pad, (int)(padded - dlen), c);
            assert_int_equal(recv(fd, d, 4, MSG_WAITALL), 4);
            assert_int_equal(d[0] | d[1] << 8 | d[2] << 16 | (uint32_t)d[3] << 24, c);
        }
    }
    return dlen;
}

/* A SCSI command PDU: lun 0, simple attribute, flags F plus rw. */
static void scsi_cmd(uint8_t *h, uint8_t rw, uint32_t itt, uint32_t edtl, uint32_t cmdsn,
                     uint32_t dlen)
{
    memset(h, 0, 48);
    h[0] = 0x01;
    h[1] = 0x81 | rw;
    h[5] = (uint8_t)(dlen >> 16); h[6] = (uint8_t)(dlen >> 8); h[7] = (uint8_t)dlen;
    put32(h + 16, itt);
    put32(h + 20, edtl);
    put32(h + 24, cmdsn);
}

static void send_all(int fd, const void *p, size_t n)
{
    assert_int_equal(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

static int log_has(const char *what)
{
    char cmd[512];

    snprintf(cmd, sizeof(cmd), "grep -q -- '%s' %s", what, logpath);
    return system(cmd) == 0;
}

static void test_garbage_before_login(void **state)
{
    uint8_t junk[48];
    int fd = raw_connect();

    memset(junk, 0xff, sizeof(junk));
    assert_int_equal(write(fd, junk, sizeof(junk)), 48);
    assert_true(closed_by_target(fd));
    close(fd);
    good_session_works();
    assert_true(log_has("before login completed; closing it"));
}

static void test_oversized_segment(void **state)
{
    uint8_t h[48] = { 0x43, 0x87 };
    int fd = raw_connect();

    h[5] = h[6] = h[7] = 0xff;   /* 16 MiB login text */
    assert_int_equal(write(fd, h, 48), 48);
    assert_true(closed_by_target(fd));
    close(fd);

    /* after login: a SCSI command with 300000 bytes of immediate data */
    fd = raw_connect();
    assert_int_equal(raw_login(fd, ""), 0);
    memset(h, 0, sizeof(h));
    h[0] = 0x01;
    h[1] = 0xa0;
    h[5] = 0x04; h[6] = 0x93; h[7] = 0xe0;
    put32(h + 16, 7);
    put32(h + 20, 300000);
    put32(h + 24, 1);
    h[32] = 0x8a;
    assert_int_equal(write(fd, h, 48), 48);
    assert_true(closed_by_target(fd));
    close(fd);
    good_session_works();
    assert_true(log_has("exceeds MaxRecvDataSegmentLength"));
}

static void test_wrong_header_digest(void **state)
{
    uint8_t pdu[52] = { 0x40 | 0x00, 0x80 };
    int fd = raw_connect();

    assert_int_equal(raw_login(fd, "HeaderDigest=CRC32C"), 0);
    put32(pdu + 16, 9);              /* NOP-Out wanting an answer */
    put32(pdu + 20, 0xffffffffu);
    put32(pdu + 24, 1);
    digest(pdu + 48, pdu, 48);
    assert_int_equal(write(fd, pdu, 52), 52);
    assert_int_equal(recv(fd, pdu, 52, MSG_WAITALL), 52);   /* NOP-In with digest */
    assert_int_equal(pdu[0] & 0x3f, 0x20);
    memset(pdu, 0, sizeof(pdu));
    pdu[0] = 0x40;
    pdu[1] = 0x80;
    put32(pdu + 16, 10);
    put32(pdu + 20, 0xffffffffu);
    digest(pdu + 48, pdu, 48);
    pdu[50] ^= 0x5a;                 /* corrupt it */
    assert_int_equal(write(fd, pdu, 52), 52);
    assert_true(closed_by_target(fd));
    close(fd);
    good_session_works();
    assert_true(log_has("header digest mismatch"));
}

static void test_bad_login_keys_and_ahs(void **state)
{
    uint8_t h[48] = { 0 };
    int fd = raw_connect();

    /* a key without '=' gets a login reject (initiator error) */
    assert_int_equal(raw_login(fd, "NoEqualsSign") >> 8, 2);
    assert_true(closed_by_target(fd));
    close(fd);

    fd = raw_connect();
    assert_int_equal(raw_login(fd, ""), 0);
    h[0] = 0x40;
    h[1] = 0x80;
    h[4] = 255;                      /* 1020 bytes of AHS, nothing follows */
    put32(h + 16, 11);
    assert_int_equal(write(fd, h, 48), 48);
    shutdown(fd, SHUT_WR);
    assert_true(closed_by_target(fd));
    close(fd);
    good_session_works();
    assert_true(log_has("login rejected with status 0x0200"));
}

/* Session A is in the middle of a Data-Out segment when session B resets
 * the LUN: A's task is gone, the rest of the segment must be read and
 * dropped (not written into the freed buffer), A's connection keeps
 * working and reports the reset, and new sessions work. */
static void test_reset_during_data(void **state)
{
    static uint8_t data[262144];
    uint8_t h[48], rsp[48], sense[256];
    uint32_t ttt, len, dlen;
    struct iscsi_context *fresh;
    int fd = raw_connect();

    assert_int_equal(raw_login(fd, ""), 0);
    scsi_cmd(h, 0x20, 0x100, 1 << 20, 1, 0);     /* WRITE(10) of 1 MiB */
    h[32] = 0x2a;
    h[39] = 0x08;                                 /* 2048 blocks at LBA 0 */
    send_all(fd, h, 48);
    recv_pdu(fd, rsp, NULL, 0, 0);
    assert_int_equal(rsp[0] & 0x3f, 0x31);        /* R2T */
    ttt = get32(rsp + 20);
    len = get32(rsp + 44);
    if (len > sizeof(data))
        len = sizeof(data);
    memset(h, 0, 48);
    h[0] = 0x05;
    h[1] = 0x80;
    h[5] = (uint8_t)(len >> 16); h[6] = (uint8_t)(len >> 8); h[7] = (uint8_t)len;
    put32(h + 16, 0x100);
    put32(h + 20, ttt);
    fill_pattern(data, sizeof(data), 77);
    send_all(fd, h, 48);
    send_all(fd, data, len / 2);
    wait_target_read_all(fd);                     /* the target takes in the half */
    assert_int_equal(iscsi_task_mgmt_lun_reset_sync(good, 0), 0);
    send_all(fd, data + len / 2, len - len / 2);

    /* A still answers a ping ... */
    memset(h, 0, 48);
    h[0] = 0x40;
    h[1] = 0x80;
    put32(h + 16, 0x101);
    put32(h + 20, 0xffffffffu);
    put32(h + 24, 2);
    send_all(fd, h, 48);
    recv_pdu(fd, rsp, NULL, 0, 0);
    assert_int_equal(rsp[0] & 0x3f, 0x20);        /* NOP-In, not the aborted write */
    assert_int_equal(get32(rsp + 16), 0x101);
    /* ... and its next command gets the reset's unit attention. */
    scsi_cmd(h, 0, 0x102, 0, 3, 0);               /* TEST UNIT READY */
    send_all(fd, h, 48);
    dlen = recv_pdu(fd, rsp, sense, sizeof(sense), 0);
    assert_int_equal(rsp[0] & 0x3f, 0x21);
    assert_int_equal(get32(rsp + 16), 0x102);
    assert_int_equal(rsp[3], SCSI_STATUS_CHECK_CONDITION);
    assert_true(dlen >= 2 + 3);
    assert_int_equal(sense[2 + 2] & 0x0f, 0x06);  /* UNIT ATTENTION */
    close(fd);

    good_session_works();
    fresh = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:after-reset");
    assert_non_null(fresh);
    iscsi_logout_sync(fresh);
    iscsi_destroy_context(fresh);
}

/* 1000 NOP-Outs in one send: more PDUs than one receive round handles
 * (and all already read off the socket), each must be answered. */
static void test_pipelined_nops(void **state)
{
    enum { N = 1000 };
    static uint8_t burst[N * 48];
    uint8_t rsp[48];
    int fd = raw_connect();

    assert_int_equal(raw_login(fd, ""), 0);
    memset(burst, 0, sizeof(burst));
    for (uint32_t i = 0; i < N; i++) {
        uint8_t *h = burst + i * 48;
        h[0] = 0x40;                 /* immediate: outside the CmdSN window */
        h[1] = 0x80;
        put32(h + 16, i + 1);
        put32(h + 20, 0xffffffffu);
        put32(h + 24, 1);
    }
    send_all(fd, burst, sizeof(burst));
    for (uint32_t i = 0; i < N; i++) {
        recv_pdu(fd, rsp, NULL, 0, 0);
        assert_int_equal(rsp[0] & 0x3f, 0x20);
        assert_int_equal(get32(rsp + 16), i + 1);
    }
    close(fd);
}

/* Header and data digests (CRC32C) end to end: a write with immediate
 * data and a read of it back, every PDU's digests checked; then a write
 * whose data digest is wrong ends that connection only. */
static void test_data_digest(void **state)
{
    static uint8_t w[16384], r[16384], seg[65536];
    uint8_t pdu[48 + 4], rsp[48], d[4];
    uint32_t got = 0, dlen;
    int fd = raw_connect();

    assert_int_equal(raw_login(fd, "HeaderDigest=CRC32C\nDataDigest=CRC32C"), 0);
    fill_pattern(w, sizeof(w), 99);
    scsi_cmd(pdu, 0x20, 0x200, sizeof(w), 1, sizeof(w));
    pdu[32] = 0x2a;
    pdu[37] = 100;                   /* LBA 100 ... */
    pdu[40] = sizeof(w) / 512;       /* ... 32 blocks */
    digest(pdu + 48, pdu, 48);
    send_all(fd, pdu, sizeof(pdu));
    send_all(fd, w, sizeof(w));
    digest(d, w, sizeof(w));
    send_all(fd, d, 4);
    recv_pdu(fd, rsp, seg, sizeof(seg), 1);
    assert_int_equal(rsp[0] & 0x3f, 0x21);
    assert_int_equal(rsp[3], SCSI_STATUS_GOOD);

    scsi_cmd(pdu, 0x40, 0x201, sizeof(r), 2, 0);
    pdu[32] = 0x28;
    pdu[37] = 100;
    pdu[40] = sizeof(r) / 512;
    digest(pdu + 48, pdu, 48);
    send_all(fd, pdu, sizeof(pdu));
    for (;;) {
        dlen = recv_pdu(fd, rsp, seg, sizeof(seg), 1);
        if ((rsp[0] & 0x3f) == 0x25) {            /* Data-In */
            uint32_t off = get32(rsp + 40);
            assert_true(off + dlen <= sizeof(r));
            memcpy(r + off, seg, dlen);
            got += dlen;
            if (rsp[1] & 0x01) {                  /* status collapsed in */
                assert_int_equal(rsp[3], SCSI_STATUS_GOOD);
                break;
            }
        } else {
            assert_int_equal(rsp[0] & 0x3f, 0x21);
            assert_int_equal(rsp[3], SCSI_STATUS_GOOD);
            break;
        }
    }
    assert_int_equal(got, sizeof(r));
    assert_memory_equal(r, w, sizeof(w));

    scsi_cmd(pdu, 0x20, 0x202, 4096, 3, 4096);
    pdu[32] = 0x2a;
    pdu[37] = 200;
    pdu[40] = 8;
    digest(pdu + 48, pdu, 48);
    send_all(fd, pdu, sizeof(pdu));
    send_all(fd, w, 4096);
    digest(d, w, 4096);
    d[1] ^= 0x5a;                                 /* corrupt it */
    send_all(fd, d, 4);
    assert_true(closed_by_target(fd));
    close(fd);
    good_session_works();
    assert_true(log_has("data digest mismatch"));
}

static int setup(void **state)
{
    static struct tgt_lun_config lun = { .kind = TGT_BACKING_MEMORY, .size = 16 << 20 };
    static struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = &lun,
                                     .nluns = 1 };
    int fd = mkstemp(logpath);

    if (fd < 0)
        return -1;
    close(fd);
    if (srv_start(&sp, &cfg, logpath) < 0)
        return -1;
    good = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:good");
    return good ? 0 : -1;
}

static int teardown(void **state)
{
    int rc;

    if (good) {
        iscsi_logout_sync(good);
        iscsi_destroy_context(good);
    }
    rc = srv_stop(&sp);
    srv_kill_all(state);
    if (rc != 0)
        fprintf(stderr, "target exited with %d\n", rc);
    unlink(logpath);
    return rc == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_garbage_before_login),
        cmocka_unit_test(test_oversized_segment),
        cmocka_unit_test(test_wrong_header_digest),
        cmocka_unit_test(test_bad_login_keys_and_ahs),
        cmocka_unit_test(test_reset_during_data),
        cmocka_unit_test(test_pipelined_nops),
        cmocka_unit_test(test_data_digest),
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, setup, teardown);
}
