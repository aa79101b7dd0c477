/* The iPVFS wire protocol between clients (ad_ipvfs, ipvfs-ctl) and server
 * ranks, over TCP.
 *
 * Every message is a 32-byte header followed by body_len bytes of body.
 * All integers are little-endian (configure refuses big-endian hosts, so the
 * structs below are sent as they are in memory).  A request's reply carries
 * the same op with IPVFS_OP_REPLY set, the same req_id, and status 0 or a
 * positive Linux errno value saying why the request failed (then the body
 * may hold a NUL-terminated message for the user).
 *
 * Connection rules:
 * - A connection starts with HELLO and AUTH.  AUTH says who is behind
 *   the connection (enum ipvfs_auth_method): a holder of the cluster key
 *   (DATA/secret), proved both ways without sending it (common/auth.h);
 *   a user proven by the kernel or by MUNGE; or nobody (capabilities
 *   only).  What each may ask is backend/server/access.h's table; a
 *   refused request gets EACCES or EPERM.  A wrong proof gets EACCES and
 *   the server closes the connection; any op before AUTH likewise, but
 *   MAP and STATUS.
 * - Several requests may be in flight on one connection, and their replies
 *   may come in any order: req_id is the tag that pairs a reply with its
 *   request (a client keeps the req_ids of a connection's unanswered
 *   requests distinct; a reply whose req_id names none of them is a
 *   protocol error: the client closes that connection).  HELLO's reply
 *   states the server's window (struct ipvfs_hello_rep): at most
 *   max_inflight requests and window_bytes bytes in flight per connection
 *   (counted as the request bodies plus the READ data the replies carry),
 *   except that a lone request may be as large as IPVFS_MAX_BODY.  A
 *   server stops reading a connection that is at its window (TCP then
 *   holds the client back), so a client that ignores it only waits.
 * - Order: a server starts a request only after every earlier request of
 *   the same connection that it must follow has completed: any request
 *   follows every earlier one that is not a READ or WRITE (metadata ops,
 *   HELLO, DF_*, LOCK, control ops are barriers of their connection), and
 *   a READ or WRITE follows an earlier READ or WRITE of the same handle
 *   whose byte range overlaps it when either of the two is a WRITE.
 *   Other READs and WRITEs of a connection run at once and complete in
 *   any order.  Requests of different connections are not ordered.
 * - A header with a wrong magic or version, an unknown op, or a body_len
 *   over IPVFS_MAX_BODY ends that connection (after an EPROTO,
 *   EPROTONOSUPPORT (version) or EMSGSIZE reply where the header could be
 *   read); other connections go on.
 * - Bodies whose counts or lengths disagree with body_len get EINVAL.
 * - Keepalive: while some request of a connection has been in progress for
 *   IPVFS_PROGRESS_MS or more (a sync of much data, a READ waiting its
 *   turn, a write across a hung iRAID member), the server sends, about
 *   every IPVFS_PROGRESS_MS, a bare header: op IPVFS_OP_PROGRESS |
 *   IPVFS_OP_REPLY, status 0, body_len 0, req_id of that request.  Clients
 *   skip it wherever a reply header may come.  It lets a client's time
 *   limit be "the server sent nothing for that long": a hung server is
 *   caught within the limit, a slow request never times out.
 *
 * Which rank serves what:
 *   metadata rank (rank 0):  LOOKUP REMOVE MKDIR READDIR ORPHANS GETATTR SETATTR
 *                            RENAME SHFP LOCK UNLOCK
 *   I/O nodes:               READ WRITE DF_* SCRUB REBUILD CAP QOS_*
 *   every rank:              HELLO STATUS SHUTDOWN
 */
#ifndef IPVFS_PROTO_H
#define IPVFS_PROTO_H

#include <assert.h>
#include <stdint.h>

#define IPVFS_PROTO_MAGIC   0x46565049u  /* "IPVF" in memory order */
/* 2: READ carries the client's schedule in flags (server-side ordering) and
 * struct ipvfs_client_stat grew reads_waited/last_wait_seq.
 * 4: struct ipvfs_io_rep and struct ipvfs_df_rep carry the I/O node's write
 * verifier; an I/O node's STATUS reply ends with struct ipvfs_l1_status;
 * files and directories carry mode, owner and times: LOOKUP's create and
 * MKDIR send them (struct ipvfs_lookup_req, struct ipvfs_mkdir_req);
 * GETATTR, SETATTR, RENAME and DF_STATFS are new.  A header of another version gets
 * EPROTONOSUPPORT with a message naming both versions, in a reply header of
 * the request's version (the header is the same in every version), so an
 * older client reads the refusal; then the server closes the connection.
 * 5: replies of one connection come in any order (tagged by req_id, see
 * the connection rules), and HELLO's reply states the server's window;
 * READ's io_req.flags may carry the file's read-ahead window
 * (IPVFS_READ_RA_*; unknown flag bits are refused) and struct
 * ipvfs_l1_status grew the readahead_* counters and demotes; struct
 * ipvfs_volume_status counts RAID-5 stripe writes by mode
 * (full_stripe_writes ...).
 * 6: MAP (the map without its secret, from the metadata rank, before
 * HELLO); struct ipvfs_status_rep grew node and cpus.  HELLO's reply
 * carries the serving process's verifier, and SHFP, LOCK and UNLOCK the
 * metadata rank's verifier the client saw at open (ESTALE after a restart).
 * 7: HELLO no longer carries the secret: HELLO and AUTH prove the key by
 * challenge and response (common/auth.h); HELLO's reply grew the server's
 * nonce and proof.
 * 8: AUTH names its method (key, kernel, MUNGE, none); LOOKUP asks for
 * read and write rights and its reply carries a capability (struct
 * ipvfs_cap), as REMOVE's and RENAME's do for the datafiles they orphan;
 * CAP presents one to an I/O node; the metadata rank checks permissions.
 * 9: QoS: QOS_CLASS names a connection's application class to an I/O
 * node, QOS_SET sets a class's SLO there, QOS_STATUS reports its
 * scheduler (struct ipvfs_qos_*).
 * 10: struct ipvfs_qos_class_status grew max_kbps (the class internal's
 * --qos-internal MAX); struct ipvfs_qos_status_rep's DSFQ credit counts
 * requests (credit_mreq), no longer MB. */
