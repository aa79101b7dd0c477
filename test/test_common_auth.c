/* HELLO's proofs and the portals' CHAP secrets (common/auth.c): known
 * answers (computed independently with Python's hmac, as the integration
 * tests' client does), and that each input changes the result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/auth.h"

static uint8_t key[IPVFS_SECRET_LEN], nonce_c[IPVFS_NONCE_LEN], nonce_s[IPVFS_NONCE_LEN];

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < IPVFS_SECRET_LEN; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < IPVFS_NONCE_LEN; i++) {
        nonce_c[i] = (uint8_t)(0xc0 + i);
        nonce_s[i] = (uint8_t)(0x50 + i);
    }
    return 0;
}

static void hex(const uint8_t *in, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", in[i]);
}

static void test_known_answers(void **state)
{
    uint8_t p[IPVFS_PROOF_LEN];
    char h[2 * IPVFS_PROOF_LEN + 1], chap[AUTH_CHAP_SECRET_LEN + 1];

    (void)state;
    auth_server_proof(key, nonce_c, nonce_s, p);
    hex(p, sizeof(p), h);
    assert_string_equal(h, "7bde1cdc276049a5d3b063a8b85c4d08c7c7345dcd277ce70f74a6d519b5420d");
    auth_client_proof(key, nonce_s, nonce_c, 7, p);
    hex(p, sizeof(p), h);
    assert_string_equal(h, "263dea116a206e30ff2a4ef0d850bf3f34e0d43288108fe5a73f04e9a8a883f7");
    auth_chap_secret(key, "initiator", "iqn.x:t0.0", chap);
    assert_string_equal(chap, "f18a212657f3b04c5b5ccabc12ebe557");
    auth_chap_secret(key, "target", "iqn.x:t0.0", chap);
    assert_string_equal(chap, "bb8043c17f1288a75d204aa510e8746a");
}

/* A proof made for one side, one client id, one pair of nonces or one key
 * answers for no other. */
static void test_every_input_counts(void **state)
{
    uint8_t base[IPVFS_PROOF_LEN], p[IPVFS_PROOF_LEN], other[IPVFS_SECRET_LEN];
    char a[AUTH_CHAP_SECRET_LEN + 1], b[AUTH_CHAP_SECRET_LEN + 1];

    (void)state;
    auth_client_proof(key, nonce_s, nonce_c, 7, base);
    assert_true(auth_proof_equal(base, base));
    auth_client_proof(key, nonce_s, nonce_c, 8, p);
    assert_false(auth_proof_equal(base, p));
    auth_client_proof(key, nonce_c, nonce_s, 7, p);      /* nonces swapped */
    assert_false(auth_proof_equal(base, p));
    auth_server_proof(key, nonce_s, nonce_c, p);         /* the other side's label */
    assert_false(auth_proof_equal(base, p));
    memcpy(other, key, sizeof(other));
    other[31] ^= 1;
    auth_client_proof(other, nonce_s, nonce_c, 7, p);
    assert_false(auth_proof_equal(base, p));
    auth_chap_secret(key, "initiator", "iqn.x:t0.0", a);
    auth_chap_secret(key, "initiator", "iqn.x:t0.1", b);
    assert_string_not_equal(a, b);
    auth_chap_secret(other, "initiator", "iqn.x:t0.0", b);
    assert_string_not_equal(a, b);
}

static void test_nonces_differ(void **state)
{
    uint8_t a[IPVFS_NONCE_LEN], b[IPVFS_NONCE_LEN];

    (void)state;
    assert_int_equal(auth_nonce(a), 0);
    assert_int_equal(auth_nonce(b), 0);
    assert_memory_not_equal(a, b, sizeof(a));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_known_answers, setup),
        cmocka_unit_test_setup(test_every_input_counts, setup),
        cmocka_unit_test(test_nonces_differ),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
