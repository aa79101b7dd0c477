#!/bin/bash
# model-figures.sh: the papers' model figures, from ipvfs-model (no
# cluster; a few seconds).  CSV and PNG per figure in BENCH_OUT (default
# BUILDDIR/bench-results), and model-figures.txt with the commands:
#   model-fig4-hH.*   the journal's Figure 4: 64 KiB requests, N = 300,
#                     iPVFS 100 x (1 + 2), hit ratios iPVFS/PVFS 0.2/0.3,
#                     0.5/0.6, 0.7/0.8 (H = the iPVFS one)
#   model-fig5-hH.*   its Figure 5: 640 KiB, N = 30, 10 x (1 + 2)
#   model-fig6a/b.*   its Figure 6: the saturation rate of every split of
#                     N = 300 (64 KiB) and N = 30 (640 KiB), h 0.5/0.6
#   model-lcn-fig4.*  the LCN paper's Figure 4: N = 18, 6 x (1 + 2),
#                     64 KiB, hit ratios 0.5 (its variant, the default)
#   model-fig7-W.*    Figures 7-9: hit ratios from ipvfs-cachesim
#                     --workload W --json, iPVFS with 2 targets per I/O
#                     node (cello92 and httpd: 6 servers, 2 x (1 + 2);
#                     db2: the paper's 40 is no multiple of 3, so 39,
#                     13 x (1 + 2))
# The papers' variants use the papers' machine (75 MB/s, 500 MB/s, the
# ST318452LW); --variant journal for the journal's figures.
#
#   benchmarks/model-figures.sh [BUILDDIR]
set -eu
b=$(cd "${1:-${IPVFS_BUILDDIR:-_build}}" && pwd)
out=${BENCH_OUT:-$b/bench-results}
model=$b/tools/ipvfs-model
sim=$b/tools/ipvfs-cachesim
mkdir -p "$out"
txt=$out/model-figures.txt
echo "benchmarks/model-figures.sh $* ($(date -u '+%Y-%m-%d'))" >"$txt"
run() {   # NAME ARGS...: the CSV and the PNG of one figure
    local name=$1
    shift
    echo "ipvfs-model $* --csv --plot $name.png" >>"$txt"
    "$model" "$@" --csv --plot "$out/$name.png" >"$out/$name.csv"
}
for h in 0.2:0.3 0.5:0.6 0.7:0.8; do
    hi=${h%:*} hp=${h#*:}
    run "model-fig4-h$hi" --variant journal --nodes 300 --io-nodes 100 --hit-io "$hi" \
        --hit-target "$hi" --hit-pvfs "$hp"
    run "model-fig5-h$hi" --variant journal --nodes 30 --io-nodes 10 --size 640K --hit-io "$hi" \
        --hit-target "$hi" --hit-pvfs "$hp"
done
run model-fig6a --variant journal --nodes 300 --hit-io 0.5 --hit-target 0.5 --hit-pvfs 0.6 --splits
run model-fig6b --variant journal --nodes 30 --size 640K --hit-io 0.5 --hit-target 0.5 \
    --hit-pvfs 0.6 --splits
run model-lcn-fig4
for w in cello92:6:2 httpd:6:2 db2:39:13; do
    IFS=: read -r name n nio <<<"$w"
    "$sim" --workload "$name" --servers "$n" --requests 200000 --json >"$out/model-fig7-$name.json"
    echo "ipvfs-cachesim --workload $name --servers $n --requests 200000 --json" >>"$txt"
    run "model-fig7-$name" --variant journal --hits "$out/model-fig7-$name.json" --nodes "$n" \
        --io-nodes "$nio"
done
echo "figures in $out (model-fig*.csv, .png; commands in model-figures.txt)"
