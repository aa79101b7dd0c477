#include "backend/server/options.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/server/qos.h"
#include "cache/cache.h"
#include "common/proto.h"
#include "common/size.h"

enum { OPT_IO_NODES = 256, OPT_TARGETS, OPT_RAID, OPT_DATA, OPT_TARGET_SIZE, OPT_LISTEN,
       OPT_MAP, OPT_STRIPE_UNIT, OPT_CHUNK_SIZE, OPT_NO_BIND, OPT_DIRTY_DEGRADED,
       OPT_MEMBER, OPT_LOG_DIR, OPT_LOG_SIZE, OPT_CACHE_L1, OPT_CACHE_L2, OPT_CACHE_L2_POLICY, OPT_TRACE,
       OPT_READAHEAD, OPT_META_PORT, OPT_ROOT_SQUASH, OPT_CAP_LIFETIME, OPT_MUNGE_SOCKET,
       OPT_QOS, OPT_QOS_WINDOW, OPT_QOS_SLO, OPT_QOS_INTERNAL, OPT_STORE_RATE, OPT_EMULATE_DISK, OPT_READ_PLACES, OPT_HELP };

static const struct option long_opts[] = {
    { "io-nodes", required_argument, NULL, OPT_IO_NODES },
    { "targets-per-io", required_argument, NULL, OPT_TARGETS },
    { "raid", required_argument, NULL, OPT_RAID },
    { "data", required_argument, NULL, OPT_DATA },
    { "target-size", required_argument, NULL, OPT_TARGET_SIZE },
    { "listen", required_argument, NULL, OPT_LISTEN },
    { "meta-port", required_argument, NULL, OPT_META_PORT },
    { "map", required_argument, NULL, OPT_MAP },
    { "stripe-unit", required_argument, NULL, OPT_STRIPE_UNIT },
    { "chunk-size", required_argument, NULL, OPT_CHUNK_SIZE },
    { "no-bind", no_argument, NULL, OPT_NO_BIND },
    { "start-dirty-degraded", no_argument, NULL, OPT_DIRTY_DEGRADED },
    { "member", required_argument, NULL, OPT_MEMBER },
    { "log-dir", required_argument, NULL, OPT_LOG_DIR },
    { "log-size", required_argument, NULL, OPT_LOG_SIZE },
    { "cache-l1", required_argument, NULL, OPT_CACHE_L1 },
    { "cache-l2", required_argument, NULL, OPT_CACHE_L2 },
    { "cache-l2-policy", required_argument, NULL, OPT_CACHE_L2_POLICY },
    { "trace", required_argument, NULL, OPT_TRACE },
    { "readahead", required_argument, NULL, OPT_READAHEAD },
    { "read-places", required_argument, NULL, OPT_READ_PLACES },
    { "root-squash", no_argument, NULL, OPT_ROOT_SQUASH },
    { "cap-lifetime", required_argument, NULL, OPT_CAP_LIFETIME },
    { "munge-socket", required_argument, NULL, OPT_MUNGE_SOCKET },
    { "qos", required_argument, NULL, OPT_QOS },
    { "qos-window", required_argument, NULL, OPT_QOS_WINDOW },
    { "qos-slo", required_argument, NULL, OPT_QOS_SLO },
    { "qos-internal", required_argument, NULL, OPT_QOS_INTERNAL },
    { "store-rate", required_argument, NULL, OPT_STORE_RATE },
    { "emulate-disk", required_argument, NULL, OPT_EMULATE_DISK },
    { "help", no_argument, NULL, OPT_HELP },
    { NULL, 0, NULL, 0 },
};

