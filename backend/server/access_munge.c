/* MUNGE credentials (access.h): the client's munge_encode of this
 * connection's nonce_s then nonce_c, decoded by the munged of the rank's
 * host (every node of a Slurm cluster runs one, with one shared key).
 * munged proves uid and gid and refuses a credential decoded before
 * (EMUNGE_CRED_REPLAYED); the payload ties it to this connection, so a
 * captured one serves nowhere else; groups come from the user database. */
#include "backend/server/access.h"

#include <errno.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/server/server.h"

/* munge's errors in errno's space, with munge's own words for people. */
static int munge_errno(munge_err_t e, munge_ctx_t ctx, char *msg, size_t msglen)
{
    const char *why = ctx ? munge_ctx_strerror(ctx) : NULL;

    snprintf(msg, msglen, "MUNGE credential refused: %s", why ? why : munge_strerror(e));
    switch (e) {
    case EMUNGE_SOCKET:
        return EHOSTDOWN;
    case EMUNGE_CRED_EXPIRED:
        return EKEYEXPIRED;
    case EMUNGE_CRED_REPLAYED:
    case EMUNGE_CRED_REWOUND:
    case EMUNGE_CRED_INVALID:
    case EMUNGE_CRED_UNAUTHORIZED:
        return EACCES;
    default:
        return EINVAL;
    }
}

int access_munge_verify(const struct server *srv, const struct access *a, const uint8_t *cred,
                        size_t cred_len, uint32_t *out_uid, uint32_t *out_gid, char *msg,
                        size_t msglen)
{
    uint8_t want[2 * IPVFS_NONCE_LEN];
    munge_ctx_t ctx = NULL;
    munge_err_t e;
    char *text;
    void *payload = NULL;
    int plen = 0, rc = 0;
    uid_t uid;
    gid_t gid;

    if (cred_len == 0 || cred_len > IPVFS_MAX_CRED) {
        snprintf(msg, msglen, "AUTH MUNGE with a credential of %zu bytes", cred_len);
        return EINVAL;
    }
    if (!(text = malloc(cred_len + 1)) || !(ctx = munge_ctx_create())) {
        free(text);
        snprintf(msg, msglen, "out of memory");
        return ENOMEM;
    }
    memcpy(text, cred, cred_len);
    text[cred_len] = '\0';
    if (srv->opts.munge_socket[0] &&
        (e = munge_ctx_set(ctx, MUNGE_OPT_SOCKET, srv->opts.munge_socket)) != EMUNGE_SUCCESS) {
        rc = munge_errno(e, ctx, msg, msglen);
        goto destroy_ctx;
    }
    if ((e = munge_decode(text, ctx, &payload, &plen, &uid, &gid)) != EMUNGE_SUCCESS) {
        rc = munge_errno(e, ctx, msg, msglen);
        goto free_payload;
    }
    memcpy(want, a->nonce_s, IPVFS_NONCE_LEN);
    memcpy(want + IPVFS_NONCE_LEN, a->nonce_c, IPVFS_NONCE_LEN);
    if (plen != (int)sizeof(want) || memcmp(payload, want, sizeof(want)) != 0) {
        snprintf(msg, msglen, "MUNGE credential of uid %u names another connection",
                 (unsigned)uid);
        rc = EACCES;
        goto free_payload;
    }
    *out_uid = (uint32_t)uid;
    *out_gid = (uint32_t)gid;
free_payload:
    free(payload);
destroy_ctx:
    munge_ctx_destroy(ctx);
    free(text);
    return rc;
}
