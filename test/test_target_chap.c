/* CHAP of the target: MD5 (the RFC 1321 test suite) through tgt_md5(),
 * the function the CHAP code hashes with; a CHAP response computed by hand
 * (RFC 1994: MD5 of identifier, secret and challenge) against
 * tgt_chap_response() and tgt_chap_check(); and the login code on a raw
 * socket: the right response logs in, one wrong bit is refused with an
 * authentication failure, and the target's mutual response is the one
 * computed for our challenge. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "test/test_target_helpers.h"

#include "backend/iscsi/tgt.h"

#define IQN "iqn.2026-01.org.ipvfs:test-chap"
#define USER "bob"
#define SECRET "bobs-secret-123"
#define MUSER "target-t0"
#define MSECRET "mutual-secret-9"

static void unhex(const char *s, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
}

/* RFC 1321 appendix A.5. */
static const struct {
    const char *msg, *md5;
} rfc1321[] = {
    { "", "d41d8cd98f00b204e9800998ecf8427e" },
    { "a", "0cc175b9c0f1b6a831c399e269772661" },
    { "abc", "900150983cd24fb0d6963f7d28e17f72" },
    { "message digest", "f96b697d7cb7938d525a2f31aaf161d0" },
    { "abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b" },
    { "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
      "d174ab98d277d9f5a5611c2c9f419d9f" },
    { "12345678901234567890123456789012345678901234567890"
      "123456789012345678901234567890",
      "57edf4a22be3c955ac49da2e2107b67a" },
};

static void test_md5_rfc1321(void **state)
{
    for (size_t i = 0; i < sizeof(rfc1321) / sizeof(rfc1321[0]); i++) {
        const uint8_t *msg = (const uint8_t *)rfc1321[i].msg;
        size_t len = strlen(rfc1321[i].msg), half = len / 2;
        const uint8_t *whole[1] = { msg }, *split[2] = { msg, msg + half };
        size_t wlen[1] = { len }, slen[2] = { half, len - half };
        uint8_t want[16], got[16];

        unhex(rfc1321[i].md5, want, 16);
        tgt_md5(whole, wlen, 1, got);
        assert_memory_equal(got, want, 16);
        /* the same bytes in two parts, as CHAP passes them */
        memset(got, 0, sizeof(got));
        tgt_md5(split, slen, 2, got);
        assert_memory_equal(got, want, 16);
    }
}

/* Derived by hand (any MD5 tool) from RFC 1994 4.1:
 * MD5(0x2a || "bobs-secret-123" || 00 01 .. 0f) and
 * MD5(0xc7 || "mutual-secret-9" || 01 23 45 67 89 ab cd ef fe dc ba 98 76 54 32 10 a5). */
static void test_chap_vectors(void **state)
{
    uint8_t chal1[16], chal2[17], want[16], got[16];

    for (int i = 0; i < 16; i++)
        chal1[i] = (uint8_t)i;
    unhex("a269591ae062c4efe629121350d45a0d", want, 16);
    tgt_chap_response(0x2a, SECRET, chal1, sizeof(chal1), got);
    assert_memory_equal(got, want, 16);
    assert_true(tgt_chap_check(0x2a, SECRET, chal1, sizeof(chal1), want));

    unhex("0123456789abcdeffedcba9876543210a5", chal2, sizeof(chal2));
    unhex("7fceac48ed907a1ad01abcd8557cfc68", want, 16);
    tgt_chap_response(0xc7, MSECRET, chal2, sizeof(chal2), got);
    assert_memory_equal(got, want, 16);

    /* any one wrong bit, first or last byte, is refused */
    unhex("a269591ae062c4efe629121350d45a0d", want, 16);
    for (int i = 0; i < 16; i += 15)
        for (int bit = 0; bit < 8; bit++) {
            want[i] ^= (uint8_t)(1u << bit);
            assert_false(tgt_chap_check(0x2a, SECRET, chal1, sizeof(chal1), want));
            want[i] ^= (uint8_t)(1u << bit);
        }
    assert_false(tgt_chap_check(0x2b, SECRET, chal1, sizeof(chal1), want));
    assert_false(tgt_chap_check(0x2a, "bobs-secret-124", chal1, sizeof(chal1), want));
}

/* ---- login on a raw socket ---- */

static struct srv_proc sp;

