/* ipvfs-openload: an open-loop load generator for MPI-IO, the workload of
 * the queuing model's validation (benchmarks/model-validate.sh).
 *
 *   mpiexec -n P ipvfs-openload -f FILE -r RATE [-s SIZE] [-t SECONDS]
 *                               [-W WARMUP] [-S SPAN] [-w] [-H HANDLES]
 *                               [-Q INFLIGHT] [-o CSV] [-x SEED]
 *
 * Requests of SIZE bytes (default 64K) at offsets drawn uniformly among
 * the SIZE-aligned ones of the file's first SPAN bytes (default: the
 * file's size), arriving as a Poisson process of RATE requests/s in all
 * (RATE / P per rank, exponential gaps), for SECONDS (default 5).  Open
 * loop: a request is posted (MPI_File_iread_at, or iwrite_at with -w) at
 * its arrival time whatever the earlier ones are doing, so the queues
 * build up as the model's do.  A rank opens the file HANDLES times
 * (default 8) and posts each request on the handle with the fewest in
 * flight (a handle kept at most 4 requests in flight until ad_ipvfs's
 * window per open file grew to 64 pieces, doc/mpi.md; -H 1 is what a
 * program with one handle gets).  Completions are found with MPI_Testsome between
 * arrivals, every 1.1 ms (TEST_GAP: not more often, see there): a
 * response time is measured from the request's scheduled arrival to the
 * middle of the interval between the test that found it done and the
 * one before, within +-0.55 ms and unbiased for a completion uniform in
 * it.  -Q caps the requests a rank keeps in flight (default and at most
 * 1024): an arrival past the cap is posted when one completes (counted in
 * its response time and in lag_max_ms), so that past saturation the
 * backlog waits in the generator, not in the MPI library, whose
 * MPI_Testsome over a thousand requests in flight costs the client more
 * CPU than the servers' capacity is worth (the measured capacity is then
 * the client's).
 *
 * Rank 0 prints one line over the requests that arrived after WARMUP
 * seconds (default 1):
 *   RESULT op=read ranks=P size=B rate=R seconds=T requests=N
 *          offered_per_s=O achieved_per_s=A mean_ms=M p50_ms= p95_ms=
 *          p99_ms= max_ms= inflight_max= lag_max_ms= lag_mean_ms= cpu_s= post_ms=
 *          test_ms=
 * offered: those arrivals per second; achieved: completions per second
 * of the same window; lag_max_ms, lag_mean_ms: how late the generator posted a
 * request at worst and on average (large: the generator, not the system, was the bottleneck);
 * cpu_s: the CPU time of all ranks; post_ms, test_ms: how long one
 * MPI_File_iread_at (iwrite_at) and one MPI_Testsome took on average (a
 * client that blocks in them cannot post the next arrivals on time).  -o writes every response as CSV
 * (rank,arrival_s,response_ms,start_s; all requests, warm-up included;
 * start_s: the rank's time 0 on CLOCK_MONOTONIC, to line its arrivals up
 * with other clocks' records, e.g. a packet capture's).
 * Exit status 0, 1 when an MPI call failed, 2 on a bad option. */
#include <mpi.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "benchmarks/quiet.h"
#include "common/size.h"

#define MAX_HANDLES 64
#define MAX_INFLIGHT 1024
/* Seconds between two MPI_Testsome: ad_ipvfs naps in a request's poll
 * function when it is polled again within 1 ms (ad_ipvfs_pace.c: its
 * guard against MPI_Wait's spinning), so testing more often would make
 * every test cost a nap per request in flight. */
#define TEST_GAP 1.1e-3

struct opts {
    const char *file, *csv;
    uint64_t size, span, seed;
    double rate, seconds, warmup;
    int write, handles, maxq;
};

struct slot {
    MPI_Request req;
    double arrival;       /* scheduled, s since the start */
    int handle;
    int buf;              /* its buffer, held until it completes */
};

