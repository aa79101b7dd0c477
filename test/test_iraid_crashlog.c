/* iraid-crashlog-tool: the block-level crash-state checker of iRAID (issue
 * 31), in the manner of dm-log-writes and xfstests' replay-log: the
 * writes a volume sends to its members are recorded in the order their
 * acknowledgements arrive (iraid_config.observer), and every chosen prefix
 * of that log is replayed onto the members' backing files as a crash could
 * have left them; the volume's own recovery (iraid_open: the resync of the
 * regions its write-intent bitmap marks) must then leave no stripe whose
 * parity or mirror disagrees, and lose no write a flush had made durable.
 * Driven by test/t_iraid_crash_replay.sh over tgtd targets (iraid_lib.sh).
 *
 *   iraid-crashlog-tool record LOG SEED LEVEL CHUNK URL:FILE...
 *     opens the volume once and closes it (a clean volume with a
 *     superblock), copies each FILE to FILE.base, opens it again with the
 *     observer writing LOG, and runs: in the lower half of the volume,
 *     slots of a few blocks (64 at most, one per chunk) written one after
 *     another, a flush after every 8 and a mark "8 more slots are
 *     durable" in LOG; in the upper half,
 *     random writes (tiny read-modify-writes, partial stripes, runs of
 *     whole stripes) 4 in flight; an idle pause in the middle lets the
 *     bitmap's bits be cleared; then it exits without closing (a crash).
 *   iraid-crashlog-tool replay LOG WINDOWS LEVEL CHUNK URL:FILE...
 *     WINDOWS prefixes of LOG (evenly spread, and the ends of metadata
 *     writes), each in three crash states: "kill" (every acknowledged
 *     write landed: a process crash), "power" (writes neither FUA nor
 *     followed by a flush of their member are lost: a power cut), "mixed"
 *     (each such write lost or not, by a coin).  For each: every FILE is
 *     set to FILE.base plus the prefix, the volume is opened (the resync
 *     runs), scrubbed (0 mismatches, 0 skipped), and every slot marked
 *     durable reads back exact.  Prints one line per violation and
 *     `replay: W windows, S states, V violations`; exit 1 if V > 0.
 * Exit 0 on success, 1 on a failure, 2 on bad usage. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/evloop.h"
#include "common/log.h"
#include "iraid/volume.h"
#include "test/iraid_pattern.h"

#define MAX_MEMBERS 8
#define META 65536u
#define INFLIGHT 4
#define SLOTS_PER_SYNC 8
#define SYNCS 8
#define PAUSE_MS 1500

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

/* One record of the log; a WRITE's len bytes of data follow it. */
enum rec_type { REC_WRITE = 1, REC_UNMAP, REC_FLUSH, REC_SYNCED };
struct rec {
    uint32_t magic;
    uint32_t type;
    uint32_t member;               /* REC_SYNCED: none */
    uint32_t fua;
    uint64_t off;                  /* REC_SYNCED: slots durable so far */
    uint64_t len;
};
#define REC_MAGIC 0x31434c49u      /* "ILC1" */

struct tool {
    struct evloop *loop;
    struct iraid_volume *vol;
    struct iraid_config cfg;
    struct iraid_observer obs;
    const char *urls[MAX_MEMBERS];
    char *files[MAX_MEMBERS];
    uint32_t nm, bs;
    uint64_t vsize, chunk;
    FILE *log;
    /* record: the writes in flight */
    int outstanding;
    unsigned seed;
};

/* Slot i: a few blocks inside chunk i of the lower half, written once. */
static void slot_of(const struct tool *t, uint64_t i, uint64_t *off, uint64_t *len)
{
    *off = i * t->chunk + 3 * (uint64_t)t->bs;
    *len = 5 * (uint64_t)t->bs;
}

static void open_volume(struct tool *t)
{
    int rc;

    if ((rc = iraid_open(t->loop, &t->cfg, &t->vol)) < 0)
        FAIL("iraid_open: %s", strerror(-rc));
    t->vsize = iraid_size(t->vol);
    t->bs = iraid_block_size(t->vol);
}

/* ---- record ---- */

