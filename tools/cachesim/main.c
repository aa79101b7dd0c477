/* ipvfs-cachesim: PVFS's one cache level against uCache's two over a
 * synthetic workload or a trace (the model is in cachesim.h).
 *
 *   ipvfs-cachesim (--workload cello92|httpd|db2 | --trace FILE) [options]
 *
 * Exit status: 0 success, 1 failure (message on stderr), 2 usage error. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/size.h"
#include "tools/cachesim/cachesim.h"

#define MB ((uint64_t)1 << 20)
/* The L2 policy with the best cumulative hit ratios on all three workloads
 * (benchmarks/results/ucache-sim.md). */
#define SIM_DEFAULT_L2 "demote-mq"

struct opts {
    const char *workload, *trace, *emit;
    int replay_live;            /* --replay: 1 live, 0 requests, -1 by the trace's header */
    struct live_config live_overrides;   /* --l2, --l2-policy as given */
    struct sim_config cfg;
    uint64_t requests, seed;
    int json;
};

static int usage(void)
{
    fputs("usage: ipvfs-cachesim (--workload cello92|httpd|db2 | --trace FILE) [options]\n"
          "  --servers S       nodes in all (PVFS: S servers; uCache: S/(1+T) I/O nodes\n"
          "                    with T targets each)\n"
          "  --targets T       targets per I/O node\n"
          "  --l1 SIZE         L1 (I/O node) cache per I/O node\n"
          "  --l2 SIZE         L2 cache per target\n"
          "  --pvfs SIZE       PVFS cache per server\n"
          "  --l2-policy P     lru (inclusive), demote (exclusive), mq (inclusive) or\n"
          "                    demote-mq (exclusive, frequency-aware; the default)\n"
          "  --requests N      requests a workload generates (its default: the paper's\n"
          "                    trace length); fewer for quick runs\n"
          "  --seed N          the workload's random seed (default 1)\n"
          "  --emit-trace FILE also write the requests played, in the trace format\n"
          "  --replay MODE     for a version-2 trace (a live I/O node's --trace): live\n"
          "                    (the default: replays its L1 and L2 events exactly; only\n"
          "                    --l2 and --l2-policy apply) or requests (its request\n"
          "                    lines through the model above)\n"
          "  --json            one JSON object instead of a table\n"
          "Defaults: the workload's configuration in the paper; for --trace 6 servers,\n"
          "2 targets, L1 24M, L2 12M, PVFS 16M.  Trace lines: CLIENT FILE OFFSET LENGTH r|w\n",
          stderr);
    return 2;
}

static int bad(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "ipvfs-cachesim: --%s %s: expected %s\n", opt, val, want);
    return 2;
}

static int parse_u64(const char *text, uint64_t *out)
{
    char *end;

    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    *out = strtoull(text, &end, 10);
    return errno || *end ? -1 : 0;
}

/* One option with its argument into o; 0 or an exit status. */
static int set_option(struct opts *o, int c, const char *arg, const char *name)
{
    uint64_t v;

    switch (c) {
    case 'w': o->workload = arg; return 0;
    case 't': o->trace = arg; return 0;
    case 'e': o->emit = arg; return 0;
    case 'j': o->json = 1; return 0;
    case 'R':
        if (strcmp(arg, "live") != 0 && strcmp(arg, "requests") != 0)
            return bad(name, arg, "live or requests");
        o->replay_live = arg[0] == 'l';
        return 0;
    case 'p':
        if (!(o->cfg.l2_policy = cache_policy_find(arg)))
            return bad(name, arg, "lru, demote, mq or demote-mq");
        return 0;
    case 'S': case 'T': case 'r': case 's':
        if (parse_u64(arg, &v) < 0)
            return bad(name, arg, "a decimal number");
        if (c != 's' && v == 0)
            return bad(name, arg, "a positive number");
        if ((c == 'S' || c == 'T') && v > UINT32_MAX)
            return bad(name, arg, "a number below 2^32");
        if (c == 'S') o->cfg.servers = (uint32_t)v;
        else if (c == 'T') o->cfg.targets = (uint32_t)v;
        else if (c == 'r') o->requests = v;
        else o->seed = v;
        return 0;
    default:
        if (size_parse(arg, &v) < 0)
            return bad(name, arg, SIZE_RULE);
        if (c == '1') o->cfg.l1_bytes = v;
        else if (c == '2') o->cfg.l2_bytes = v;
        else o->cfg.pvfs_bytes = v;
        return 0;
    }
}

