/* Core binding with hwloc: the i-th rank of this node runs on core
 * i % ncores of the cores this process may use, so that co-located ranks
 * spread over the machine instead of migrating between cores.  i is the
 * node-local rank that Hydra exports (MPI_LOCALRANKID), else the global
 * rank; no MPI call here, since a rank that failed earlier in start-up
 * would leave the others blocked in a collective.  Binding is an
 * optimisation: when it cannot be done the rank says so and runs unbound,
 * so topo_bind() always returns 0. */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/server/server.h"
#include "common/log.h"

static int local_rank(const struct server *srv)
{
    const char *s = getenv("MPI_LOCALRANKID");
    char *end;
    long v;

    if (!s || !s[0])
        return srv->rank;
    errno = 0;
    v = strtol(s, &end, 10);
    return errno || *end || v < 0 || v > 1 << 20 ? srv->rank : (int)v;
}

/* One line for the log: what hwloc sees and what this process may use. */
static void log_topology(hwloc_topology_t topo)
{
    char *allowed = NULL;

    if (hwloc_bitmap_list_asprintf(&allowed, hwloc_topology_get_allowed_cpuset(topo)) < 0)
        allowed = NULL;
    log_info("topology: %d package(s), %d core(s), %d PU(s); allowed PUs %s",
             hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE),
             hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE),
             hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU), allowed ? allowed : "?");
    free(allowed);
}

int topo_bind(struct server *srv)
{
    hwloc_topology_t topo;
    hwloc_obj_t core, pkg;
    char *pus = NULL;
    int ncores, idx, lrank;

    if (srv->opts.no_bind) {
        log_info("not binding to a core (--no-bind)");
        return 0;
    }
    if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0) {
        log_warn("hwloc cannot read the topology (%s): running unbound", strerror(errno));
        return 0;
    }
    log_topology(topo);
    ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (ncores <= 0) {
        log_warn("hwloc found no cores: running unbound");
        goto destroy_topo;
    }
    lrank = local_rank(srv);
    idx = lrank % ncores;
    core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)idx);
    pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, core);
    /* PROCESS binds every thread, the MPI library's helpers included. */
    if (hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_PROCESS) < 0) {
        log_warn("cannot bind rank %d to core %d: %s (running unbound)", srv->rank, idx,
                 strerror(errno));
        goto destroy_topo;
    }
    if (hwloc_bitmap_list_asprintf(&pus, core->cpuset) < 0)
        pus = NULL;
    snprintf(srv->cpus, sizeof(srv->cpus), "%s", pus ? pus : "");
    log_info("bound rank %d (node-local rank %d) to core %d of %d (package %d, PUs %s)",
             srv->rank, lrank, idx, ncores, pkg ? (int)pkg->logical_index : 0,
             pus ? pus : "?");
    free(pus);
destroy_topo:
    hwloc_topology_destroy(topo);
    return 0;
}
