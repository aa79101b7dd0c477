/* End-to-end I/O through libiscsi (the initiator the I/O nodes use) against
 * the embedded target run in process: write/read-verify at many sizes on
 * memory and file LUNs, many commands in flight, many sessions, header
 * digests, CHAP (one-way, mutual, wrong secret), WRITE SAME/UNMAP holes
 * (in the sparse file, and zeroed ranges of a memory LUN), and durability of acknowledged writes after SIGTERM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test/test_target_helpers.h"

#define IQN "iqn.2026-01.org.ipvfs:test-io"
#define BS 512
#define MAX_XFER_BLOCKS 65536u /* the most one command may carry (VPD page B0) */

static char tmpdir[] = "/tmp/ipvfs-tio.XXXXXX";

static int verify_rw(struct iscsi_context *ic, int lun, uint64_t lba, uint32_t len, uint64_t seed,
                     int fua)
{
    unsigned char *w = malloc(len);
    struct scsi_task *t;
    int ok = 0;

    assert_non_null(w);
    fill_pattern(w, len, seed);
    t = iscsi_write16_sync(ic, lun, lba, w, len, BS, 0, 0, fua, 0, 0);
    if (t && t->status == SCSI_STATUS_GOOD) {
        scsi_free_scsi_task(t);
        t = iscsi_read16_sync(ic, lun, lba, len, BS, 0, 0, 0, 0, 0);
        ok = t && t->status == SCSI_STATUS_GOOD && t->datain.size == (int)len &&
             memcmp(t->datain.data, w, len) == 0;
    }
    if (!ok)
        fprintf(stderr, "verify_rw lba %llu len %u: %s\n", (unsigned long long)lba, len,
                t ? (t->status == SCSI_STATUS_GOOD ? "data differs" : iscsi_get_error(ic))
                  : iscsi_get_error(ic));
    if (t)
        scsi_free_scsi_task(t);
    free(w);
    return ok;
}

static void rw_sizes(struct iscsi_context *ic, int lun)
{
    static const uint32_t sizes[] = { 512, 4096, 8192 + 512, 65536, 262144 + 512, 1 << 20,
                                      4 << 20 };

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        assert_true(verify_rw(ic, lun, 1000 + i * 9000, sizes[i], i + 7, i & 1));
}

static void test_memory_and_file_luns(void **state)
{
    char path[128];
    struct tgt_lun_config luns[2] = {
        { .kind = TGT_BACKING_MEMORY, .size = 64 << 20 },
        { .kind = TGT_BACKING_FILE, .path = path, .size = 64 << 20 },
    };
    struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = luns, .nluns = 2 };
    struct srv_proc sp;
    struct iscsi_context *ic;
    struct scsi_task *t;

    snprintf(path, sizeof(path), "%s/lun1.img", tmpdir);
    assert_int_equal(srv_start(&sp, &cfg, NULL), 0);
    for (int lun = 0; lun < 2; lun++) {
        ic = srv_login(&sp, IQN, lun, "iqn.2026-01.org.ipvfs:init-a");
        assert_non_null(ic);
        rw_sizes(ic, lun);
        t = iscsi_synchronizecache10_sync(ic, lun, 0, 0, 0, 0);
        assert_non_null(t);
        assert_int_equal(t->status, SCSI_STATUS_GOOD);
        scsi_free_scsi_task(t);
        /* Out of range gives CHECK CONDITION / ILLEGAL REQUEST / LBA OUT OF RANGE */
        t = iscsi_read16_sync(ic, lun, (64 << 20) / BS, BS, BS, 0, 0, 0, 0, 0);
        assert_non_null(t);
        assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
        assert_int_equal(t->sense.key, SCSI_SENSE_ILLEGAL_REQUEST);
        assert_int_equal(t->sense.ascq, SCSI_SENSE_ASCQ_LBA_OUT_OF_RANGE);
        scsi_free_scsi_task(t);
        iscsi_logout_sync(ic);
        iscsi_destroy_context(ic);
    }
    assert_int_equal(srv_stop(&sp), 0);
}