/* Fills what the command line left unset from the workload's defaults. */
static void apply_defaults(struct opts *o, const struct wl_info *wi)
{
    static const struct wl_info trace_defaults = {
        "trace", 6, 2, 24 * MB, 12 * MB, 16 * MB, 0, { { 0 }, { 0 } },
    };

    if (!wi)
        wi = &trace_defaults;
    if (!o->cfg.servers) o->cfg.servers = wi->servers;
    if (!o->cfg.targets) o->cfg.targets = wi->targets;
    if (!o->cfg.l1_bytes) o->cfg.l1_bytes = wi->l1_bytes;
    if (!o->cfg.l2_bytes) o->cfg.l2_bytes = wi->l2_bytes;
    if (!o->cfg.pvfs_bytes) o->cfg.pvfs_bytes = wi->pvfs_bytes;
    if (!o->requests) o->requests = wi->requests;
    if (!o->cfg.l2_policy) o->cfg.l2_policy = cache_policy_find(SIM_DEFAULT_L2);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        { "workload", 1, NULL, 'w' }, { "trace", 1, NULL, 't' }, { "emit-trace", 1, NULL, 'e' },
        { "servers", 1, NULL, 'S' }, { "targets", 1, NULL, 'T' }, { "l1", 1, NULL, '1' },
        { "l2", 1, NULL, '2' }, { "pvfs", 1, NULL, 'P' }, { "l2-policy", 1, NULL, 'p' },
        { "requests", 1, NULL, 'r' }, { "seed", 1, NULL, 's' }, { "json", 0, NULL, 'j' },
        { "replay", 1, NULL, 'R' },
        { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
    };
    int c, idx, rc;

    o->seed = 1;
    o->replay_live = -1;
    while ((c = getopt_long(argc, argv, "", longopts, &idx)) != -1) {
        if (c == '?' || c == 'h')
            return usage();
        if ((rc = set_option(o, c, optarg, longopts[idx].name)))
            return rc;
    }
    if (optind != argc || !o->workload == !o->trace)
        return usage();
    if (o->workload && !wl_find(o->workload))
        return bad("workload", o->workload, "cello92, httpd or db2");
    o->live_overrides.l2_bytes = o->cfg.l2_bytes;
    o->live_overrides.l2_policy = o->cfg.l2_policy;
    apply_defaults(o, o->workload ? wl_find(o->workload) : NULL);
    return 0;
}

static const struct wl_paper *paper_row(const struct wl_info *wi, uint32_t servers)
{
    for (int i = 0; wi && i < 2; i++)
        if (wi->paper[i].servers == servers)
            return &wi->paper[i];
    return NULL;
}

static double ratio(uint64_t num, uint64_t den)
{
    return den ? (double)num / (double)den : 0.0;
}

static void print_json(const struct opts *o, const struct sim_result *r, uint64_t requests)
{
    const struct wl_paper *p = paper_row(o->workload ? wl_find(o->workload) : NULL, o->cfg.servers);

    printf("{\"workload\": \"%s\", \"requests\": %" PRIu64 ", \"accesses\": %" PRIu64
           ", \"seed\": %" PRIu64 ", \"servers\": %u, \"targets_per_io\": %u, \"io_nodes\": %u"
           ", \"l1_bytes\": %" PRIu64 ", \"l2_bytes\": %" PRIu64 ", \"pvfs_bytes\": %" PRIu64
           ", \"l2_policy\": \"%s\",\n",
           o->workload ? o->workload : "trace", requests, r->accesses, o->seed, o->cfg.servers,
           o->cfg.targets, r->io_nodes, o->cfg.l1_bytes, o->cfg.l2_bytes, o->cfg.pvfs_bytes,
           o->cfg.l2_policy->name);
    printf(" \"pvfs\": {\"hit\": %.4f, \"hits\": %" PRIu64 "},\n", ratio(r->pvfs_hits, r->accesses),
           r->pvfs_hits);
    printf(" \"ucache\": {\"l1\": %.4f, \"l2\": %.4f, \"cumulative\": %.4f, \"l1_hits\": %" PRIu64
           ", \"l2_reads\": %" PRIu64 ", \"l2_hits\": %" PRIu64 ", \"demotions\": %" PRIu64
           ", \"writebacks\": %" PRIu64 "},\n",
           ratio(r->l1_hits, r->accesses), ratio(r->l2_hits, r->l2_reads),
           ratio(r->l1_hits + r->l2_hits, r->accesses), r->l1_hits, r->l2_reads, r->l2_hits,
           r->demotions, r->writebacks);
    if (p)
        printf(" \"paper\": {\"servers\": %u, \"pvfs\": %.3f, \"l1\": %.3f, \"l2\": %.3f, "
               "\"cumulative\": %.3f}}\n", p->paper_servers, p->pvfs, p->l1, p->l2, p->cumulative);
    else
        printf(" \"paper\": null}\n");
}