const char *server_usage(void)
{
    return "usage: mpiexec -n N ipvfs-server --data DIR [options]\n"
           "  N must equal NIO * (1 + NT)\n"
           "  --io-nodes NIO        I/O nodes (default 1)\n"
           "  --targets-per-io NT   iSCSI target ranks behind each I/O node (default 2)\n"
           "  --raid 0|1|5          iRAID level of each I/O node's volume (default 5 when\n"
           "                        NT >= 3, else 0; RAID-1 needs NT >= 2, RAID-5 NT >= 3)\n"
           "  --data DIR            state directory; rank r keeps DIR/rank-<r>/ (required)\n"
           "  --target-size SIZE    backing file of each target, sparse (default 4G)\n"
           "  --listen ADDR|IFACE|auto  where every rank listens (default auto: 127.0.0.1\n"
           "                        when all ranks share one host, else the address of\n"
           "                        the interface that reaches the other ranks' hosts;\n"
           "                        IFACE: that interface's IPv4 address; 0.0.0.0: every\n"
           "                        interface, the map naming the address auto picks)\n"
           "  --meta-port PORT      rank 0's port, for clients that get the map from it\n"
           "                        (IPVFS_MAP=HOST:PORT; default any free port)\n"
           "  --map FILE            where rank 0 writes the server map (default DIR/ipvfs.map)\n"
           "  --stripe-unit SIZE    default stripe unit across I/O nodes (default 64K)\n"
           "  --chunk-size SIZE     iRAID chunk on one target (default 64K)\n"
           "  --no-bind             do not bind ranks to cores\n"
           "  --start-dirty-degraded  open a RAID-5 volume that crashed mid-write while a\n"
           "                        target is missing; data of that target in the regions\n"
           "                        being written may be wrong (refused without it)\n"
           "  --member IO:K=URL     member K of I/O node IO's volume is the external iSCSI\n"
           "                        LUN URL (iscsi://HOST[:PORT]/IQN/LUN, e.g. tgtd)\n"
           "                        instead of its target rank's LUN; repeatable.  N is\n"
           "                        unchanged: that target rank still runs and serves its\n"
           "                        LUN as an unused spare.  A volume with an external\n"
           "                        member is resynced entirely on its first start\n"
           "  --log-dir DIR         rank r logs to DIR/rank-<r>.log, renamed to .log.1 when\n"
           "                        full (default DATA/log); mpiexec's output gets only\n"
           "                        the start-up line and fatal errors\n"
           "  --log-size SIZE       bytes per log file (default 16M; 2 files per rank)\n"
           "  --cache-l1 SIZE       each I/O node's cache of its volume's 64 KiB blocks\n"
           "                        (uCache's L1, LRU, write-back; default 64M, 0 = off,\n"
           "                        at most half of this machine's memory)\n"
           "  --readahead SIZE      sequential read-ahead window of each I/O node, per\n"
           "                        stream, into the L1 (default 4M, 0 = off, at most 1G;\n"
           "                        nothing without an L1)\n"
           "  --read-places N|auto  READs each I/O node lets into its store at once, per\n"
           "                        target, 1 to 16 (default auto: 1 for a target on the\n"
           "                        I/O node's host, 2 for one elsewhere, whose disk\n"
           "                        then works while the READ before crosses the link)\n"
           "  --cache-l2 SIZE       each target rank's cache of 64 KiB blocks (uCache's\n"
           "                        L2, write-through; default 0 = off; with it the\n"
           "                        LUN file is opened with O_DIRECT)\n"
           "  --cache-l2-policy P   lru, demote (default: exclusive for reads the I/O\n"
           "                        node marks DPO, LRU otherwise), mq or demote-mq\n"
           "  --trace FILE          each I/O node appends its READ/WRITE pairs to\n"
           "                        FILE.io<N> in ipvfs-cachesim's trace format\n"
           "  --root-squash         a user proven as root (kernel or MUNGE) is nobody\n"
           "                        (65534) to the metadata rank; holders of the key\n"
           "                        (DATA/secret) stay root\n"
           "  --cap-lifetime SECS   how long a capability the metadata rank grants at\n"
           "                        open stays valid at the I/O nodes (default 43200;\n"
           "                        clients renew them by opening again)\n"
           "  --munge-socket PATH   munged's socket for MUNGE credentials (default\n"
           "                        libmunge's, /run/munge/munge.socket.2)\n"
           "  --qos POLICY          how each I/O node orders READs and WRITEs of\n"
           "                        application classes: fifo, dsfq or two-level\n"
           "                        (default: DSFQ shares, EDF latency bounds; as\n"
           "                        fifo while no class has an SLO)\n"
           "  --qos-window MS       the QoS time window: measures and depth control\n"
           "                        (default 1000, 100 to 60000)\n"
           "  --qos-slo FILE        SLOs each I/O node sets at start, one class a line:\n"
           "                        CLASS RATE LATENCY (e.g. app1 40MB/s 100ms)\n"
           "  --qos-internal MIN:MAX  rebuild and scrub as the QoS class internal: MIN\n"
           "                        MB/s while applications do I/O, else up to MAX\n"
           "                        (0: unlimited; default: unpaced)\n"
           "  --store-rate MBPS     benchmarks: each I/O node's READs and WRITEs complete\n"
           "                        no faster than a store serving one at a time at\n"
           "                        MBPS MB/s (1 to 100000; default off)\n"
           "  --emulate-disk DISK   benchmarks and tests: each target's LUN file takes\n"
           "                        the service time of DISK (st318452lw, the papers'),\n"
           "                        one io at a time\n"
           "  --help                print this text\n"
           "SIZE takes a K, M, G or T suffix (powers of 1024).\n";
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

static int parse_count(const char *name, const char *text, uint32_t min, uint32_t max,
                       uint32_t *out, char *err, size_t errlen)
{
    unsigned long v;
    char *end;

    errno = 0;
    v = strtoul(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || *end != '\0' || errno == ERANGE || v < min ||
        v > max)
        return fail(err, errlen, "--%s: '%s' is not a number from %u to %u", name, text, min,
                    max);
    *out = (uint32_t)v;
    return 0;
}

static int parse_bytes(const char *name, const char *text, uint64_t min, uint64_t max,
                       uint64_t align, uint64_t *out, char *err, size_t errlen)
{
    uint64_t v;
    int rc = size_parse(text, &v);

    if (rc == -ERANGE)
        return fail(err, errlen, "--%s: '%s' does not fit 64 bits", name, text);
    if (rc < 0)
        return fail(err, errlen, "--%s: '%s' is not a size (" SIZE_RULE ")", name, text);
    if (v < min || v > max)
        return fail(err, errlen, "--%s: %s is out of range (%llu to %llu bytes)", name, text,
                    (unsigned long long)min, (unsigned long long)max);
    if (v % align)
        return fail(err, errlen, "--%s: %s is not a multiple of %llu bytes", name, text,
                    (unsigned long long)align);
    *out = v;
    return 0;
}

static int copy_string(const char *name, const char *text, char *dst, size_t dstlen, char *err,
                       size_t errlen)
{
    if (text[0] == '\0')
        return fail(err, errlen, "--%s: empty value", name);
    if (strlen(text) >= dstlen)
        return fail(err, errlen, "--%s: value longer than %zu bytes", name, dstlen - 1);
    strcpy(dst, text);
    return 0;
}

int server_check_iscsi_url(const char *url)
{
    const char *host = url + 8, *iqn, *lun;
    char *end;
    unsigned long v;

    if (strncmp(url, "iscsi://", 8) != 0 || !(iqn = strchr(host, '/')) || iqn == host ||
        !(lun = strchr(iqn + 1, '/')) || lun == iqn + 1)
        return -EINVAL;
    lun++;
    errno = 0;
    v = strtoul(lun, &end, 10);
    if (!isdigit((unsigned char)lun[0]) || *end != '\0' || errno == ERANGE || v > 255)
        return -EINVAL;
    return 0;
}

const char *server_member_url(const struct server_opts *o, uint32_t io, uint32_t k)
{
    for (uint32_t i = 0; i < o->next; i++)
        if (o->ext[i].io == io && o->ext[i].k == k)
            return o->ext[i].url;
    return NULL;
}

/* --member IO:K=URL; IO and K are checked against NIO and NT once every
 * option is read (check_members). */
static int parse_member(const char *arg, struct server_opts *o, char *err, size_t errlen)
{
    struct server_member *m;
    unsigned long io, k;
    const char *url;
    char *end;

    if (o->next == SERVER_MAX_EXTERNAL)
        return fail(err, errlen, "--member: at most %u external members", SERVER_MAX_EXTERNAL);
    m = &o->ext[o->next];
    errno = 0;
    io = strtoul(arg, &end, 10);
    if (!isdigit((unsigned char)arg[0]) || *end != ':' || errno == ERANGE || io > UINT32_MAX)
        return fail(err, errlen, "--member: '%s' is not IO:K=URL", arg);
    url = end + 1;
    k = strtoul(url, &end, 10);
    if (!isdigit((unsigned char)url[0]) || *end != '=' || errno == ERANGE || k > UINT32_MAX)
        return fail(err, errlen, "--member: '%s' is not IO:K=URL", arg);
    url = end + 1;
    if (strlen(url) >= sizeof(m->url))
        return fail(err, errlen, "--member: URL longer than %zu bytes", sizeof(m->url) - 1);
    if (server_check_iscsi_url(url) < 0)
        return fail(err, errlen, "--member: '%s' is not iscsi://HOST[:PORT]/IQN/LUN (LUN 0-255)",
                    url);
    if (server_member_url(o, (uint32_t)io, (uint32_t)k))
        return fail(err, errlen, "--member: member %lu of I/O node %lu given twice", k, io);
    m->io = (uint32_t)io;
    m->k = (uint32_t)k;
    strcpy(m->url, url);
    o->next++;
    return 0;
}

/* --cache-l1, --cache-l2: 0, or whole 64 KiB blocks, and no more than
 * half of the memory of this machine (every rank on it may take that
 * much). */
static int parse_cache(const char *name, const char *arg, uint64_t *out, char *err,
                       size_t errlen)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t half = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : UINT64_MAX;

    if (parse_bytes(name, arg, 0, SERVER_MAX_CACHE_L1, 64u << 10, out, err, errlen) < 0)
        return -EINVAL;
    if (*out > half)
        return fail(err, errlen, "--%s: %s is more than half of this machine's memory "
                    "(%llu MiB)", name, arg, (unsigned long long)(half >> 20));
    return 0;
}

