/* ipvfs-target: the embedded iSCSI target as a standalone program.
 *
 *   ipvfs-target --portal ADDR:PORT --iqn NAME --lun SPEC [--lun SPEC ...]
 *                [--chap-user U --chap-secret S [--mutual-user U --mutual-secret S]]
 *                [--config FILE]
 *
 * LUN SPEC (numbered from 0 in order):
 *   mem:SIZE       memory, lost at exit (SIZE with K/M/G/T suffixes)
 *   PATH:SIZE      regular file, created sparse (or grown) to SIZE
 *   PATH           existing regular file (its size) or block device
 * The config file holds the same settings as "key = value" lines (portal,
 * iqn, lun (repeatable), chap-user, chap-secret, mutual-user,
 * mutual-secret, cache-l2, cache-l2-policy, emulate-disk; '#' starts a
 * comment); secrets belong there rather than
 * on the command line, where other users can read them.
 *
 * Prints "listening on ADDR:PORT" on stdout once the portal is open; stops
 * on SIGTERM or SIGINT after flushing every LUN.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/iscsi/target.h"
#include "common/evloop.h"
#include "common/log.h"
#include "common/size.h"

#define MAX_LUNS 64

struct opts {
    char *portal;
    char *iqn;
    char *chap_user, *chap_secret, *mutual_user, *mutual_secret;
    struct tgt_lun_config luns[MAX_LUNS];
    char *lun_paths[MAX_LUNS];
    int nluns;
    uint64_t cache_l2;
    char *cache_l2_policy;
    struct tgt_disk_params disk;   /* --emulate-disk; name[0] 0: none */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ipvfs-target --portal ADDR:PORT --iqn NAME --lun SPEC [--lun SPEC ...]\n"
            "                    [--chap-user U --chap-secret S]\n"
            "                    [--mutual-user U --mutual-secret S] [--config FILE]\n"
            "                    [--cache-l2 SIZE [--cache-l2-policy lru|demote|mq|demote-mq]]\n"
            "                    [--emulate-disk st318452lw]\n"
            "  SPEC: mem:SIZE | PATH:SIZE (sparse file) | PATH (file or block device)\n"
            "  SIZE: bytes with optional K, M, G or T (powers of 1024)\n"
            "  --cache-l2: an L2 cache of 64 KiB blocks (whole blocks; default 0, none);\n"
            "  the stores are then opened with O_DIRECT.  Policy default: "
            "demote.\n"
            "  --emulate-disk: file LUNs take a disk's service time, one io at a time\n"
            "  (a benchmark and test feature).\n"
            "  PORT 0 picks a free port; the bound address is printed as\n"
            "  'listening on ADDR:PORT'.\n"
            "environment:\n"
            "  IPVFS_TARGET_NO_URING=1  run backing I/O on worker threads, not io_uring\n");
}

static int add_lun(struct opts *o, const char *spec)
{
    struct tgt_lun_config *l;
    const char *colon = strrchr(spec, ':');
    uint64_t size = 0;
    char *path;
    struct stat st;

    if (o->nluns >= MAX_LUNS) {
        fprintf(stderr, "ipvfs-target: at most %d LUNs\n", MAX_LUNS);
        return -1;
    }
    l = &o->luns[o->nluns];
    if (colon && size_parse(colon + 1, &size) == 0)
        path = strndup(spec, (size_t)(colon - spec));
    else
        path = strdup(spec), size = 0;
    if (!path)
        return -1;
    if (strcmp(path, "mem") == 0 || strcmp(path, "memory") == 0) {
        free(path);
        if (size == 0) {
            fprintf(stderr, "ipvfs-target: memory LUN '%s' needs a size (mem:SIZE)\n", spec);
            return -1;
        }
        *l = (struct tgt_lun_config){ .kind = TGT_BACKING_MEMORY, .size = size };
    } else {
        if (!*path) {
            free(path);
            fprintf(stderr, "ipvfs-target: LUN '%s' has no path\n", spec);
            return -1;
        }
        if (stat(path, &st) == 0 && S_ISBLK(st.st_mode))
            *l = (struct tgt_lun_config){ .kind = TGT_BACKING_BLOCK, .path = path, .size = size };
        else if (size == 0 && (stat(path, &st) != 0 || st.st_size == 0)) {
            fprintf(stderr, "ipvfs-target: LUN '%s': new or empty file needs a size (PATH:SIZE)\n",
                    spec);
            free(path);
            return -1;
        } else
            *l = (struct tgt_lun_config){ .kind = TGT_BACKING_FILE, .path = path, .size = size };
        o->lun_paths[o->nluns] = path;
    }
    o->nluns++;
    return 0;
}

