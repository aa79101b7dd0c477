/* ipvfs-model: the papers' queuing model of PVFS and iPVFS (model.h) on
 * the command line: the mean response time against the arrival rate, the
 * saturation rate, the best split of N nodes, as a table, CSV or a PNG.
 *
 *   ipvfs-model [options]        (ipvfs-model --help lists them)
 *
 * Exit status: 0 success, 1 failure (message on stderr), 2 usage error. */
#include <errno.h>
#include <stddef.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/size.h"
#include "tools/model/model.h"

#define MAX_SPLITS 256

struct opts {
    enum model_variant variant;
    struct model_params p;
    unsigned nodes, nio, clients, read_places;
    int in_order;
    double size;
    double h_io, h_t, h_pvfs;
    double rate_min, rate_max;   /* rate_max 0: up to the higher saturation */
    unsigned steps;
    int splits, csv;
    double split_rate;           /* 0: half of the lowest saturation */
    const char *plot;
};

static int usage(void)
{
    fputs("usage: ipvfs-model [options]\n"
          "  --variant V       lcn2005 (the default), journal or corrected\n"
          "  --nodes N         storage nodes in all (default 18)\n"
          "  --io-nodes NIO    iPVFS's I/O nodes, NIO (1 + NT) = N (default 6)\n"
          "  --size SIZE       request size L_ip (default 64K)\n"
          "  --stripe SIZE     stripe unit B (default 64K)\n"
          "  --hit-io H        hit ratio of an iPVFS I/O node (default 0.5)\n"
          "  --hit-target H    hit ratio of a target (default 0.5)\n"
          "  --hit-pvfs H      hit ratio of a PVFS I/O node (default 0.5)\n"
          "  --hits FILE       the three hit ratios from ipvfs-cachesim --json output\n"
          "  --clients P       corrected: P client processes, each serving its requests\n"
          "                    one at a time (default 0: open arrivals)\n"
          "  --read-places N   corrected: READ places per target at an I/O node, as\n"
          "                    ipvfs-server --read-places (1 to 16, default 1)\n"
          "  --in-order        corrected: an I/O node's reads are of one datafile, which\n"
          "                    its store delivers in submission order\n"
          "  --net-bw MB/S     network bandwidth BW_net, decimal MB/s (default 75)\n"
          "  --cache-bw MB/S   memory bandwidth BW_cache, decimal MB/s (default 500)\n"
          "  --node-time MS    node processing time T_node, ms (default 0)\n"
          "  --disk PRESET     the disk: st318452lw (the default, the papers')\n"
          "  --params FILE     measured parameters (benchmarks/model-calibrate.sh)\n"
          "  --rate-min R      lowest arrival rate, requests/s (default 0)\n"
          "  --rate-max R      highest (default: the higher saturation rate)\n"
          "  --rate-steps K    rates evaluated (default 40)\n"
          "  --splits          every split of N instead of the curve, and the best\n"
          "  --split-rate R    the rate of --splits' response times (default: half\n"
          "                    the lowest saturation rate)\n"
          "  --csv             CSV instead of a table\n"
          "  --plot FILE.png   also draws the result with gnuplot\n",
          stderr);
    return 2;
}

static int bad(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "ipvfs-model: --%s %s: expected %s\n", opt, val, want);
    return 2;
}

static int parse_double(const char *text, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(text, &end);
    return errno || end == text || *end || !isfinite(*out) || *out < 0 ? -1 : 0;
}

