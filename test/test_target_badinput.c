/* Bad input ends only the offending connection: garbage before login, an
 * oversized data segment, a wrong header digest, a malformed login key and
 * an absurd AHS length each close (or reject) that connection with a log
 * line, while a libiscsi session opened before keeps reading and writing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <isa-l/crc.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

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
 * appended to the defaults.  Returns the login status. */
static int raw_login(int fd, const char *extra)
{
    uint8_t h[48] = { 0 }, r[48];
    char text[512];
    int len = snprintf(text, sizeof(text),
                       "InitiatorName=iqn.2026-01.org.ipvfs:raw%cTargetName=%s%c"
                       "SessionType=Normal%c%s", 0, IQN, 0, 0, extra);
    uint32_t dlen, padded = (uint32_t)(len + 3) & ~3u;

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
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, setup, teardown);
}
