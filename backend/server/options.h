/* Command-line options of ipvfs-server.
 *
 * Every rank parses the same argv with server_opts_parse(); rank 0 alone
 * reports the verdict (see main.c), so that a bad option gives one clear
 * message and every rank exits alike.  Pure code, no MPI: unit-tested in
 * test/test_server_options.c. */
#ifndef IPVFS_SERVER_OPTIONS_H
#define IPVFS_SERVER_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#define SERVER_DEFAULT_TARGET_SIZE (4ull << 30)
#define SERVER_MAX_STRIPE_UNIT     (1ull << 30)
#define SERVER_MAX_EXTERNAL        16   /* --member options */
#define SERVER_MEMBER_URL_MAX      256  /* bytes with the NUL (member status) */
#define SERVER_DEFAULT_LOG_SIZE    (16ull << 20)
#define SERVER_DEFAULT_CACHE_L1    (64ull << 20)
#define SERVER_MAX_CACHE_L1        (1ull << 40)
#define SERVER_DEFAULT_READAHEAD   (4ull << 20)
#define SERVER_MAX_READ_PLACES     16   /* --read-places, per target */
#define SERVER_DEFAULT_CAP_LIFETIME_S 43200u

/* --member IO:K=URL: member K of I/O node IO's volume is the external iSCSI
 * LUN at URL instead of the LUN of its target rank.  The rank count stays
 * NIO * (1 + NT): the target rank of that slot still starts and serves its
 * own LUN, unused by the volume (a spare: `ipvfs-ctl rebuild IO K URL` can
 * take it). */
struct server_member {
    uint32_t io, k;
    char url[SERVER_MEMBER_URL_MAX];
};

struct server_opts {
    uint32_t nio;            /* --io-nodes */
    uint32_t nt;             /* --targets-per-io */
    int raid;                /* --raid; default 5 when nt >= 3, else 0 */
    char data_dir[1024];     /* --data (required) */
    uint64_t target_size;    /* --target-size */
    char listen[64];         /* --listen ADDR|IFACE|auto (listen.h) */
    uint16_t meta_port;      /* --meta-port: rank 0's port; 0 = any free one */
    char map_path[1100];     /* --map, default DATA/ipvfs.map */
    char log_dir[1100];      /* --log-dir, default DATA/log: rank r logs to
                              * rank-<r>.log there (and rank-<r>.log.1) */
    uint64_t log_size;       /* --log-size: bytes per log file */
    uint64_t stripe_unit;    /* --stripe-unit */
    uint64_t chunk_size;     /* --chunk-size */
    int no_bind;             /* --no-bind */
    int start_dirty_degraded; /* --start-dirty-degraded: see struct iraid_config */
    uint64_t cache_l1;       /* --cache-l1: bytes, 0 = off */
    uint64_t readahead;      /* --readahead: window limit in bytes, 0 = off */
    uint32_t read_places;    /* --read-places: READs in the store at once, per
                              * target; 0 = auto (ionode_store.c) */
    uint64_t cache_l2;       /* --cache-l2: bytes per target rank, 0 = off */
    char cache_l2_policy[16]; /* --cache-l2-policy; "" = the target's default */
    char trace_path[1024];   /* --trace: I/O node N writes TRACE.ioN; "" = none */
    int root_squash;         /* --root-squash: proven root is nobody (access.h) */
    uint32_t cap_lifetime_s; /* --cap-lifetime: seconds a capability lasts */
    char munge_socket[256];  /* --munge-socket; "" = libmunge's default */
    char qos[16];            /* --qos: fifo, dsfq or two-level (qos.h) */
    uint32_t qos_window_ms;  /* --qos-window */
    char qos_slo[1024];      /* --qos-slo: SLO file, absolute; "" = none */
    double qos_internal_min, qos_internal_max; /* --qos-internal MB/s; min 0 = unpaced */
    uint32_t store_rate_mbps; /* --store-rate: emulate a store of this many MB/s; 0 = off */
    char emulate_disk[32];   /* --emulate-disk: a tgt_disk_preset() name; "" = none */
    int help;                /* --help: print usage, start nothing */
    struct server_member ext[SERVER_MAX_EXTERNAL]; /* --member, in the given order */
    uint32_t next;
};

/* Parses argv into *out.  Returns 0, or -EINVAL with a one-line message in
 * err naming the offending option.  getopt state is reset first, so the
 * function may be called more than once in a process (tests do). */
int server_opts_parse(int argc, char **argv, struct server_opts *out, char *err, size_t errlen);

/* URL of member k of I/O node io when --member made it external, else NULL. */
const char *server_member_url(const struct server_opts *o, uint32_t io, uint32_t k);

/* Whether url has the shape iscsi://HOST[:PORT]/IQN/LUN (LUN 0 to 255);
 * reachability is for the login to tell. */
int server_check_iscsi_url(const char *url);

/* The usage text printed by --help. */
const char *server_usage(void);

#endif
