/* The I/O node's QoS scheduler: which waiting READ or WRITE goes to the
 * datafile store next, per application class (the policy of vPFS's
 * two-level scheduler, Xu and Zhao; ../shared/papers).  Pure: no sockets,
 * no clock, no server state; the caller passes the time in microseconds,
 * so the policy is unit tested on synthetic arrivals (test/test_qos.c,
 * test/test_qos_depth.c) and driven live by qos_svc.c.
 *
 * A class is a name with an SLO (t, l): a throughput t in MB/s (10^6
 * bytes) and a latency bound l in ms at the 95th percentile, kept while
 * the class issues at most t.  Class 0 is "default": requests of classes
 * nobody set an SLO for fall into it.  Classes without an SLO (rate 0)
 * weigh QOS_NO_SLO_WEIGHT and have the deadline QOS_NO_SLO_DEADLINE_MS.
 *
 * Policies (enum qos_policy):
 *   FIFO       requests start in arrival order, no bound on how many are
 *              in the store (what the I/O node did before); only measured.
 *   DSFQ       start-time fair queueing by weight t: each request gets a
 *              start tag max(V, the class's previous finish tag) and a
 *              finish tag start + bytes / t; the smallest start tag goes
 *              first (ties: arrival order); V is the start tag of the
 *              request dispatched last.  At most QOS_DSFQ_DEPTH requests
 *              in the store.  Global proportional sharing across I/O nodes
 *              by the paper's layout-based scheme in its simplest form:
 *              files are striped evenly over every I/O node by default, so
 *              a class's service at each node is its global service over
 *              the number of nodes and the local tags need no broadcast.
 *   TWO_LEVEL  DSFQ above, whose depth is a credit D in requests: a
 *              request moves down while D > 0 and takes one off D; each
 *              request EDF starts in the store gives its one back, so D
 *              is the EDF depth L less the requests waiting in EDF (the
 *              paper's idleness report, which refills D, at the finest
 *              grain: refilled only once EDF had emptied, a request of a
 *              class within its share waited above for a whole batch and
 *              then behind it in the store, about 2 L services, where
 *              now it comes down at the next start).  (The paper's D is
 *              the sum of the classes' t per window, in MB: whenever the
 *              SLOs add up to more than the store serves, as in its own
 *              experiment, that never binds, every request moves down at
 *              once and EDF alone orders a saturated store; counted in
 *              the store's slots, DSFQ chooses every request that enters
 *              EDF, so shares follow the rates and EDF orders at most L
 *              at a time.)  Below,
 *              EDF (deadline = l after the request conforms to t, by a
 *              token bucket of l's worth, at most QOS_LEAD_BOUNDS
 *              largest bounds ahead of arrival) with one depth L for all
 *              classes, set once per window by the feedback controller
 *              (qos_window below, the paper's section 3.2.2).
 *
 * The controller at the end of window k (X requests completed, L the
 * depth, Lmax the most requests in the store at once, N the requests
 * waiting or in the store or arrived this window, Ndue those whose
 * deadline falls before the end of the next window):
 *   per class i with samples: E_i = (l_i - MT_i) / T_i (MT_i its mean
 *   wait in the scheduler, T_i the p95 of its time in the store alone:
 *   the bound left after waiting over what the store takes; a wait that
 *   a deeper store would shorten must not read as a slow store), L_RT_i
 *   = L E_i;
 *   Lmin = Ndue L / X, Lbar = N L / X (capacity predicted from this one);
 *   a probe when the store was kept busy (empty less than
 *   QOS_BUSY_IDLE_PCT of the window, so that demand did not limit X) and
 *   completed more than it had been seen to: Xcap, the most a busy window
 *   completed (fading QOS_CAP_FADE_PCT per window), unknown or below
 *   QOS_CAP_PCT of X; only then may more depth add throughput, and the
 *   depth grows to at most L + ceil(L / 2) (a probe that gains nothing
 *   is undone by the next window: the least depth that reached the
 *   capacity caps it);
 *   overloaded when min L_RT_i < Lmin: if N <= X, L = max(min L_RT_i,
 *   Lmin); if N > X, the paper opens the depth (QOS_DEPTH_INF) to gain
 *   throughput, which holds only for a store whose throughput grows with
 *   depth.  Here Xcap decides: unknown -> a probe, L + ceil(L / 2), in a
 *   busy window, else max(min L_RT_i, Lmin); X below QOS_CAP_PCT of Xcap -> the
 *   depth that reached it, max(min L_RT_i, L Xcap / X); X at Xcap -> more
 *   depth only adds latency (a single server, a disk in arrival order):
 *   L = max(min L_RT_i, Lshort + 1), Lshort the greatest depth a busy
 *   window was seen to fall short of Xcap at (less would only deepen the
 *   overload);
 *   and in every case but a probe L is at most Lcap, the least depth at
 *   which a busy window reached QOS_CAP_PCT of Xcap (a probe's L: the
 *   depth of a new capacity; raised to L Xcap / X when a busy window at
 *   Lcap falls short): beyond it depth adds only latency (but see the
 *   growth rule below, and a depth the growth rule reached stays while
 *   every bound holds without overload; one a probe reached does not);
 *   otherwise each class proposes Lbar if L_RT_i > Lbar, L_RT_i if
 *   L_RT_i < L or Lmax >= L, else L; the new L is the least proposal
 *   (QOS_DEPTH_INF when no class with an SLO was served: no latency to
 *   keep), and at least L when every class kept its bound (a shallower
 *   store would only make the later deadlines wait), and at most L
 *   unless the window is a probe (more depth that adds no throughput
 *   only puts more requests ahead of a class coming on: with the
 *   capacity unknown, the paper's Lbar, N L / X with N counting the L
 *   in the store, grew the depth 8, 11, 15, 21 on a store serving one
 *   request at a time, and the first overloaded windows were served as
 *   by fifo);
 *   in every case, when a class missed its bound though its store p95
 *   alone kept it (it missed by waiting), the depth was reached (Lmax >=
 *   L) and the store is below QOS_CAP_PCT of Xcap (or Xcap unknown), the
 *   depth, not the store, made it wait: L doubles (past Lcap: fifo,
 *   unbounded, would have kept that bound).
 *   X = 0 with requests outstanding: overloaded, L = QOS_DEPTH_INF.
 *   L stays within [QOS_DEPTH_MIN, QOS_DEPTH_INF]; it starts at
 *   QOS_DEPTH_MIN when the first class gets an SLO.  Until then there is
 *   no latency to keep: the depth is unbounded, as fifo's, and the
 *   controller does not run, so a two-level node without SLOs starts
 *   every request as it comes, as fifo does (its DSFQ and EDF order
 *   only what waits, and nothing waits).
 *
 * Request states: UPPER (waiting in DSFQ or, FIFO, in the queue) ->
 * LOWER (TWO_LEVEL: waiting in EDF) -> STORE (qos_next returned it) ->
 * done (qos_done).  A request leaves only by qos_next and qos_done. */