#define IPVFS_PROTO_VERSION 10
#define IPVFS_SECRET_LEN    32
#define IPVFS_NONCE_LEN     16
#define IPVFS_PROOF_LEN     32   /* HMAC-SHA256 */

/* One READ/WRITE request moves at most this much data and this many pairs;
 * clients split larger accesses.  Bodies larger than IPVFS_MAX_BODY are a
 * protocol error. */
#define IPVFS_MAX_IO_BYTES  (8u << 20)
#define IPVFS_MAX_PAIRS     16384u
#define IPVFS_MAX_PATH      4096u
#define IPVFS_MAX_NAME      255u   /* bytes of one path component */
#define IPVFS_MAX_BODY      ((uint64_t)IPVFS_MAX_IO_BYTES + IPVFS_MAX_PAIRS * 16u + 4096u)

#define IPVFS_DEFAULT_STRIPE_UNIT (64u << 10)
#define IPVFS_PROGRESS_MS 2000u

enum ipvfs_op {
    IPVFS_OP_HELLO = 1,
    IPVFS_OP_AUTH = 2,
    /* metadata rank */
    IPVFS_OP_LOOKUP = 10,
    IPVFS_OP_REMOVE = 11,
    IPVFS_OP_MKDIR = 12,
    IPVFS_OP_READDIR = 13,
    IPVFS_OP_ORPHANS = 14,
    IPVFS_OP_GETATTR = 15,
    IPVFS_OP_SETATTR = 16,
    IPVFS_OP_RENAME = 17,
    /* I/O nodes: datafile operations; offsets are datafile-local */
    IPVFS_OP_READ = 20,
    IPVFS_OP_WRITE = 21,
    IPVFS_OP_DF_GETSIZE = 22,
    IPVFS_OP_DF_TRUNCATE = 23,
    IPVFS_OP_DF_SYNC = 24,
    IPVFS_OP_DF_REMOVE = 25,
    IPVFS_OP_DF_PREALLOC = 26,
    IPVFS_OP_DF_STATFS = 27,
    /* every rank */
    IPVFS_OP_STATUS = 30,
    IPVFS_OP_SHUTDOWN = 31,
    /* I/O nodes: their iRAID volume */
    IPVFS_OP_SCRUB = 32,
    IPVFS_OP_REBUILD = 33,
    /* server to client only: keepalive of a request in progress */
    IPVFS_OP_PROGRESS = 34,
    /* MAP: the metadata rank's copy of the server map, without the secret
     * (the text of common/map.h), for clients on hosts that do not share
     * the map file (IPVFS_MAP=HOST:PORT).  Empty body; the only request
     * besides HELLO that a connection may send before HELLO. */
    IPVFS_OP_MAP = 35,
    /* I/O nodes: present a capability (struct ipvfs_cap) */
    IPVFS_OP_CAP = 36,
    /* I/O nodes: QoS (struct ipvfs_qos_set_req and below) */
    IPVFS_OP_QOS_CLASS = 37,
    IPVFS_OP_QOS_SET = 38,
    IPVFS_OP_QOS_STATUS = 39,
    /* metadata rank: MPI-IO shared file pointers and atomic-mode locks */
    IPVFS_OP_SHFP = 40,
    IPVFS_OP_LOCK = 41,
    IPVFS_OP_UNLOCK = 42,

    IPVFS_OP_REPLY = 0x8000,
};

struct ipvfs_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t op;
    uint32_t status;     /* replies: 0 or errno */
    uint32_t flags;      /* per-op flags below */
    uint64_t req_id;     /* chosen by the client, echoed */
    uint64_t body_len;
};
static_assert(sizeof(struct ipvfs_hdr) == 32, "wire header is 32 bytes");

/* A keepalive header (see the connection rules above). */
static inline int ipvfs_hdr_is_progress(const struct ipvfs_hdr *h)
{
    return h->magic == IPVFS_PROTO_MAGIC && h->version == IPVFS_PROTO_VERSION &&
           h->op == (IPVFS_OP_PROGRESS | IPVFS_OP_REPLY) && h->body_len == 0;
}

/* Server roles, as bits: rank 0 is METADATA|IO. */
enum ipvfs_role {
    IPVFS_ROLE_METADATA = 1,
    IPVFS_ROLE_IO = 2,
    IPVFS_ROLE_TARGET = 4,
};

/* HELLO.  Reply body: struct ipvfs_hello_rep.  Then AUTH (struct
 * ipvfs_auth_req, then cred_len bytes of credential; empty reply) says
 * who the client is. */