struct inflight {
    int done, failed;
};

static void async_cb(struct iscsi_context *ic, int status, void *data, void *priv)
{
    struct inflight *f = priv;
    struct scsi_task *t = data;

    f->done++;
    if (status != SCSI_STATUS_GOOD)
        f->failed++;
    scsi_free_scsi_task(t);
}

static void pump(struct iscsi_context *ic, struct inflight *f, int want)
{
    while (f->done < want) {
        struct pollfd p = { .fd = iscsi_get_fd(ic), .events = (short)iscsi_which_events(ic) };
        assert_true(poll(&p, 1, 10000) > 0);
        assert_int_equal(iscsi_service(ic, p.revents), 0);
    }
}

static void test_many_in_flight_and_sessions(void **state)
{
    struct tgt_lun_config lun = { .kind = TGT_BACKING_MEMORY, .size = 128 << 20 };
    struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = &lun, .nluns = 1 };
    struct iscsi_context *ics[8];
    enum { N = 64, LEN = 65536 };
    unsigned char *buf = malloc((size_t)N * LEN);
    struct inflight f = { 0 };
    struct srv_proc sp;
    char name[64];

    assert_non_null(buf);
    assert_int_equal(srv_start(&sp, &cfg, NULL), 0);
    ics[0] = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-async");
    assert_non_null(ics[0]);
    fill_pattern(buf, (size_t)N * LEN, 99);
    for (int i = 0; i < N; i++)
        assert_non_null(iscsi_write16_task(ics[0], 0, (uint64_t)i * LEN / BS, buf + (size_t)i * LEN,
                                           LEN, BS, 0, 0, 0, 0, 0, async_cb, &f));
    pump(ics[0], &f, N);
    assert_int_equal(f.failed, 0);
    iscsi_logout_sync(ics[0]);
    iscsi_destroy_context(ics[0]);
    /* eight sessions at once, each checking the data and its own region */
    for (int s = 0; s < 8; s++) {
        snprintf(name, sizeof(name), "iqn.2026-01.org.ipvfs:init-%d", s);
        ics[s] = srv_login(&sp, IQN, 0, name);
        assert_non_null(ics[s]);
    }
    for (int s = 0; s < 8; s++) {
        struct scsi_task *t = iscsi_read16_sync(ics[s], 0, (uint64_t)s * LEN / BS, LEN, BS, 0, 0,
                                                0, 0, 0);
        assert_non_null(t);
        assert_int_equal(t->status, SCSI_STATUS_GOOD);
        assert_memory_equal(t->datain.data, buf + (size_t)s * LEN, LEN);
        scsi_free_scsi_task(t);
        assert_true(verify_rw(ics[s], 0, 100000 + (uint64_t)s * 4096, 1 << 20, 1000 + s, 0));
    }
    for (int s = 0; s < 8; s++) {
        iscsi_logout_sync(ics[s]);
        iscsi_destroy_context(ics[s]);
    }
    free(buf);
    assert_int_equal(srv_stop(&sp), 0);
}

static void test_header_digest(void **state)
{
    struct tgt_lun_config lun = { .kind = TGT_BACKING_MEMORY, .size = 64 << 20 };
    struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = &lun, .nluns = 1 };
    struct iscsi_context *ic = iscsi_create_context("iqn.2026-01.org.ipvfs:init-digest");
    struct srv_proc sp;
    char portal[64];

    assert_int_equal(srv_start(&sp, &cfg, NULL), 0);
    snprintf(portal, sizeof(portal), "127.0.0.1:%u", sp.port);
    iscsi_set_targetname(ic, IQN);
    iscsi_set_session_type(ic, ISCSI_SESSION_NORMAL);
    iscsi_set_header_digest(ic, ISCSI_HEADER_DIGEST_CRC32C);
    assert_int_equal(iscsi_full_connect_sync(ic, portal, 0), 0);
    rw_sizes(ic, 0);
    iscsi_logout_sync(ic);
    iscsi_destroy_context(ic);
    assert_int_equal(srv_stop(&sp), 0);
}

