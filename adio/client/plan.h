/* Request planning for list I/O: pure functions, no I/O (unit-tested by
 * test/test_client_plan.c).
 *
 * plan_build() walks the file extents and the memory iovecs together,
 * splits the extents at stripe-unit boundaries and gives each piece to the
 * I/O node that holds it, as a datafile (offset, length) pair.  Per server,
 * pieces accumulate into one request until it would carry more than
 * max_bytes of data or max_pairs pairs, or a run of adjacent datafile bytes
 * longer than max_run; then a new request starts.  So a large contiguous
 * access is cut into requests of max_run bytes (the schedule block b the
 * heuristics order), while the short pieces of a noncontiguous access
 * travel together, one request per server (list I/O).  A pair that
 * continues the previous pair of its request in the datafile is merged
 * into it, and memory segments that continue each other are merged too.
 * The data of a request is its memory segments in order, matching its
 * pairs in order. */
#ifndef IPVFS_CLIENT_PLAN_H
#define IPVFS_CLIENT_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "adio/client/ipvfs_client.h"
#include "common/layout.h"
#include "common/proto.h"

/* Internal names stay out of libipvfs-romio.so's exported symbols. */
#pragma GCC visibility push(hidden)

struct plan_limits {
    uint64_t max_bytes;   /* data per request, > 0 */
    uint32_t max_pairs;   /* pairs per request, > 0 */
    uint64_t max_run;     /* longest pair of a request; 0: max_bytes */
};

struct plan_req {
    uint32_t server;      /* I/O node index */
    uint32_t npairs;
    uint32_t pairs_cap;
    int niov;
    int iov_cap;
    struct ipvfs_pair *pairs;
    struct iovec *iov;
    uint64_t bytes;       /* sum of the pairs' lengths */
};

struct plan {
    struct plan_req *reqs;
    size_t nreqs;
    size_t cap;
};

/* The limits of an access's requests: runs of at most the schedule block
 * b, and per request at most IPVFS_LIST_READ_BYTES of data when reading,
 * the protocol's IPVFS_MAX_IO_BYTES when writing (ipvfs_client.h says
 * why), and IPVFS_MAX_PAIRS pairs. */
struct plan_limits plan_limits_for(uint64_t block, int writing);

/* Builds *out_plan (free it with plan_free, also after a failure).
 * Returns 0, -EINVAL when the two sides hold different byte counts or an
 * extent runs past 2^64, -ENOMEM. */
int plan_build(const struct stripe_layout *layout, const struct ipvfs_extent *ext, size_t next,
               const struct iovec *mem, int memcnt, const struct plan_limits *limits,
               struct plan *out_plan);
void plan_free(struct plan *plan);

#pragma GCC visibility pop

#endif
