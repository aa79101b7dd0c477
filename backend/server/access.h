/* Who is behind each connection of a server rank, and what it may ask
 * (access.c; the kernel's credentials in access_kernel.c, MUNGE's in
 * access_munge.c).  common/proto.h states the wire side (AUTH's methods,
 * capabilities); this is the server's.
 *
 * A connection's access (struct access, one per connection, in the
 * connection layer's link) goes through these states:
 *
 *   NEW         --HELLO (hello.c)-----------------------------> CHALLENGED
 *   CHALLENGED  --AUTH KEY with the right proof---------------> KEY
 *               --AUTH KERNEL after the local socket bound a
 *                 uid to this connection's nonce_s-------------> USER
 *               --AUTH MUNGE with a valid credential naming
 *                 this connection's nonces---------------------> USER
 *               --AUTH NONE------------------------------------> NOBODY
 *               --any other AUTH, a second HELLO---------------> closed
 *   any         --the connection closes (access_forget)-------> gone
 *
 * USER's uid 0 becomes nobody (65534) with --root-squash.  The
 * connection layer asks access_check before every handler (O(1): a table
 * of op classes and, for data requests, one hash lookup):
 *
 *   before AUTH   HELLO AUTH MAP STATUS
 *   NOBODY        and DF_STATFS, CAP, QOS_CLASS, QOS_STATUS, READ WRITE
 *                 DF_* on the handles whose capabilities it presented
 *                 (the right each op needs)
 *   USER          and the metadata ops, as its uid (metadb checks the
 *                 permissions); SHUTDOWN SCRUB REBUILD QOS_SET only as uid 0
 *   KEY           everything; no capability needed (server ranks, the
 *                 supervisors, root's tools, the FUSE mount)
 *
 * A refusal is EACCES (or EPERM for admin ops), logged with the peer and
 * who it proved to be.  Capabilities are granted by the metadata rank
 * (access_grant: signed with the cluster key, valid --cap-lifetime) and
 * kept per connection at the I/O node from CAP (access_present) until
 * the connection closes. */
#ifndef IPVFS_SERVER_ACCESS_H
#define IPVFS_SERVER_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/server/perm.h"
#include "common/proto.h"
#include "common/u64map.h"

struct server;

enum access_state {
    ACCESS_NEW = 0,
    ACCESS_CHALLENGED,
    ACCESS_KEY,
    ACCESS_USER,
    ACCESS_NOBODY,
};

struct access {
    enum access_state state;
    uint32_t client_id;                  /* HELLO's, for the counters */
    uint8_t nonce_c[IPVFS_NONCE_LEN];
    uint8_t nonce_s[IPVFS_NONCE_LEN];
    int vouched;                         /* KERNEL: cred came from the local socket */
    struct perm_cred cred;               /* USER (and a vouched CHALLENGED) */
    const char *how;                     /* "key", "kernel", "munge", "none" */
    struct u64map caps;                  /* handle -> expires_ms << 3 | rights */
    char qos_class[IPVFS_QOS_NAME_MAX + 1]; /* QOS_CLASS's; "": default (qos_svc.c) */
    struct access *next_challenged;      /* srv->challenged: awaiting AUTH */
};

/* Whether AUTH named the client (its requests count for it). */
static inline int access_authed(const struct access *a)
{
    return a->state >= ACCESS_KEY;
}

/* 0 when a may send op with this body now, else a positive errno and a
 * message for the reply (the caller logs and sends it). */
int access_check(struct server *srv, const struct access *a, uint16_t op, const uint8_t *body,
                 uint64_t body_len, char *msg, size_t msglen);

/* The credential metadb checks for a (NULL: a holder of the key). */
const struct perm_cred *access_cred(const struct access *a);
/* What a says of the connection, for logs: "key", "uid 1001 (kernel)"... */
void access_describe(const struct access *a, char *out, size_t outlen);

/* HELLO: a is CHALLENGED with these nonces and waits on srv's list. */
void access_challenge(struct server *srv, struct access *a, uint32_t client_id,
                      const uint8_t nonce_c[IPVFS_NONCE_LEN],
                      const uint8_t nonce_s[IPVFS_NONCE_LEN]);
/* AUTH: checks the proof or credential for method; 0 and a's new state,
 * or a positive errno and a message (the caller closes the connection). */
int access_auth(struct server *srv, struct access *a, const struct ipvfs_auth_req *req,
                const uint8_t *cred, size_t cred_len, char *msg, size_t msglen);
/* The connection is going away. */
void access_forget(struct server *srv, struct access *a);

/* The metadata rank: a capability for handle with rights, to a. */
void access_grant(const struct server *srv, const struct access *a, uint64_t handle,
                  uint32_t rights, struct ipvfs_cap *out);
/* CAP at an I/O node: checks cap and keeps it for a's later requests.
 * 0 or a positive errno (EACCES forged, EKEYEXPIRED expired, ENOMEM). */
int access_present(const struct server *srv, struct access *a, const struct ipvfs_cap *cap,
                   char *msg, size_t msglen);

/* Fills *out from a kernel- or MUNGE-proven uid, gid and groups (groups
 * NULL: from the user database, as MUNGE gives none), squashing root
 * with --root-squash. */
void access_user(const struct server *srv, uint32_t uid, uint32_t gid, const uint32_t *groups,
                 uint32_t ngroups, struct perm_cred *out);

/* The local socket of KERNEL (access_kernel.c): listens in the serving
 * process on the abstract name of common/proto.h for srv->conns.port. */
int access_kernel_listen(struct server *srv);
void access_kernel_close(struct server *srv);

/* MUNGE (access_munge.c): decodes cred, whose payload must be a's nonce_s
 * then nonce_c: the uid and gid munged vouches for.  0 or a positive
 * errno with a message. */
int access_munge_verify(const struct server *srv, const struct access *a, const uint8_t *cred,
                        size_t cred_len, uint32_t *out_uid, uint32_t *out_gid, char *msg,
                        size_t msglen);

#endif
