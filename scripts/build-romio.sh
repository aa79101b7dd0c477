#!/bin/bash
# build-romio.sh -- build libipvfs-romio.so: ROMIO, the MPI-IO layer of MPICH,
# built standalone from the Debian source of the INSTALLED mpich, with
# iPVFS's ad_ipvfs driver (prefix "ipvfs:") and our fixes.
#
# Usage: scripts/build-romio.sh [OPTIONS]
#   --srcdir DIR     iPVFS top source dir (default: the directory above this script)
#   --builddir DIR   iPVFS top build dir (default: the current directory); the
#                    ROMIO tree is prepared and built in BUILDDIR/adio/romio
#   --output FILE    the library (default: BUILDDIR/adio/libipvfs-romio.so)
#   --cache DIR      where the fetched mpich source is kept (default:
#                    $IPVFS_CACHE, else SRCDIR/.cache, else BUILDDIR/.cache)
#   --ipvfs WHEN     auto (default): include ad_ipvfs when SRCDIR/adio/ad_ipvfs
#                    has sources and BUILDDIR/adio/client/.libs/libipvfs-client.a
#                    exists; yes: require it; no: ufs/nfs/testfs only
#   --jobs N         parallel make jobs for ROMIO (default 2)
#   --print-source   only make sure the mpich source tarball is in the cache
#                    (step 1's fetch) and print its path; build nothing
#                    (test/romio-conformance takes the MPI-IO tests from it)
#   -h, --help       this text
# Environment: MPICC (default mpicc), IPVFS_CACHE.
#
# Steps (each redone only when its inputs changed, so a second run with
# nothing changed takes a few seconds):
#  1. fetch: apt-get source --download-only mpich=<installed source version>
#     into the cache (needs a deb-src entry: scripts/setup-deps.sh adds one);
#     unpack src/mpi/romio and src/mpi/errhan/errnames.txt from it;
#  2. prepare: copy ROMIO into BUILDDIR/adio/romio, apply
#     adio/romio-fixes/*.patch (each explains itself), autoreconf;
#  3. sync: copy adio/romio-fixes/*.[ch] into ROMIO's ipvfs-fixes/ and the
#     driver's adio/ad_ipvfs/*.[ch] into ROMIO's adio/ad_ipvfs/ (only files
#     whose content changed), generate ipvfs-fixes/errmsg_table.c from
#     errnames.txt and adio/ad_ipvfs/Makefile.mk from the driver's file list;
#  4. configure ROMIO (CC=$MPICC, static PIC objects, file systems
#     ufs+nfs[+ipvfs]) when the arguments changed, then make;
#  5. link the library from libromio.a (whole), PIC libmpl, the client
#     library, with adio/romio-fixes/libipvfs-romio.map as export list.
set -eu

PROG=${0##*/}
die() { echo "$PROG: error: $*" >&2; exit 1; }
note() { echo "$PROG: $*" >&2; }
usage() { sed -n '2,/^set -eu$/p' "$0" | sed -e '/^set -eu$/d' -e 's/^# \{0,1\}//'; }

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=$PWD
output=
cache=${IPVFS_CACHE:-}
want_ipvfs=auto
jobs=2
print_source=0
while [ $# -gt 0 ]; do
    case $1 in
        --srcdir) srcdir=${2:?--srcdir needs a value}; shift 2 ;;
        --builddir) builddir=${2:?--builddir needs a value}; shift 2 ;;
        --output) output=${2:?--output needs a value}; shift 2 ;;
        --cache) cache=${2:?--cache needs a value}; shift 2 ;;
        --ipvfs) want_ipvfs=${2:?--ipvfs needs a value}; shift 2 ;;
        --jobs) jobs=${2:?--jobs needs a value}; shift 2 ;;
        --print-source) print_source=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
