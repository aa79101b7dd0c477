# Helpers of the tests with several real users (test/t_security_*.sh);
# source after test/lib.sh.
#
#   sec_require                 skip (77) unless root with useradd
#   sec_users_make USER...      makes the users that do not exist yet
#                               (removed again by sec_users_remove)
#   sec_as USER COMMAND...      runs COMMAND as USER with the user's own
#                               environment: only the map, HOME=$SEC_HOME
#   sec_users_remove            for the test's ipvfs_test_cleanup
#   sec_munged_start DIR        a private munged (as every Slurm node runs
#                               one) under DIR/munge, its socket open to
#                               users: SEC_MUNGE_SOCK; stopped by sec_munged_stop
#
# The users' commands read the map, which is public; the cluster directory
# must be readable to them (chmod 755, as an administrator would put the
# map where users read it).

SEC_MADE_USERS=()
SEC_HOME=${SEC_HOME:-/tmp}

sec_require() {
    [ "$(id -u)" = 0 ] || { echo "skip: needs root to make users"; exit 77; }
    command -v useradd >/dev/null || { echo "skip: no useradd"; exit 77; }
}

sec_users_make() {
    local u
    for u in "$@"; do
        id "$u" >/dev/null 2>&1 && continue
        useradd -M -s /bin/sh "$u" || ipvfs_fail "useradd $u"
        SEC_MADE_USERS+=("$u")
    done
}

sec_as() {
    local u=$1
    shift
    runuser -u "$u" -- env HOME="$SEC_HOME" IPVFS_MAP="$IPVFS_MAP" IPVFS_SRCDIR="$IPVFS_SRCDIR" \
        PATH="$PATH" "$@"
}

sec_users_remove() {
    local u
    for u in "${SEC_MADE_USERS[@]}"; do
        userdel "$u" 2>/dev/null
        groupdel "$u" 2>/dev/null
    done
    SEC_MADE_USERS=()
    return 0
}

SEC_MUNGED_PID= SEC_MUNGE_SOCK=

sec_munged_start() {
    local d=$1/munge
    mkdir -m 755 "$d" && head -c 1024 /dev/urandom >"$d/key" && chmod 400 "$d/key" ||
        ipvfs_fail "no munge key in $d"
    munged --force --socket="$d/sock" --key-file="$d/key" --pid-file="$d/pid" \
        --log-file="$d/log" --seed-file="$d/seed" || ipvfs_fail "munged did not start"
    SEC_MUNGED_PID=$(cat "$d/pid") SEC_MUNGE_SOCK=$d/sock
}

sec_munged_stop() {
    [ -z "$SEC_MUNGED_PID" ] || kill "$SEC_MUNGED_PID" 2>/dev/null
    SEC_MUNGED_PID=
    return 0
}