/* --qos-slo: the file is read here too, so that a bad line stops the
 * server before it starts (the I/O nodes read it again at start); the
 * path is made absolute, the servers' working directory being theirs. */
static int parse_qos_slo(const char *arg, struct server_opts *o, char *err, size_t errlen)
{
    char path[PATH_MAX], msg[300];
    struct qos_sched *check;
    int rc;

    if (arg[0] == '\0')
        return fail(err, errlen, "--qos-slo: empty value");
    if (!realpath(arg, path))
        return fail(err, errlen, "--qos-slo %s: %s", arg, strerror(errno));
    if (!(check = malloc(sizeof(*check))))
        return fail(err, errlen, "--qos-slo: out of memory");
    qos_init(check, QOS_FIFO, QOS_DEFAULT_WINDOW_MS);
    rc = qos_load_slo(check, path, msg, sizeof(msg));
    free(check);
    if (rc < 0)
        return fail(err, errlen, "--qos-slo %s", msg);
    return copy_string("qos-slo", path, o->qos_slo, sizeof(o->qos_slo), err, errlen);
}

/* --qos-internal MIN:MAX (MB/s; qos_set_internal() has the rules). */
static int parse_qos_internal(const char *arg, struct server_opts *o, char *err, size_t errlen)
{
    char *end, *max_text, msg[200];
    struct qos_sched *check;
    double min, max;
    int rc;

    errno = 0;
    min = strtod(arg, &end);
    if (end == arg || *end != ':' || errno == ERANGE)
        return fail(err, errlen, "--qos-internal %s: give MIN:MAX in MB/s (e.g. 5:50)", arg);
    max_text = end + 1;
    max = strtod(max_text, &end);
    if (*end || errno == ERANGE || end == max_text)
        return fail(err, errlen, "--qos-internal %s: give MIN:MAX in MB/s (e.g. 5:50)", arg);
    if (!(check = malloc(sizeof(*check))))
        return fail(err, errlen, "--qos-internal: out of memory");
    qos_init(check, QOS_FIFO, QOS_DEFAULT_WINDOW_MS);
    rc = qos_set_internal(check, min, max, msg, sizeof(msg));
    free(check);
    if (rc < 0)
        return fail(err, errlen, "--qos-internal %s", msg);
    o->qos_internal_min = min;
    o->qos_internal_max = max;
    return 0;
}