static void log_put(struct tool *t, const struct rec *r, const struct iovec *iov, int iovcnt)
{
    if (fwrite(r, sizeof(*r), 1, t->log) != 1)
        FAIL("writing the log: %s", strerror(errno));
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].iov_len && fwrite(iov[i].iov_base, iov[i].iov_len, 1, t->log) != 1)
            FAIL("writing the log: %s", strerror(errno));
}

static void observed(void *user, uint32_t member, enum iraid_observed what, int fua, uint64_t off,
                     uint64_t len, const struct iovec *iov, int iovcnt)
{
    struct tool *t = user;
    struct rec r = { .magic = REC_MAGIC, .member = member, .fua = (uint32_t)fua, .off = off,
                     .len = len };
    uint64_t sum = 0;

    r.type = what == IRAID_OBSERVED_WRITE ? REC_WRITE
             : what == IRAID_OBSERVED_UNMAP ? REC_UNMAP : REC_FLUSH;
    for (int i = 0; i < iovcnt; i++)
        sum += iov[i].iov_len;
    if (r.type == REC_WRITE && sum != len)
        FAIL("observed write of %" PRIu64 " bytes carries %" PRIu64, len, sum);
    log_put(t, &r, iov, iovcnt);
}

struct rw {
    struct tool *t;
    int busy;
    uint8_t *buf;
    uint64_t off, len;
};

static void rw_done(struct iraid_volume *v, int status, void *user)
{
    struct rw *w = user;

    w->busy = 0;
    w->t->outstanding--;
    if (status < 0)
        FAIL("write %" PRIu64 "+%" PRIu64 ": %s", w->off, w->len, strerror(-status));
}

/* A random write into the upper half, not overlapping one in flight. */
static void random_write(struct tool *t, struct rw *w, struct rw *all)
{
    uint64_t sb = t->chunk * (t->cfg.level == 5 ? t->nm - 1 : 1);
    uint64_t lo = (t->vsize / 2 + sb - 1) / sb * sb, span = t->vsize - lo, len, off, align = t->bs;
    struct iovec iov;
    int kind = rand_r(&t->seed) % 3, rc;

    if (kind == 0)
        len = ((uint64_t)rand_r(&t->seed) % 3 + 1) * t->bs;
    else if (kind == 1)
        len = ((uint64_t)rand_r(&t->seed) % (sb / t->bs) + 1) * t->bs;
    else {
        len = ((uint64_t)rand_r(&t->seed) % 3 + 2) * sb;
        align = sb;
    }
    off = lo + (uint64_t)rand_r(&t->seed) % ((span - len) / align + 1) * align;
    for (int i = 0; i < INFLIGHT; i++)
        if (all[i].busy && off < all[i].off + all[i].len && all[i].off < off + len)
            return;
    w->off = off;
    w->len = len;
    iraid_pattern_fill(w->buf, off, len, (uint32_t)rand_r(&t->seed));
    iov = (struct iovec){ w->buf, len };
    if ((rc = iraid_writev(t->vol, off, &iov, 1, rw_done, w)) < 0)
        FAIL("writev: %s", strerror(-rc));
    w->busy = 1;
    t->outstanding++;
}

static void copy_file(const char *from, const char *to)
{
    char buf[1 << 16];
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ssize_t n;

    if (in < 0 || out < 0)
        FAIL("copying %s to %s: %s", from, to, strerror(errno));
    while ((n = read(in, buf, sizeof(buf))) > 0)
        if (write(out, buf, (size_t)n) != n)
            FAIL("writing %s: %s", to, strerror(errno));
    if (n < 0 || close(in) < 0 || close(out) < 0)
        FAIL("copying %s: %s", from, strerror(errno));
}