struct ipvfs_hello_req {
    uint32_t client_id;  /* for per-client counters, e.g. the MPI rank */
    uint32_t reserved;
    uint8_t nonce[IPVFS_NONCE_LEN];      /* the client's challenge */
};
struct ipvfs_hello_rep {
    uint32_t rank;
    uint32_t role;       /* enum ipvfs_role bits */
    uint32_t max_inflight;   /* requests in flight per connection */
    uint32_t reserved;
    uint64_t window_bytes;   /* request bodies + READ data in flight per connection */
    uint64_t max_body;       /* the largest request body (IPVFS_MAX_BODY) */
    uint8_t nonce[IPVFS_NONCE_LEN];      /* the server's challenge */
    uint8_t proof[IPVFS_PROOF_LEN];      /* auth_server_proof() */
    uint64_t verifier;       /* this serving process's incarnation (the write
                              * verifier): a restart draws a new one */
};
static_assert(sizeof(struct ipvfs_hello_rep) == 88, "HELLO reply is 88 bytes");
/* Who is behind a connection (backend/server/access.h says what each may
 * do):
 *   KEY     proof = auth_client_proof(): a holder of the cluster key (the
 *           server ranks, their supervisors, root's tools on a host that
 *           has DATA/secret): trusted as root, and to name the owner of
 *           what it creates (the FUSE mount creates as its caller);
 *   KERNEL  the client proved its uid and groups on the server's host:
 *           before AUTH it sent this connection's nonce_s over the rank's
 *           local socket (IPVFS_CRED_SOCKET), whose kernel credentials
 *           (SO_PEERCRED, SO_PEERGROUPS) the server bound to it;
 *   MUNGE   the credential is a MUNGE credential (munge_encode) whose
 *           payload is nonce_s then nonce_c: munged vouches uid and gid,
 *           the server's user database the groups;
 *   NONE    nobody: STATUS, MAP, DF_STATFS, and data requests on the
 *           capabilities it presents (CAP).
 * proof is zero but for KEY. */
enum ipvfs_auth_method {
    IPVFS_AUTH_KEY = 1,
    IPVFS_AUTH_KERNEL = 2,
    IPVFS_AUTH_MUNGE = 3,
    IPVFS_AUTH_NONE = 4,
};
#define IPVFS_MAX_CRED 1024u
struct ipvfs_auth_req {
    uint8_t proof[IPVFS_PROOF_LEN];      /* KEY: auth_client_proof() */
    uint32_t method;                     /* enum ipvfs_auth_method */
    uint32_t cred_len;                   /* MUNGE: bytes of credential that
                                          * follow (at most IPVFS_MAX_CRED) */
};
/* The abstract Unix socket (SOCK_SEQPACKET) of a rank listening on TCP
 * port P is "\0" IPVFS_CRED_SOCKET "P": one message of IPVFS_NONCE_LEN
 * bytes (the nonce_s of the client's HELLO reply) in, one uint32_t errno
 * (0: bound) out.  Abstract sockets live in the network namespace, so
 * only processes on the rank's host reach it. */
#define IPVFS_CRED_SOCKET "ipvfs-cred:"

/* A capability: what the metadata rank granted for one file, signed with
 * the cluster key (auth_cap_mac), so that an I/O node can check a data
 * request without asking anyone: LOOKUP returns one with the rights the
 * client asked for and may have, REMOVE and RENAME one to remove the
 * datafiles they orphaned.  A client presents it to each I/O node once
 * per connection (CAP: body struct ipvfs_cap, empty reply; EACCES when
 * the MAC is wrong, EKEYEXPIRED when expired); then READ needs READ, WRITE,
 * DF_TRUNCATE and DF_PREALLOC need WRITE, DF_REMOVE needs REMOVE and
 * DF_GETSIZE and DF_SYNC any right on the handle (DF_SYNC of handle 0
 * any capability at all).  Connections that proved the key need none. */
#define IPVFS_CAP_READ   0x1u
#define IPVFS_CAP_WRITE  0x2u
#define IPVFS_CAP_REMOVE 0x4u
#define IPVFS_CAP_ALL    0x7u
struct ipvfs_cap {
    uint64_t handle;
    uint32_t rights;         /* IPVFS_CAP_* */
    uint32_t uid;            /* whom it was granted to (for the logs) */
    int64_t expires_ms;      /* CLOCK_REALTIME, milliseconds */
    uint64_t reserved;
    uint8_t mac[IPVFS_PROOF_LEN];   /* auth_cap_mac() over the fields above */
};
static_assert(sizeof(struct ipvfs_cap) == 64, "capability is 64 bytes");

/* The window an I/O node states (server ranks of this version all state
 * these).  8 requests: the client's pieces of one large access (64 KiB to
 * 1 MiB each) reach the I/O node's store together, so it writes piece 1 to
 * the targets while piece 2 arrives and sends piece 1 of a read while the
 * targets still deliver piece 2 (Lustre keeps 8 bulk RPCs in flight per
 * target, OrangeFS 8 flow buffers per transfer).  8 MiB: the largest
 * single I/O request, or 8 pieces of 1 MiB, which keeps a loopback or
 * 10 GbE link busy for a round trip many times over.  A server also bounds
 * all its connections together (IPVFS_SERVER_INFLIGHT_BYTES, enforced the
 * same way: it stops reading connections while at its bound), twice over:
 * once the WRITE data it holds, once everything else (READ data, other
 * bodies), so that writes waiting for a slow or stopped volume never keep
 * it from reading a fresh connection's HELLO, a metadata request, or a
 * READ that needs nothing from that volume. */
#define IPVFS_CONN_MAX_INFLIGHT 8u
#define IPVFS_CONN_WINDOW_BYTES (8ull << 20)
#define IPVFS_SERVER_INFLIGHT_BYTES (64ull << 20)

