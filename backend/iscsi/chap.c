/* CHAP (RFC 1994) for the login phase (login.c): the MD5 response over
 * identifier, secret and challenge, and its check.  MD5 is nettle's; the
 * check compares in constant time, so the time a wrong response takes to
 * refuse says nothing about how many of its bytes were right. */
#include "config.h"

#include "backend/iscsi/tgt.h"

#include <string.h>

#include <nettle/md5.h>
#include <nettle/memops.h>

void tgt_md5(const uint8_t *const *parts, const size_t *lens, int nparts, uint8_t out[16])
{
    struct md5_ctx ctx;

    md5_init(&ctx);
    for (int i = 0; i < nparts; i++)
        md5_update(&ctx, lens[i], parts[i]);
    md5_digest(&ctx, MD5_DIGEST_SIZE, out);
}

void tgt_chap_response(uint8_t id, const char *secret, const uint8_t *chal, size_t clen,
                       uint8_t out[16])
{
    const uint8_t *parts[3] = { &id, (const uint8_t *)secret, chal };
    size_t lens[3] = { 1, strlen(secret), clen };

    tgt_md5(parts, lens, 3, out);
}

int tgt_chap_check(uint8_t id, const char *secret, const uint8_t *chal, size_t clen,
                   const uint8_t got[16])
{
    uint8_t want[16];

    tgt_chap_response(id, secret, chal, clen, want);
    return memeql_sec(got, want, sizeof(want));
}