static int parse_l2_policy(const char *arg, struct server_opts *o, char *err, size_t errlen)
{
    if (!cache_policy_find(arg))
        return fail(err, errlen, "--cache-l2-policy: '%s' is none of lru, demote, mq, "
                    "demote-mq", arg);
    return copy_string("cache-l2-policy", arg, o->cache_l2_policy, sizeof(o->cache_l2_policy),
                       err, errlen);
}

static int check_members(const struct server_opts *o, char *err, size_t errlen)
{
    for (uint32_t i = 0; i < o->next; i++) {
        if (o->ext[i].io >= o->nio)
            return fail(err, errlen, "--member %u:%u: no I/O node %u (--io-nodes is %u)",
                        o->ext[i].io, o->ext[i].k, o->ext[i].io, o->nio);
        if (o->ext[i].k >= o->nt)
            return fail(err, errlen, "--member %u:%u: no member %u (--targets-per-io is %u)",
                        o->ext[i].io, o->ext[i].k, o->ext[i].k, o->nt);
    }
    return 0;
}

static int apply_opt(int c, const char *arg, struct server_opts *o, char *err, size_t errlen)
{
    uint32_t raid, port;

    switch (c) {
    case OPT_IO_NODES:
        return parse_count("io-nodes", arg, 1, 1024, &o->nio, err, errlen);
    case OPT_TARGETS:
        return parse_count("targets-per-io", arg, 1, 64, &o->nt, err, errlen);
    case OPT_RAID:
        if (parse_count("raid", arg, 0, 5, &raid, err, errlen) < 0 ||
            (raid != 0 && raid != 1 && raid != 5))
            return fail(err, errlen, "--raid: '%s' is not one of 0, 1, 5", arg);
        o->raid = (int)raid;
        return 0;
    case OPT_DATA:
        return copy_string("data", arg, o->data_dir, sizeof(o->data_dir) - 64, err, errlen);
    case OPT_TARGET_SIZE:
        return parse_bytes("target-size", arg, 1ull << 20, 1ull << 50, 4096, &o->target_size,
                           err, errlen);
    case OPT_LISTEN:
        return copy_string("listen", arg, o->listen, sizeof(o->listen), err, errlen);
    case OPT_META_PORT:
        if (parse_count("meta-port", arg, 1, 65535, &port, err, errlen) < 0)
            return -EINVAL;
        o->meta_port = (uint16_t)port;
        return 0;
    case OPT_MAP:
        return copy_string("map", arg, o->map_path, sizeof(o->map_path), err, errlen);
    case OPT_STRIPE_UNIT:
        return parse_bytes("stripe-unit", arg, 1, SERVER_MAX_STRIPE_UNIT, 1, &o->stripe_unit,
                           err, errlen);
    case OPT_CHUNK_SIZE:
        return parse_bytes("chunk-size", arg, 4096, 64ull << 20, 4096, &o->chunk_size, err,
                           errlen);
    case OPT_NO_BIND:
        o->no_bind = 1;
        return 0;
    case OPT_ROOT_SQUASH:
        o->root_squash = 1;
        return 0;
    case OPT_CAP_LIFETIME:
        return parse_count("cap-lifetime", arg, 10, 30u * 86400, &o->cap_lifetime_s, err,
                           errlen);
    case OPT_MUNGE_SOCKET:
        return copy_string("munge-socket", arg, o->munge_socket, sizeof(o->munge_socket), err,
                           errlen);
    case OPT_DIRTY_DEGRADED:
        o->start_dirty_degraded = 1;
        return 0;
    case OPT_MEMBER:
        return parse_member(arg, o, err, errlen);
    case OPT_LOG_DIR:
        return copy_string("log-dir", arg, o->log_dir, sizeof(o->log_dir) - 64, err, errlen);
    case OPT_LOG_SIZE:
        return parse_bytes("log-size", arg, 16u << 10, 1ull << 40, 1, &o->log_size, err, errlen);
    case OPT_CACHE_L1:
        return parse_cache("cache-l1", arg, &o->cache_l1, err, errlen);
    case OPT_CACHE_L2:
        return parse_cache("cache-l2", arg, &o->cache_l2, err, errlen);
    case OPT_CACHE_L2_POLICY:
        return parse_l2_policy(arg, o, err, errlen);
    case OPT_READAHEAD:
        return parse_bytes("readahead", arg, 0, IPVFS_MAX_READAHEAD, 1, &o->readahead, err,
                           errlen);
    case OPT_READ_PLACES:
        if (strcmp(arg, "auto") == 0) {
            o->read_places = 0;
            return 0;
        }
        if (parse_count("read-places", arg, 1, SERVER_MAX_READ_PLACES, &o->read_places, err,
                        errlen) < 0)
            return fail(err, errlen, "--read-places: '%s' is neither auto nor a number from 1 "
                        "to %u", arg, SERVER_MAX_READ_PLACES);
        return 0;
    case OPT_TRACE:
        return copy_string("trace", arg, o->trace_path, sizeof(o->trace_path) - 16, err, errlen);
    case OPT_QOS:
        if (strcmp(arg, "fifo") && strcmp(arg, "dsfq") && strcmp(arg, "two-level"))
            return fail(err, errlen, "--qos %s: the policies are fifo, dsfq and two-level", arg);
        return copy_string("qos", arg, o->qos, sizeof(o->qos), err, errlen);
    case OPT_QOS_WINDOW:
        return parse_count("qos-window", arg, 100, 60000, &o->qos_window_ms, err, errlen);
    case OPT_QOS_SLO:
        return parse_qos_slo(arg, o, err, errlen);
    case OPT_QOS_INTERNAL:
        return parse_qos_internal(arg, o, err, errlen);
    case OPT_STORE_RATE:
        return parse_count("store-rate", arg, 1, 100000, &o->store_rate_mbps, err, errlen);
    case OPT_EMULATE_DISK:
        /* the names of backend/iscsi's tgt_disk_preset() */
        if (strcmp(arg, "st318452lw") != 0)
            return fail(err, errlen, "--emulate-disk: '%s' is not a known disk (st318452lw)",
                        arg);
        return copy_string("emulate-disk", arg, o->emulate_disk, sizeof(o->emulate_disk), err,
                           errlen);
    case OPT_HELP:
        o->help = 1;
        return 0;
    default:
        return fail(err, errlen, "unknown option (try --help)");
    }
}