static int cmd_record(struct tool *t, const char *logpath)
{
    struct rw rws[INFLIGHT] = { 0 };
    struct rw slot = { .t = t };
    uint64_t maxlen, nslots = SLOTS_PER_SYNC * SYNCS, next = 0, pause_until = 0, synced_mark = 0;
    char base[4096];

    /* a clean volume with a superblock, as a previous run leaves it */
    open_volume(t);
    iraid_close(t->vol);
    for (uint32_t m = 0; m < t->nm; m++) {
        snprintf(base, sizeof(base), "%s.base", t->files[m]);
        copy_file(t->files[m], base);
    }
    if (!(t->log = fopen(logpath, "w")))
        FAIL("%s: %s", logpath, strerror(errno));
    t->obs = (struct iraid_observer){ .acked = observed, .user = t };
    t->cfg.observer = &t->obs;
    open_volume(t);
    if (nslots * t->chunk > t->vsize / 2)
        nslots = t->vsize / 2 / t->chunk / SLOTS_PER_SYNC * SLOTS_PER_SYNC;
    if (nslots < 2 * SLOTS_PER_SYNC)
        FAIL("the volume is too small: %" PRIu64 " bytes", t->vsize);
    maxlen = 4 * t->chunk * (t->cfg.level == 5 ? t->nm - 1 : 1);
    for (int i = 0; i < INFLIGHT; i++) {
        rws[i].t = t;
        if (posix_memalign((void **)&rws[i].buf, 64, maxlen) != 0)
            FAIL("out of memory");
    }
    if (posix_memalign((void **)&slot.buf, 64, t->chunk) != 0)
        FAIL("out of memory");
    while (next < nslots || slot.busy) {
        if (!slot.busy && next < nslots && evloop_now_ms() >= pause_until) {
            int rc;
            if (next > 0 && next % SLOTS_PER_SYNC == 0 && next != synced_mark) {
                struct rec r = { .magic = REC_MAGIC, .type = REC_SYNCED };
                if ((rc = iraid_flush_sync(t->vol)) < 0)
                    FAIL("flush: %s", strerror(-rc));
                r.off = synced_mark = next;
                log_put(t, &r, NULL, 0);
                /* halfway: idle long enough for the bits to be cleared */
                if (next == nslots / 2)
                    pause_until = evloop_now_ms() + PAUSE_MS;
                if (pause_until > evloop_now_ms())
                    continue;
            }
            slot_of(t, next++, &slot.off, &slot.len);
            iraid_pattern_fill(slot.buf, slot.off, slot.len, 1);
            struct iovec iov = { slot.buf, slot.len };
            if ((rc = iraid_writev(t->vol, slot.off, &iov, 1, rw_done, &slot)) < 0)
                FAIL("writev: %s", strerror(-rc));
            slot.busy = 1;
            t->outstanding++;
        }
        for (int i = 0; i < INFLIGHT && evloop_now_ms() >= pause_until; i++)
            if (!rws[i].busy)
                random_write(t, &rws[i], rws);
        evloop_run_once(t->loop, 50);
    }
    /* the last slots' flush and mark, then a crash with writes in flight */
    {
        struct rec r = { .magic = REC_MAGIC, .type = REC_SYNCED, .off = nslots };
        int rc = iraid_flush_sync(t->vol);
        if (rc < 0)
            FAIL("flush: %s", strerror(-rc));
        log_put(t, &r, NULL, 0);
    }
    for (int i = 0; i < INFLIGHT; i++)
        if (!rws[i].busy)
            random_write(t, &rws[i], rws);
    evloop_run_once(t->loop, 20);
    if (fclose(t->log) != 0)
        FAIL("closing the log: %s", strerror(errno));
    printf("record: %" PRIu64 " slots durable, log %s\n", nslots, logpath);
    fflush(stdout);
    _exit(0);
}

/* ---- replay ---- */

struct logrec {
    struct rec r;
    const uint8_t *data;
};

struct replay {
    struct logrec *recs;
    size_t n;
    uint8_t *raw;
    uint8_t *base[MAX_MEMBERS];
    uint64_t base_len[MAX_MEMBERS];
    int fd[MAX_MEMBERS];
    uint64_t violations, states;
    uint64_t torn;                 /* disagreeing stripes the crashes left */
};

