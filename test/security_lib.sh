# Helpers of the tests with several real users (test/t_security_*.sh);
# source after test/lib.sh.
#
#   sec_require                 skip (77) unless root with useradd
#   sec_users_make USER...      makes the users that do not exist yet
#                               (removed again by sec_users_remove)
#   sec_as USER COMMAND...      runs COMMAND as USER with the user's own
#                               environment: only the map, HOME=$SEC_HOME
#   sec_users_remove            for the test's ipvfs_test_cleanup
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
