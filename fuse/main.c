/* ipvfs-fuse: mounts an iPVFS cluster (see fusefs.h for the threading and
 * consistency contracts).
 *
 *   ipvfs-fuse [--map FILE] MOUNTPOINT [-f] [-d] [-s] [-o OPTION,...]
 *
 * The map comes from --map or $IPVFS_MAP.  Options are libfuse's (-f:
 * foreground, -o direct_io, -o attr_timeout=S, ...); default_permissions
 * is always on, so the kernel checks modes and owners; allow_other is
 * refused unless the mount runs as root.  libfuse handles SIGTERM, SIGINT
 * and SIGHUP (unmount, clean exit) and fusermount3 -u.  Exit status 0
 * after a clean unmount, 1 on any failure. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "fuse/fusefs.h"

#include <fuse_lowlevel.h>   /* after fusefs.h, which sets FUSE_USE_VERSION */

/* Applied first, so -o options given later override the timeouts. */
#define FUSEFS_DEFAULT_OPTS \
    "-odefault_permissions,fsname=ipvfs,subtype=ipvfs,max_read=1048576," \
    "attr_timeout=0,entry_timeout=0,negative_timeout=0"

struct cmdline {
    char *map;
};

enum { KEY_ALLOW_OTHER };

static const struct fuse_opt cmd_opts[] = {
    { "--map=%s", offsetof(struct cmdline, map), 0 },
    { "--map %s", offsetof(struct cmdline, map), 0 },
    FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
    FUSE_OPT_END,
};

static void usage(void)
{
    fputs("usage: ipvfs-fuse [--map FILE] MOUNTPOINT [-f] [-d] [-s] [-o OPTION,...]\n"
          "  --map FILE        the cluster's server map (default $IPVFS_MAP)\n"
          "  -f                stay in the foreground\n"
          "  -o direct_io      no kernel page cache for file data\n"
          "  -o allow_other    other users may use the mount (root only)\n"
          "  -o attr_timeout=S, entry_timeout=S   cache attributes and names S s (default 0)\n"
          "Unmount with fusermount3 -u MOUNTPOINT or SIGTERM.  libfuse's options:\n",
          stderr);
}

static int opt_key(void *data, const char *arg, int key, struct fuse_args *outargs)
{
    (void)data;
    (void)arg;
    (void)outargs;
    if (key == KEY_ALLOW_OTHER && geteuid() != 0) {
        fputs("ipvfs-fuse: -o allow_other: only root may let other users in\n", stderr);
        return -1;
    }
    return 1;
}

/* Mounted: serves until unmounted (0) or stopped by a signal (libfuse's
 * handlers make the loop return the signal number: a clean stop too). */
static int serve(struct fuse *fuse, const struct fuse_cmdline_opts *opts)
{
    struct fuse_session *se = fuse_get_session(fuse);
    struct fuse_loop_config *config;
    int rc;

    if (fuse_set_signal_handlers(se) != 0)
        return -1;
    if (opts->singlethread) {
        rc = fuse_loop(fuse);
    } else if (!(config = fuse_loop_cfg_create())) {
        rc = -1;
    } else {
        fuse_loop_cfg_set_clone_fd(config, opts->clone_fd);
        fuse_loop_cfg_set_idle_threads(config, opts->max_idle_threads);
        fuse_loop_cfg_set_max_threads(config, opts->max_threads);
        rc = fuse_loop_mt(fuse, config);
        fuse_loop_cfg_destroy(config);
    }
    fuse_remove_signal_handlers(se);
    return rc == SIGTERM || rc == SIGINT || rc == SIGHUP ? 0 : rc;
}

/* Raises the mount's readahead (the kernel starts a FUSE mount at
 * 128 KiB, which leaves one 128 KiB read in flight for a sequential
 * reader; FUSEFS_READAHEAD_KB keeps several 1 MiB reads going).  Only
 * root may write the bdi's sysfs knob; the mount is found in
 * /proc/self/mountinfo, never by a stat that would ask the file system
 * itself before it serves.  Best effort: a failure is logged. */
static void raise_readahead(const char *mountpoint)
{
    char line[4096], root[4096], mnt[4096], knob[128];
    unsigned maj, min;
    FILE *f;
    int found = 0;

    if (geteuid() != 0 || !(f = fopen("/proc/self/mountinfo", "r")))
        return;
    while (!found && fgets(line, sizeof(line), f))
        found = sscanf(line, "%*u %*u %u:%u %4095s %4095s", &maj, &min, root, mnt) == 4 &&
                strcmp(mnt, mountpoint) == 0;
    fclose(f);
    if (!found)
        return;
    snprintf(knob, sizeof(knob), "/sys/class/bdi/%u:%u/read_ahead_kb", maj, min);
    if ((f = fopen(knob, "w")) != NULL) {
        found = fprintf(f, "%u\n", FUSEFS_READAHEAD_KB) > 0;
        found = (fclose(f) == 0) && found;
    }
    if (!f || !found)
        log_warn("cannot raise the readahead (%s): sequential reads stay at 128 KiB", knob);
}

/* Mount, daemonize (without -f), serve, unmount. */
static int run(struct fuse_args *args, const struct fuse_cmdline_opts *opts, struct fusefs *fs)
{
    struct fuse *fuse = fuse_new(args, &fusefs_ops, sizeof(fusefs_ops), fs);
    int rc = 1;

    if (!fuse)
        return 1;
    if (fuse_mount(fuse, opts->mountpoint) != 0)
        goto destroy_fuse;
    raise_readahead(opts->mountpoint);
    if (fuse_daemonize(opts->foreground) == 0)
        rc = serve(fuse, opts) == 0 ? 0 : 1;
    fuse_unmount(fuse);
destroy_fuse:
    fuse_destroy(fuse);
    return rc;
}

int main(int argc, char **argv)
{
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    struct fuse_cmdline_opts opts = { 0 };
    struct cmdline cl = { NULL };
    struct fusefs fs = { NULL };
    struct ipvfs_error err;
    int rc = 1;

    ipvfs_log_set_ident("fuse");
    if (fuse_opt_parse(&args, &cl, cmd_opts, opt_key) < 0 ||
        fuse_opt_insert_arg(&args, 1, FUSEFS_DEFAULT_OPTS) < 0 ||
        fuse_parse_cmdline(&args, &opts) != 0)
        goto free_args;
    if (opts.show_help || opts.show_version) {
        if (opts.show_help) {
            usage();
            fuse_cmdline_help();
            fuse_lib_help(&args);
        } else {
            printf("ipvfs-fuse, libfuse %s\n", fuse_pkgversion());
        }
        rc = 0;
        goto free_opts;
    }
    if (!opts.mountpoint) {
        usage();
        goto free_opts;
    }
    fs.map_path = ipvfs_client_map_path(cl.map);
    if (!fs.map_path) {
        fputs("ipvfs-fuse: no server map: use --map FILE or set IPVFS_MAP\n", stderr);
        goto free_opts;
    }
    /* Reads the map now, so a bad one is reported before mounting. */
    if (fusefs_pool_init(&fs.pool, fs.map_path, &err) < 0) {
        fprintf(stderr, "ipvfs-fuse: %s\n", err.msg);
        goto free_opts;
    }
    signal(SIGPIPE, SIG_IGN);
    rc = run(&args, &opts, &fs);
    fusefs_pool_destroy(&fs.pool);
free_opts:
    free(opts.mountpoint);
free_args:
    fuse_opt_free_args(&args);
    free(cl.map);
    return rc;
}
