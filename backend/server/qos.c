/* The QoS scheduler's policy (rules and states in qos.h). */
#include "backend/server/qos.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_names[] = { "fifo", "dsfq", "two-level" };

void qos_init(struct qos_sched *s, enum qos_policy policy, uint32_t window_ms)
{
    memset(s, 0, sizeof(*s));
    s->policy = policy;
    s->window_us = (uint64_t)(window_ms ? window_ms : QOS_DEFAULT_WINDOW_MS) * 1000;
    snprintf(s->cls[0].name, sizeof(s->cls[0].name), "default");
    s->cls[0].last.met = -1;
    s->ncls = 1;
    /* two-level: unbounded as fifo until a class has an SLO (qos_set) */
    s->depth = policy == QOS_DSFQ ? QOS_DSFQ_DEPTH : UINT32_MAX;
}

/* Whether an application's class has an SLO (the class internal's rate
 * is its sweeps' pace, not a promise to keep). */
static int any_slo(const struct qos_sched *s)
{
    for (uint32_t i = 0; i < s->ncls; i++)
        if ((!s->internal || i != s->internal) && s->cls[i].rate_mbps > 0)
            return 1;
    return 0;
}

int qos_policy_parse(const char *name, enum qos_policy *out)
{
    for (size_t i = 0; i < sizeof(policy_names) / sizeof(*policy_names); i++) {
        if (strcmp(name, policy_names[i]) == 0) {
            *out = (enum qos_policy)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *qos_policy_name(enum qos_policy p)
{
    return (unsigned)p < sizeof(policy_names) / sizeof(*policy_names) ? policy_names[p] : "?";
}

int qos_check_name(const char *name, size_t len, char *msg, size_t msglen)
{
    if (len == 0 || len > QOS_NAME_MAX) {
        snprintf(msg, msglen, "a QoS class name has 1 to %u bytes, not %zu", QOS_NAME_MAX, len);
        return -EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        if (name[i] <= ' ' || name[i] > '~') {
            snprintf(msg, msglen, "a QoS class name holds printable bytes without spaces "
                     "(byte %zu is %#x)", i, (unsigned char)name[i]);
            return -EINVAL;
        }
    }
    return 0;
}

int qos_check_slo(double rate_mbps, double latency_ms, char *msg, size_t msglen)
{
    if (!isfinite(rate_mbps) || rate_mbps <= 0 || rate_mbps > QOS_MAX_RATE_MBPS) {
        snprintf(msg, msglen, "rate %g MB/s: an SLO's throughput is more than 0 and at most "
                 "%.0f MB/s", rate_mbps, QOS_MAX_RATE_MBPS);
        return -EINVAL;
    }
    if (!isfinite(latency_ms) || latency_ms < QOS_MIN_LATENCY_MS ||
        latency_ms > QOS_MAX_LATENCY_MS) {
        snprintf(msg, msglen, "latency %g ms: an SLO's p95 latency is between %g and %.0f ms",
                 latency_ms, QOS_MIN_LATENCY_MS, QOS_MAX_LATENCY_MS);
        return -EINVAL;
    }
    return 0;
}

uint32_t qos_lookup(const struct qos_sched *s, const char *name, size_t len)
{
    for (uint32_t i = 0; i < s->ncls; i++)
        if ((!s->internal || i != s->internal) && strlen(s->cls[i].name) == len && memcmp(s->cls[i].name, name, len) == 0)
            return i;
    return 0;
}

int qos_set(struct qos_sched *s, const char *name, double rate_mbps, double latency_ms,
            char *msg, size_t msglen)
{
    size_t len = strlen(name);
    struct qos_class *c;
    uint32_t i;
    int rc, first;

    if ((rc = qos_check_name(name, len, msg, msglen)) < 0 ||
        (rc = qos_check_slo(rate_mbps, latency_ms, msg, msglen)) < 0)
        return rc;
    if (strcmp(name, QOS_INTERNAL_NAME) == 0) {
        snprintf(msg, msglen, "the class %s is the servers' rebuild and scrub, paced by "
                 "--qos-internal, not an application's", QOS_INTERNAL_NAME);
        return -EINVAL;
    }
    i = qos_lookup(s, name, len);
    if (i == 0 && strcmp(name, s->cls[0].name) != 0) {
        if (s->ncls == QOS_MAX_CLASSES) {
            snprintf(msg, msglen, "%u QoS classes already: no room for %s", QOS_MAX_CLASSES,
                     name);
            return -ENOSPC;
        }
        i = s->ncls++;
        c = &s->cls[i];
        memset(c, 0, sizeof(*c));
        memcpy(c->name, name, len + 1);
        c->last.met = -1;
        /* a new class starts at the present virtual time, owing nothing */
        c->last_finish = s->vtime;
    }
    c = &s->cls[i];
    first = s->policy == QOS_TWO_LEVEL && !any_slo(s);
    c->rate_mbps = rate_mbps;
    c->latency_ms = latency_ms;
    /* the first latency to keep: the controller, which did not run
     * while there was none (close_window), starts as at a start-up */
    if (first)
        s->depth = QOS_DEPTH_INIT;
    return 0;
}

int qos_set_internal(struct qos_sched *s, double min_mbps, double max_mbps, char *msg,
                     size_t msglen)
{
    struct qos_class *c;

    if (!isfinite(min_mbps) || !isfinite(max_mbps) || min_mbps <= 0 ||
        min_mbps > QOS_MAX_RATE_MBPS || max_mbps < 0 || max_mbps > QOS_MAX_RATE_MBPS ||
        (max_mbps > 0 && max_mbps < min_mbps)) {
        snprintf(msg, msglen, "internal work %g:%g MB/s: the least rate is more than 0, the "
                 "most at least the least (0: unlimited), both at most %.0f MB/s", min_mbps,
                 max_mbps, QOS_MAX_RATE_MBPS);
        return -EINVAL;
    }
    if (!s->internal) {
        if (s->ncls == QOS_MAX_CLASSES) {
            snprintf(msg, msglen, "%u QoS classes already: no room for %s", QOS_MAX_CLASSES,
                     QOS_INTERNAL_NAME);
            return -ENOSPC;
        }
        s->internal = s->ncls++;
        c = &s->cls[s->internal];
        memset(c, 0, sizeof(*c));
        snprintf(c->name, sizeof(c->name), "%s", QOS_INTERNAL_NAME);
        c->last.met = -1;
    }
    c = &s->cls[s->internal];
    c->rate_mbps = min_mbps;
    s->internal_min_mbps = min_mbps;
    s->internal_max_mbps = max_mbps;
    return 0;
}

double qos_internal_rate(struct qos_sched *s, uint64_t now)
{
    if (!s->internal)
        return 0;
    qos_tick(s, now);
    if (s->outstanding || s->nupper || s->nlower || s->arrivals || s->last_arrivals)
        return s->internal_min_mbps;
    return s->internal_max_mbps;
}

void qos_internal_done(struct qos_sched *s, uint64_t bytes, uint64_t now)
{
    struct qos_class *c;

    if (!s->internal)
        return;
    qos_tick(s, now);
    c = &s->cls[s->internal];
    c->issued_bytes += bytes;
    c->served_bytes += bytes;
}

static double weight(const struct qos_class *c)
{
    return c->rate_mbps > 0 ? c->rate_mbps : QOS_NO_SLO_WEIGHT;
}

static double deadline_ms(const struct qos_class *c)
{
    return c->rate_mbps > 0 ? c->latency_ms : QOS_NO_SLO_DEADLINE_MS;
}

/* When a request of c arriving at now conforms to c's rate: the bound is
 * promised only while a class issues at most its rate (qos.h), so EDF
 * counts a request's deadline from the time it would conform, by a token
 * bucket of the class's rate holding one latency bound's worth of bytes
 * (bursts within it conform at once).  A class over its rate then gets
 * ever later deadlines and takes what the conforming ones leave, instead
 * of crowding them out with deadlines as early as theirs. */
static uint64_t release_us(const struct qos_sched *s, struct qos_class *c, uint64_t bytes,
                           uint64_t now)
{
    double t = (double)now, bucket = deadline_ms(c) * 1000, lead = 0;
    double base = fmax(c->next_release_us, t - bucket);

    /* a class over its rate for long is not owed ever later deadlines (it
     * would starve once the others come back): its conformance time runs
     * at most QOS_LEAD_BOUNDS times the largest bound ahead of now, so it
     * waits a bounded time */
    for (uint32_t i = 0; i < s->ncls; i++)
        if (s->cls[i].rate_mbps > 0)
            lead = fmax(lead, QOS_LEAD_BOUNDS * s->cls[i].latency_ms * 1000);
    base = fmin(base, t + lead);

    c->next_release_us = base + (double)bytes / weight(c);  /* MB/s = bytes/us */
    return (uint64_t)fmax(base, t);
}

/* D when full, in requests: the EDF depth L (at least one request).
 * The paper's D, the sum of the classes' rates over a window, is more
 * than the store serves in a window whenever the SLOs add up to more
 * than its capacity (the paper's own experiment: 60 MB/s on a 50 MB/s
 * disk), so with every request in flight already below it never binds
 * and EDF alone orders a saturated store: shares then follow deadlines,
 * not rates.  Counted in the units that are in flight at the store, the
 * credit lets DSFQ choose every request that enters EDF: EDF orders at
 * most L of them while the store holds at most L, and shares follow the
 * start tags (qos.h). */
static double credit_full(const struct qos_sched *s)
{
    return s->depth >= QOS_DEPTH_INF ? QOS_DEPTH_INF : s->depth ? s->depth : 1;
}

/* The credit left: D less the requests waiting in EDF.  Each request that
 * EDF starts in the store gives its credit back at once (the paper's
 * idleness report at the finest grain), rather than the whole D once EDF
 * has emptied: with D refilled in batches, a request of a class within
 * its share, first by tag and by deadline, still waited above for a whole
 * batch to drain into the store and then behind it in the store, about 2
 * L services; given back one by one it moves down at the next start and
 * starts at the one after, behind at most L in the store.  EDF still
 * orders only what DSFQ chose, at most L at a time, so the shares follow
 * the start tags as before. */
static double credit_left(const struct qos_sched *s)
{
    double full = credit_full(s);

    return (double)s->nlower >= full ? 0 : full - (double)s->nlower;
}

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return x < y ? -1 : x > y;
}

/* The 95th percentile (nearest rank) of n samples; sorts them. */
static double p95(float *samples, uint32_t n)
{
    uint32_t rank;

    if (!n)
        return 0;
    qsort(samples, n, sizeof(*samples), by_value);
    rank = (uint32_t)ceil(0.95 * n);
    return samples[rank ? rank - 1 : 0];
}

/* Requests waiting whose deadline falls before due. */
static uint64_t count_due(const struct qos_req *q, uint64_t due)
{
    uint64_t n = 0;

    for (; q; q = q->next)
        n += q->deadline_us <= due;
    return n;
}

/* The depth a probe tries from L: half as much again (at least one more). */
static double probe_depth(double L)
{
    return L + ceil(L / 2);
}

/* The feedback controller at the end of a window (qos.h); the classes'
 * last windows are filled already. */
static void control_depth(struct qos_sched *s, uint64_t end, int busy)
{
    double L = s->depth, X = (double)s->completed, Lmin, Lbar, min_rt = INFINITY, next;
    double n = (double)s->nupper + s->nlower + s->outstanding + s->arrivals;
    /* in the store: due soon enough to count (they are being served) */
    double due = (double)s->outstanding + (double)count_due(s->upper, end + s->window_us) +
                 (double)count_due(s->lower, end + s->window_us);
    double rt[QOS_MAX_CLASSES];
    int have = 0, all_met = 1, wait_miss = 0, grow, probe;
    uint32_t cap;

    if (X == 0) {
        /* nothing completed: stuck behind a slow store, or idle */
        s->overloaded = s->outstanding > 0 || s->nupper + s->nlower > 0;
        if (s->overloaded)
            s->depth = QOS_DEPTH_INF;
        return;
    }
    for (uint32_t i = 0; i < s->ncls; i++) {
        struct qos_class *c = &s->cls[i];

        /* classes whose deadline falls within the next window, by what
         * they sent in this one */
        if (deadline_ms(c) * 1000 <= (double)s->window_us)
            due += (double)c->arrivals;
        rt[i] = -1;
        if (c->rate_mbps > 0 && c->last.p95_ms > 0) {
            /* what the bound leaves after the wait above the store, over
             * the store's own p95: the wait is what a deeper store
             * shortens, so it must not count as the store's slowness */
            rt[i] = c->last.store_p95_ms > 0
                        ? L * (c->latency_ms - c->last.wait_ms) / c->last.store_p95_ms
                        : QOS_DEPTH_INF;
            all_met &= c->last.met == 1;
            /* missed, though the store alone kept the bound: missed by
             * waiting above the store */
            wait_miss |= c->last.met == 0 && c->last.store_p95_ms <= c->latency_ms;
            if (rt[i] < 1)
                rt[i] = 1;
            if (rt[i] < min_rt)
                min_rt = rt[i];
            have = 1;
        }
    }
    /* not rounded up: a backlog of one request must not pass for overload */
    Lmin = due * L / X;
    Lbar = ceil(n * L / X);
    if (Lbar < 1)
        Lbar = 1;
    /* more depth may add throughput only when depth, not demand, limited
     * X (the store was busy) and the store has not been seen to complete
     * this much before: its capacity unknown, or X past it by more than
     * the noise of "at capacity".  Otherwise a deeper store adds latency
     * only: every request in it is one more that a class coming on (or
     * with an earlier deadline) waits behind, served as by fifo. */
    probe = busy && (s->xcap <= 0 || X * QOS_CAP_PCT > 100 * s->xcap);
    if (!have) {
        /* no latency to keep: all the depth utilization can use */
        s->overloaded = 0;
        next = QOS_DEPTH_INF;
    } else if (min_rt < Lmin) {
        s->overloaded = 1;
        if (n <= X)
            next = fmax(min_rt, Lmin);
        else if (s->xcap <= 0)
            /* capacity unknown: the paper opens the depth ("infinite") to
             * gain throughput; a store that was kept busy at L is probed
             * instead, by half (the next window shows whether it gained:
             * a store serving one request at a time does not, and 64 in
             * it are 64 that a latency class waits behind), and one that
             * was not kept busy had depth enough: the least that meets
             * the due requests */
            next = busy ? probe_depth(L) : fmax(min_rt, Lmin);
        else if (X * 100 < QOS_CAP_PCT * s->xcap)
            /* below what the store did: the depth at which it did */
            next = fmax(min_rt, ceil(L * s->xcap / X));
        else
            /* at the store's capacity: more depth adds no throughput, only
             * latency (a single-server store, a disk serving in arrival
             * order); keep the depth the latency bounds allow, but not one
             * already seen to fall short of the capacity (that would only
             * deepen the overload) */
            next = fmax(min_rt, s->lshort + 1);
    } else {
        s->overloaded = 0;
        next = INFINITY;
        for (uint32_t i = 0; i < s->ncls; i++) {
            double cand;

            if (rt[i] < 0)
                continue;
            if (rt[i] > Lbar)
                cand = Lbar;
            else if (rt[i] < L || s->max_outstanding >= L)
                cand = rt[i];
            else
                cand = L;
            next = fmin(next, cand);
        }
        /* every bound held without overload: the depth does not shrink
         * (a shallower store only makes the later deadlines wait) */
        if (all_met)
            next = fmax(next, L);
        /* and it grows (to Lbar, the paper's bound for utilization, or to
         * what the latency allows) only where more depth may add
         * throughput, and by half at most: a probe that gains nothing is
         * undone the next window, but the requests it let into the store
         * and EDF still go first then, and a latency class waits behind
         * them */
        next = fmin(next, probe ? probe_depth(L) : L);
    }
    /* a bound missed by waiting above the store while the store is below
     * its capacity (or it is unknown) and the depth was reached: the
     * depth, not the store, made the class wait (fifo, unbounded, would
     * have kept the bound), so the depth doubles */
    grow = wait_miss && s->max_outstanding >= L &&
           (s->xcap <= 0 || X * 100 < QOS_CAP_PCT * s->xcap);
    /* past the least depth at which the store reached its capacity, more
     * depth adds only latency (and a class that comes on waits behind it
     * in the store), unless a bound needs it: a depth that growth reached
     * stays while every bound holds without overload; one that a probe
     * reached does not (it gained nothing, or this window would probe
     * again) */
    cap = s->lcap;
    if (cap && !s->overloaded && all_met && L > cap && !s->probed)
        cap = (uint32_t)L;
    if (grow)
        next = fmax(next, 2 * L);
    else if (cap && !probe)
        next = fmin(next, cap);
    s->depth = next >= QOS_DEPTH_INF   ? QOS_DEPTH_INF
               : next < QOS_DEPTH_MIN ? QOS_DEPTH_MIN
                                      : (uint32_t)next;
    s->probed = probe && s->depth > L;
    /* that depth: the one of a busy window that completed more than the
     * store had (a capacity not seen before, reached at L); lowered by a
     * busy window at capacity, raised when a busy window at it falls
     * short (the store or the load changed) */
    if (probe) {
        s->lcap = (uint32_t)L;
    } else if (busy) {
        if (X * 100 >= QOS_CAP_PCT * s->xcap) {
            if (!s->lcap || L < s->lcap)
                s->lcap = (uint32_t)L;
            if (L <= s->lshort)
                s->lshort = (uint32_t)L - 1;
        } else {
            if (L > s->lshort && (!s->lcap || L < s->lcap))
                s->lshort = (uint32_t)L;
            if (s->lcap && L >= s->lcap)
                s->lcap = (uint32_t)fmin(QOS_DEPTH_INF, ceil(L * s->xcap / X));
        }
    }
    /* the store's capacity: what it completed in a window it was kept
     * busy (empty less than QOS_BUSY_IDLE_PCT of it: demand did not limit
     * X), fading so that a slower store is learnt;
     * taken after the decision so that the first such window still sees
     * an unknown capacity */
    s->xcap *= (100.0 - QOS_CAP_FADE_PCT) / 100;
    if (busy && X > s->xcap)
        s->xcap = X;
}

/* The store empty from the later of since and the window's start to now
 * adds to the window's idle time. */
static void add_idle(struct qos_sched *s, uint64_t since, uint64_t now)
{
    uint64_t start = s->window_end > s->window_us ? s->window_end - s->window_us : 0;

    if (since < start)
        since = start;
    if (now > since)
        s->idle_us += now - since;
}

/* Ends the window that ended at end. */
static void close_window(struct qos_sched *s, uint64_t end)
{
    double secs = (double)s->window_us / 1e6;

    for (uint32_t i = 0; i < s->ncls; i++) {
        struct qos_class *c = &s->cls[i];
        struct qos_window *w = &c->last;

        w->issue_mbps = (double)c->issued_bytes / 1e6 / secs;
        w->served_mbps = (double)c->served_bytes / 1e6 / secs;
        w->p95_ms = p95(c->samples, c->nsamples);
        w->store_p95_ms = p95(c->store_samples, c->nsamples);
        w->wait_ms = c->waits ? c->wait_sum_ms / (double)c->waits : 0;
        w->served = c->completions;
        w->met = c->rate_mbps > 0 && c->nsamples ? w->p95_ms <= c->latency_ms : -1;
        if (w->met >= 0) {
            c->windows++;
            c->windows_met += (uint64_t)w->met;
        }
    }
    if (!s->outstanding)
        add_idle(s, s->idle_from, end);
    /* without an SLO there is no latency to keep: fifo's depth stays */
    if (s->policy == QOS_TWO_LEVEL && any_slo(s))
        control_depth(s, end, s->idle_us * 100 < (uint64_t)QOS_BUSY_IDLE_PCT * s->window_us);
    s->idle_us = 0;
    for (uint32_t i = 0; i < s->ncls; i++) {
        struct qos_class *c = &s->cls[i];

        c->issued_bytes = c->served_bytes = c->arrivals = c->completions = 0;
        c->nsamples = 0;
        c->wait_sum_ms = 0;
        c->waits = 0;
    }
    /* the depth may have changed */
    s->credit = credit_left(s);
    s->last_arrivals = s->arrivals;
    s->completed = s->arrivals = 0;
    s->max_outstanding = s->outstanding;
    s->windows++;
}

void qos_tick(struct qos_sched *s, uint64_t now)
{
    if (!s->window_end) {
        s->window_end = now + s->window_us;
        s->idle_from = now;
        s->credit = credit_full(s);
        return;
    }
    if (now < s->window_end)
        return;
    close_window(s, s->window_end);
    /* idle for longer: the windows in between saw nothing */
    s->window_end = now >= s->window_end + s->window_us ? now + s->window_us
                                                        : s->window_end + s->window_us;
}

void qos_submit(struct qos_sched *s, struct qos_req *r, uint64_t now)
{
    struct qos_class *c;

    qos_tick(s, now);
    if (r->cls >= s->ncls)
        r->cls = 0;
    c = &s->cls[r->cls];
    r->seq = s->seq++;
    r->arrive_us = now;
    r->deadline_us = release_us(s, c, r->bytes, now) + (uint64_t)(deadline_ms(c) * 1000);
    r->start_tag = fmax(s->vtime, c->last_finish);
    r->finish_tag = r->start_tag + (double)r->bytes / 1e6 / weight(c);
    c->last_finish = r->finish_tag;
    c->issued_bytes += r->bytes;
    c->arrivals++;
    c->queued++;
    s->arrivals++;
    r->where = QOS_UPPER;
    r->next = NULL;
    if (s->upper_tail)
        s->upper_tail->next = r;
    else
        s->upper = r;
    s->upper_tail = r;
    s->nupper++;
}

/* Takes the request *pp points at out of the upper queue. */
static struct qos_req *unlink_upper(struct qos_sched *s, struct qos_req **pp)
{
    struct qos_req *r = *pp;

    *pp = r->next;
    if (s->upper_tail == r) {
        s->upper_tail = NULL;
        for (struct qos_req *t = s->upper; t; t = t->next)
            s->upper_tail = t;
    }
    r->next = NULL;
    s->nupper--;
    return r;
}

/* DSFQ: the waiting request with the least start tag (ties: the oldest). */
static struct qos_req *pick_dsfq(struct qos_sched *s)
{
    struct qos_req **best = &s->upper, **pp;

    for (pp = &s->upper; *pp; pp = &(*pp)->next)
        if ((*pp)->start_tag < (*best)->start_tag)
            best = pp;
    s->vtime = (*best)->start_tag;
    return unlink_upper(s, best);
}

/* TWO_LEVEL: moves requests down while the credit lasts. */
static void move_down(struct qos_sched *s, uint64_t now)
{
    double room = credit_left(s);

    /* the credit was spent and EDF has started some since: refilled */
    if (s->upper && s->credit <= 0 && room > 0)
        s->refills++;
    s->credit = room;
    while (s->upper && s->credit > 0) {
        struct qos_req *r = pick_dsfq(s);

        s->credit -= 1;
        r->where = QOS_LOWER;
        r->lower_us = now;
        r->next = s->lower;
        s->lower = r;
        s->nlower++;
    }
}

/* EDF: the waiting request with the earliest deadline (ties: the oldest). */
static struct qos_req *pick_edf(struct qos_sched *s)
{
    struct qos_req **best = &s->lower, **pp, *r;

    for (pp = &s->lower; *pp; pp = &(*pp)->next)
        if ((*pp)->deadline_us < (*best)->deadline_us ||
            ((*pp)->deadline_us == (*best)->deadline_us && (*pp)->seq < (*best)->seq))
            best = pp;
    r = *best;
    *best = r->next;
    r->next = NULL;
    s->nlower--;
    return r;
}

static struct qos_req *to_store(struct qos_sched *s, struct qos_req *r, uint64_t now)
{
    struct qos_class *c = &s->cls[r->cls];

    if (!s->outstanding)
        add_idle(s, s->idle_from, now);
    c->queued--;
    c->in_store++;
    r->where = QOS_STORE;
    r->store_us = now;
    s->outstanding++;
    if (s->outstanding > s->max_outstanding)
        s->max_outstanding = s->outstanding;
    return r;
}

struct qos_req *qos_take_any(struct qos_sched *s)
{
    if (s->lower)
        return to_store(s, pick_edf(s), s->window_end);
    if (s->upper)
        return to_store(s, unlink_upper(s, &s->upper), s->window_end);
    return NULL;
}

struct qos_req *qos_next(struct qos_sched *s, uint64_t now)
{
    struct qos_req *r;

    qos_tick(s, now);
    if (s->policy == QOS_TWO_LEVEL) {
        move_down(s, now);
        if (!s->lower || s->outstanding >= s->depth)
            return NULL;
        r = pick_edf(s);
        struct qos_class *c = &s->cls[r->cls];

        c->wait_sum_ms += (double)(now - r->arrive_us) / 1000;
        c->waits++;
    } else {
        if (!s->upper || s->outstanding >= s->depth)
            return NULL;
        r = s->policy == QOS_DSFQ ? pick_dsfq(s) : unlink_upper(s, &s->upper);
    }
    return to_store(s, r, now);
}

void qos_done(struct qos_sched *s, struct qos_req *r, uint64_t now)
{
    struct qos_class *c = &s->cls[r->cls];

    qos_tick(s, now);
    if (--s->outstanding == 0)
        s->idle_from = now;
    s->completed++;
    c->in_store--;
    c->served_bytes += r->bytes;
    c->completions++;
    c->requests++;
    if (c->nsamples < QOS_SAMPLES) {
        c->store_samples[c->nsamples] = (float)((double)(now - r->store_us) / 1000);
        c->samples[c->nsamples++] = (float)((double)(now - r->arrive_us) / 1000);
    }
    r->where = 0;
}