/* Everything one rank's run keeps. */
struct run {
    struct opts o;
    int rank, nprocs;
    MPI_File fh[MAX_HANDLES];
    int per_handle[MAX_HANDLES];
    struct slot slots[MAX_INFLIGHT];
    MPI_Request reqs[MAX_INFLIGHT];
    int idx[MAX_INFLIGHT];
    MPI_Status st[MAX_INFLIGHT];  /* (MPI_STATUSES_IGNORE trips gcc's bounds check) */
    int nslots;                   /* slots in flight: slots[0..nslots) */
    char *bufs;                   /* MAX_INFLIGHT buffers of SIZE */
    int free_bufs[MAX_INFLIGHT];  /* a stack of the buffers not in use */
    int nfree;
    uint64_t rng;
    double t0;
    double last_test;             /* s since t0 of the last MPI_Testsome */
    double *arrival, *resp;       /* every completed request */
    size_t done, cap;
    int inflight_max;
    double lag_max, lag_sum;
    double post_s, test_s;        /* time spent in the I* calls, in MPI_Testsome */
    long posts, tests;
};

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double uniform(struct run *r)
{
    r->rng ^= r->rng >> 12;
    r->rng ^= r->rng << 25;
    r->rng ^= r->rng >> 27;
    return ((double)((r->rng * 0x2545F4914F6CDD1DULL) >> 11) + 0.5) / 9007199254740992.0;
}

static int usage(void)
{
    fputs("usage: mpiexec -n P ipvfs-openload -f FILE -r RATE [-s SIZE] [-t SECONDS]\n"
          "           [-W WARMUP] [-S SPAN] [-w] [-H HANDLES] [-Q INFLIGHT] [-o CSV]\n"
          "           [-x SEED]\n", stderr);
    return 2;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    int c;
    char *end;

    *o = (struct opts){ .size = 65536, .seconds = 5, .warmup = 1, .handles = 8, .seed = 1,
                        .maxq = MAX_INFLIGHT };
    while ((c = getopt(argc, argv, "f:r:s:t:W:S:wH:Q:o:x:")) != -1) {
        errno = 0;
        switch (c) {
        case 'f': o->file = optarg; break;
        case 'o': o->csv = optarg; break;
        case 'w': o->write = 1; break;
        case 's': case 'S':
            if (size_parse(optarg, c == 's' ? &o->size : &o->span) < 0 ||
                (c == 's' && o->size == 0)) {
                fprintf(stderr, "ipvfs-openload: -%c %s: expected %s\n", c, optarg, SIZE_RULE);
                return 2;
            }
            break;
        case 'x':
            o->seed = strtoull(optarg, &end, 10);
            if (*end || errno)
                return usage();
            break;
        case 'H':
            o->handles = (int)strtol(optarg, &end, 10);
            if (*end || o->handles < 1 || o->handles > MAX_HANDLES) {
                fprintf(stderr, "ipvfs-openload: -H %s: expected 1 to %d\n", optarg, MAX_HANDLES);
                return 2;
            }
            break;
        case 'Q':
            o->maxq = (int)strtol(optarg, &end, 10);
            if (*end || errno || o->maxq < 1 || o->maxq > MAX_INFLIGHT) {
                fprintf(stderr, "ipvfs-openload: -Q %s: expected 1 to %d\n", optarg, MAX_INFLIGHT);
                return 2;
            }
            break;
        default: {
            double v = optarg ? strtod(optarg, &end) : 0;

            if (c == '?' || !optarg || *end || errno || !(v >= 0) || !isfinite(v))
                return usage();
            if (c == 'r') o->rate = v;
            else if (c == 't') o->seconds = v;
            else o->warmup = v;
        }
        }
    }
    if (optind != argc || !o->file || o->rate <= 0 || o->seconds <= 0 ||
        o->warmup >= o->seconds) {
        if (o->file && (o->rate <= 0 || o->warmup >= o->seconds))
            fprintf(stderr, "ipvfs-openload: -r must be above 0 and -W below -t\n");
        return usage();
    }
    return 0;
}