/* "key value" lines (# comments): what model-calibrate.sh measured. */
static int set_param(struct model_params *p, const char *key, double v)
{
    static const struct { const char *key; size_t off; double scale; } keys[] = {
        { "bw_net_mbs", offsetof(struct model_params, bw_net), 1e6 },
        { "bw_tnet_mbs", offsetof(struct model_params, bw_tnet), 1e6 },
        { "bw_cache_mbs", offsetof(struct model_params, bw_cache), 1e6 },
        { "t_node_ms", offsetof(struct model_params, t_node), 1e-3 },
        { "node_cpu_ms", offsetof(struct model_params, node_cpu), 1e-3 },
        { "t_place_ms", offsetof(struct model_params, t_place), 1e-3 },
        { "t_handoff_ms", offsetof(struct model_params, t_handoff), 1e-3 },
        { "stripe_bytes", offsetof(struct model_params, stripe), 1 },
        { "disk_rate_mbs", offsetof(struct model_params, disk.rate), 1e6 },
        { "disk_seek_ms", offsetof(struct model_params, disk.seek), 1e-3 },
        { "disk_rot_ms", offsetof(struct model_params, disk.rot), 1e-3 },
        { "disk_pos_var_ms2", offsetof(struct model_params, disk.pos_var), 1e-6 },
        { "disk_overhead_ms", offsetof(struct model_params, disk.overhead), 1e-3 },
    };

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(key, keys[i].key) == 0) {
            *(double *)((char *)p + keys[i].off) = v * keys[i].scale;
            return 0;
        }
    return -1;
}

static int read_params(const char *path, struct model_params *p)
{
    char line[256], key[64], val[64];
    FILE *f = fopen(path, "r");
    int lineno = 0, rc = 0;
    double v;

    if (!f) {
        fprintf(stderr, "ipvfs-model: %s: %s\n", path, strerror(errno));
        return 1;
    }
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char *hash = strchr(line, '#');

        lineno++;
        if (hash)
            *hash = '\0';
        int n = sscanf(line, "%63s %63s", key, val);
        if (n <= 0)
            continue;
        if (n != 2 || parse_double(val, &v) < 0 || set_param(p, key, v) < 0) {
            fprintf(stderr, "ipvfs-model: %s:%d: expected a known key and a number "
                    "(bw_net_mbs, bw_tnet_mbs, bw_cache_mbs, t_node_ms, t_place_ms, t_handoff_ms, node_cpu_ms, stripe_bytes, "
                    "disk_rate_mbs, disk_seek_ms, disk_rot_ms, disk_pos_var_ms2, "
                    "disk_overhead_ms)\n",
                    path, lineno);
            rc = 1;
        }
    }
    fclose(f);
    return rc;
}

/* The number after "key": in text (ipvfs-cachesim's one-line objects). */
static int json_number(const char *text, const char *key, double *out)
{
    const char *at = strstr(text, key);
    char *end;

    if (!at)
        return -1;
    at += strlen(key);
    while (*at == ' ' || *at == ':' || *at == '{' || *at == '"')
        at++;
    *out = strtod(at, &end);
    return end == at || *out < 0 || *out > 1 ? -1 : 0;
}