static void load_log(struct replay *rp, const char *path)
{
    struct stat st;
    int fd = open(path, O_RDONLY);
    size_t pos = 0, cap = 0;

    if (fd < 0 || fstat(fd, &st) < 0)
        FAIL("%s: %s", path, strerror(errno));
    if (!(rp->raw = malloc((size_t)st.st_size + 1)) ||
        read(fd, rp->raw, (size_t)st.st_size) != st.st_size)
        FAIL("reading %s", path);
    close(fd);
    while (pos + sizeof(struct rec) <= (size_t)st.st_size) {
        struct logrec lr;
        memcpy(&lr.r, rp->raw + pos, sizeof(lr.r));
        if (lr.r.magic != REC_MAGIC || lr.r.type < REC_WRITE || lr.r.type > REC_SYNCED)
            FAIL("%s: bad record at byte %zu", path, pos);
        pos += sizeof(lr.r);
        lr.data = rp->raw + pos;
        if (lr.r.type == REC_WRITE)
            pos += lr.r.len;
        if (pos > (size_t)st.st_size)
            FAIL("%s: truncated record", path);
        if (rp->n == cap) {
            cap = cap ? 2 * cap : 1024;
            if (!(rp->recs = realloc(rp->recs, cap * sizeof(*rp->recs))))
                FAIL("out of memory");
        }
        rp->recs[rp->n++] = lr;
    }
}

enum crash_state { STATE_KILL, STATE_POWER, STATE_MIXED };
static const char *const state_name[] = { "kill", "power", "mixed" };

/* Whether record i of prefix [0, k) landed in state s: a WRITE or UNMAP
 * not FUA is volatile until a later FLUSH of its member acknowledged. */
static int landed(const struct replay *rp, size_t i, size_t k, enum crash_state s, unsigned *coin)
{
    const struct rec *r = &rp->recs[i].r;

    if (s == STATE_KILL || r->fua)
        return 1;
    for (size_t j = i + 1; j < k; j++)
        if (rp->recs[j].r.type == REC_FLUSH && rp->recs[j].r.member == r->member)
            return 1;
    return s == STATE_MIXED && rand_r(coin) % 2;
}

static void pwrite_all(int fd, const void *buf, uint64_t len, uint64_t off)
{
    if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
        FAIL("pwrite: %s", strerror(errno));
}

/* The members as the crash left them: base plus what landed of [0, k). */
static uint64_t set_members(struct tool *t, struct replay *rp, size_t k, enum crash_state s,
                            unsigned coin)
{
    uint8_t zero[4096] = { 0 };
    uint64_t synced = 0;

    for (uint32_t m = 0; m < t->nm; m++)
        pwrite_all(rp->fd[m], rp->base[m], rp->base_len[m], 0);
    for (size_t i = 0; i < k; i++) {
        const struct logrec *lr = &rp->recs[i];
        if (lr->r.type == REC_SYNCED)
            synced = lr->r.off;
        if ((lr->r.type != REC_WRITE && lr->r.type != REC_UNMAP) || !landed(rp, i, k, s, &coin))
            continue;
        if (lr->r.type == REC_WRITE)
            pwrite_all(rp->fd[lr->r.member], lr->data, lr->r.len, lr->r.off);
        else
            for (uint64_t o = 0; o < lr->r.len; o += sizeof(zero))
                pwrite_all(rp->fd[lr->r.member], zero,
                           lr->r.len - o < sizeof(zero) ? lr->r.len - o : sizeof(zero),
                           lr->r.off + o);
    }
    return synced;
}

#define VIOLATION(...) do { printf("VIOLATION: " __VA_ARGS__); putchar('\n'); rp->violations++; } while (0)

/* Reads the stripes straight from the members' files: how many disagree
 * (RAID-5 parity against the data, RAID-1 mirrors), and into *unmarked
 * how many of those lie in a region whose bit is not set on every member
 * (the open ORs the members' bitmaps, but a bit durable on some members
 * only means it was set out of order).  Region size as meta_open.c
 * derives it (IRAID_META_MIN_REGION_BYTES per member at least). */