static int chap_login(const struct srv_proc *sp, const char *user, const char *secret,
                      const char *tuser, const char *tsecret)
{
    struct iscsi_context *ic = iscsi_create_context("iqn.2026-01.org.ipvfs:init-chap");
    char portal[64];
    int ok;

    snprintf(portal, sizeof(portal), "127.0.0.1:%u", sp->port);
    iscsi_set_targetname(ic, IQN);
    iscsi_set_session_type(ic, ISCSI_SESSION_NORMAL);
    if (user)
        iscsi_set_initiator_username_pwd(ic, user, secret);
    if (tuser)
        iscsi_set_target_username_pwd(ic, tuser, tsecret);
    ok = iscsi_full_connect_sync(ic, portal, 0) == 0;
    if (ok)
        ok = verify_rw(ic, 0, 0, 65536, 5, 0);
    iscsi_destroy_context(ic);
    return ok;
}

static void test_chap(void **state)
{
    struct tgt_lun_config lun = { .kind = TGT_BACKING_MEMORY, .size = 16 << 20 };
    struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = &lun, .nluns = 1,
                              .chap_user = "alice", .chap_secret = "secret-of-alice" };
    struct srv_proc sp;

    assert_int_equal(srv_start(&sp, &cfg, NULL), 0);
    assert_true(chap_login(&sp, "alice", "secret-of-alice", NULL, NULL));
    assert_false(chap_login(&sp, "alice", "wrong-secret-xx", NULL, NULL));
    assert_false(chap_login(&sp, "mallory", "secret-of-alice", NULL, NULL));
    assert_false(chap_login(&sp, NULL, NULL, NULL, NULL));
    assert_int_equal(srv_stop(&sp), 0);

    cfg.mutual_user = "target-t0";
    cfg.mutual_secret = "secret-of-target";
    assert_int_equal(srv_start(&sp, &cfg, NULL), 0);
    assert_true(chap_login(&sp, "alice", "secret-of-alice", "target-t0", "secret-of-target"));
    /* the initiator refuses a target that proves the wrong secret */
    assert_false(chap_login(&sp, "alice", "secret-of-alice", "target-t0", "not-the-secret!"));
    /* mutual required: one-way login is refused */
    assert_false(chap_login(&sp, "alice", "secret-of-alice", NULL, NULL));
    assert_int_equal(srv_stop(&sp), 0);
}

/* True when [off, off + len) of fd is all hole (SEEK_DATA skips it). */
static int is_hole(int fd, off_t off, off_t len)
{
    off_t data = lseek(fd, off, SEEK_DATA);

    return (data < 0 && errno == ENXIO) || data >= off + len;
}

static int reads_zero(struct iscsi_context *ic, uint64_t lba, uint32_t blocks)
{
    struct scsi_task *t = iscsi_read16_sync(ic, 0, lba, blocks * BS, BS, 0, 0, 0, 0, 0);
    int ok = t && t->status == SCSI_STATUS_GOOD && t->datain.size == (int)(blocks * BS);

    for (uint32_t i = 0; ok && i < blocks * BS; i++)
        ok = t->datain.data[i] == 0;
    if (t)
        scsi_free_scsi_task(t);
    return ok;
}

/* UNMAP on a memory LUN, with ranges that start and end inside pages:
 * exactly the range reads as zeros, the bytes around it are kept. */