#ifndef IPVFS_SERVER_QOS_H
#define IPVFS_SERVER_QOS_H

#include <stddef.h>
#include <stdint.h>

#define QOS_MAX_CLASSES 32
#define QOS_NAME_MAX 63               /* bytes of a class name */
#define QOS_DEPTH_INF 64              /* the paper's "infinite" depth */
/* With an SLO set, the EDF depth starts at, and never goes below, 2: at depth 1 the store
 * is empty from each completion until the event loop has sent the reply
 * and started the next request (7 ms of every 105 on the benchmark's
 * rate store: one class alone got 92% of fifo); one more request in the
 * store covers that gap and costs a class coming on one service more.
 * Starting small (rather than 8, or the paper's growth with the store's
 * capacity unknown) keeps the first overloaded windows from being served
 * as by fifo; depth grows where it is shown to add throughput. */
#define QOS_DEPTH_MIN 2
#define QOS_DEPTH_INIT QOS_DEPTH_MIN
#define QOS_DSFQ_DEPTH 8
#define QOS_CAP_PCT 90                /* X this close to Xcap: at capacity */
#define QOS_CAP_FADE_PCT 2            /* Xcap fades this much per window */
#define QOS_BUSY_IDLE_PCT 5           /* a store empty less of a window: busy */
#define QOS_LEAD_BOUNDS 4             /* EDF: conformance at most this many bounds ahead */
#define QOS_SAMPLES 2048              /* latencies kept per class and window */
#define QOS_NO_SLO_WEIGHT 10.0        /* MB/s */
#define QOS_NO_SLO_DEADLINE_MS 10000.0
#define QOS_MAX_RATE_MBPS 1000000.0   /* 1 TB/s: more is a unit mistake */
#define QOS_MIN_LATENCY_MS 0.1
#define QOS_MAX_LATENCY_MS 3600000.0  /* an hour */
#define QOS_DEFAULT_WINDOW_MS 1000