static int mpi_fail(const struct run *r, const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "ipvfs-openload: rank %d: %s: %s\n", r->rank, what, msg);
    return 1;
}

static int record(struct run *r, double arrival, double t)
{
    if (r->done == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 4096;
        double *a = realloc(r->arrival, cap * sizeof(*a)), *b;

        if (!a)
            return -1;
        r->arrival = a;
        b = realloc(r->resp, cap * sizeof(*b));
        if (!b)
            return -1;
        r->resp = b;
        r->cap = cap;
    }
    r->arrival[r->done] = arrival;
    r->resp[r->done] = t - arrival;
    r->done++;
    return 0;
}

/* Reaps what completed, or naps until the next test or deadline (an
 * absolute time since t0), whichever comes first.  0 or an MPI error. */
static int reap(struct run *r, double deadline)
{
    double t = now() - r->t0, wake;
    int n = 0, err;

    if (t < r->last_test + TEST_GAP || r->nslots == 0) {
        wake = r->nslots ? r->last_test + TEST_GAP : deadline;
        if (wake > deadline)
            wake = deadline;
        if (wake > t) {
            struct timespec ts = { (time_t)(wake - t), 0 };

            ts.tv_nsec = (long)((wake - t - (double)ts.tv_sec) * 1e9);
            nanosleep(&ts, NULL);
        }
        return 0;
    }
    for (int i = 0; i < r->nslots; i++)
        r->reqs[i] = r->slots[i].req;
    err = MPI_Testsome(r->nslots, r->reqs, &n, r->idx, r->st);
    r->test_s += now() - r->t0 - t;
    r->tests++;
    if (err != MPI_SUCCESS)
        return err;
    /* What completed did so since the previous test: the middle of the
     * interval is an unbiased estimate. */
    double done_at = (r->last_test + t) / 2;

    r->last_test = t;
    if (n == 0 || n == MPI_UNDEFINED)
        return 0;
    for (int k = 0; k < n; k++) {
        struct slot *s = &r->slots[r->idx[k]];

        s->req = MPI_REQUEST_NULL;
        r->per_handle[s->handle]--;
        r->free_bufs[r->nfree++] = s->buf;
        if (record(r, s->arrival, done_at > s->arrival ? done_at : t) < 0)
            return MPI_ERR_NO_MEM;
    }
    /* Compact the slots still in flight (their buffers stay put). */
    int j = 0;

    for (int i = 0; i < r->nslots; i++)
        if (r->slots[i].req != MPI_REQUEST_NULL)
            r->slots[j++] = r->slots[i];
    r->nslots = j;
    return 0;
}

static int post(struct run *r, double arrival)
{
    uint64_t units = r->o.span / r->o.size;
    MPI_Offset off = (MPI_Offset)((uint64_t)(uniform(r) * (double)units) * r->o.size);
    int h = 0, err;
    struct slot *s = &r->slots[r->nslots];
    int b = r->free_bufs[r->nfree - 1];
    char *buf = r->bufs + (size_t)b * r->o.size;
    double t0 = now();

    for (int i = 1; i < r->o.handles; i++)
        if (r->per_handle[i] < r->per_handle[h])
            h = i;
    if (r->o.write)
        err = MPI_File_iwrite_at(r->fh[h], off, buf, (int)r->o.size, MPI_BYTE, &s->req);
    else
        err = MPI_File_iread_at(r->fh[h], off, buf, (int)r->o.size, MPI_BYTE, &s->req);
    r->post_s += now() - t0;
    r->posts++;
    if (err != MPI_SUCCESS)
        return err;
    s->arrival = arrival;
    s->handle = h;
    s->buf = b;
    r->nfree--;
    r->per_handle[h]++;
    r->nslots++;
    if (r->nslots > r->inflight_max)
        r->inflight_max = r->nslots;
    return 0;
}