/* LOOKUP: find (and with IPVFS_LOOKUP_CREATE create) a file by path.
 * Missing parent directories are created with the file (mode 0755 plus
 * the file's read bits, same owner).  Body: struct ipvfs_lookup_req
 * followed by path_len bytes of absolute path (no NUL).  Reply body:
 * struct ipvfs_entry, then struct ipvfs_cap with the rights READ and
 * WRITE ask for (none: a capability with no rights).  A created file gets
 * mode & 07777, uid and gid as sent (a user's connection must send its
 * own uid and one of its groups: EPERM otherwise), and the metadata
 * rank's clock as atime, mtime and ctime.  Permissions are POSIX's
 * (search on every directory of the path, write and search on the parent
 * to create, read or write on the file for the rights; the creator of a
 * file gets the rights it asked for whatever the mode). */
#define IPVFS_LOOKUP_CREATE 0x1
#define IPVFS_LOOKUP_EXCL   0x2
#define IPVFS_LOOKUP_READ   0x4
#define IPVFS_LOOKUP_WRITE  0x8
struct ipvfs_lookup_req {
    uint32_t flags;
    uint32_t stripe_factor;  /* 0: all I/O nodes */
    uint64_t stripe_unit;    /* 0: IPVFS_DEFAULT_STRIPE_UNIT */
    uint32_t path_len;
    uint32_t mode;           /* create: permission bits (07777 mask) */
    uint32_t uid;            /* create: owner */
    uint32_t gid;
};

enum ipvfs_type { IPVFS_TYPE_FILE = 1, IPVFS_TYPE_DIR = 2 };

struct ipvfs_entry {
    uint64_t handle;         /* names the file's datafiles on every I/O node */
    uint64_t stripe_unit;
    uint32_t stripe_factor;
    uint32_t first_server;   /* I/O node index of datafile 0 */
    uint32_t type;           /* enum ipvfs_type */
    uint32_t created;        /* 1 when this LOOKUP created the file */
};

/* REMOVE, READDIR, GETATTR: body is struct ipvfs_path_req + path bytes.
 * REMOVE replies with the removed struct ipvfs_entry and a struct
 * ipvfs_cap with the right REMOVE; the client then sends
 * DF_REMOVE for that handle to the I/O nodes of its layout.  REMOVE of a
 * non-empty directory gets ENOTEMPTY.  READDIR replies with a uint32_t
 * count, then per entry a uint32_t type, a uint32_t name_len and the name. */
struct ipvfs_path_req {
    uint32_t path_len;
    uint32_t flags;          /* 0, or for REMOVE: IPVFS_REMOVE_DIR */
};
/* REMOVE without this flag removes only files (a directory gets EISDIR);
 * with it, a file or an empty directory. */
#define IPVFS_REMOVE_DIR 0x1

/* MKDIR: body struct ipvfs_mkdir_req + path bytes; empty reply body.
 * Makes missing parents too (with the same mode and owner); EEXIST when
 * the path exists. */
struct ipvfs_mkdir_req {
    uint32_t path_len;
    uint32_t mode;           /* permission bits (07777 mask) */
    uint32_t uid;
    uint32_t gid;
};

/* Attributes of a name, as GETATTR, SETATTR and RENAME's target report
 * them.  Times are nanoseconds since the epoch, by the metadata rank's
 * clock; names made before version 4 read as mode 0644 (files) or 0755
 * (directories), owner 0:0, times 0.  The metadata rank keeps no size:
 * a file's size is its datafiles' (DF_GETSIZE).  A file's mtime changes
 * when a client says so (SETATTR with IPVFS_SETATTR_MTIME_NOW: ipvfs-ctl
 * cp and the FUSE mount after writing, MPI-IO at close and sync after
 * writes), ctime with every SETATTR and RENAME; a directory's mtime and
 * ctime when a name in it is made, removed or renamed. */
struct ipvfs_attr {
    struct ipvfs_entry entry;
    uint32_t mode;           /* permission bits only; the type is entry.type */
    uint32_t uid;
    uint32_t gid;
    uint32_t reserved;
    int64_t atime_ns;
    int64_t mtime_ns;
    int64_t ctime_ns;
};
static_assert(sizeof(struct ipvfs_attr) == 72, "attributes are 72 bytes");

/* SETATTR: body struct ipvfs_setattr_req + path; reply struct ipvfs_attr
 * (after the change).  valid says which fields apply; ctime becomes now.
 * Unknown bits or mode bits outside 07777 get EINVAL.  Sizes are the
 * datafiles' business (DF_TRUNCATE), so a truncating client sends
 * MTIME_NOW afterwards. */
#define IPVFS_SETATTR_MODE      0x01u
#define IPVFS_SETATTR_UID       0x02u
#define IPVFS_SETATTR_GID       0x04u
#define IPVFS_SETATTR_ATIME     0x08u
#define IPVFS_SETATTR_MTIME     0x10u
#define IPVFS_SETATTR_ATIME_NOW 0x20u
#define IPVFS_SETATTR_MTIME_NOW 0x40u
#define IPVFS_SETATTR_ALL       0x7fu
struct ipvfs_setattr_req {
    uint32_t valid;          /* IPVFS_SETATTR_* bits */
    uint32_t mode;
    uint32_t uid;
    uint32_t gid;
    int64_t atime_ns;
    int64_t mtime_ns;
    uint32_t path_len;
    uint32_t reserved;
};

/* RENAME: body struct ipvfs_rename_req, then src_len bytes of the source
 * path and dst_len of the target (absolute, no NUL); reply struct
 * ipvfs_rename_rep.  POSIX rename(2) semantics in one transaction: an
 * existing target is replaced when it is a file and the source a file, or
 * both are directories and the target is empty (ENOTEMPTY otherwise);
 * a file over a directory gets EISDIR, a directory over a file ENOTDIR;
 * with IPVFS_RENAME_NOREPLACE any existing target gets EEXIST.  Moving a
 * directory under itself gets EINVAL; the same name twice is a no-op.  A
 * replaced file becomes an orphan in the same transaction (see ORPHANS):
 * the reply names it and the client deletes its datafiles.  Missing
 * parents of the target are not created (ENOENT). */