static uint64_t scan_stripes(const struct tool *t, const struct replay *rp, uint64_t *unmarked)
{
    uint64_t stripes = (rp->base_len[0] - META) / t->chunk, min = (4u << 20) / t->chunk;
    uint64_t region = (stripes + (META - 4096) * 8 - 1) / ((META - 4096) * 8), bad = 0;
    uint8_t *c = malloc(t->chunk * t->nm), bm[MAX_MEMBERS][512];

    if (region < min)
        region = min ? min : 1;
    if (!c)
        FAIL("out of memory");
    *unmarked = 0;
    for (uint32_t m = 0; m < t->nm; m++)
        if (pread(rp->fd[m], bm[m], sizeof(bm[m]), 4096) != (ssize_t)sizeof(bm[m]))
            FAIL("pread: %s", strerror(errno));
    for (uint64_t st = 0; st < stripes; st++) {
        uint64_t r = st / region;
        int differ = 0, all_set = 1;
        for (uint32_t m = 0; m < t->nm; m++) {
            if (pread(rp->fd[m], c + m * t->chunk, t->chunk, (off_t)(META + st * t->chunk)) !=
                (ssize_t)t->chunk)
                FAIL("pread: %s", strerror(errno));
            all_set &= bm[m][r / 8] >> (r % 8) & 1;
        }
        for (uint64_t i = 0; i < t->chunk && !differ; i++) {
            uint8_t x = 0;
            for (uint32_t m = 0; m < t->nm; m++)
                x ^= c[m * t->chunk + i];
            differ = t->cfg.level == 5 && x != 0;
            for (uint32_t m = 1; m < t->nm && t->cfg.level == 1; m++)
                differ |= c[i] != c[m * t->chunk + i];
        }
        bad += differ;
        *unmarked += differ && !all_set;
    }
    free(c);
    return bad;
}

/* One crash state: the members as it left them must have every torn
 * stripe in a dirty region; the volume must open (resyncing those), leave
 * no stripe disagreeing, and read back every slot a flush made durable. */
static void check_state(struct tool *t, struct replay *rp, size_t k, enum crash_state s)
{
    uint64_t synced, torn, unmarked, off, len;
    uint8_t *buf = malloc(t->chunk), *want = malloc(t->chunk);
    int rc;

    if (!buf || !want)
        FAIL("out of memory");
    synced = set_members(t, rp, k, s, (unsigned)k * 3 + s);
    rp->states++;
    torn = scan_stripes(t, rp, &unmarked);
    rp->torn += torn;
    if (unmarked)
        VIOLATION("prefix %zu (%s): %" PRIu64 " of %" PRIu64 " disagreeing stripes lie in "
                  "regions not marked dirty", k, state_name[s], unmarked, torn);
    if ((rc = iraid_open(t->loop, &t->cfg, &t->vol)) < 0) {
        VIOLATION("prefix %zu (%s): the volume does not open: %s", k, state_name[s],
                  strerror(-rc));
        goto out;
    }
    t->vsize = iraid_size(t->vol);
    t->bs = iraid_block_size(t->vol);
    for (uint64_t i = 0; i < synced; i++) {
        slot_of(t, i, &off, &len);
        iraid_pattern_fill(want, off, len, 1);
        if ((rc = iraid_read_sync(t->vol, off, buf, len)) < 0 || memcmp(buf, want, len) != 0) {
            VIOLATION("prefix %zu (%s): durable slot %" PRIu64 " of %" PRIu64 " %s", k,
                      state_name[s], i, synced, rc < 0 ? strerror(-rc) : "reads back wrong");
            break;
        }
    }
    iraid_close(t->vol);
    t->vol = NULL;
    if ((torn = scan_stripes(t, rp, &unmarked)) > 0)
        VIOLATION("prefix %zu (%s): %" PRIu64 " stripes disagree after the open's resync", k,
                  state_name[s], torn);
out:
    free(buf);
    free(want);
}

/* The prefixes: up to half of them just after a metadata write (a bit set
 * or cleared, the superblock), spread over those writes, the rest spread
 * over the whole log (ever finer until there are enough); in log order,
 * each once.  Returns how many (fewer than want only for a short log). */
static size_t pick_windows(const struct replay *rp, size_t want, size_t *out)
{
    size_t nmeta = 0, have = 0, n = 0, *meta = calloc(rp->n, sizeof(*meta));
    uint8_t *chosen = calloc(rp->n + 1, 1);

    if (!meta || !chosen)
        FAIL("out of memory");
    for (size_t i = 0; i < rp->n; i++)
        if (rp->recs[i].r.type == REC_WRITE && rp->recs[i].r.off < META)
            meta[nmeta++] = i + 1;
    for (size_t j = 0; j < want / 2 && nmeta; j++) {
        size_t p = meta[j * nmeta / (want / 2)];
        have += !chosen[p];
        chosen[p] = 1;
    }
    for (size_t d = want; have < want && d < 2 * rp->n; d *= 2)
        for (size_t j = 0; j < d && have < want; j++) {
            size_t p = 1 + (rp->n - 1) * j / d;
            have += !chosen[p];
            chosen[p] = 1;
        }
    for (size_t p = 1; p <= rp->n; p++)
        if (chosen[p])
            out[n++] = p;
    free(meta);
    free(chosen);
    return n;
}