static void test_unmap_memory(void **state)
{
    struct tgt_lun_config lun = { .kind = TGT_BACKING_MEMORY, .size = 8 << 20 };
    struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = &lun, .nluns = 1 };
    static const struct unmap_list ranges[] = { { 3, 20 }, { 64, 8 }, { 100, 1 }, { 200, 300 } };
    enum { SPAN = 512 };
    unsigned char *w = malloc(SPAN * BS);
    struct iscsi_context *ic;
    struct scsi_task *t;
    struct srv_proc sp;

    assert_non_null(w);
    assert_int_equal(srv_start(&sp, &cfg, NULL), 0);
    ic = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-unmap");
    assert_non_null(ic);
    fill_pattern(w, SPAN * BS, 5);
    t = iscsi_write16_sync(ic, 0, 0, w, SPAN * BS, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);
    t = iscsi_unmap_sync(ic, 0, 0, 0, (struct unmap_list *)ranges, 4);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);
    for (int i = 0; i < 4; i++)
        memset(w + ranges[i].lba * BS, 0, ranges[i].num * BS);
    t = iscsi_read16_sync(ic, 0, 0, SPAN * BS, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    assert_int_equal(t->datain.size, SPAN * BS);
    assert_memory_equal(t->datain.data, w, SPAN * BS);
    scsi_free_scsi_task(t);
    iscsi_logout_sync(ic);
    iscsi_destroy_context(ic);
    assert_int_equal(srv_stop(&sp), 0);
    free(w);
}

static void test_unmap_and_durability(void **state)
{
    char path[128];
    struct tgt_lun_config lun = { .kind = TGT_BACKING_FILE, .path = path, .size = 32 << 20 };
    struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = &lun, .nluns = 1 };
    unsigned char *buf = malloc(1 << 20), zero[BS] = { 0 };
    struct iscsi_context *ic;
    struct scsi_task *t;
    struct srv_proc sp;
    int fd;

    snprintf(path, sizeof(path), "%s/dur.img", tmpdir);
    assert_int_equal(srv_start(&sp, &cfg, NULL), 0);
    ic = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-dur");
    assert_non_null(ic);
    assert_true(verify_rw(ic, 0, 2048, 1 << 20, 42, 0));
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_false(is_hole(fd, 2048 * BS, 256 * BS));
    assert_false(is_hole(fd, 2560 * BS, 256 * BS));
    /* WRITE SAME with UNMAP punches a hole that reads back as zeros */
    t = iscsi_writesame16_sync(ic, 0, 2048, zero, BS, 256, 0, 1, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);
    assert_true(is_hole(fd, 2048 * BS, 256 * BS));
    assert_true(reads_zero(ic, 2048, 256));
    /* and so does UNMAP */
    {
        struct unmap_list range = { .lba = 2560, .num = 256 };
        t = iscsi_unmap_sync(ic, 0, 0, 0, &range, 1);
        assert_non_null(t);
        assert_int_equal(t->status, SCSI_STATUS_GOOD);
        scsi_free_scsi_task(t);
    }
    assert_true(is_hole(fd, 2560 * BS, 256 * BS));
    assert_true(reads_zero(ic, 2560, 256));
    close(fd);
    /* data written and acknowledged, then SIGTERM: it is in the file */
    fill_pattern(buf, 1 << 20, 77);
    t = iscsi_write16_sync(ic, 0, 8192, buf, 1 << 20, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);
    iscsi_destroy_context(ic);
    assert_int_equal(srv_stop(&sp), 0);
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    {
        unsigned char *back = malloc(1 << 20);
        assert_int_equal(pread(fd, back, 1 << 20, 8192 * BS), 1 << 20);
        assert_memory_equal(back, buf, 1 << 20);
        free(back);
    }
    close(fd);
    free(buf);
}

/* Large writes (each the most one command may carry) into the page cache,
 * then a flush that writes them all back,
 * on its own session (in a child process, so it proceeds while the parent
 * measures); exits 0 when all succeeded.  Writes one byte to ready once
 * logged in. */