static void set_defaults(struct server_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->nio = 1;
    o->nt = 2;
    o->raid = -1; /* decided from NT once every option is read */
    o->target_size = SERVER_DEFAULT_TARGET_SIZE;
    strcpy(o->listen, "auto");
    o->stripe_unit = IPVFS_DEFAULT_STRIPE_UNIT;
    o->chunk_size = 64u << 10;
    o->log_size = SERVER_DEFAULT_LOG_SIZE;
    o->cache_l1 = SERVER_DEFAULT_CACHE_L1;
    o->readahead = SERVER_DEFAULT_READAHEAD;
    o->read_places = 0; /* auto */
    o->cap_lifetime_s = SERVER_DEFAULT_CAP_LIFETIME_S;
    strcpy(o->qos, "two-level");
    o->qos_window_ms = 1000;
}

/* RAID-5 by default (the papers'), but parity over fewer than 3 members is
 * no use: RAID-0 there.  An explicit level needs its minimum of members. */
static int decide_raid(struct server_opts *o, char *err, size_t errlen)
{
    uint32_t need;

    if (o->raid < 0) {
        o->raid = o->nt >= 3 ? 5 : 0;
        return 0;
    }
    need = o->raid == 5 ? 3 : o->raid == 1 ? 2 : 1;
    if (o->nt < need)
        return fail(err, errlen, "--raid %d needs --targets-per-io %u or more (got %u)", o->raid,
                    need, o->nt);
    return 0;
}