static int set_str(char **slot, const char *v)
{
    free(*slot);
    *slot = strdup(v);
    return *slot ? 0 : -1;
}

static int apply_cache(struct opts *o, const char *key, const char *v)
{
    char err[256];

    if (strcmp(key, "cache-l2") == 0 ? tgt_cache_l2_parse(v, &o->cache_l2, err, sizeof(err)) < 0
                                     : tgt_cache_l2_policy_check(v, err, sizeof(err)) < 0) {
        fprintf(stderr, "ipvfs-target: %s\n", err);
        return -1;
    }
    return strcmp(key, "cache-l2") == 0 ? 0 : set_str(&o->cache_l2_policy, v);
}

static int apply(struct opts *o, const char *key, const char *v)
{
    if (strcmp(key, "portal") == 0)
        return set_str(&o->portal, v);
    if (strcmp(key, "iqn") == 0)
        return set_str(&o->iqn, v);
    if (strcmp(key, "lun") == 0)
        return add_lun(o, v);
    if (strcmp(key, "chap-user") == 0)
        return set_str(&o->chap_user, v);
    if (strcmp(key, "chap-secret") == 0)
        return set_str(&o->chap_secret, v);
    if (strcmp(key, "mutual-user") == 0)
        return set_str(&o->mutual_user, v);
    if (strcmp(key, "mutual-secret") == 0)
        return set_str(&o->mutual_secret, v);
    if (strcmp(key, "cache-l2") == 0 || strcmp(key, "cache-l2-policy") == 0)
        return apply_cache(o, key, v);
    if (strcmp(key, "emulate-disk") == 0) {
        if (tgt_disk_preset(v, &o->disk) == 0)
            return 0;
        fprintf(stderr, "ipvfs-target: --emulate-disk %s: unknown disk (known: st318452lw)\n", v);
        return -1;
    }
    fprintf(stderr, "ipvfs-target: unknown setting '%s'\n", key);
    return -1;
}

static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}


/* A comment starts with '#' at the start of a line or after whitespace, so
 * that a CHAP secret may contain '#'. */
static void strip_comment(char *line)
{
    for (char *p = line; *p; p++)
        if (*p == '#' && (p == line || isspace((unsigned char)p[-1]))) {
            *p = '\0';
            return;
        }
}

static int read_config(struct opts *o, const char *file)
{
    FILE *f = fopen(file, "r");
    char line[1024];
    struct stat st;
    int lineno = 0, rc = 0;

    if (!f) {
        fprintf(stderr, "ipvfs-target: cannot open config %s: %s\n", file, strerror(errno));
        return -1;
    }
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077))
        fprintf(stderr, "ipvfs-target: warning: %s is readable by others; it may hold "
                        "CHAP secrets (chmod 600)\n", file);
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char *s, *eq;
        lineno++;
        strip_comment(line);
        s = trim(line);
        if (!*s)
            continue;
        eq = strchr(s, '=');
        if (!eq) {
            fprintf(stderr, "ipvfs-target: %s:%d: expected 'key = value'\n", file, lineno);
            rc = -1;
            break;
        }
        *eq = '\0';
        rc = apply(o, trim(s), trim(eq + 1));
        if (rc < 0)
            fprintf(stderr, "ipvfs-target: %s:%d: bad setting\n", file, lineno);
    }
    fclose(f);
    return rc;
}

/* Splits ADDR:PORT (or [V6ADDR]:PORT) in place. */
static int split_portal(char *portal, char **host, uint16_t *port)
{
    char *colon = strrchr(portal, ':'), *end;
    unsigned long p;

    if (!colon)
        return -1;
    *colon = '\0';
    errno = 0;
    p = strtoul(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || p > 65535)
        return -1;
    *host = portal;
    if (portal[0] == '[' && colon > portal + 1 && colon[-1] == ']') {
        colon[-1] = '\0';
        *host = portal + 1;
    }
    *port = (uint16_t)p;
    return 0;
}

static void free_opts(struct opts *o)
{
    for (int i = 0; i < o->nluns; i++)
        free(o->lun_paths[i]);
    free(o->portal);
    free(o->iqn);
    free(o->chap_user);
    free(o->chap_secret);
    free(o->mutual_user);
    free(o->mutual_secret);
    free(o->cache_l2_policy);
}

