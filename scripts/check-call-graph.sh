#!/bin/bash
# Checks that the C files of one folder call each other one way only, and
# that its files include each other one way only.
#
#   scripts/check-call-graph.sh BUILDDIR FOLDER      e.g. _build iraid
#
# Reads the built object of each FOLDER/*.c of the source tree with nm: a file "uses" another when it references
# a symbol (function or data) the other defines.  Prints, for each file,
# the files it uses, then topologically sorts that graph: exit 0 and
# "acyclic" when there is no cycle, exit 1 and tsort's report of the loop
# otherwise.  Calls through function pointers are not seen: they are the
# way a lower file is meant to reach a higher one (callbacks).
set -eu
builddir=${1:?usage: check-call-graph.sh BUILDDIR FOLDER}
folder=${2:?usage: check-call-graph.sh BUILDDIR FOLDER}

srcdir=$(cd "$(dirname "$0")/.." && pwd)
shopt -s nullglob
# The object of each source file of the folder, as automake names it:
# .libs/LIB_la-FILE.o or .libs/FILE.o (libtool), PROG-FILE.o or FILE.o.
# Going from the sources keeps objects of renamed or deleted files, still
# lying in an old build directory, out of the graph.
objs=()
for c in "$srcdir/$folder"/*.c; do
    name=$(basename "$c" .c)
    found=("$builddir/$folder"/.libs/*_la-"$name".o "$builddir/$folder/.libs/$name.o"
           "$builddir/$folder"/*-"$name".o "$builddir/$folder/$name.o")
    for o in "${found[@]}"; do
        [ -f "$o" ] && { objs+=("$o"); break; }
    done
done
if [ ${#objs[@]} -eq 0 ]; then
    echo "check-call-graph: no objects under $builddir/$folder (build first)" >&2
    exit 2
fi

# The source file an object was built from.
src_of() {
    local base
    base=$(basename "$1" .o)
    base=${base##*_la-}
    echo "${base##*-}.c"
}

defs=$(mktemp) edges=$(mktemp)
trap 'rm -f "$defs" "$edges"' EXIT
for o in "${objs[@]}"; do
    src=$(src_of "$o")
    nm -g --defined-only "$o" | awk -v f="$src" 'NF == 3 { print $3, f }' >>"$defs"
done
for o in "${objs[@]}"; do
    src=$(src_of "$o")
    nm -u "$o" | awk '{ print $NF }' | sort -u |
        join -o 2.2 - <(sort -k1,1 "$defs") | sort -u |
        awk -v f="$src" '$1 != f { print f, $1 }' >>"$edges"
done

for o in "${objs[@]}"; do
    src=$(src_of "$o")
    uses=$(awk -v f="$src" '$1 == f { printf " %s", $2 }' "$edges")
    echo "$src uses:${uses:- (none)}"
done
# tsort wants every file named, so a file with no edge is a self-pair.
if ! { cat "$edges"; for o in "${objs[@]}"; do s=$(src_of "$o"); echo "$s $s"; done; } |
        tsort >/dev/null; then
    echo "check-call-graph: $folder: the files above call each other in a circle" >&2
    exit 1
fi

# The same for #include "FOLDER/x.h" lines between the folder's files.
includes() {
    local f b h
    for f in "$srcdir/$folder"/*.[ch]; do
        b=$(basename "$f")
        echo "$b $b"
        sed -n "s|^#include \"$folder/\([^/\"]*\)\".*|\1|p" "$f" |
            while read -r h; do [ "$h" = "$b" ] || echo "$b $h"; done
    done
}
if ! includes | tsort >/dev/null; then
    echo "check-call-graph: $folder: the files include each other in a circle" >&2
    exit 1
fi
echo "$folder: acyclic (calls and includes)"