int server_opts_parse(int argc, char **argv, struct server_opts *out, char *err, size_t errlen)
{
    int c, rc;

    set_defaults(out);
    err[0] = '\0';
    optind = 0; /* 0 also makes glibc re-initialise its internal state */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
        if (c == '?')
            return fail(err, errlen, "unknown option '%s' (try --help)", argv[optind - 1]);
        if (c == ':')
            return fail(err, errlen, "option '%s' needs a value", argv[optind - 1]);
        if ((rc = apply_opt(c, optarg, out, err, errlen)) < 0)
            return rc;
    }
    if (optind < argc)
        return fail(err, errlen, "unexpected argument '%s' (try --help)", argv[optind]);
    if (out->help)
        return 0;
    if (out->data_dir[0] == '\0')
        return fail(err, errlen, "--data DIR is required (try --help)");
    if ((rc = decide_raid(out, err, errlen)) < 0 || (rc = check_members(out, err, errlen)) < 0)
        return rc;
    if (out->map_path[0] == '\0')
        snprintf(out->map_path, sizeof(out->map_path), "%s/ipvfs.map", out->data_dir);
    if (out->log_dir[0] == '\0')
        snprintf(out->log_dir, sizeof(out->log_dir), "%s/log", out->data_dir);
    return 0;
}