enum qos_policy { QOS_FIFO = 0, QOS_DSFQ = 1, QOS_TWO_LEVEL = 2 };
enum qos_where { QOS_UPPER = 1, QOS_LOWER = 2, QOS_STORE = 3 };

struct qos_req {
    uint32_t cls;
    uint64_t bytes;
    /* the caller's: starts it (qos_svc_close drains the queues with it) */
    void (*start)(struct qos_req *r);
    /* set by the scheduler */
    uint64_t seq;
    uint64_t arrive_us, lower_us, store_us, deadline_us;
    double start_tag, finish_tag;
    enum qos_where where;
    struct qos_req *next;
};

/* What one class did in the last complete window (what status shows). */
struct qos_window {
    double issue_mbps, served_mbps;
    double p95_ms;                    /* 0 without samples */
    double store_p95_ms;              /* of the time in the store alone */
    double wait_ms;                   /* mean wait in the scheduler (both levels) */
    uint64_t served;                  /* requests completed */
    int met;                          /* 1 met, 0 missed, -1 no SLO or no samples */
};

struct qos_class {
    char name[QOS_NAME_MAX + 1];
    double rate_mbps;                 /* 0: no SLO */
    double latency_ms;
    double last_finish;               /* DSFQ: finish tag of its latest request */
    double next_release_us;           /* EDF: when its next request conforms */
    uint32_t queued, in_store;
    /* the window in progress */
    uint64_t issued_bytes, served_bytes, arrivals, completions;
    uint32_t nsamples;
    float samples[QOS_SAMPLES];       /* latencies, ms */
    float store_samples[QOS_SAMPLES]; /* of them, the time in the store */
    double wait_sum_ms;
    uint64_t waits;
    /* the last complete window, and since start */
    struct qos_window last;
    uint64_t windows, windows_met, requests;
};

struct qos_sched {
    enum qos_policy policy;
    uint64_t window_us;
    uint64_t window_end;              /* 0: no window started yet */
    struct qos_class cls[QOS_MAX_CLASSES];
    uint32_t ncls;
    struct qos_req *upper, *upper_tail, *lower;
    uint32_t nupper, nlower, outstanding;
    uint64_t seq;
    double vtime;                     /* DSFQ's virtual time */
    double credit;                    /* TWO_LEVEL: requests that may move down */
    uint32_t depth;                   /* requests allowed in the store */
    /* the window in progress */
    uint32_t max_outstanding;
    uint64_t completed, arrivals;
    /* the last window's verdict, and counts since start */
    /* internal work (rebuild, scrub): its class (0: none) and pace */
    uint32_t internal;
    double internal_min_mbps, internal_max_mbps;
    uint64_t last_arrivals;           /* requests that arrived in the last window */
    int overloaded;
    double xcap;                      /* the store's capacity, requests/window */
    uint32_t lcap;                    /* the least depth that reached it; 0 unknown */
    uint32_t lshort;                  /* the most depth seen short of it; 0 none */
    int probed;                       /* the depth was raised to see if it adds throughput */
    uint64_t idle_from;               /* the store empty since (outstanding 0) */
    uint64_t idle_us;                 /* the store empty in the window so far */
    uint64_t refills;                 /* the credit spent, then given back with work above */
    uint64_t windows;
};

