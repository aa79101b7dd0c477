/* The iPVFS papers' two-level queuing model (pure: no I/O, no globals).
 *
 * The LCN 2005 paper and the journal paper (sections 4 of both) give the
 * mean response time of a request to PVFS (N I/O nodes with local disks)
 * and to iPVFS (Nio I/O nodes, each with an iRAID of Nt targets,
 * N = Nio (1 + Nt)) under Poisson arrivals at rate lambda: M/M/1 queues
 * for the network, the memory caches and (journal) the node processing,
 * M/G/1 (Pollaczek-Khinchine) for the disks.  doc/man/ipvfs-model.1.md
 * writes every equation out with its symbols; the names below follow it.
 *
 * Three variants:
 *   MODEL_LCN2005    the first paper: T_node a constant delay, no queue.
 *   MODEL_JOURNAL    the journal: W_node an M/M/1 queue whose arrival rate
 *                    is P_ij * lambda_i, as printed, at both levels.
 *   MODEL_CORRECTED  ours, fitted to the running system: each level's
 *                    piece is what one node really gets (a 64 KiB request
 *                    goes whole to one I/O node and one target, not
 *                    L/Nio to each), the node queues see the requests
 *                    that visit them, and an I/O node lets only Nt reads
 *                    into its iRAID at once (backend/server/ionode.c's
 *                    places): for requests that reach one target the
 *                    iRAID is a flow-equivalent server, its throughput
 *                    with n reads inside that of a closed network of Nt
 *                    targets and of the I/O node's receiving link, which
 *                    all its targets' pieces share, solved exactly
 *                    (model_iraid_exact_x; with the datafile store's
 *                    in-order delivery, model_iraid_inorder_x).  Its links are M/D/1 (one piece
 *                    size, one rate), and a request waits on the I/O
 *                    node's receiving link behind its targets' pieces.
 *                    With clients, each client process is a queue in
 *                    front of all that: it serves its requests one at
 *                    a time (M/G/1 of service T_s, the servers' time,
 *                    at lambda / clients, T_s's variance that of its
 *                    queueing part).
 * The papers' variants reproduce the printed equations, including their
 * piece sizes L_ip/Nio and L_ir/Nt (see the man page's NOTES). */
#ifndef IPVFS_MODEL_H
#define IPVFS_MODEL_H

enum model_variant { MODEL_LCN2005, MODEL_JOURNAL, MODEL_CORRECTED };

/* A disk as the M/G/1 queue sees it: positioning (seek + rotation, of mean
 * seek + rot and variance pos_var) then size / rate. */
struct model_disk {
    double rate;        /* bytes/s of media transfer */
    double seek;        /* mean seek, s */
    double rot;         /* mean rotational latency, s */
    double pos_var;     /* variance of seek + rotation, s^2 */
    double overhead;    /* fixed per-request time (controller, syscall), s */
};

/* The machine: bandwidths in bytes/s, times in s, stripe unit in bytes. */
struct model_params {
    double bw_net;      /* BW_net: one network hop */
    double bw_tnet;     /* corrected: a target's own link, when it differs
                         * from the I/O node's BW_net; 0: BW_net */
    double bw_cache;    /* BW_cache: memory copy */
    double t_node;      /* T_node: processing of a request in a node */
    double t_place;     /* corrected: the part of the two nodes' 2 T_node
                         * a read spends holding its place in the I/O
                         * node's store (the rest is outside); < 0:
                         * T_node, the target's */
    double t_handoff;   /* corrected: how long a place freed while reads
                         * wait stays free until the next takes it (a
                         * delay in each read's cycle through its place);
                         * 0: none */
    double node_cpu;    /* corrected: the part of T_node that is CPU work
                         * and queues (M/M/1), the rest a delay; < 0:
                         * all of it */
    double stripe;      /* B */
    struct model_disk disk;
    struct model_memo *memo; /* corrected: the targets' closed networks
                              * solved so far (model_iraid_exact_x), reused
                              * from one rate to the next; NULL: none */
};

/* What model_iraid_exact_x gave for which arguments, kept by the caller
 * (zeroed before its first use). */
#define MODEL_MEMO_SIZE 64
struct model_memo {
    unsigned used, next;
    struct {
        unsigned m, k;
        int in_order;
        double s, cs2, s_tx, s_link, delay, x;
    } e[MODEL_MEMO_SIZE];
};