static int parse_args(struct opts *o, int argc, char **argv)
{
    static const struct option lopts[] = {
        { "portal", required_argument, NULL, 'p' },
        { "iqn", required_argument, NULL, 'n' },
        { "lun", required_argument, NULL, 'l' },
        { "chap-user", required_argument, NULL, 'u' },
        { "chap-secret", required_argument, NULL, 's' },
        { "mutual-user", required_argument, NULL, 'U' },
        { "mutual-secret", required_argument, NULL, 'S' },
        { "config", required_argument, NULL, 'c' },
        { "cache-l2", required_argument, NULL, 'L' },
        { "cache-l2-policy", required_argument, NULL, 'P' },
        { "emulate-disk", required_argument, NULL, 'E' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int ch;

    while ((ch = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
        int rc = 0;
        switch (ch) {
        case 'p': rc = apply(o, "portal", optarg); break;
        case 'n': rc = apply(o, "iqn", optarg); break;
        case 'l': rc = apply(o, "lun", optarg); break;
        case 'u': rc = apply(o, "chap-user", optarg); break;
        case 's': rc = apply(o, "chap-secret", optarg); break;
        case 'U': rc = apply(o, "mutual-user", optarg); break;
        case 'S': rc = apply(o, "mutual-secret", optarg); break;
        case 'c': rc = read_config(o, optarg); break;
        case 'L': rc = apply(o, "cache-l2", optarg); break;
        case 'P': rc = apply(o, "cache-l2-policy", optarg); break;
        case 'E': rc = apply(o, "emulate-disk", optarg); break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
        if (rc < 0)
            return -1;
    }
    if (optind < argc) {
        fprintf(stderr, "ipvfs-target: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (!o->iqn || o->nluns == 0) {
        fprintf(stderr, "ipvfs-target: --iqn and at least one --lun are required\n");
        usage(stderr);
        return -1;
    }
    return 0;
}

static void on_signal(struct evloop *loop, int fd, int events, void *user)
{
    struct signalfd_siginfo si;

    if (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        log_info("target: signal %u received, shutting down", si.ssi_signo);
    evloop_stop(loop);
}

static int serve(struct opts *o)
{
    struct tgt_config cfg = { 0 };
    struct tgt_server *tgt;
    struct evloop *loop;
    char *portal = strdup(o->portal ? o->portal : "0.0.0.0:3260");
    sigset_t mask;
    uint16_t port;
    int sfd, rc = 1;

    if (!portal || split_portal(portal, (char **)&cfg.portal_host, &cfg.portal_port) < 0) {
        fprintf(stderr, "ipvfs-target: portal must be ADDR:PORT\n");
        goto undo_portal;
    }
    cfg.iqn = o->iqn;
    cfg.luns = o->luns;
    cfg.nluns = o->nluns;
    cfg.chap_user = o->chap_user;
    cfg.chap_secret = o->chap_secret;
    cfg.mutual_user = o->mutual_user;
    cfg.mutual_secret = o->mutual_secret;
    cfg.cache_l2 = o->cache_l2;
    cfg.cache_l2_policy = o->cache_l2_policy;
    for (int i = 0; o->disk.name[0] && i < o->nluns; i++)
        if (o->luns[i].kind == TGT_BACKING_FILE)
            o->luns[i].disk = &o->disk;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
        (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
        perror("ipvfs-target: signalfd");
        goto undo_portal;
    }
    loop = evloop_create();
    if (!loop) {
        fprintf(stderr, "ipvfs-target: cannot create the event loop\n");
        goto undo_sfd;
    }
    if (evloop_set_fd(loop, sfd, EV_READ, on_signal, NULL) < 0)
        goto undo_loop;
    if (tgt_server_create(loop, &cfg, &tgt, &port) < 0)
        goto undo_loop;
    printf("listening on %s:%u\n", cfg.portal_host, port);
    fflush(stdout);
    rc = evloop_run(loop) < 0 ? 1 : 0;
    if (tgt_server_flush(tgt) < 0)
        rc = 1;
    tgt_server_destroy(tgt);
    log_info("target: stopped");
undo_loop:
    evloop_destroy(loop);
undo_sfd:
    close(sfd);
undo_portal:
    free(portal);
    return rc;
}

int main(int argc, char **argv)
{
    struct opts o = { 0 };
    int rc;

    ipvfs_log_set_ident("target");
    signal(SIGPIPE, SIG_IGN);
    /* Every WRITE allocates its data buffer (up to 8 MiB) and frees it at
     * completion; without this glibc gives the heap top back to the kernel
     * between commands and each new buffer faults in fresh zeroed pages. */
    if (!mallopt(M_MMAP_THRESHOLD, 16 << 20) || !mallopt(M_TRIM_THRESHOLD, 64 << 20))
        log_warn("target: malloc tuning refused, large commands may be slower");
    if (parse_args(&o, argc, argv) < 0) {
        free_opts(&o);
        return 2;
    }
    rc = serve(&o);
    free_opts(&o);
    return rc;
}