case $want_ipvfs in auto|yes|no) ;; *) die "--ipvfs must be auto, yes or no" ;; esac
case $jobs in ''|*[!0-9]*|0) die "--jobs must be a positive integer" ;; esac
[ -d "$srcdir/adio/romio-fixes" ] || die "$srcdir is not the iPVFS source dir (no adio/romio-fixes)"
srcdir=$(cd "$srcdir" && pwd)
mkdir -p "$builddir/adio" || die "cannot create $builddir/adio"
builddir=$(cd "$builddir" && pwd)
output=${output:-$builddir/adio/libipvfs-romio.so}
case $output in /*) ;; *) output=$PWD/$output ;; esac
if [ -z "$cache" ]; then    # a read-only source tree (make distcheck): the build dir
    cache=$srcdir/.cache
    mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] || cache=$builddir/.cache
fi
MPICC=${MPICC:-mpicc}
command -v "$MPICC" >/dev/null || die "MPI compiler '$MPICC' not found"
for tool in dpkg-query apt-get tar patch autoreconf automake libtoolize sha256sum flock; do
    command -v "$tool" >/dev/null || die "$tool not found (run scripts/setup-deps.sh)"
done

fixes=$srcdir/adio/romio-fixes
rdir=$builddir/adio/romio
log=$builddir/adio/romio-build.log

# Copies SRC to DST only when the content differs, so that make sees a new
# timestamp only on real changes.  Returns 0 when it copied.
sync_file() {
    if [ -f "$2" ] && cmp -s "$1" "$2"; then
        return 1
    fi
    cp "$1" "$2.tmp" && mv -f "$2.tmp" "$2" || die "cannot write $2"
    return 0
}

# Runs a logged step; on failure shows the end of the log.
run_logged() {   # $1 = what, $2 = log file, rest = command
    local what=$1 lf=$2
    shift 2
    if ! "$@" > "$lf" 2>&1; then
        tail -n 30 "$lf" >&2
        die "$what failed (full log: $lf)"
    fi
}

# ---------------------------------------------------------------------------
# 1. fetch
# ---------------------------------------------------------------------------
srcver=$(dpkg-query -W -f='${source:Version}' libmpich-dev 2>/dev/null) ||
    srcver=$(dpkg-query -W -f='${source:Version}' mpich 2>/dev/null) ||
    die "no mpich package installed (run scripts/setup-deps.sh)"
[ -n "$srcver" ] || die "cannot tell the installed mpich's source version"
upver=${srcver#*:}
upver=${upver%-*}
dl=$cache/mpich-$srcver
pristine=$dl/romio-$upver
mkdir -p "$dl" || die "cannot create cache dir $dl"
exec 8> "$dl/.lock"
flock 8 || die "cannot lock $dl/.lock"

# Sets orig to the source tarball in the cache, fetching it when missing.
fetch_orig() {
    orig=$(ls "$dl"/mpich_"$upver".orig.tar.* 2>/dev/null | head -n 1)
    [ -z "$orig" ] || return 0
    note "fetching the source of mpich $srcver into $dl"
    (cd "$dl" && apt-get source --download-only "mpich=$srcver") >&2 ||
        die "apt-get source --download-only mpich=$srcver failed; is there a deb-src entry (scripts/setup-deps.sh adds one)?"
    orig=$(ls "$dl"/mpich_"$upver".orig.tar.* 2>/dev/null | head -n 1)
    [ -n "$orig" ] || die "no mpich_$upver.orig.tar.* in $dl after apt-get source"
}

if [ $print_source = 1 ]; then
    fetch_orig
    echo "$orig"
    exit 0
fi
if [ ! -f "$pristine/.complete" ]; then
    fetch_orig
    note "unpacking ROMIO from $orig"
    rm -rf "$pristine" "$dl/unpack"
    mkdir -p "$dl/unpack"
    tar -xf "$orig" -C "$dl/unpack" --wildcards '*/src/mpi/romio/*' \
        '*/src/mpi/errhan/errnames.txt' || die "cannot unpack $orig"
    top=$(ls -d "$dl"/unpack/mpich-*/ 2>/dev/null | head -n 1)
    [ -n "$top" ] && [ -f "$top/src/mpi/romio/configure.ac" ] ||
        die "$orig has no src/mpi/romio"
    mkdir -p "$pristine"
    mv "$top/src/mpi/romio" "$pristine/romio"
    mv "$top/src/mpi/errhan/errnames.txt" "$pristine/errnames.txt"
    rm -rf "$dl/unpack"
    touch "$pristine/.complete"
fi
flock -u 8

# ---------------------------------------------------------------------------
# 2. prepare (from scratch when the source or a patch changed)
# ---------------------------------------------------------------------------
patches=$(ls "$fixes"/*.patch 2>/dev/null | LC_ALL=C sort)
[ -n "$patches" ] || die "no patches in $fixes"
prep_key=$( { echo "prepare-v1 $srcver"; cat $patches; } | sha256sum | cut -c1-32)
if [ "$(cat "$rdir/.ipvfs-prepared" 2>/dev/null)" != "$prep_key" ]; then
    note "preparing the ROMIO tree in $rdir"
    rm -rf "$rdir"
    cp -a "$pristine/romio" "$rdir" || die "cannot copy ROMIO into $rdir"
    for p in $patches; do
        patch -d "$rdir" -p1 -s --forward --no-backup-if-mismatch < "$p" ||
            die "patch ${p##*/} does not apply to ROMIO of mpich $srcver"
    done
    mkdir -p "$rdir/ipvfs-fixes" "$rdir/adio/ad_ipvfs"
    # placeholders for automake; step 3 writes the real ones
    : > "$rdir/ipvfs-fixes/Makefile.mk"
    : > "$rdir/adio/ad_ipvfs/Makefile.mk"
    rdir_new=1