#define IPVFS_RENAME_NOREPLACE 0x1u
struct ipvfs_rename_req {
    uint32_t flags;
    uint32_t src_len;
    uint32_t dst_len;
    uint32_t reserved;
};
struct ipvfs_rename_rep {
    uint32_t replaced;       /* 1: entry is a replaced file, now an orphan */
    uint32_t reserved;
    struct ipvfs_entry entry;
    struct ipvfs_cap cap;    /* replaced: the right to remove its datafiles */
};

/* ORPHANS: files removed whose datafiles may still exist.  REMOVE of a
 * file records it as an orphan in the same durable transaction; the
 * remover deletes the datafiles (DF_REMOVE) and then sends ORPHANS with
 * done = the handle.  A remover that dies in between leaves the record for
 * the next one: the reply lists up to max orphans (after forgetting done;
 * an unknown done is no error, since cleaners may race), which the caller
 * deletes the same way.  Handles are never reused, so deleting an orphan's
 * datafiles twice is harmless.  Reply body: uint32_t count, uint32_t
 * reserved, then max struct ipvfs_entry of which the first count are
 * orphans (the rest zero: the reply's size depends on the request only).
 * Only connections that proved the key get the list (others get count 0:
 * they hold no capability to remove another's datafiles). */
#define IPVFS_MAX_ORPHANS 64u
struct ipvfs_orphans_req {
    uint64_t done;           /* handle whose datafiles are gone, or 0 */
    uint32_t max;            /* at most IPVFS_MAX_ORPHANS */
    uint32_t reserved;
};

/* READ and WRITE: body is struct ipvfs_io_req, npairs struct ipvfs_pair
 * (datafile offsets), then for WRITE the data of all pairs in order.
 * Reply body: struct ipvfs_io_rep, then for READ the data of all pairs in
 * order (exactly the requested bytes; holes and bytes past the datafile's
 * end read as zeros).  df_size lets the client decide where the logical
 * file ends without another round trip. */
struct ipvfs_io_req {
    uint64_t handle;
    uint32_t npairs;
    uint32_t flags;          /* READ: enum ipvfs_read_order; WRITE: 0 */
};
/* Which waiting READ an I/O node serves next (the Clusterfile heuristics
 * on the server side), named by the client in io_req.flags.  An I/O node
 * keeps a bounded number of READs in its store at once; a READ that finds
 * a free place starts at once (a lone request is never delayed), the
 * others wait, and when a place frees up the policy of the oldest waiting
 * READ picks the next one:
 *   FIFO    the oldest (clients that name no policy);
 *   FIRST   the lowest datafile offset (its first pair);
 *   RANDOM  a random client among those waiting;
 *   HASH    a round robin over client ids starting at client s, the I/O
 *           node's index: at step j client (s + j) mod n (n: one more than
 *           the largest client id seen reading here), skipping clients
 *           with nothing waiting.
 * Several READs of one connection may wait here at once (the connection
 * rules allow them to complete in any order).  A READ of a datafile whose
 * span (first to last byte of its pairs) overlaps that of a READ in the
 * store goes in at once without a place, as long as no more such riders
 * are in as there are places: interleaved tile rows of several clients
 * are then read in the same target commands (backend/server/readq.h). */
enum ipvfs_read_order {
    IPVFS_READ_ORDER_FIFO = 0,
    IPVFS_READ_ORDER_FIRST = 1,
    IPVFS_READ_ORDER_RANDOM = 2,
    IPVFS_READ_ORDER_HASH = 3,
};
#define IPVFS_READ_ORDER_MASK 0x3u
/* READ: the file's read-ahead window (hint ipvfs_readahead) travels in
 * io_req.flags: IPVFS_READ_RA_SET says it is there, the bits from
 * IPVFS_READ_RA_SHIFT up hold it in 64 KiB units (0: no read-ahead for
 * this read).  Without RA_SET the I/O node's --readahead applies.  At most
 * IPVFS_MAX_READAHEAD (the server option's bound too). */
#define IPVFS_READ_RA_SET 0x4u
#define IPVFS_READ_RA_SHIFT 8
#define IPVFS_READ_RA_UNIT (64u << 10)
#define IPVFS_MAX_READAHEAD (1ull << 30)
#define IPVFS_READ_FLAGS_KNOWN \
    (IPVFS_READ_ORDER_MASK | IPVFS_READ_RA_SET | (~0u << IPVFS_READ_RA_SHIFT))
static inline uint32_t ipvfs_read_ra_flags(uint64_t bytes)
{
    return IPVFS_READ_RA_SET |
           (uint32_t)((bytes + IPVFS_READ_RA_UNIT - 1) / IPVFS_READ_RA_UNIT) << IPVFS_READ_RA_SHIFT;
}
struct ipvfs_pair {
    uint64_t offset;
    uint64_t len;
};
struct ipvfs_io_rep {
    uint64_t bytes;          /* bytes read or written */
    uint64_t df_size;        /* datafile size after the operation */
    uint64_t verifier;       /* the I/O node's write verifier (below) */
};

/* Write verifier (as NFSv3's): each serving process of an I/O node draws a
 * random 64-bit id when it starts; READ, WRITE and DF_* replies carry it.
 * A WRITE (or DF_TRUNCATE, DF_PREALLOC) is acknowledged once its data is
 * on the volume, but the datafile store's block map and sizes that make it
 * reachable are committed later (at DF_SYNC, or by the background commit
 * within about a second): a crash of the serving process in between may
 * lose acknowledged writes.  Only DF_SYNC's success makes them durable.
 * So a client remembers, per file and I/O node, the verifier of the replies
 * to its writes since its last DF_SYNC; when a later reply (a write's or
 * the DF_SYNC's) carries another verifier, the I/O node restarted and
 * those writes may be gone: the sync must report it, not succeed. */

