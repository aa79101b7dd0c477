# Shell helpers (sourced, not run) that start and stop the iSCSI targets an
# iRAID volume needs: one tgtd per member, each with its own portal and its
# own control port (tgtd -C; its socket is /var/run/tgtd/socket.PORT, so
# two instances never share one), serving LUN 1 from a backing file.
# Used by test/t_storage_*.sh and benchmarks/iraid-bench.sh.
#
#   iraid_targets_start DIR COUNT SIZE_MB   -> fills IRAID_URLS, IRAID_FILES
#   iraid_targets_stop                      (idempotent; call it from a trap)
#   iraid_target_kill INDEX                 (simulate a dead target node)
#   iraid_target_restart INDEX              (tgtd again on the same port and
#                                           backing file, its data kept)
#   iraid_ipvfs_targets_start DIR COUNT SIZE_MB  the same with our own
#                                           ipvfs-target (LUN 0) instead of tgtd
#   iraid_ipvfs_target_one DIR INDEX SIZE_MB [LUN_FILE]  one of those
#
# Portals are taken from 13500-13999, skipping ports somebody listens on.

IRAID_IQN_PREFIX=iqn.2024-01.org.ipvfs
IRAID_URLS=()
IRAID_FILES=()
IRAID_TGT_PIDS=()
IRAID_TGT_PORTS=()

iraid_port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    [ -e "/var/run/tgtd/socket.$1.lock" ] && fuser "/var/run/tgtd/socket.$1.lock" >/dev/null 2>&1
}

iraid_free_port() {
    local p tries=0
    while [ $tries -lt 200 ]; do
        p=$((13500 + RANDOM % 500))
        tries=$((tries + 1))
        case " ${IRAID_TGT_PORTS[*]} " in *" $p "*) continue ;; esac
        iraid_port_busy "$p" || { echo "$p"; return 0; }
    done
    return 1
}

# iraid_tgtd_one DIR INDEX SIZE_MB: start one tgtd with target t<INDEX>.
iraid_tgtd_one() {
    local dir=$1 i=$2 size=$3 port
    port=$(iraid_free_port) || { echo "no free port in 13500-13999" >&2; return 1; }
    rm -f "$dir/member$i.img"
    truncate -s "${size}M" "$dir/member$i.img" || return 1
    iraid_tgtd_serve "$dir" "$i" "$port"
}

iraid_target_restart() {
    iraid_tgtd_serve "$IRAID_DIR" "$1" "${IRAID_TGT_PORTS[$1]}"
}

# iraid_tgtd_serve DIR INDEX PORT: tgtd serving DIR/member<INDEX>.img.
iraid_tgtd_serve() {
    local dir=$1 i=$2 port=$3 pid iqn file tries
    file=$dir/member$i.img
    iqn=$IRAID_IQN_PREFIX:t$i
    IRAID_DIR=$dir
    tgtd -f -C "$port" --iscsi "portal=127.0.0.1:$port" >"$dir/tgtd$i.log" 2>&1 &
    pid=$!
    IRAID_TGT_PIDS[$i]=$pid
    IRAID_TGT_PORTS[$i]=$port
    for tries in $(seq 50); do
        tgtadm -C "$port" --lld iscsi --mode target --op show >/dev/null 2>&1 && break
        kill -0 "$pid" 2>/dev/null || { cat "$dir/tgtd$i.log" >&2; return 1; }
        sleep 0.1
    done
    tgtadm -C "$port" --lld iscsi --mode target --op new --tid 1 --targetname "$iqn" &&
        tgtadm -C "$port" --lld iscsi --mode logicalunit --op new --tid 1 --lun 1 \
            --backing-store "$file" &&
        tgtadm -C "$port" --lld iscsi --mode target --op bind --tid 1 --initiator-address ALL ||
        return 1
    IRAID_URLS[$i]=iscsi://127.0.0.1:$port/$iqn/1
    IRAID_FILES[$i]=$file
}

# iraid_ipvfs_target_one DIR INDEX SIZE_MB [LUN_FILE]: ipvfs-target serving
# one LUN, LUN_FILE (default DIR/member<INDEX>.img); its log in DIR.
iraid_ipvfs_target_one() {
    local dir=$1 i=$2 size=$3 port pid iqn file=${4:-$1/member$2.img}
    port=$(iraid_free_port) || { echo "no free port in 13500-13999" >&2; return 1; }
    iqn=$IRAID_IQN_PREFIX:own$i
    rm -f "$file"
    truncate -s "${size}M" "$file" || return 1
    ipvfs-target --portal "127.0.0.1:$port" --iqn "$iqn" --lun "$file:${size}M" \
        >"$dir/target$i.log" 2>&1 &
    pid=$!
    IRAID_TGT_PIDS[$i]=$pid
    IRAID_TGT_PORTS[$i]=$port
    for _ in $(seq 100); do
        grep -q "listening on" "$dir/target$i.log" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || { cat "$dir/target$i.log" >&2; return 1; }
        sleep 0.1
    done
    grep -q "listening on" "$dir/target$i.log" || { echo "ipvfs-target did not start" >&2; return 1; }
    IRAID_URLS[$i]=iscsi://127.0.0.1:$port/$iqn/0
    IRAID_FILES[$i]=$file
}

iraid_ipvfs_targets_start() {
    local dir=$1 count=$2 size=$3 i
    command -v ipvfs-target >/dev/null || { echo "ipvfs-target not built"; return 77; }
    for i in $(seq 0 $((count - 1))); do
        iraid_ipvfs_target_one "$dir" "$i" "$size" || return 1
    done
}

iraid_targets_start() {
    local dir=$1 count=$2 size=$3 i
    command -v tgtd >/dev/null && command -v tgtadm >/dev/null || {
        echo "tgtd/tgtadm not installed (package tgt)"; return 77; }
    for i in $(seq 0 $((count - 1))); do
        iraid_tgtd_one "$dir" "$i" "$size" || return 1
    done
}

iraid_target_kill() {
    local pid=${IRAID_TGT_PIDS[$1]:-}
    [ -n "$pid" ] || return 0
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -f "/var/run/tgtd/socket.${IRAID_TGT_PORTS[$1]}" "/var/run/tgtd/socket.${IRAID_TGT_PORTS[$1]}.lock"
    IRAID_TGT_PIDS[$1]=
}

# tgtd ignores SIGTERM: take it offline and delete it through tgtadm, and
# only then fall back to SIGKILL.
iraid_targets_stop() {
    local i pid port
    for i in "${!IRAID_TGT_PIDS[@]}"; do
        pid=${IRAID_TGT_PIDS[$i]}
        port=${IRAID_TGT_PORTS[$i]}
        [ -n "$pid" ] || continue
        if kill -0 "$pid" 2>/dev/null && [ "$(cat /proc/$pid/comm 2>/dev/null)" = ipvfs-target ]; then
            kill "$pid" 2>/dev/null
            for _ in 1 2 3 4 5 6 7 8 9 10; do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
        elif kill -0 "$pid" 2>/dev/null; then
            tgtadm -C "$port" --op update --mode sys --name State -v offline >/dev/null 2>&1
            tgtadm -C "$port" --lld iscsi --op delete --mode target --tid 1 --force >/dev/null 2>&1
            tgtadm -C "$port" --op delete --mode system >/dev/null 2>&1
            for _ in 1 2 3 4 5 6 7 8 9 10; do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
        fi
        iraid_target_kill "$i"
    done
    IRAID_TGT_PIDS=()
}