else
    rdir_new=0
fi

# ---------------------------------------------------------------------------
# 3. sync our sources into the ROMIO tree
# ---------------------------------------------------------------------------
for f in "$fixes"/*.c "$fixes"/*.h "$fixes"/Makefile.mk; do
    [ -f "$f" ] || continue
    sync_file "$f" "$rdir/ipvfs-fixes/${f##*/}" || true
done

# Message texts: "**key:text" and "**key %s %d:text" lines of errnames.txt,
# continued with a trailing backslash, into a table sorted by key.
gen_errmsg_table() {
    echo "/* Generated by scripts/build-romio.sh from MPICH's errnames.txt. */"
    echo '#include "ipvfs_fixes.h"'
    echo 'const struct ipvfs_errmsg ipvfs_errmsgs[] = {'
    awk '
        /^#/ && cont == "" { next }
        {
            line = cont $0; cont = ""
            if (line ~ /\\$/) { cont = substr(line, 1, length(line) - 1); next }
            if (line !~ /^\*\*[^:]*:/) next
            i = index(line, ":")
            key = substr(line, 1, i - 1); text = substr(line, i + 1)
            gsub(/\\"/, "\"", text)
            gsub(/\\/, "\\\\", text); gsub(/"/, "\\\"", text)
            gsub(/\\/, "\\\\", key); gsub(/"/, "\\\"", key)
            if (!(key in seen)) { seen[key] = 1; printf "    {\"%s\", \"%s\"},\n", key, text }
        }' "$pristine/errnames.txt" | LC_ALL=C sort -t '"' -k2,2 -u
    echo '};'
    echo 'const size_t ipvfs_nerrmsgs = sizeof(ipvfs_errmsgs) / sizeof(ipvfs_errmsgs[0]);'
}
gen_errmsg_table > "$rdir/ipvfs-fixes/errmsg_table.c.new" || die "cannot generate errmsg_table.c"
sync_file "$rdir/ipvfs-fixes/errmsg_table.c.new" "$rdir/ipvfs-fixes/errmsg_table.c" || true
rm -f "$rdir/ipvfs-fixes/errmsg_table.c.new"

# The driver: included when it has sources and the client library is built.
client_lib=$builddir/adio/client/.libs/libipvfs-client.a
client_la=$builddir/adio/client/libipvfs-client.la
drv_src=$srcdir/adio/ad_ipvfs
drv_c=$(cd "$drv_src" 2>/dev/null && ls -- *.c 2>/dev/null | LC_ALL=C sort | tr '\n' ' ' || true)
drv_h=$(cd "$drv_src" 2>/dev/null && ls -- *.h 2>/dev/null | LC_ALL=C sort | tr '\n' ' ' || true)
drv_c=${drv_c% }
drv_h=${drv_h% }
use_ipvfs=no
case $want_ipvfs in
    yes)
        [ -n "$drv_c" ] || die "--ipvfs yes, but $drv_src has no sources"
        [ -f "$client_lib" ] || die "--ipvfs yes, but $client_lib is not built (make adio/client/libipvfs-client.la)"
        use_ipvfs=yes ;;
    auto)
        if [ -n "$drv_c" ] && [ -f "$client_lib" ]; then
            use_ipvfs=yes
        elif [ -n "$drv_c" ]; then
            note "WARNING: $drv_src has sources but $client_lib is not built: building WITHOUT ad_ipvfs"
        fi ;;
esac

ddir=$rdir/adio/ad_ipvfs
for f in "$ddir"/*.c "$ddir"/*.h; do     # files the driver no longer has
    [ -f "$f" ] || continue
    case " $drv_c $drv_h " in *" ${f##*/} "*) [ $use_ipvfs = yes ] && continue ;; esac
    rm -f "$f"
done
{
    echo "## Generated by scripts/build-romio.sh from $drv_src."
    echo "if BUILD_AD_IPVFS"
    if [ $use_ipvfs = yes ]; then
        for f in $drv_c $drv_h; do sync_file "$drv_src/$f" "$ddir/$f" || true; done
        # the iPVFS headers come last, after all of ROMIO's own
        echo 'AM_CPPFLAGS += $(IPVFS_CPPFLAGS)'
        [ -z "$drv_h" ] || echo "noinst_HEADERS +=$(printf ' adio/ad_ipvfs/%s' $drv_h)"
        echo "romio_other_sources +=$(printf ' adio/ad_ipvfs/%s' $drv_c)"
    fi
    echo "endif BUILD_AD_IPVFS"
} > "$ddir/Makefile.mk.new"
sync_file "$ddir/Makefile.mk.new" "$ddir/Makefile.mk" || true
rm -f "$ddir/Makefile.mk.new"