static int cmd_replay(struct tool *t, const char *logpath, size_t windows)
{
    struct replay rp = { 0 };
    size_t *at, n;
    char base[4096];

    load_log(&rp, logpath);
    if (rp.n == 0)
        FAIL("%s holds no record", logpath);
    for (uint32_t m = 0; m < t->nm; m++) {
        struct stat st;
        int fd;
        snprintf(base, sizeof(base), "%s.base", t->files[m]);
        if ((fd = open(base, O_RDONLY)) < 0 || fstat(fd, &st) < 0)
            FAIL("%s: %s", base, strerror(errno));
        rp.base_len[m] = (uint64_t)st.st_size;
        if (!(rp.base[m] = malloc(rp.base_len[m])) ||
            read(fd, rp.base[m], rp.base_len[m]) != st.st_size)
            FAIL("reading %s", base);
        close(fd);
        if ((rp.fd[m] = open(t->files[m], O_RDWR)) < 0)
            FAIL("%s: %s", t->files[m], strerror(errno));
    }
    if (!(at = calloc(windows, sizeof(*at))))
        FAIL("out of memory");
    n = pick_windows(&rp, windows, at);
    printf("replay: %zu records, %zu windows\n", rp.n, n);
    for (size_t w = 0; w < n; w++)
        for (int s = STATE_KILL; s <= STATE_MIXED; s++)
            check_state(t, &rp, at[w], (enum crash_state)s);
    printf("replay: %" PRIu64 " torn stripes in all, each in a dirty region\n", rp.torn);
    printf("replay: %zu windows, %" PRIu64 " states, %" PRIu64 " violations\n", n, rp.states,
           rp.violations);
    for (uint32_t m = 0; m < t->nm; m++) {
        close(rp.fd[m]);
        free(rp.base[m]);
    }
    free(at);
    free(rp.recs);
    free(rp.raw);
    return rp.violations ? 1 : 0;
}

int main(int argc, char **argv)
{
    static struct tool t;
    const char *cmd = argc > 1 ? argv[1] : "";
    unsigned long long arg;
    int a = 4;

    if (argc < 8 || argc - 6 > MAX_MEMBERS || (strcmp(cmd, "record") && strcmp(cmd, "replay"))) {
        fprintf(stderr, "usage: %s record LOG SEED|replay LOG WINDOWS LEVEL CHUNK URL:FILE...\n",
                argv[0]);
        return 2;
    }
    arg = strtoull(argv[3], NULL, 0);
    ipvfs_log_set_ident("iraid-crashlog");
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        FAIL("signal: %s", strerror(errno));
    t.cfg.level = atoi(argv[a]);
    t.chunk = strtoull(argv[a + 1], NULL, 0);
    for (int i = a + 2; i < argc; i++, t.nm++) {
        char *sep = strrchr(argv[i], ':');
        if (!sep)
            FAIL("argument %s is not URL:FILE", argv[i]);
        *sep = '\0';
        t.urls[t.nm] = argv[i];
        t.files[t.nm] = sep + 1;
    }
    t.cfg.nmembers = t.nm;
    t.cfg.urls = t.urls;
    t.cfg.chunk_size = t.chunk;
    t.cfg.timeout_ms = 2000;
    if (!(t.loop = evloop_create()))
        FAIL("evloop_create");
    if (!strcmp(cmd, "record")) {
        t.seed = (unsigned)arg;
        return cmd_record(&t, argv[2]);
    }
    if (arg == 0 || arg > 100000)
        FAIL("WINDOWS must be 1 to 100000");
    {
        int rc = cmd_replay(&t, argv[2], (size_t)arg);
        evloop_destroy(t.loop);
        return rc;
    }
}
