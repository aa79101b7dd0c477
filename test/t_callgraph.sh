#!/bin/bash
# The files of each folder below call each other one way only (no
# circle): checked on the built objects by scripts/check-call-graph.sh (nm:
# which file's symbols each object uses, then a topological sort).  A
# folder joins the list once its call graph is acyclic.
# timeout: 300
set -u
srcdir=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${IPVFS_BUILDDIR:?IPVFS_BUILDDIR must name the build directory}
if ! command -v nm >/dev/null || ! command -v tsort >/dev/null; then
    echo "nm or tsort missing (binutils, coreutils)"
    exit 77
fi
rc=0
for folder in common cache iraid backend/dfstore backend/iscsi backend/server adio/client tools tools/cachesim fuse; do
    "$srcdir/scripts/check-call-graph.sh" "$builddir" "$folder" || rc=1
done
exit $rc