/* DF_GETSIZE, DF_TRUNCATE (arg: new size), DF_SYNC (handle 0: everything),
 * DF_REMOVE, DF_PREALLOC (arg: allocate, zero-filled, up to this size and
 * grow the datafile to it if shorter).  Reply body: struct ipvfs_df_rep. */
struct ipvfs_df_req {
    uint64_t handle;
    uint64_t arg;
};
struct ipvfs_df_rep {
    uint64_t value;          /* GETSIZE: size; others: datafile size after */
    uint64_t verifier;       /* the I/O node's write verifier */
};

/* DF_STATFS (an I/O node's datafile store, for df): empty body.  Bytes
 * freed by truncate or remove count as used until the commit that frees
 * them (the next sync, within a second). */
struct ipvfs_statfs_rep {
    uint64_t total_bytes;    /* the store's volume blocks */
    uint64_t free_bytes;
    uint64_t datafiles;
};

/* STATUS: empty body.  Reply body: struct ipvfs_status_rep. */
enum ipvfs_rank_state {
    IPVFS_STATE_STARTING = 1,
    IPVFS_STATE_SERVING = 2,
    IPVFS_STATE_DEGRADED = 3,
    IPVFS_STATE_STOPPING = 4,
    IPVFS_STATE_DOWN = 5,    /* crashed too often: stays down (reason says why) */
};
struct ipvfs_status_rep {
    uint32_t rank;
    uint32_t role;           /* enum ipvfs_role bits */
    uint32_t pid;
    uint32_t state;          /* enum ipvfs_rank_state */
    uint64_t requests;       /* requests served since start (a target */
    uint64_t bytes_in;       /* rank adds its iSCSI commands, Data-Out and */
    uint64_t bytes_out;      /* Data-In): payload bytes in and out */
    uint64_t rss_kib;        /* resident set size */
    char host[64];
    /* Each rank is a supervisor that restarts its serving process (pid)
     * when it dies. */
    uint32_t supervisor_pid;
    uint32_t restarts;       /* serving processes started after the first */
    uint64_t uptime_ms;      /* of the serving process that answers */
    char last_exit[64];      /* how the previous one ended; "" if none did */
    char reason[96];         /* state DOWN: why; "" otherwise */
    char node[64];           /* the host's name (gethostname) */
    char cpus[32];           /* the PUs the rank is bound to (hwloc list); "" unbound */
};
static_assert(sizeof(struct ipvfs_status_rep) == 384, "status reply is 384 bytes");
/* A STATUS reply body may go on after struct ipvfs_status_rep with
 * per-client counters: a uint32_t count, a uint32_t reserved, then count
 * struct ipvfs_client_stat (clients named by HELLO's client_id). */
struct ipvfs_client_stat {
    uint32_t client_id;
    uint32_t reserved;
    uint64_t requests;
    uint64_t bytes_in;
    uint64_t bytes_out;
    uint64_t reads_waited;   /* I/O nodes: READs that waited for a place */
    uint64_t last_wait_seq;  /* the node's serve number of the latest of them */
};
/* A target rank's STATUS reply goes on after the client counters with
 * its L2 cache (--cache-l2): struct ipvfs_l2_status, all zero without
 * one.  Readers find it by the length left, as the volume section below
 * (servers older than it end after the client counters). */
struct ipvfs_l2_status {
    uint64_t capacity;       /* blocks of 64 KiB; 0: no L2 */
    uint64_t resident;       /* blocks cached now */
    uint64_t hits, misses;   /* whole blocks read */
    uint64_t dropped;        /* DPO reads that gave a block up (exclusive) */
    uint64_t demotes;        /* blocks an I/O node demoted, kept */
    uint64_t evictions;
    uint64_t reserved;
};
static_assert(sizeof(struct ipvfs_l2_status) == 64, "L2 status is 64 bytes");
/* An I/O node's STATUS reply goes on after the client counters with its
 * volume: struct ipvfs_volume_status, then nmembers struct
 * ipvfs_member_status (in member order).  Other ranks (and servers older
 * than this section) end after the client counters: a reader finds the
 * section by the length left.  state in struct ipvfs_status_rep is
 * IPVFS_STATE_DEGRADED while a member of the volume is not UP. */