static int drive(struct run *r)
{
    double rate = r->o.rate / r->nprocs, next = -log(uniform(r)) / rate;
    int err;

    r->t0 = now();
    while (next < r->o.seconds) {
        double t = now() - r->t0;

        if (t >= next && r->nslots < r->o.maxq) {
            if (t - next > r->lag_max)
                r->lag_max = t - next;
            r->lag_sum += t - next;
            if ((err = post(r, next)) != MPI_SUCCESS)
                return mpi_fail(r, "posting a request", err);
            next += -log(uniform(r)) / rate;
            continue;
        }
        /* at the -Q cap an arrival waits for the next test, not for itself */
        if ((err = reap(r, t >= next ? HUGE_VAL : next)) != MPI_SUCCESS)
            return mpi_fail(r, "testing requests", err);
    }
    while (r->nslots > 0)
        if ((err = reap(r, now() - r->t0 + 1)) != MPI_SUCCESS)
            return mpi_fail(r, "testing requests", err);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
    size_t i = (size_t)ceil(p * (double)n);

    return n ? v[i ? i - 1 : 0] : NAN;
}

/* Gathers the responses at rank 0, which prints the RESULT line (and the
 * CSV). */
static int report(struct run *r, double cpu)
{
    int n = (int)r->done, *counts = NULL, *displs = NULL, total = 0;
    double *arr = NULL, *resp = NULL, cpu_all = 0, lag = 0, calls[5] = { 0 }, all[5] = { 0 };
    double *t0s = NULL;
    int maxin = 0, rc = 0;

    MPI_Reduce(&cpu, &cpu_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&r->lag_max, &lag, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&r->inflight_max, &maxin, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    calls[0] = r->post_s;
    calls[1] = (double)r->posts;
    calls[2] = r->test_s;
    calls[3] = (double)r->tests;
    calls[4] = r->lag_sum;
    MPI_Reduce(calls, all, 5, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (r->rank == 0 && !(t0s = calloc((size_t)r->nprocs, sizeof(double))))
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(&r->t0, 1, MPI_DOUBLE, t0s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (r->rank == 0) {
        counts = calloc((size_t)r->nprocs, sizeof(int));
        displs = calloc((size_t)r->nprocs, sizeof(int));
        if (!counts || !displs)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (r->rank == 0) {
        for (int i = 0; i < r->nprocs; i++) {
            displs[i] = total;
            total += counts[i];
        }
        arr = malloc(((size_t)total + 1) * sizeof(double));
        resp = malloc(((size_t)total + 1) * sizeof(double));
        if (!arr || !resp)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Gatherv(r->arrival, n, MPI_DOUBLE, arr, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gatherv(r->resp, n, MPI_DOUBLE, resp, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (r->rank != 0)
        return 0;
    if (r->o.csv) {
        FILE *f = fopen(r->o.csv, "w");

        if (!f) {
            fprintf(stderr, "ipvfs-openload: %s: %s\n", r->o.csv, strerror(errno));
            rc = 1;
        } else {
            fprintf(f, "rank,arrival_s,response_ms,start_s\n");
            for (int i = 0, k = 0; i < r->nprocs; i++)
                for (int j = 0; j < counts[i]; j++, k++)
                    fprintf(f, "%d,%.6f,%.4f,%.6f\n", i, arr[k], resp[k] * 1e3, t0s[i]);
            if (fclose(f) != 0)
                rc = 1;
        }
    }
    /* The window: arrivals in [warmup, seconds). */
    size_t m = 0;
    double sum = 0, last = r->o.warmup, window = r->o.seconds - r->o.warmup;
    size_t completed_in = 0;

    for (int k = 0; k < total; k++) {
        double done_at = arr[k] + resp[k];

        if (done_at >= r->o.warmup && done_at < r->o.seconds)
            completed_in++;
        if (arr[k] < r->o.warmup)
            continue;
        resp[m++] = resp[k];
        sum += resp[k];
        if (done_at > last)
            last = done_at;
    }
    qsort(resp, m, sizeof(double), cmp_double);
    printf("RESULT op=%s ranks=%d size=%llu rate=%.2f seconds=%.2f requests=%zu "
           "offered_per_s=%.2f achieved_per_s=%.2f mean_ms=%.4f p50_ms=%.4f p95_ms=%.4f "
           "p99_ms=%.4f max_ms=%.4f inflight_max=%d lag_max_ms=%.3f lag_mean_ms=%.4f cpu_s=%.2f post_ms=%.4f "
           "test_ms=%.4f file=%s\n",
           r->o.write ? "write" : "read", r->nprocs, (unsigned long long)r->o.size, r->o.rate,
           r->o.seconds, m, (double)m / window, (double)completed_in / window,
           m ? sum / (double)m * 1e3 : NAN, pct(resp, m, 0.5) * 1e3, pct(resp, m, 0.95) * 1e3,
           pct(resp, m, 0.99) * 1e3, m ? resp[m - 1] * 1e3 : NAN, maxin, lag * 1e3,
           all[1] > 0 ? all[4] / all[1] * 1e3 : 0.0, cpu_all,
           all[1] > 0 ? all[0] / all[1] * 1e3 : 0.0, all[3] > 0 ? all[2] / all[3] * 1e3 : 0.0,
           r->o.file);
    free(arr);
    free(resp);
    free(counts);
    free(t0s);
    free(displs);
    return rc;
}

static double cpu_seconds(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) < 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int run_all(struct run *r)
{
    int amode = r->o.write ? MPI_MODE_WRONLY : MPI_MODE_RDONLY, err, opened = 0, rc = 1;
    MPI_Offset fsize;
    double cpu0;

    for (; opened < r->o.handles; opened++) {
        err = MPI_File_open(MPI_COMM_SELF, r->o.file, amode, MPI_INFO_NULL, &r->fh[opened]);
        if (err != MPI_SUCCESS) {
            mpi_fail(r, "opening the file", err);
            goto undo_open;
        }
    }
    if (!r->o.span) {
        if ((err = MPI_File_get_size(r->fh[0], &fsize)) != MPI_SUCCESS) {
            mpi_fail(r, "the file's size", err);
            goto undo_open;
        }
        r->o.span = (uint64_t)fsize;
    }
    if (r->o.span < r->o.size) {
        if (r->rank == 0)
            fprintf(stderr, "ipvfs-openload: %s holds less than one request (%llu bytes)\n",
                    r->o.file, (unsigned long long)r->o.span);
        goto undo_open;
    }
    r->bufs = malloc((size_t)MAX_INFLIGHT * r->o.size);
    if (!r->bufs) {
        fprintf(stderr, "ipvfs-openload: no memory for %d buffers\n", MAX_INFLIGHT);
        goto undo_open;
    }
    memset(r->bufs, 0x5a, (size_t)MAX_INFLIGHT * r->o.size);
    for (int i = 0; i < MAX_INFLIGHT; i++)
        r->free_bufs[r->nfree++] = i;
    bench_quiet_barrier(MPI_COMM_WORLD);
    cpu0 = cpu_seconds();
    rc = drive(r);
    bench_quiet_barrier(MPI_COMM_WORLD);
    if (report(r, cpu_seconds() - cpu0))
        rc = 1;
    free(r->bufs);
undo_open:
    while (opened-- > 0)
        MPI_File_close(&r->fh[opened]);
    return rc;
}

int main(int argc, char **argv)
{
    static struct run r;
    int rc, any;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.nprocs);
    rc = parse_opts(argc, argv, &r.o);
    if (rc) {
        MPI_Finalize();
        return rc;
    }
    r.rng = 0x9E3779B97F4A7C15ULL * (r.o.seed + 1) ^ ((uint64_t)r.rank << 32);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    rc = run_all(&r);
    MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(r.arrival);
    free(r.resp);
    MPI_Finalize();
    return any ? 1 : 0;
}