/* One configuration: nt == 0 is PVFS (nio == N I/O nodes, local disks). */
struct model_config {
    unsigned nio, nt;
    double size;        /* L_ip, bytes */
    double h_io;        /* h_ioc: hit ratio of an I/O node's cache */
    double h_t;         /* h_tc: hit ratio of a target's cache (iPVFS) */
    unsigned clients;   /* corrected: the client processes issuing the
                         * requests, each serving its own one at a time
                         * in arrival order (the client library runs one
                         * batch at a time); 0: none, open arrivals */
    unsigned read_places; /* corrected: READ places per target at an I/O
                           * node (ipvfs-server --read-places; auto gives
                           * a target on another host 2); 0 or 1: one */
    int in_order;       /* corrected: an I/O node's reads are of one
                         * datafile, which the datafile store delivers in
                         * submission order: a place is freed once its
                         * read and every older one are done
                         * (model_iraid_inorder_x); 0: any order */
};

/* Every term, for the CSV and the tests.  Times in s. */
struct model_terms {
    double p_i, p_ij;           /* fraction of requests an I/O node, a target sees */
    double lambda_i, lambda_ij; /* rate into one iRAID (one PVFS disk), one disk */
    double piece_io, piece_t;   /* bytes an I/O node, a target handles per visit */
    double t_ionet, t_ioc, t_tnet, t_tc, t_disk, t_disk2;   /* service times, E(T^2) */
    double w_ionet, w_ioc, w_tnet, w_tc, w_node_io, w_node_t, w_disk, w_iraid;
    int iraid_fes;              /* corrected: the iRAID as a flow-equivalent server */
    double cs2_t;               /* corrected: squared coefficient of variation of
                                 * a target's service in it */
    double w_reqin;             /* corrected: a request's wait on the I/O node's
                                 * receiving link, behind its targets' pieces */
    double w_client;            /* corrected, clients > 0: the wait in a client's queue */
    double cs2_client;          /* corrected, clients > 0: the squared coefficient of
                                 * variation of the servers' time, its service */
    double rho_max;             /* the busiest queue's utilisation */
    double total;               /* T */
};

/* The ST318452LW of both papers: 51 MB/s, 3.8 ms mean seek, 2 ms mean
 * rotational latency (15k rpm); pos_var as the emulated disk draws it. */
void model_disk_preset(struct model_disk *d);
/* The first paper's section 5: 75 MB/s network, 500 MB/s memory, 64 KiB
 * stripe, T_node 0 (neither paper gives it), the preset disk. */
void model_params_paper(struct model_params *p);

/* Mean disk service time and its second moment for one request of bytes. */
void model_disk_moments(const struct model_disk *d, double bytes, double *mean, double *second);
/* M/M/1 mean residence time of service mean t at arrival rate lambda;
 * a negative value when rho = lambda t >= 1 (saturated). */
double model_mm1(double t, double lambda);
/* M/G/1 (Pollaczek-Khinchine) mean residence time; negative when saturated. */
double model_mg1(double mean, double second, double lambda);

/* Evaluates configuration c at total arrival rate lambda (requests/s).
 * Returns 0 and fills out, 1 when some queue is saturated (out->rho_max
 * >= 1, out->total is then +inf), -1 on an invalid configuration. */
int model_eval(enum model_variant v, const struct model_params *p,
               const struct model_config *c, double lambda, struct model_terms *out);
/* The rate at which the busiest queue reaches utilisation 1 (every
 * utilisation is linear in lambda, but a client's: with clients, where
 * lambda T_s(lambda) / clients reaches 1, found by bisection); 0 on an
 * invalid configuration. */
double model_saturation(enum model_variant v, const struct model_params *p,
                        const struct model_config *c);

/* Throughput of n requests circulating in a closed network of k
 * identical targets, each request visiting one of them chosen uniformly
 * (there a queue of service s, then the target's sending link, s_tx;
 * 0: none), then one shared queue of service s_link (the I/O node's
 * receiving link; 0: none), then a delay of handoff before its place
 * takes the next request, by exact mean value analysis.  With s_tx,
 * s_link and handoff 0: n / (s (1 + (n - 1) / k)). */
double model_iraid_throughput(unsigned n, unsigned k, double s, double s_tx, double s_link,
                              double handoff);
