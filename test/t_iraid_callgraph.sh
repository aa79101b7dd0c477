#!/bin/bash
# The files of iraid/ call each other one way only (no circle): checked on
# the built objects by scripts/check-call-graph.sh (nm: which file's
# symbols each object uses, then a topological sort).
# timeout: 60
set -u
srcdir=${IPVFS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${IPVFS_BUILDDIR:?IPVFS_BUILDDIR must name the build directory}
if ! command -v nm >/dev/null || ! command -v tsort >/dev/null; then
    echo "nm or tsort missing (binutils, coreutils)"
    exit 77
fi
"$srcdir/scripts/check-call-graph.sh" "$builddir" iraid