static int read_hits(const char *path, struct opts *o)
{
    char buf[8192];
    FILE *f = fopen(path, "r");
    size_t n;
    const char *ucache;

    if (!f) {
        fprintf(stderr, "ipvfs-model: %s: %s\n", path, strerror(errno));
        return 1;
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    ucache = strstr(buf, "\"ucache\"");
    if (!ucache || json_number(buf, "\"pvfs\": {\"hit\"", &o->h_pvfs) < 0 ||
        json_number(ucache, "\"l1\"", &o->h_io) < 0 ||
        json_number(ucache, "\"l2\"", &o->h_t) < 0) {
        fprintf(stderr, "ipvfs-model: %s: not the output of ipvfs-cachesim --json "
                "(wants pvfs.hit, ucache.l1 and ucache.l2)\n", path);
        return 1;
    }
    return 0;
}

static int set_option(struct opts *o, int c, const char *arg, const char *name)
{
    uint64_t sz;
    double v;

    switch (c) {
    case 'V':
        if (strcmp(arg, "lcn2005") == 0) o->variant = MODEL_LCN2005;
        else if (strcmp(arg, "journal") == 0) o->variant = MODEL_JOURNAL;
        else if (strcmp(arg, "corrected") == 0) o->variant = MODEL_CORRECTED;
        else return bad(name, arg, "lcn2005, journal or corrected");
        return 0;
    case 'z': case 'B':
        if (size_parse(arg, &sz) < 0 || sz == 0)
            return bad(name, arg, SIZE_RULE);
        *(c == 'z' ? &o->size : &o->p.stripe) = (double)sz;
        return 0;
    case 'D':
        if (strcmp(arg, "st318452lw") != 0)
            return bad(name, arg, "st318452lw (or --params FILE for a measured disk)");
        model_disk_preset(&o->p.disk);
        return 0;
    case 'P': return read_params(arg, &o->p);
    case 'H': return read_hits(arg, o);
    case 's': o->splits = 1; return 0;
    case 'O': o->in_order = 1; return 0;
    case 'c': o->csv = 1; return 0;
    case 'g': o->plot = arg; return 0;
    default:
        break;
    }
    if (parse_double(arg, &v) < 0)
        return bad(name, arg, "a non-negative number");
    switch (c) {
    case 'C':
        if (v > 100000 || v != floor(v))
            return bad(name, arg, "a whole number from 0 to 100000");
        o->clients = (unsigned)v;
        return 0;
    case 'L':
        if (v < 1 || v > 16 || v != floor(v))
            return bad(name, arg, "a whole number from 1 to 16");
        o->read_places = (unsigned)v;
        return 0;
    case 'N': case 'I': case 'K':
        if (v < 1 || v > 100000 || v != floor(v))
            return bad(name, arg, "a whole number from 1 to 100000");
        *(c == 'N' ? &o->nodes : c == 'I' ? &o->nio : &o->steps) = (unsigned)v;
        return 0;
    case '1': case '2': case '3':
        if (v > 1)
            return bad(name, arg, "a hit ratio from 0 to 1");
        *(c == '1' ? &o->h_io : c == '2' ? &o->h_t : &o->h_pvfs) = v;
        return 0;
    case 'n': case 'm':
        if (v == 0)
            return bad(name, arg, "a positive bandwidth");
        *(c == 'n' ? &o->p.bw_net : &o->p.bw_cache) = v * 1e6;
        return 0;
    case 't': o->p.t_node = v * 1e-3; return 0;
    case 'a': o->rate_min = v; return 0;
    case 'b': o->rate_max = v; return 0;
    case 'r': o->split_rate = v; return 0;
    }
    return usage();
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        { "variant", 1, NULL, 'V' }, { "nodes", 1, NULL, 'N' }, { "io-nodes", 1, NULL, 'I' },
        { "size", 1, NULL, 'z' }, { "stripe", 1, NULL, 'B' }, { "hit-io", 1, NULL, '1' },
        { "hit-target", 1, NULL, '2' }, { "hit-pvfs", 1, NULL, '3' }, { "hits", 1, NULL, 'H' },
        { "clients", 1, NULL, 'C' }, { "read-places", 1, NULL, 'L' }, { "in-order", 0, NULL, 'O' },
        { "net-bw", 1, NULL, 'n' }, { "cache-bw", 1, NULL, 'm' }, { "node-time", 1, NULL, 't' },
        { "disk", 1, NULL, 'D' }, { "params", 1, NULL, 'P' }, { "rate-min", 1, NULL, 'a' },
        { "rate-max", 1, NULL, 'b' }, { "rate-steps", 1, NULL, 'K' }, { "splits", 0, NULL, 's' },
        { "split-rate", 1, NULL, 'r' }, { "csv", 0, NULL, 'c' }, { "plot", 1, NULL, 'g' },
        { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
    };
    int c, idx, rc;

    *o = (struct opts){ .variant = MODEL_LCN2005, .nodes = 18, .nio = 6, .size = 65536,
                        .h_io = 0.5, .h_t = 0.5, .h_pvfs = 0.5, .steps = 40 };
    model_params_paper(&o->p);
    while ((c = getopt_long(argc, argv, "", longopts, &idx)) != -1) {
        if (c == '?' || c == 'h')
            return usage();
        if ((rc = set_option(o, c, optarg, longopts[idx].name)))
            return rc;
    }
    if (optind != argc)
        return usage();
    if (!o->splits && (o->nodes % o->nio || o->nodes / o->nio < 2)) {
        fprintf(stderr, "ipvfs-model: --io-nodes %u does not split --nodes %u into NIO (1 + NT) "
                "with NT >= 1\n", o->nio, o->nodes);
        return 2;
    }
    if (o->rate_max && o->rate_max < o->rate_min) {
        fprintf(stderr, "ipvfs-model: --rate-max is below --rate-min\n");
        return 2;
    }
    return 0;
}

static const char *variant_name(enum model_variant v)
{
    return v == MODEL_LCN2005 ? "lcn2005" : v == MODEL_JOURNAL ? "journal" : "corrected";
}

static struct model_config config(const struct opts *o, unsigned nio, unsigned nt)
{
    if (nt == 0)
        return (struct model_config){ .nio = nio, .nt = 0, .size = o->size, .h_io = o->h_pvfs,
                                      .clients = o->clients };
    return (struct model_config){ .nio = nio, .nt = nt, .size = o->size, .h_io = o->h_io,
                                  .h_t = o->h_t, .clients = o->clients,
                                  .read_places = o->read_places, .in_order = o->in_order };
}

/* T in ms, or an empty field (CSV) / "sat" (table) past saturation. */
static void put_ms(FILE *out, const struct opts *o, double seconds, int last)
{
    if (isfinite(seconds))
        fprintf(out, o->csv ? "%.4f" : "%12.3f", seconds * 1e3);
    else
        fputs(o->csv ? "" : "         sat", out);
    fputs(last ? "\n" : o->csv ? "," : " ", out);
}

static void print_curve(FILE *out, const struct opts *o)
{
    struct model_config pv = config(o, o->nodes, 0), ip = config(o, o->nio, o->nodes / o->nio - 1);
    double sp = model_saturation(o->variant, &o->p, &pv);
    double si = model_saturation(o->variant, &o->p, &ip);
    double hi = o->rate_max ? o->rate_max : (sp > si ? sp : si);
    unsigned steps = o->steps;

    if (out == stdout && !o->csv)
        printf("# %s model: N %u, PVFS %u I/O nodes, iPVFS %u x (1 + %u); size %.0f B; "
               "saturation PVFS %.1f/s, iPVFS %.1f/s\n", variant_name(o->variant), o->nodes,
               o->nodes, ip.nio, ip.nt, o->size, sp, si);
    fputs(o->csv ? "lambda_per_s,pvfs_ms,ipvfs_ms,pvfs_rho,ipvfs_rho,ipvfs_iraid_ms,"
                   "ipvfs_ionet_ms,ipvfs_reqin_ms,ipvfs_client_ms\n"
                 : "# lambda/s      PVFS ms     iPVFS ms   PVFS rho  iPVFS rho  iRAID ms"
                   "  ionet ms  reqin ms client ms\n", out);
    for (unsigned k = 0; k < steps; k++) {
        double lambda = steps == 1 ? o->rate_min
                                   : o->rate_min + (hi - o->rate_min) * k / (steps - 1);
        struct model_terms tp, ti;

        model_eval(o->variant, &o->p, &pv, lambda, &tp);
        model_eval(o->variant, &o->p, &ip, lambda, &ti);
        fprintf(out, o->csv ? "%.3f," : "%10.2f ", lambda);
        put_ms(out, o, tp.total, 0);
        put_ms(out, o, ti.total, 0);
        fprintf(out, o->csv ? "%.4f,%.4f," : "%10.3f %10.3f ", tp.rho_max, ti.rho_max);
        put_ms(out, o, ti.w_iraid, 0);
        /* the terms of a saturated evaluation mean nothing */
        put_ms(out, o, isfinite(ti.total) ? ti.w_ionet : INFINITY, 0);
        put_ms(out, o, isfinite(ti.total) ? ti.w_reqin : INFINITY, 0);
        put_ms(out, o, isfinite(ti.total) ? ti.w_client : INFINITY, 1);
    }
}

static void print_splits(FILE *out, const struct opts *o)
{
    unsigned nio[MAX_SPLITS], nt[MAX_SPLITS];
    int n = model_splits(o->nodes, nio, nt, MAX_SPLITS), best = -1;
    struct model_config pv = config(o, o->nodes, 0);
    double rate = o->split_rate, best_sat = model_saturation(o->variant, &o->p, &pv);

    if (n > MAX_SPLITS)
        n = MAX_SPLITS;
    if (!rate) {
        rate = best_sat;
        for (int i = 0; i < n; i++) {
            struct model_config c = config(o, nio[i], nt[i]);
            double s = model_saturation(o->variant, &o->p, &c);

            if (s < rate)
                rate = s;
        }
        rate /= 2;
    }
    fputs(o->csv ? "system,io_nodes,targets_per_io,saturation_per_s,t_ms_at_rate,rate_per_s\n"
                 : "# system  NIO   NT  saturation/s   T ms at rate   rate/s\n", out);
    for (int i = -1; i < n; i++) {
        struct model_config c = i < 0 ? pv : config(o, nio[i], nt[i]);
        double s = model_saturation(o->variant, &o->p, &c);
        struct model_terms t;

        model_eval(o->variant, &o->p, &c, rate, &t);
        fprintf(out, o->csv ? "%s,%u,%u,%.3f," : "%-7s %5u %4u %13.2f ", i < 0 ? "pvfs" : "ipvfs",
                c.nio, c.nt, s);
        put_ms(out, o, t.total, 0);
        fprintf(out, o->csv ? "%.3f\n" : "%8.2f\n", rate);
        if (i >= 0 && (best < 0 || s > best_sat))
            best = i, best_sat = s;
    }
    if (out == stdout && !o->csv && best >= 0)
        fprintf(out, "# best split of %u nodes (highest saturation rate): %u I/O nodes x %u "
                "targets, %.1f requests/s\n", o->nodes, nio[best], nt[best], best_sat);
}

/* Draws the CSV of this run into a PNG through gnuplot. */
static int plot(const struct opts *o)
{
    char tmp[] = "/tmp/ipvfs-model-XXXXXX";
    int fd = mkstemp(tmp), rc = 1;
    FILE *data, *gp;
    struct opts csv = *o;

    if (fd < 0 || !(data = fdopen(fd, "w"))) {
        fprintf(stderr, "ipvfs-model: a temporary file: %s\n", strerror(errno));
        return 1;
    }
    csv.csv = 1;
    if (o->splits)
        print_splits(data, &csv);
    else
        print_curve(data, &csv);
    if (fclose(data) != 0)
        goto undo_tmp;
    gp = popen("gnuplot", "w");
    if (!gp) {
        fprintf(stderr, "ipvfs-model: cannot run gnuplot: %s\n", strerror(errno));
        goto undo_tmp;
    }
    fprintf(gp, "set terminal pngcairo size 800,560\nset output '%s'\n"
            "set datafile separator ','\nset key top left\nset grid\n", o->plot);
    if (o->splits)
        fprintf(gp, "set title 'Saturation rate per split of %u nodes (%s model)'\n"
                "set xlabel 'I/O nodes'\nset ylabel 'saturation rate (requests/s)'\n"
                "set key top right\n"
                "plot '%s' every ::2 using 2:4 with linespoints lw 2 pt 7 title 'iPVFS', "
                "'' every ::1::1 using 2:4 with points pt 5 ps 2 title 'PVFS (all I/O nodes)'\n",
                o->nodes, variant_name(o->variant), tmp);
    else
        fprintf(gp, "set title 'Mean response time, N = %u, %.0f KiB requests (%s model)'\n"
                "set xlabel 'arrival rate (requests/s)'\nset ylabel 'mean response time (ms)'\n"
                "plot '%s' every ::1 using 1:2 with lines lw 2 title 'PVFS', "
                "'' every ::1 using 1:3 with lines lw 2 title 'iPVFS %u x (1 + %u)'\n",
                o->nodes, o->size / 1024, variant_name(o->variant), tmp, o->nio,
                o->nodes / o->nio - 1);
    rc = pclose(gp) == 0 ? 0 : 1;
    if (rc)
        fprintf(stderr, "ipvfs-model: gnuplot failed drawing %s\n", o->plot);
undo_tmp:
    unlink(tmp);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o;
    struct model_memo memo = { 0 };   /* the iRAID's chains, solved once per run */
    int rc = parse_args(argc, argv, &o);

    if (rc)
        return rc;
    o.p.memo = &memo;
    if (o.splits)
        print_splits(stdout, &o);
    else
        print_curve(stdout, &o);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "ipvfs-model: writing the output: %s\n", strerror(errno));
        return 1;
    }
    return o.plot ? plot(&o) : 0;
}