static int raw_connect(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(sp.port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct timeval tv = { .tv_sec = 10 };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
    return fd;
}

struct login_rsp {
    int status;
    int flags;
    char text[4096];
    size_t len;
};

/* One login request: flags byte (T, CSG, NSG), the keys as "k=v" strings,
 * cmdsn; the response's status, flags and text go to r. */
static void login_pdu(int fd, uint8_t flags, const char *const *keys, int nkeys,
                      struct login_rsp *r)
{
    uint8_t h[48] = { 0 }, rh[48];
    char text[1024];
    size_t len = 0;
    uint32_t dlen, padded;

    for (int i = 0; i < nkeys; i++) {
        size_t n = strlen(keys[i]) + 1;
        assert_true(len + n <= sizeof(text));
        memcpy(text + len, keys[i], n);
        len += n;
    }
    padded = ((uint32_t)len + 3) & ~3u;
    memset(text + len, 0, padded - len);
    h[0] = 0x43;                     /* immediate login request */
    h[1] = flags;
    h[5] = (uint8_t)(len >> 16); h[6] = (uint8_t)(len >> 8); h[7] = (uint8_t)len;
    h[8] = 0x80; h[13] = 1;          /* ISID */
    h[19] = 1;                       /* ITT */
    h[27] = 1;                       /* CmdSN */
    assert_int_equal(send(fd, h, 48, MSG_NOSIGNAL), 48);
    assert_int_equal(send(fd, text, padded, MSG_NOSIGNAL), (ssize_t)padded);

    assert_int_equal(recv(fd, rh, 48, MSG_WAITALL), 48);
    assert_int_equal(rh[0] & 0x3f, 0x23);   /* login response */
    dlen = (uint32_t)rh[5] << 16 | (uint32_t)rh[6] << 8 | rh[7];
    padded = (dlen + 3) & ~3u;
    assert_true(padded < sizeof(r->text));
    if (padded)
        assert_int_equal(recv(fd, r->text, padded, MSG_WAITALL), (ssize_t)padded);
    r->text[dlen] = '\0';
    r->len = dlen;
    r->status = rh[36] << 8 | rh[37];
    r->flags = rh[1];
}

/* The value of key in a response's text, or NULL. */
static const char *rsp_value(const struct login_rsp *r, const char *key)
{
    size_t klen = strlen(key);

    for (size_t pos = 0; pos < r->len; pos += strlen(r->text + pos) + 1)
        if (strncmp(r->text + pos, key, klen) == 0 && r->text[pos + klen] == '=')
            return r->text + pos + klen + 1;
    return NULL;
}

static void hex_of(const uint8_t *p, size_t n, char *out)
{
    out += sprintf(out, "0x");
    for (size_t i = 0; i < n; i++)
        out += sprintf(out, "%02x", p[i]);
}

/* Security stage up to the challenge: *id and chal[16] from the target. */
static void chap_challenge(int fd, uint8_t *id, uint8_t chal[16])
{
    static const char *const first[] = { "InitiatorName=iqn.2026-01.org.ipvfs:raw-chap",
                                         "TargetName=" IQN, "SessionType=Normal",
                                         "AuthMethod=CHAP" };
    static const char *const alg[] = { "CHAP_A=5" };
    struct login_rsp r;
    const char *v;
    unsigned n;

    login_pdu(fd, 0x01, first, 4, &r);      /* CSG security, NSG operational */
    assert_int_equal(r.status, 0);
    assert_string_equal(rsp_value(&r, "AuthMethod"), "CHAP");
    login_pdu(fd, 0x01, alg, 1, &r);
    assert_int_equal(r.status, 0);
    assert_string_equal(rsp_value(&r, "CHAP_A"), "5");
    v = rsp_value(&r, "CHAP_I");
    assert_non_null(v);
    assert_int_equal(sscanf(v, "%u", &n), 1);
    assert_true(n <= 255);
    *id = (uint8_t)n;
    v = rsp_value(&r, "CHAP_C");
    assert_non_null(v);
    assert_int_equal(strlen(v), 2 + 32);
    unhex(v + 2, chal, 16);
}

/* Answers the challenge with resp (flip: XOR into its first byte); with a
 * mutual challenge when mutual is set.  Returns the login status. */
static int chap_answer(int fd, uint8_t flip, int mutual, struct login_rsp *r)
{
    uint8_t id, chal[16], resp[16];
    char rhex[40], chex[40];
    char nkey[64], rkey[64], ckey[64];
    const char *keys[4] = { nkey, rkey, "CHAP_I=77", ckey };
    static const uint8_t ichal[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

    chap_challenge(fd, &id, chal);
    tgt_chap_response(id, SECRET, chal, sizeof(chal), resp);
    resp[0] ^= flip;
    hex_of(resp, sizeof(resp), rhex);
    hex_of(ichal, sizeof(ichal), chex);
    snprintf(nkey, sizeof(nkey), "CHAP_N=%s", USER);
    snprintf(rkey, sizeof(rkey), "CHAP_R=%s", rhex);
    snprintf(ckey, sizeof(ckey), "CHAP_C=%s", chex);
    /* T=1, CSG security, NSG full feature */
    login_pdu(fd, 0x83, keys, mutual ? 4 : 2, r);
    if (r->status == 0 && mutual) {
        uint8_t want[16], got[16];
        const char *v = rsp_value(r, "CHAP_R");

        assert_string_equal(rsp_value(r, "CHAP_N"), MUSER);
        assert_non_null(v);
        assert_int_equal(strlen(v), 2 + 32);
        unhex(v + 2, got, 16);
        tgt_chap_response(77, MSECRET, ichal, sizeof(ichal), want);
        assert_memory_equal(got, want, 16);
    }
    return r->status;
}

static void test_login_chap(void **state)
{
    static struct tgt_lun_config lun = { .kind = TGT_BACKING_MEMORY, .size = 1 << 20 };
    static struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = &lun,
                                     .nluns = 1, .chap_user = USER, .chap_secret = SECRET,
                                     .mutual_user = MUSER, .mutual_secret = MSECRET };
    struct login_rsp r;
    int fd;

    assert_int_equal(srv_start(&sp, &cfg, NULL), 0);

    fd = raw_connect();
    assert_int_equal(chap_answer(fd, 0, 1, &r), 0);
    assert_int_equal(r.flags & 0x83, 0x83);   /* transit to full feature */
    close(fd);

    fd = raw_connect();
    assert_int_equal(chap_answer(fd, 0x01, 1, &r), 0x0201);   /* authentication failure */
    close(fd);

    /* the mutual secret is configured: a one-way answer is refused too */
    fd = raw_connect();
    assert_int_equal(chap_answer(fd, 0, 0, &r), 0x0201);
    close(fd);

    assert_int_equal(srv_stop(&sp), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_md5_rfc1321),
        cmocka_unit_test(test_chap_vectors),
        cmocka_unit_test_teardown(test_login_chap, srv_kill_all),
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
