/* Helpers for the target tests: run the embedded target (the library, in
 * process) in a forked child on its own event loop, and talk to it with
 * libiscsi from the parent. */
#ifndef IPVFS_TEST_TARGET_HELPERS_H
#define IPVFS_TEST_TARGET_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include "backend/iscsi/target.h"
#include "common/evloop.h"

struct srv_proc {
    pid_t pid;
    uint16_t port;
};

/* Children still running, killed by srv_kill_all() when a test fails. */
static pid_t srv_live[16];

static void srv_track(pid_t pid, pid_t replace)
{
    for (int i = 0; i < 16; i++)
        if (srv_live[i] == replace) {
            srv_live[i] = pid;
            return;
        }
}

static int srv_kill_all(void **state)
{
    for (int i = 0; i < 16; i++)
        if (srv_live[i] > 0) {
            kill(srv_live[i], SIGKILL);
            waitpid(srv_live[i], NULL, 0);
            srv_live[i] = 0;
        }
    return 0;
}

static void child_stop(struct evloop *loop, int fd, int events, void *user)
{
    struct signalfd_siginfo si;

    (void)!read(fd, &si, sizeof(si));
    evloop_stop(loop);
}

/* Starts the target described by cfg in a child; its stderr goes to
 * logpath when given.  Returns 0 or -1. */
static int srv_start(struct srv_proc *sp, const struct tgt_config *cfg, const char *logpath)
{
    int pfd[2];

    if (pipe(pfd) < 0)
        return -1;
    sp->pid = fork();
    if (sp->pid < 0)
        return -1;
    if (sp->pid == 0) {
        struct tgt_server *tgt;
        struct evloop *loop;
        sigset_t mask;
        uint16_t port = 0;
        int sfd, rc = 1;

        close(pfd[0]);
        if (logpath) {
            int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd >= 0) {
                dup2(fd, 2);
                close(fd);
            }
        }
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC);
        loop = evloop_create();
        if (sfd >= 0 && loop && evloop_set_fd(loop, sfd, EV_READ, child_stop, NULL) == 0 &&
            tgt_server_create(loop, cfg, &tgt, &port) == 0) {
            (void)!write(pfd[1], &port, sizeof(port));
            rc = evloop_run(loop) < 0;
            tgt_server_destroy(tgt);
        } else {
            (void)!write(pfd[1], &port, sizeof(port));
        }
        _exit(rc);
    }
    close(pfd[1]);
    srv_track(sp->pid, 0);
    if (read(pfd[0], &sp->port, sizeof(sp->port)) != sizeof(sp->port) || sp->port == 0) {
        close(pfd[0]);
        waitpid(sp->pid, NULL, 0);
        srv_track(0, sp->pid);
        return -1;
    }
    close(pfd[0]);
    return 0;
}

/* SIGTERM and wait: returns the child's exit status (0 when clean). */
static int srv_stop(struct srv_proc *sp)
{
    int st;

    if (sp->pid <= 0)
        return -1;
    kill(sp->pid, SIGTERM);
    if (waitpid(sp->pid, &st, 0) < 0)
        return -1;
    srv_track(0, sp->pid);
    sp->pid = 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A logged-in libiscsi context, or NULL.  Inline, as are the helpers below
 * that not every test calls: an unused static function fails -Werror. */
static inline struct iscsi_context *srv_login(const struct srv_proc *sp, const char *iqn,
                                              int lun, const char *initiator)
{
    struct iscsi_context *ic = iscsi_create_context(initiator);
    char portal[64];

    if (!ic)
        return NULL;
    snprintf(portal, sizeof(portal), "127.0.0.1:%u", sp->port);
    iscsi_set_targetname(ic, iqn);
    iscsi_set_session_type(ic, ISCSI_SESSION_NORMAL);
    iscsi_set_timeout(ic, 10);
    if (iscsi_full_connect_sync(ic, portal, lun) != 0) {
        fprintf(stderr, "login failed: %s\n", iscsi_get_error(ic));
        iscsi_destroy_context(ic);
        return NULL;
    }
    return ic;
}

static inline void fill_pattern(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

    for (size_t i = 0; i + 8 <= n; i += 8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        memcpy(p + i, &x, 8);
    }
}

/* The start and end of a main() whose tests keep files in a scratch
 * directory, tmpl a mkdtemp() template (made here, removed at the end).
 * Inline: test_target_badinput has no such directory, and a static
 * function it does not call would not build under -Werror. */
static inline int srv_tests_begin(char *tmpl)
{
    /* a connection the target drops must fail a test, not kill the run */
    signal(SIGPIPE, SIG_IGN);
    return mkdtemp(tmpl) ? 0 : -1;
}

/* Removes dir; returns rc, the tests' result, to be main()'s. */
static inline int srv_tests_end(const char *dir, int rc)
{
    char cmd[256];

    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return rc;
}

#endif
