/* Proof of the cluster key at HELLO, both ways, without the key on the wire.
 *
 * The cluster key is the 32 bytes of DATA/secret (the map carries them to
 * the clients that may read it).  A connection proves it by challenge and
 * response (HMAC-SHA256, nettle), as iSCSI's mutual CHAP does with MD5:
 *
 *   client -> HELLO {client_id, nonce_c}                      (fresh random)
 *   server -> reply {window..., nonce_s, proof_s}             (fresh random)
 *             proof_s = HMAC(key, "iPVFS server" | nonce_c | nonce_s)
 *   client    checks proof_s: a server without the key is refused here
 *   client -> AUTH {proof_c}
 *             proof_c = HMAC(key, "iPVFS client" | nonce_s | nonce_c | client_id)
 *   server    checks proof_c: EACCES and close when wrong
 *
 * A captured exchange gives an eavesdropper neither the key nor anything
 * it can replay: the other side's nonce is new on every connection, and
 * the two proofs are labelled, so one side's proof never serves as the
 * other's.  Pure functions, but for auth_nonce (getrandom). */
#ifndef IPVFS_AUTH_H
#define IPVFS_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

/* Fills out with IPVFS_NONCE_LEN random bytes.  Returns 0 or -errno. */
int auth_nonce(uint8_t out[IPVFS_NONCE_LEN]);

void auth_server_proof(const uint8_t key[IPVFS_SECRET_LEN], const uint8_t nonce_c[IPVFS_NONCE_LEN],
                       const uint8_t nonce_s[IPVFS_NONCE_LEN], uint8_t out[IPVFS_PROOF_LEN]);
void auth_client_proof(const uint8_t key[IPVFS_SECRET_LEN], const uint8_t nonce_s[IPVFS_NONCE_LEN],
                       const uint8_t nonce_c[IPVFS_NONCE_LEN], uint32_t client_id,
                       uint8_t out[IPVFS_PROOF_LEN]);

/* The CHAP secrets of the target ranks' portals (RFC 7143 12.1.3), derived
 * from the key so that nothing more is kept or sent: per target IQN and
 * per direction (who "initiator": what the I/O node answers the target's
 * challenge with; "target": what the target answers the I/O node's, for
 * mutual CHAP), 32 hex digits (128 bits) into out. */
#define AUTH_CHAP_SECRET_LEN 32
void auth_chap_secret(const uint8_t key[IPVFS_SECRET_LEN], const char *who,
                      const char *target_iqn, char out[AUTH_CHAP_SECRET_LEN + 1]);

/* A capability's signature (common/proto.h): HMAC-SHA256 of a label and
 * every field before mac, so that a changed handle, right, owner or expiry
 * no longer matches. */
void auth_cap_mac(const uint8_t key[IPVFS_SECRET_LEN], const struct ipvfs_cap *cap,
                  uint8_t out[IPVFS_PROOF_LEN]);

/* Whether two proofs agree, in time independent of where they differ. */
int auth_proof_equal(const uint8_t a[IPVFS_PROOF_LEN], const uint8_t b[IPVFS_PROOF_LEN]);

#endif
