/* Write-behind of the embedded target (backend/iscsi/store.c): buffered
 * WRITEs to a file LUN start their writeback while more arrive, with no
 * SYNCHRONIZE CACHE.  Without it the kernel keeps them dirty until they
 * are vm.dirty_expire_centisecs old (30 s) as long as dirty memory stays
 * under vm.dirty_background_ratio, and the FLUSH that ends a large write
 * waits for the disk to take all of it.  cachestat(2) (Linux 6.5) counts
 * the backing file's dirty pages; the test skips where it is missing, on
 * a file system without writeback (tmpfs), or where the kernel's own
 * expiry would come before the deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>

#include <cmocka.h>
#include <linux/magic.h>

#include "test/test_target_helpers.h"

#ifndef __NR_cachestat
#define __NR_cachestat 451      /* the same number on every architecture */
#endif

#define IQN "iqn.2026-01.org.ipvfs:test-wb"
#define BS 512
#define WRITE_MIB 48
/* What may stay dirty: the span not yet handed to writeback is less than
 * TGT_WRITEBEHIND_BYTES (8 MiB), plus pages a start raced with. */
#define DIRTY_LEFT_MAX (12u << 20)
#define DEADLINE_S 10

struct cs_range { uint64_t off, len; };
struct cs_stat { uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted; };

static char tmpdir[] = "/tmp/ipvfs-twb.XXXXXX";

/* Dirty bytes of the file open on fd, or -1 with errno. */
static int64_t dirty_bytes(int fd)
{
    struct cs_range r = { 0, 0 };       /* 0: to the end of the file */
    struct cs_stat cs;

    if (syscall(__NR_cachestat, fd, &r, &cs, 0) < 0)
        return -1;
    return (int64_t)cs.nr_dirty * sysconf(_SC_PAGESIZE);
}

static long read_sysctl(const char *path)
{
    FILE *f = fopen(path, "re");
    long v = -1;

    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Why this machine cannot show write-behind, or NULL. */
static const char *cannot_show(int fd)
{
    struct statfs sf;

    if (fstatfs(fd, &sf) < 0 || sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)
        return "the scratch directory has no writeback (tmpfs or ramfs)";
    if (dirty_bytes(fd) < 0)
        return "cachestat(2) is missing (Linux before 6.5)";
    if (read_sysctl("/proc/sys/vm/dirty_expire_centisecs") < 100 * (DEADLINE_S + 5))
        return "vm.dirty_expire_centisecs would write the pages back before the deadline";
    return NULL;
}

static void test_writes_start_their_writeback(void **state)
{
    char path[128];
    struct tgt_lun_config lun = { .kind = TGT_BACKING_FILE, .path = path, .size = 64 << 20 };
    struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = &lun, .nluns = 1 };
    unsigned char *buf = malloc(1 << 20);
    struct iscsi_context *ic;
    struct srv_proc sp;
    int64_t dirty = -1;
    double end;
    int fd;

    assert_non_null(buf);
    snprintf(path, sizeof(path), "%s/wb.img", tmpdir);
    assert_int_equal(srv_start(&sp, &cfg, NULL), 0);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ic = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-wb");
    assert_non_null(ic);
    for (int i = 0; i < WRITE_MIB; i++) {
        struct scsi_task *t;

        fill_pattern(buf, 1 << 20, (uint64_t)i + 1);
        t = iscsi_write16_sync(ic, 0, (uint64_t)i * ((1 << 20) / BS), buf, 1 << 20, BS, 0, 0, 0,
                               0, 0);
        assert_non_null(t);
        assert_int_equal(t->status, SCSI_STATUS_GOOD);
        scsi_free_scsi_task(t);
    }
    /* no SYNCHRONIZE CACHE: the target alone must start the writeback */
    end = now_s() + DEADLINE_S;
    while ((dirty = dirty_bytes(fd)) > (int64_t)DIRTY_LEFT_MAX && now_s() < end) {
        const struct timespec nap = { 0, 50 * 1000 * 1000 };
        nanosleep(&nap, NULL);
    }
    fprintf(stderr, "%d MiB written, %lld KiB still dirty\n", WRITE_MIB,
            (long long)(dirty >> 10));
    assert_true(dirty >= 0 && dirty <= (int64_t)DIRTY_LEFT_MAX);
    close(fd);
    iscsi_logout_sync(ic);
    iscsi_destroy_context(ic);
    assert_int_equal(srv_stop(&sp), 0);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_writes_start_their_writeback, srv_kill_all),
    };

    char probe[128];
    const char *why;
    int fd;

    if (srv_tests_begin(tmpdir) < 0)
        return 1;
    snprintf(probe, sizeof(probe), "%s/probe", tmpdir);
    fd = open(probe, O_RDWR | O_CREAT, 0600);
    if (fd < 0) {
        perror(probe);
        return srv_tests_end(tmpdir, 1);
    }
    why = cannot_show(fd);
    close(fd);
    if (why) {
        printf("skip: %s\n", why);
        return srv_tests_end(tmpdir, 77);
    }
    return srv_tests_end(tmpdir, cmocka_run_group_tests(tests, NULL, NULL));
}