static void print_table(const struct opts *o, const struct sim_result *r, uint64_t requests)
{
    const struct wl_paper *p = paper_row(o->workload ? wl_find(o->workload) : NULL, o->cfg.servers);

    printf("%s: %" PRIu64 " requests, %" PRIu64 " block accesses of 64 KiB\n",
           o->workload ? o->workload : o->trace, requests, r->accesses);
    printf("PVFS    %u servers x %" PRIu64 " MiB LRU: hit %.3f\n", o->cfg.servers,
           o->cfg.pvfs_bytes / MB, ratio(r->pvfs_hits, r->accesses));
    printf("uCache  %u I/O nodes x %" PRIu64 " MiB L1 (lru), %u targets each x %" PRIu64
           " MiB L2 (%s):\n        L1 %.3f  L2 %.3f  cumulative %.3f  (%" PRIu64
           " demotions, %" PRIu64 " write-backs)\n",
           r->io_nodes, o->cfg.l1_bytes / MB, o->cfg.targets, o->cfg.l2_bytes / MB,
           o->cfg.l2_policy->name, ratio(r->l1_hits, r->accesses), ratio(r->l2_hits, r->l2_reads),
           ratio(r->l1_hits + r->l2_hits, r->accesses), r->demotions, r->writebacks);
    if (p)
        printf("paper   %u servers: PVFS %.3f; L1 %.3f  L2 %.3f  cumulative %.3f\n", p->paper_servers,
               p->pvfs, p->l1, p->l2, p->cumulative);
}

/* Plays every request of the workload or trace; 0 or 1 (message printed). */
static int play_all(const struct opts *o, struct sim *s, FILE *in, FILE *emit, uint64_t *out_requests)
{
    struct wl *w = NULL;
    struct sim_req r;
    uint64_t lineno = 0;
    char err[256];
    int rc;

    if (o->workload && !(w = wl_new(o->workload, o->requests, o->seed))) {
        fprintf(stderr, "ipvfs-cachesim: out of memory for workload %s\n", o->workload);
        return 1;
    }
    while ((rc = w ? wl_next(w, &r) : trace_next(in, &lineno, &r, err, sizeof(err))) > 0) {
        sim_play(s, &r);
        ++*out_requests;
        if (emit && trace_write(emit, &r) < 0) {
            fprintf(stderr, "ipvfs-cachesim: writing %s: %s\n", o->emit, strerror(errno));
            rc = -2;
            break;
        }
    }
    if (rc == -1)
        fprintf(stderr, "ipvfs-cachesim: %s: %s\n", o->trace, err);
    wl_free(w);
    return rc < 0 ? 1 : 0;
}

/* Opens the trace and --emit-trace files and plays; 0 or 1. */
static int run(const struct opts *o, struct sim *s, uint64_t *out_requests)
{
    FILE *in = NULL, *emit = NULL;
    int rc = 1;

    if (o->trace && !(in = fopen(o->trace, "r"))) {
        fprintf(stderr, "ipvfs-cachesim: %s: %s\n", o->trace, strerror(errno));
        return 1;
    }
    if (o->emit && !(emit = fopen(o->emit, "w"))) {
        fprintf(stderr, "ipvfs-cachesim: %s: %s\n", o->emit, strerror(errno));
        goto close_in;
    }
    rc = play_all(o, s, in, emit, out_requests);
    if (emit && fclose(emit) != 0 && rc == 0) {
        fprintf(stderr, "ipvfs-cachesim: writing %s: %s\n", o->emit, strerror(errno));
        rc = 1;
    }
close_in:
    if (in)
        fclose(in);
    return rc;
}

/* 1 when o's trace is to be replayed live (--replay, else whether it
 * starts with a version-2 header), 0 if not, -1 when it cannot be read. */
static int live_wanted(const struct opts *o)
{
    char line[256] = "";
    FILE *in;

    if (o->replay_live >= 0)
        return o->replay_live;
    if (!(in = fopen(o->trace, "r"))) {
        fprintf(stderr, "ipvfs-cachesim: %s: %s\n", o->trace, strerror(errno));
        return -1;
    }
    if (!fgets(line, sizeof(line), in))
        line[0] = '\0';
    fclose(in);
    return strncmp(line, "#ipvfs-trace 2 ", 15) == 0 || strncmp(line, "#ipvfs-trace 3 ", 15) == 0;
}

