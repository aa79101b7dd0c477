/* HELLO's challenge and response: the rule is in auth.h. */
#include "common/auth.h"

#include <errno.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>

int auth_nonce(uint8_t out[IPVFS_NONCE_LEN])
{
    ssize_t n;

    do
        n = getrandom(out, IPVFS_NONCE_LEN, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    return n == IPVFS_NONCE_LEN ? 0 : -EIO;
}

/* HMAC-SHA256(key, label | a | b | tail) */
static void proof(const uint8_t key[IPVFS_SECRET_LEN], const char *label, size_t label_len,
                  const uint8_t a[IPVFS_NONCE_LEN], const uint8_t b[IPVFS_NONCE_LEN],
                  const uint8_t *tail, size_t tail_len, uint8_t out[IPVFS_PROOF_LEN])
{
    struct hmac_sha256_ctx ctx;

    hmac_sha256_set_key(&ctx, IPVFS_SECRET_LEN, key);
    hmac_sha256_update(&ctx, label_len, (const uint8_t *)label);
    hmac_sha256_update(&ctx, IPVFS_NONCE_LEN, a);
    hmac_sha256_update(&ctx, IPVFS_NONCE_LEN, b);
    if (tail_len)
        hmac_sha256_update(&ctx, tail_len, tail);
    hmac_sha256_digest(&ctx, IPVFS_PROOF_LEN, out);
}

void auth_server_proof(const uint8_t key[IPVFS_SECRET_LEN], const uint8_t nonce_c[IPVFS_NONCE_LEN],
                       const uint8_t nonce_s[IPVFS_NONCE_LEN], uint8_t out[IPVFS_PROOF_LEN])
{
    static const char label[] = "iPVFS server";

    proof(key, label, sizeof(label) - 1, nonce_c, nonce_s, NULL, 0, out);
}

void auth_client_proof(const uint8_t key[IPVFS_SECRET_LEN], const uint8_t nonce_s[IPVFS_NONCE_LEN],
                       const uint8_t nonce_c[IPVFS_NONCE_LEN], uint32_t client_id,
                       uint8_t out[IPVFS_PROOF_LEN])
{
    static const char label[] = "iPVFS client";
    uint8_t id[4] = { (uint8_t)client_id, (uint8_t)(client_id >> 8), (uint8_t)(client_id >> 16),
                      (uint8_t)(client_id >> 24) };

    proof(key, label, sizeof(label) - 1, nonce_s, nonce_c, id, sizeof(id), out);
}

void auth_chap_secret(const uint8_t key[IPVFS_SECRET_LEN], const char *who,
                      const char *target_iqn, char out[AUTH_CHAP_SECRET_LEN + 1])
{
    static const char label[] = "iPVFS CHAP ", digits[] = "0123456789abcdef";
    uint8_t mac[IPVFS_PROOF_LEN];
    struct hmac_sha256_ctx ctx;

    hmac_sha256_set_key(&ctx, IPVFS_SECRET_LEN, key);
    hmac_sha256_update(&ctx, sizeof(label) - 1, (const uint8_t *)label);
    hmac_sha256_update(&ctx, strlen(who) + 1, (const uint8_t *)who);   /* with its NUL */
    hmac_sha256_update(&ctx, strlen(target_iqn), (const uint8_t *)target_iqn);
    hmac_sha256_digest(&ctx, sizeof(mac), mac);
    for (int i = 0; i < AUTH_CHAP_SECRET_LEN / 2; i++) {
        out[2 * i] = digits[mac[i] >> 4];
        out[2 * i + 1] = digits[mac[i] & 15];
    }
    out[AUTH_CHAP_SECRET_LEN] = '\0';
}

int auth_proof_equal(const uint8_t a[IPVFS_PROOF_LEN], const uint8_t b[IPVFS_PROOF_LEN])
{
    return memeql_sec(a, b, IPVFS_PROOF_LEN);
}

void auth_cap_mac(const uint8_t key[IPVFS_SECRET_LEN], const struct ipvfs_cap *cap,
                  uint8_t out[IPVFS_PROOF_LEN])
{
    static const char label[] = "iPVFS capability";
    struct hmac_sha256_ctx ctx;

    hmac_sha256_set_key(&ctx, IPVFS_SECRET_LEN, key);
    hmac_sha256_update(&ctx, sizeof(label) - 1, (const uint8_t *)label);
    hmac_sha256_update(&ctx, offsetof(struct ipvfs_cap, mac), (const uint8_t *)cap);
    hmac_sha256_digest(&ctx, IPVFS_PROOF_LEN, out);
}