enum ipvfs_member_state {
    IPVFS_MEMBER_UP = 0,
    IPVFS_MEMBER_DOWN = 1,          /* failed; logins retried with backoff */
    IPVFS_MEMBER_RECONNECTING = 2,  /* login in progress */
    IPVFS_MEMBER_REBUILDING = 3,    /* back, being rebuilt from the others */
};
struct ipvfs_volume_status {
    uint32_t level;          /* 0, 1 or 5 */
    uint32_t nmembers;
    uint32_t missing;        /* members not UP */
    uint32_t scrubbing;      /* 1 while a scrub runs */
    uint64_t size;           /* usable bytes */
    uint64_t chunk;          /* bytes per chunk on one member */
    uint64_t dirty_regions;  /* write-intent bits set now */
    uint64_t rebuild_done;   /* bytes rebuilt of rebuild_total, over the */
    uint64_t rebuild_total;  /* members REBUILDING now (0 and 0: none) */
    uint64_t scrub_done;     /* stripes, while scrubbing */
    uint64_t scrub_total;
    /* RAID-5 stripe writes since start by mode (iraid_write_counts): whole
     * stripes (no reads), read-modify-write, reconstruct-write (reads the
     * untouched rows), degraded (around a missing member). */
    uint64_t full_stripe_writes;
    uint64_t rmw_writes;
    uint64_t rcw_writes;
    uint64_t degraded_writes;
};
struct ipvfs_member_status {
    uint32_t index;
    uint32_t state;          /* enum ipvfs_member_state */
    uint64_t done_bytes;     /* current bytes on the member (= total when UP) */
    uint64_t total_bytes;    /* REBUILDING from the write-intent bitmap: only
                              * the bytes of the regions it missed, less
                              * than a member's stripes (a full rebuild) */
    char url[256];           /* iscsi://host:port/iqn/lun, NUL-terminated */
};
static_assert(sizeof(struct ipvfs_volume_status) == 104, "volume status is 104 bytes");
static_assert(sizeof(struct ipvfs_member_status) == 280, "member status is 280 bytes");
/* After the members, an I/O node's reply ends with its L1 cache (uCache's
 * L1 in front of the volume, write-back; capacity 0: off).  Counters since
 * start. */
struct ipvfs_l1_status {
    uint64_t capacity;       /* blocks of 64 KiB */
    uint64_t resident;       /* blocks cached now */
    uint64_t hits, misses;   /* volume reads served from L1, and filled */
    uint64_t bypasses;       /* reads that went around it (streams, misses
                              * not admitted to a fill, reads across blocks) */
    uint64_t evictions;
    uint64_t write_updates;  /* cached blocks writes updated or added */
    uint64_t dirty;          /* blocks not yet written back, now */
    uint64_t writes_absorbed; /* writes completed without volume I/O */
    uint64_t writebacks;     /* blocks written back */
    uint64_t writeback_ios;  /* volume writes that carried them (gathered) */
    uint64_t flushes;        /* flush rounds (syncs, background commits) */
    uint64_t demotes;        /* clean evictions handed down to the targets' L2 */
    uint64_t readahead_blocks; /* blocks prefetched by read-ahead */
    uint64_t readahead_hits;   /* of them, read */
    uint64_t readahead_wasted; /* of them, dropped unread */
};
static_assert(sizeof(struct ipvfs_l1_status) == 128, "L1 status is 128 bytes");

/* SHUTDOWN: empty body.  Sent to rank 0, it stops the whole cluster (I/O
 * nodes flush and log out, then targets flush and stop) and replies when
 * everything is synced.  A successful reply's body is empty, or a
 * NUL-terminated note for people naming the ranks that were down already
 * ("already down: 2 (why), ..."; from a rank stopped with LOCAL, why it
 * stayed down); readers that expect nothing ignore it.  With IPVFS_SHUTDOWN_LOCAL, used between ranks, only
 * the receiving rank stops. */
#define IPVFS_SHUTDOWN_LOCAL 0x1

/* SCRUB: empty body, to an I/O node.  Verifies its whole volume (RAID-5
 * parity, RAID-1 mirrors; nothing is repaired) in the background while the
 * node serves on, and replies when done with struct ipvfs_scrub_rep.
 * EOPNOTSUPP for RAID-0, EBUSY while a scrub runs, ECANCELED when the node
 * stops first, else the first I/O error.  One scrub reads every member
 * once: minutes for multi-GiB targets. */
struct ipvfs_scrub_rep {
    uint64_t mismatches;     /* stripes whose parity or mirrors disagree */
    uint64_t skipped;        /* stripes not checked: a member was missing */
};

/* REBUILD: body struct ipvfs_rebuild_req, then url_len bytes of an iSCSI
 * URL (no NUL), to an I/O node.  Takes member out of the volume and logs
 * in to it again (url_len 0: the same URL) or to the replacement LUN at
 * the URL, which rebuilds it from the others in the background (STATUS
 * shows the progress); replies once the replacement was checked.  EINVAL
 * for a bad index or URL, ENOSPC for a replacement smaller than a member
 * (or of another block size), EHOSTUNREACH (or the login's error) when
 * the replacement cannot be reached, EOPNOTSUPP for RAID-0, EBUSY when
 * another member is missing and the volume cannot lose one more. */
#define IPVFS_MAX_URL 255
struct ipvfs_rebuild_req {
    uint32_t member;
    uint32_t url_len;        /* at most IPVFS_MAX_URL */
};

/* QoS at the I/O nodes (backend/server/qos.h has the policy, chosen per
 * server with --qos).  Each READ and WRITE counts for the application
 * class of its connection, which QOS_CLASS names: body the class name
 * (1 to IPVFS_QOS_NAME_MAX printable bytes, no spaces, no NUL), empty
 * reply, any connection after AUTH, once or again (the later name
 * counts for later requests).  Clients send it once per connection to
 * an I/O node, right after AUTH: the name is IPVFS_QOS_CLASS, the hint
 * ipvfs_qos_class, or the job's (doc/qos.md).  A connection that names
 * none, or a class that has no SLO at that I/O node, counts for the
 * class "default".  The name may be followed by one NUL and a struct
 * ipvfs_qos_slo (the hints ipvfs_qos_rate and ipvfs_qos_latency): that
 * SLO is set for the class when it has none at that I/O node (QOS_SET
 * and the --qos-slo file win; a later hint changes nothing); EINVAL for
 * an SLO out of range or a tail of another size, with the reason.
 * QOS_SET (the key or a proven root): body struct ipvfs_qos_set_req then
 * name_len bytes of class name; empty reply; sets or creates that class's
 * SLO at this I/O node (EINVAL: a rate or latency out of range, with the
 * reason; ENOSPC: IPVFS_QOS_MAX_CLASSES classes already).
 * QOS_STATUS (any connection after AUTH): empty body; reply struct
 * ipvfs_qos_status_rep then nclasses struct ipvfs_qos_class_status
 * (class 0 is "default"), the figures of the last complete window. */
