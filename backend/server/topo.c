/* Core binding with hwloc: rank r runs on core r % ncores of the cores this
 * process may use, so that co-located ranks spread over the machine instead
 * of migrating between cores.  Binding is an optimisation: when it cannot be
 * done the rank says so and runs unbound, so topo_bind() always returns 0. */
#include <errno.h>
#include <hwloc.h>
#include <string.h>

#include "backend/server/server.h"
#include "common/log.h"

int topo_bind(struct server *srv)
{
    hwloc_topology_t topo;
    hwloc_obj_t core, pkg;
    int ncores, idx;

    if (srv->opts.no_bind) {
        log_info("not binding to a core (--no-bind)");
        return 0;
    }
    if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0) {
        log_warn("hwloc cannot read the topology (%s): running unbound", strerror(errno));
        return 0;
    }
    ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (ncores <= 0) {
        log_warn("hwloc found no cores: running unbound");
        goto destroy_topo;
    }
    idx = srv->rank % ncores;
    core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)idx);
    pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, core);
    /* PROCESS binds every thread, the MPI library's helpers included. */
    if (hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_PROCESS) < 0) {
        log_warn("cannot bind rank %d to core %d: %s (running unbound)", srv->rank, idx,
                 strerror(errno));
        goto destroy_topo;
    }
    log_info("bound rank %d to core %d of %d (package %d)", srv->rank, idx, ncores,
             pkg ? (int)pkg->logical_index : 0);
destroy_topo:
    hwloc_topology_destroy(topo);
    return 0;
}