static void slow_writer(const struct srv_proc *sp, int ready, int writes)
{
    struct iscsi_context *ic = srv_login(sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-slow");
    size_t len = (size_t)MAX_XFER_BLOCKS * BS;
    unsigned char *buf = malloc(len);
    struct scsi_task *t;
    int ok = 1;

    if (!ic || !buf || write(ready, "r", 1) != 1)
        _exit(2);
    fill_pattern(buf, len, 9);
    for (int i = 0; i < writes && ok; i++) {
        t = iscsi_write16_sync(ic, 0, (uint64_t)i * MAX_XFER_BLOCKS, buf, len, BS, 0, 0, 0,
                               0, 0);
        ok = t && t->status == SCSI_STATUS_GOOD;
        if (t)
            scsi_free_scsi_task(t);
    }
    t = iscsi_synchronizecache10_sync(ic, 0, 0, 0, 0, 0);
    ok = ok && t && t->status == SCSI_STATUS_GOOD;
    _exit(ok ? 0 : 1);
}

/* The thread-pool engine keeps the loop free: while another session's
 * large writes and their flush run, TEST UNIT READY (answered by the loop
 * alone) keeps coming back promptly.  Were the blocking syscalls run on
 * the loop, one TEST UNIT READY would wait for the whole flush. */
static void test_pool_does_not_block_loop(void **state)
{
    char path[128];
    struct tgt_lun_config lun = { .kind = TGT_BACKING_FILE, .path = path, .size = 128 << 20 };
    struct tgt_config cfg = { .iqn = IQN, .portal_host = "127.0.0.1", .luns = &lun, .nluns = 1 };
    uint64_t start, worst = 0, busy;
    struct iscsi_context *ic;
    struct srv_proc sp;
    int pfd[2], st, rc;
    pid_t writer;
    char c;

    snprintf(path, sizeof(path), "%s/slow.img", tmpdir);
    assert_int_equal(setenv("IPVFS_TARGET_NO_URING", "1", 1), 0);
    rc = srv_start(&sp, &cfg, NULL);
    assert_int_equal(unsetenv("IPVFS_TARGET_NO_URING"), 0);
    assert_int_equal(rc, 0);
    ic = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-probe");
    assert_non_null(ic);
    assert_int_equal(pipe(pfd), 0);
    writer = fork();
    assert_true(writer >= 0);
    if (writer == 0)
        slow_writer(&sp, pfd[1], 4);
    close(pfd[1]);
    assert_int_equal(read(pfd[0], &c, 1), 1);
    close(pfd[0]);
    start = evloop_now_ms();
    while ((rc = waitpid(writer, &st, WNOHANG)) == 0) {
        uint64_t t0 = evloop_now_ms();
        struct scsi_task *t = iscsi_testunitready_sync(ic, 0);

        assert_non_null(t);
        assert_int_equal(t->status, SCSI_STATUS_GOOD);
        scsi_free_scsi_task(t);
        if (evloop_now_ms() - t0 > worst)
            worst = evloop_now_ms() - t0;
    }
    busy = evloop_now_ms() - start;
    assert_int_equal(rc, writer);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    print_message("writer busy %llu ms, slowest TEST UNIT READY %llu ms\n",
                  (unsigned long long)busy, (unsigned long long)worst);
    iscsi_destroy_context(ic);
    assert_int_equal(srv_stop(&sp), 0);
    if (busy < 200)
        skip();   /* the disk was too fast for the measure to mean anything */
    assert_true(worst * 8 < busy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_memory_and_file_luns, srv_kill_all),
        cmocka_unit_test_teardown(test_many_in_flight_and_sessions, srv_kill_all),
        cmocka_unit_test_teardown(test_header_digest, srv_kill_all),
        cmocka_unit_test_teardown(test_chap, srv_kill_all),
        cmocka_unit_test_teardown(test_unmap_and_durability, srv_kill_all),
        cmocka_unit_test_teardown(test_unmap_memory, srv_kill_all),
        cmocka_unit_test_teardown(test_pool_does_not_block_loop, srv_kill_all),
    };

    if (srv_tests_begin(tmpdir) < 0)
        return 1;
    return srv_tests_end(tmpdir, cmocka_run_group_tests(tests, NULL, NULL));
}