/* The same with a target's service of squared coefficient of variation
 * cs2 (1: exponential, the function above): a read arriving at a busy
 * target waits the residual s (1 + cs2) / 2 of the read in service
 * (Reiser's approximation for FCFS stations in MVA), each step held
 * to the operational bound X <= 1 / max(s / k, s_tx / k, s_link), which
 * the approximation passes with more requests than targets. */
double model_iraid_throughput_g(unsigned n, unsigned k, double s, double cs2, double s_tx,
                                double s_link, double handoff);
/* Mean residence time in a flow-equivalent server fed at rate lambda
 * whose service rate with n inside is model_iraid_throughput(min(n,
 * places), k, s, s_tx, s_link, h), h = handoff when n > places (reads
 * wait for a place) and 0 up to places; negative when saturated. */
double model_fes_residence(double lambda, unsigned places, unsigned k, double s, double s_tx,
                           double s_link, double handoff);
/* The same with model_iraid_throughput_g's cs2, and the wait for a place
 * scaled by (1 + cs2c) / 2, cs2c the squared coefficient of variation of
 * a place's cycle, cs2 s^2 / (s + s_tx + s_link + handoff)^2 (an M/G/c
 * queue as M/M/c's, Allen-Cunneen; for one place and one target with no
 * links, Pollaczek-Khinchine's M/G/1 exactly). */
double model_fes_residence_g(double lambda, unsigned places, unsigned k, double s, double cs2,
                             double s_tx, double s_link, double handoff);

/* The exact throughput of m reads circulating in model_iraid_throughput_g's
 * network without the targets' own links: one of k identical targets
 * chosen uniformly (single servers, first come first served, service of
 * mean s and squared coefficient of variation cs2), then the shared link
 * (exponential, mean s_link; 0: none), then a delay (exponential, mean
 * delay, no queue; 0: none).  The Markov chain of the network with the
 * targets' service as a phase-type distribution of those two moments (an
 * Erlang mixture below 1, at most MODEL_EXACT_PHASES phases, so a cs2
 * under 1 / MODEL_EXACT_PHASES is taken as that; hyperexponential above
 * 1), solved numerically (iraid_exact.c); with cs2 1 exact MVA's X.  -1
 * when the chain has more than max_states states, k >
 * MODEL_EXACT_MAX_TARGETS, or no memory. */
#define MODEL_EXACT_MAX_TARGETS 32
#define MODEL_EXACT_PHASES 20
double model_iraid_exact_x(unsigned m, unsigned k, double s, double cs2, double s_link,
                           double delay, unsigned max_states);
/* The largest chain the corrected variant solves: 5 reads on 5 targets
 * at cs2 0.05 (20 phases) with the link is about 100 000 states (a
 * fraction of a second); 10 on 5 (--read-places 2) millions: past it the
 * recursion with Reiser's approximation. */
#define MODEL_EXACT_MAX_STATES 200000
/* The throughput of m reads in model_iraid_throughput_g's network (the
 * targets' own links s_tx too) when a read's place is freed only once it
 * and every older read are done: the datafile store delivers the reads
 * of a datafile in submission order (backend/dfstore/dfstore.c,
 * deliver()), so with all of an I/O node's reads in one datafile a read
 * that a quiet target answered early waits for an older one at a busy
 * target (resequencing).  The service is model_iraid_exact_x's
 * phase-type fit, the links and the delay exponential as there; the
 * network is simulated (its own seeded generator: the same arguments
 * give the same result) for completions reads after a tenth as many
 * for warm-up.  -1 on bad arguments or no memory. */
double model_iraid_inorder_x(unsigned m, unsigned k, double s, double cs2, double s_tx,
                             double s_link, double delay, unsigned long completions);
#define MODEL_INORDER_COMPLETIONS 400000

/* X(j) = model_iraid_exact_x(j, ...), j = 1..n, into xs[1..n] (with
 * in_order, model_iraid_inorder_x's from j = 2 on; s_tx must be 0
 * otherwise), each looked up in memo first and kept there (memo may be
 * NULL).  0, or -1 when a chain is too large. */
int model_iraid_xs(struct model_memo *memo, int in_order, unsigned n, unsigned k, double s,
                   double cs2, double s_tx, double s_link, double delay, double *xs);

/* The splits of n nodes: every nio with nio (1 + nt) == n and nt >= 1
 * (iPVFS), in increasing nio.  Writes at most max into nio_out/nt_out and
 * returns how many there are. */
int model_splits(unsigned n, unsigned *nio_out, unsigned *nt_out, int max);

#endif