static void print_live(const struct opts *o, const struct live_config *c,
                       const struct live_result *r)
{
    uint64_t lookups = r->l1_hits + r->l1_misses + r->l1_bypasses;
    double l1 = ratio(r->l1_hits, lookups), l2 = ratio(r->l2_hits, r->l2_hits + r->l2_misses);
    double cum = ratio(r->l1_hits + r->l2_hits, lookups);

    if (!o->json) {
        printf("%s: live replay, RAID-%d over %u targets, %" PRIu64 "-byte chunks\n"
               "L1 %" PRIu64 " KiB (lru): hit %.3f (%" PRIu64 " hits, %" PRIu64 " misses, %"
               PRIu64 " bypasses, %" PRIu64 " evictions, %" PRIu64 " demotions)\n"
               "L2 %" PRIu64 " KiB per target (%s): hit %.3f (%" PRIu64 " hits, %" PRIu64
               " misses)\ncumulative %.3f\n", o->trace, c->raid, c->members, c->chunk,
               c->l1_bytes >> 10, l1, r->l1_hits, r->l1_misses, r->l1_bypasses, r->l1_evictions,
               r->l1_demotes, c->l2_bytes >> 10, c->l2_policy->name, l2, r->l2_hits, r->l2_misses,
               cum);
        return;
    }
    printf("{\"mode\": \"live\", \"raid\": %d, \"members\": %u, \"chunk\": %" PRIu64
           ", \"l1_bytes\": %" PRIu64 ", \"l2_bytes\": %" PRIu64 ", \"l2_policy\": \"%s\",\n",
           c->raid, c->members, c->chunk, c->l1_bytes, c->l2_bytes, c->l2_policy->name);
    printf(" \"l1\": {\"hit\": %.4f, \"hits\": %" PRIu64 ", \"misses\": %" PRIu64
           ", \"bypasses\": %" PRIu64 ", \"evictions\": %" PRIu64 ", \"demotions\": %" PRIu64
           ", \"writes_absorbed\": %" PRIu64 ", \"prefetches\": %" PRIu64 "},\n", l1, r->l1_hits,
           r->l1_misses, r->l1_bypasses, r->l1_evictions, r->l1_demotes, r->l1_writes_absorbed,
           r->l1_prefetches);
    printf(" \"l2\": {\"hit\": %.4f, \"hits\": %" PRIu64 ", \"misses\": %" PRIu64
           ", \"demotes_kept\": %" PRIu64 "},\n", l2, r->l2_hits, r->l2_misses,
           r->l2_demotes_kept);
    printf(" \"ucache\": {\"l1\": %.4f, \"l2\": %.4f, \"cumulative\": %.4f}}\n", l1, l2, cum);
}

/* --trace of a version-2 trace, replayed live; 0 or 1. */
static int run_live(const struct opts *o)
{
    struct live_config cfg;
    struct live_result res;
    char err[256];
    FILE *in = fopen(o->trace, "r");
    int rc;

    if (!in) {
        fprintf(stderr, "ipvfs-cachesim: %s: %s\n", o->trace, strerror(errno));
        return 1;
    }
    rc = live_replay(in, &o->live_overrides, &cfg, &res, err, sizeof(err));
    fclose(in);
    if (rc < 0) {
        fprintf(stderr, "ipvfs-cachesim: %s: %s\n", o->trace, err);
        return 1;
    }
    print_live(o, &cfg, &res);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ipvfs-cachesim: writing the results: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = { 0 };
    struct sim_result res;
    uint64_t requests = 0;
    struct sim *s;
    char err[256];
    int rc;

    if ((rc = parse_args(argc, argv, &o)))
        return rc;
    if (o.trace && (rc = live_wanted(&o)) != 0)
        return rc < 0 ? 1 : run_live(&o);
    if (!(s = sim_new(&o.cfg, err, sizeof(err)))) {
        fprintf(stderr, "ipvfs-cachesim: %s\n", err);
        return 1;
    }
    rc = run(&o, s, &requests);
    if (rc == 0) {
        sim_result(s, &res);
        if (o.json)
            print_json(&o, &res, requests);
        else
            print_table(&o, &res, requests);
    }
    sim_free(s);
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "ipvfs-cachesim: writing the results: %s\n", strerror(errno));
        rc = 1;
    }
    return rc;
}