/* A scheduler of policy with windows of window_ms (> 0). */
void qos_init(struct qos_sched *s, enum qos_policy policy, uint32_t window_ms);
/* "fifo", "dsfq", "two-level": 0 and *out, or -EINVAL. */
int qos_policy_parse(const char *name, enum qos_policy *out);
const char *qos_policy_name(enum qos_policy p);

/* 0 when name is a valid class name (1..QOS_NAME_MAX printable bytes, no
 * spaces), else -EINVAL with the reason in msg. */
int qos_check_name(const char *name, size_t len, char *msg, size_t msglen);
/* 0 when (rate, latency) is a valid SLO, else -EINVAL with the reason:
 * both positive and finite, rate at most QOS_MAX_RATE_MBPS, latency
 * within [QOS_MIN_LATENCY_MS, QOS_MAX_LATENCY_MS]. */
int qos_check_slo(double rate_mbps, double latency_ms, char *msg, size_t msglen);
/* Sets (creating it) class name's SLO.  0, -EINVAL (bad name or SLO),
 * -ENOSPC (QOS_MAX_CLASSES classes already), reason in msg. */
int qos_set(struct qos_sched *s, const char *name, double rate_mbps, double latency_ms,
            char *msg, size_t msglen);
/* One line of an SLO file (qos_conf.c: "CLASS RATE LATENCY", units MB/s
 * and ms optional, "#" comments): 1 and name (QOS_NAME_MAX + 1 bytes),
 * rate, latency; 0 for a blank or comment line; -EINVAL with the reason. */
int qos_parse_slo_line(const char *line, char *name, double *rate, double *latency, char *msg,
                       size_t msglen);
/* Sets the SLOs of the file at path.  0, or -errno / -EINVAL with
 * "PATH:LINE: reason" in msg (classes before the bad line stay set). */
int qos_load_slo(struct qos_sched *s, const char *path, char *msg, size_t msglen);
/* Internal work (iRAID's rebuild and scrub) as the class "internal", md's
 * sync_speed_min/max in MB/s: while applications have requests (waiting,
 * in the store, or arrived in this window or the last) the sweeps get
 * min_mbps, else max_mbps (0: unlimited).  They do not queue in the
 * scheduler (a sweep holds one stripe at a time); they are paced.  The
 * class shows in status with min_mbps as its rate and the sweeps' MB/s
 * as issued and served; clients cannot name it (qos_lookup gives them
 * "default", qos_set refuses it).  0, or -EINVAL with the reason (min
 * must be > 0 and at most max unless max is 0), -ENOSPC. */
#define QOS_INTERNAL_NAME "internal"
int qos_set_internal(struct qos_sched *s, double min_mbps, double max_mbps, char *msg,
                     size_t msglen);
/* The MB/s internal work may have now (0: unlimited, also without an
 * internal class). */
double qos_internal_rate(struct qos_sched *s, uint64_t now);
/* Internal work moved bytes at now (counted as issued and served). */
void qos_internal_done(struct qos_sched *s, uint64_t bytes, uint64_t now);
/* The class of name: its index, or 0 (default) when nobody set it. */
uint32_t qos_lookup(const struct qos_sched *s, const char *name, size_t len);

/* A request of r->cls with r->bytes arrives at now. */
void qos_submit(struct qos_sched *s, struct qos_req *r, uint64_t now);
/* The next request to start in the store now, or NULL (nothing waits, or
 * the depth is reached).  The caller starts it and calls again. */
struct qos_req *qos_next(struct qos_sched *s, uint64_t now);
/* Any waiting request, whatever the depth and credit (the store is going
 * away: the caller fails it), or NULL.  It counts as in the store. */
struct qos_req *qos_take_any(struct qos_sched *s);
/* r (returned by qos_next or qos_take_any) completed at now. */
void qos_done(struct qos_sched *s, struct qos_req *r, uint64_t now);
/* Closes every window that ended by now (submit, next and done call it
 * too); the caller's timer calls it so idle windows close as well. */
void qos_tick(struct qos_sched *s, uint64_t now);

#endif