#define IPVFS_QOS_NAME_MAX 63u
#define IPVFS_QOS_MAX_CLASSES 32u
struct ipvfs_qos_set_req {
    uint64_t rate_kbps;      /* throughput, in 1000 bytes per second */
    uint64_t latency_us;     /* 95th percentile latency bound */
    uint32_t name_len;
    uint32_t reserved;
};
struct ipvfs_qos_slo {
    uint64_t rate_kbps;      /* as in struct ipvfs_qos_set_req */
    uint64_t latency_us;
};
enum ipvfs_qos_policy {
    IPVFS_QOS_FIFO = 0,
    IPVFS_QOS_DSFQ = 1,
    IPVFS_QOS_TWO_LEVEL = 2,
};
struct ipvfs_qos_status_rep {
    uint32_t policy;         /* enum ipvfs_qos_policy */
    uint32_t nclasses;
    uint32_t depth;          /* requests allowed in the store (EDF depth) */
    uint32_t outstanding;    /* requests in the store now */
    uint32_t queued;         /* requests waiting in the scheduler now */
    uint32_t overloaded;     /* the last window's verdict (two-level) */
    uint64_t window_ms;
    int64_t credit_mreq;     /* DSFQ credit left (two-level), 1/1000 requests */
    uint64_t refills;        /* credit refills on idleness since start */
    uint64_t windows;        /* windows closed since start */
};
static_assert(sizeof(struct ipvfs_qos_status_rep) == 56, "QoS status is 56 bytes");
struct ipvfs_qos_class_status {
    char name[IPVFS_QOS_NAME_MAX + 1];
    uint64_t rate_kbps;      /* SLO; 0: none */
    uint64_t latency_us;
    uint64_t issue_kbps;     /* what arrived in the last window */
    uint64_t served_kbps;    /* what completed in it */
    uint64_t p95_us;         /* of the requests completed in it; 0: none */
    int32_t met;             /* 1 p95 within the bound, 0 not, -1 no SLO or no request */
    uint32_t queued;         /* waiting now */
    uint64_t windows;        /* windows with an SLO and requests since start */
    uint64_t windows_met;    /* of them, the bound held */
    uint64_t requests;       /* completed since start */
    uint64_t max_kbps;       /* the class internal: its MAX (0 unlimited); others 0 */
};
static_assert(sizeof(struct ipvfs_qos_class_status) == 144, "QoS class status is 144 bytes");

/* SHFP: MPI-IO shared file pointers, kept in the metadata rank's memory
 * (not durable: a restart forgets them, as it ends every open).  A pointer
 * belongs to one open instance of a file, named by (handle, instance): the
 * instance is any 64-bit value the ranks of that open agree on (ad_ipvfs
 * hashes ROMIO's per-open random shared_fp_fname).  A pointer that was
 * never SET reads as 0.  Body struct ipvfs_shfp_req; reply body struct
 * ipvfs_shfp_rep with the value before the operation:
 *   SET        pointer = value (value >= 0)
 *   FETCH_ADD  pointer += value (EINVAL when the result would be negative
 *              or overflow; the pointer is unchanged then)
 *   RELEASE    forget the pointer (previous: its last value, 0 if unknown)
 * Operations on one pointer take effect one at a time in the order the
 * metadata rank receives them.  meta_verifier (SHFP, LOCK, UNLOCK): the
 * metadata rank's verifier when the client opened the file (its HELLO
 * reply's); another one means the rank restarted since and forgot the
 * open's pointers and locks: ESTALE, nothing done (0: not checked). */
enum ipvfs_shfp_op {
    IPVFS_SHFP_SET = 1,
    IPVFS_SHFP_FETCH_ADD = 2,
    IPVFS_SHFP_RELEASE = 3,
};
struct ipvfs_shfp_req {
    uint64_t handle;
    uint64_t instance;
    uint32_t op;             /* enum ipvfs_shfp_op */
    uint32_t reserved;
    int64_t value;
    uint64_t meta_verifier;
};
struct ipvfs_shfp_rep {
    int64_t previous;
};

/* LOCK and UNLOCK: byte-range locks of a file for MPI atomic mode, served
 * by the metadata rank; body struct ipvfs_lock_req, empty reply body.  A
 * lock covers [offset, offset + len) of the file's logical bytes (len > 0,
 * no overflow: EINVAL); shared locks (exclusive 0) overlap each other,
 * an exclusive one overlaps nothing.  Locks are advisory: READ and WRITE
 * do not look at them.
 * - LOCK replies when the lock is granted, which may take any time: the
 *   connection waits (its next requests are read after the grant).  A
 *   request is granted when it conflicts with no granted lock and with no
 *   request that arrived before it and still waits, so conflicting
 *   requests are granted in arrival (FIFO) order and none starves.
 * - UNLOCK releases a granted lock taken on the same connection with the
 *   same handle, offset, len and exclusive (ENOENT if there is none).
 * - Closing a connection releases its locks and withdraws its waiting
 *   request, so a client that dies never blocks the others.
 * A client that asks for a lock overlapping one it holds on the same
 * connection waits for itself forever: holders must not nest locks. */
struct ipvfs_lock_req {
    uint64_t handle;
    uint64_t offset;
    uint64_t len;
    uint32_t exclusive;      /* 1: exclusive (writers), 0: shared (readers) */
    uint32_t reserved;
    uint64_t meta_verifier;  /* as SHFP's */
};

#endif