if [ $rdir_new = 1 ]; then
    note "autoreconf (log: $rdir/ipvfs-autoreconf.log)"
    run_logged "autoreconf of ROMIO" "$rdir/ipvfs-autoreconf.log" \
        sh -c "cd '$rdir' && autoreconf -fi -I confdb"
    echo "$prep_key" > "$rdir/.ipvfs-prepared"
fi

# ---------------------------------------------------------------------------
# 4. configure and make
# ---------------------------------------------------------------------------
fs=ufs+nfs
[ $use_ipvfs = no ] || fs=$fs+ipvfs
conf_args=(CC="$MPICC" CFLAGS="-O2 -g" IPVFS_CPPFLAGS="-I$srcdir -I$builddir"
    --with-file-system="$fs" --disable-shared --with-pic --disable-f77 --disable-f90
    --enable-silent-rules)
conf_key="$(printf '%s\n' "${conf_args[@]}")"
if [ ! -x "$rdir/config.status" ] || [ "$(cat "$rdir/.ipvfs-configured" 2>/dev/null)" != "$conf_key" ]; then
    note "configuring ROMIO with file systems $fs (log: $rdir/ipvfs-configure.log)"
    rm -f "$rdir/.ipvfs-configured"
    run_logged "configure of ROMIO" "$rdir/ipvfs-configure.log" \
        sh -c 'cd "$0" && ./configure "$@"' "$rdir" "${conf_args[@]}"
    printf '%s' "$conf_key" > "$rdir/.ipvfs-configured"
fi
note "building ROMIO (log: $log)"
run_logged "make of ROMIO" "$log" make -C "$rdir" -j"$jobs"

# ---------------------------------------------------------------------------
# 5. link
# ---------------------------------------------------------------------------
romio_a=$rdir/.libs/libromio.a
mpl_a=$rdir/mpl/.libs/libmpl.a
map=$fixes/libipvfs-romio.map
[ -f "$romio_a" ] || die "ROMIO built no $romio_a"
[ -f "$mpl_a" ] || die "ROMIO built no $mpl_a"

# Libraries a libtool archive needs (its dependency_libs), as linker args.
la_deps() {
    local dep d
    dep=$(sed -n "s/^dependency_libs='\(.*\)'$/\1/p" "$1")
    for d in $dep; do
        case $d in
            *.la) if [ -f "$(dirname "$d")/.libs/$(basename "$d" .la).a" ]; then
                      echo "$(dirname "$d")/.libs/$(basename "$d" .la).a"
                  else
                      echo "-L$(dirname "$d")/.libs" "-l$(basename "$d" .la | sed 's/^lib//')"
                  fi ;;
            *) echo "$d" ;;
        esac
    done
}
link_in=("$romio_a" "$mpl_a" "$map")
client_args=()
if [ $use_ipvfs = yes ]; then
    link_in+=("$client_lib")
    client_args=("$client_lib")
    if [ -f "$client_la" ]; then
        while read -r d; do client_args+=($d); done < <(la_deps "$client_la")
    fi
fi
romio_libs=$(sed -n 's/^LIBS = //p' "$rdir/Makefile")
relink=0
[ -f "$output" ] || relink=1
for f in "${link_in[@]}"; do
    [ "$f" -nt "$output" ] && relink=1
done
if [ "$(cat "$output.linked" 2>/dev/null)" != "$use_ipvfs" ]; then
    relink=1
fi
if [ $relink = 1 ]; then
    note "linking $output (ad_ipvfs: $use_ipvfs)"
    mkdir -p "$(dirname "$output")"
    # shellcheck disable=SC2086
    "$MPICC" -shared -o "$output.tmp" -Wl,-soname,libipvfs-romio.so \
        -Wl,--version-script="$map" -Wl,--no-undefined \
        -Wl,--whole-archive "$romio_a" -Wl,--no-whole-archive \
        ${client_args[@]+"${client_args[@]}"} "$mpl_a" $romio_libs -lpthread ||
        die "linking $output failed"
    nm -D --defined-only "$output.tmp" | grep -q ' T PMPI_File_open$' ||
        die "$output.tmp does not export PMPI_File_open"
    mv -f "$output.tmp" "$output"
    echo "$use_ipvfs" > "$output.linked"
fi
note "ready: $output (ad_ipvfs: $use_ipvfs)"
