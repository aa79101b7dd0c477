/* SCSI commands of the embedded target beyond plain READ/WRITE, through
 * libiscsi against the target run in process, on the edge cases that
 * libiscsi's conformance suite leaves out: GET LBA STATUS across a punched
 * hole and the never-written tail of a sparse file, ORWRITE result bytes
 * and its atomicity against concurrent ORWRITEs of the same block,
 * persistent reservations seen from a second session (conflict, keys,
 * release, preempt), WRITE SAME of 0 blocks filling to the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test/test_target_helpers.h"

#define IQN "iqn.2026-01.org.ipvfs:test-cmds"
#define BS 512
#define LUN_BYTES (8 << 20)

static char tmpdir[] = "/tmp/ipvfs-tcmd.XXXXXX";

static struct iscsi_context *start_file_lun(struct srv_proc *sp, struct tgt_lun_config *lun,
                                            struct tgt_config *cfg, char *path, size_t plen,
                                            const char *name)
{
    snprintf(path, plen, "%s/%s.img", tmpdir, name);
    *lun = (struct tgt_lun_config){ .kind = TGT_BACKING_FILE, .path = path, .size = LUN_BYTES };
    *cfg = (struct tgt_config){ .iqn = IQN, .portal_host = "127.0.0.1", .luns = lun, .nluns = 1 };
    assert_int_equal(srv_start(sp, cfg, NULL), 0);
    return srv_login(sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-a");
}

static void write_blocks(struct iscsi_context *ic, uint64_t lba, uint32_t n, int byte)
{
    unsigned char *b = malloc((size_t)n * BS);
    struct scsi_task *t;

    assert_non_null(b);
    memset(b, byte, (size_t)n * BS);
    t = iscsi_write16_sync(ic, 0, lba, b, n * BS, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);
    free(b);
}

/* Descriptor i of a GET LBA STATUS reply: lba, count, provisioning. */
static void lbas_desc(const struct scsi_task *t, int i, uint64_t *lba, uint32_t *n, int *prov)
{
    const unsigned char *d = t->datain.data + 8 + 16 * i;

    assert_true(t->datain.size >= 8 + 16 * (i + 1));
    *lba = (uint64_t)d[0] << 56 | (uint64_t)d[1] << 48 | (uint64_t)d[2] << 40 |
           (uint64_t)d[3] << 32 | (uint64_t)d[4] << 24 | (uint64_t)d[5] << 16 |
           (uint64_t)d[6] << 8 | d[7];
    *n = (uint32_t)d[8] << 24 | (uint32_t)d[9] << 16 | (uint32_t)d[10] << 8 | d[11];
    *prov = d[12] & 0x0f;
}

static void test_get_lba_status_hole(void **state)
{
    char path[128];
    struct tgt_lun_config lun;
    struct tgt_config cfg;
    struct srv_proc sp;
    struct iscsi_context *ic = start_file_lun(&sp, &lun, &cfg, path, sizeof(path), "lbas");
    struct unmap_list range = { .lba = 64, .num = 64 };
    struct scsi_task *t;
    uint64_t lba;
    uint32_t n;
    int prov;

    assert_non_null(ic);
    write_blocks(ic, 0, 256, 0x5a);
    t = iscsi_unmap_sync(ic, 0, 0, 0, &range, 1);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);

    t = iscsi_get_lba_status_sync(ic, 0, 8, 8 + 16 * 8);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    lbas_desc(t, 0, &lba, &n, &prov);   /* from the LBA asked, not the extent start */
    assert_int_equal(lba, 8);
    assert_int_equal(n, 56);
    assert_int_equal(prov, 0);
    lbas_desc(t, 1, &lba, &n, &prov);   /* the punched hole */
    assert_int_equal(lba, 64);
    assert_int_equal(n, 64);
    assert_int_equal(prov, 1);
    lbas_desc(t, 2, &lba, &n, &prov);
    assert_int_equal(lba, 128);
    assert_int_equal(n, 128);
    assert_int_equal(prov, 0);
    lbas_desc(t, 3, &lba, &n, &prov);   /* never written: a hole to the end */
    assert_int_equal(lba, 256);
    assert_int_equal(n, LUN_BYTES / BS - 256);
    assert_int_equal(prov, 1);
    assert_int_equal(t->datain.size, 8 + 16 * 4);
    scsi_free_scsi_task(t);

    /* last block: one descriptor; one past it: LBA OUT OF RANGE */
    t = iscsi_get_lba_status_sync(ic, 0, LUN_BYTES / BS - 1, 24);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    lbas_desc(t, 0, &lba, &n, &prov);
    assert_int_equal(n, 1);
    scsi_free_scsi_task(t);
    t = iscsi_get_lba_status_sync(ic, 0, LUN_BYTES / BS, 24);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
    assert_int_equal(t->sense.key, SCSI_SENSE_ILLEGAL_REQUEST);
    assert_int_equal(t->sense.ascq, SCSI_SENSE_ASCQ_LBA_OUT_OF_RANGE);
    scsi_free_scsi_task(t);
    iscsi_destroy_context(ic);
    assert_int_equal(srv_stop(&sp), 0);
}

struct orw_wait {
    int left;
    int bad;
};

static void orw_done(struct iscsi_context *ic, int status, void *data, void *priv)
{
    struct orw_wait *w = priv;

    if (status != SCSI_STATUS_GOOD)
        w->bad++;
    w->left--;
    scsi_free_scsi_task(data);
}

static void test_orwrite(void **state)
{
    char path[128];
    struct tgt_lun_config lun;
    struct tgt_config cfg;
    struct srv_proc sp;
    struct iscsi_context *ic = start_file_lun(&sp, &lun, &cfg, path, sizeof(path), "orw");
    unsigned char bits[8][4 * BS], want[4 * BS];
    struct orw_wait w = { 0, 0 };
    struct scsi_task *t;

    assert_non_null(ic);
    /* result bytes: old | new, byte by byte, over random patterns */
    fill_pattern(want, sizeof(want), 11);
    t = iscsi_write16_sync(ic, 0, 100, want, 4 * BS, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);
    fill_pattern(bits[0], sizeof(bits[0]), 12);
    t = iscsi_orwrite_sync(ic, 0, 100, bits[0], 4 * BS, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);
    for (size_t i = 0; i < sizeof(want); i++)
        want[i] |= bits[0][i];
    t = iscsi_read16_sync(ic, 0, 100, 4 * BS, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->datain.size, 4 * BS);
    assert_memory_equal(t->datain.data, want, 4 * BS);
    scsi_free_scsi_task(t);

    /* eight ORWRITEs of one bit each, all in flight over the same blocks
     * at once: without the exclusive range, read-merge-write cycles
     * overlap and bits are lost */
    for (int round = 0; round < 20; round++) {
        write_blocks(ic, 200, 4, 0x00);
        for (int b = 0; b < 8; b++) {
            memset(bits[b], 1 << b, sizeof(bits[b]));
            assert_non_null(iscsi_orwrite_task(ic, 0, 200, bits[b], 4 * BS, BS, 0, 0, 0, 0, 0,
                                               orw_done, &w));
            w.left++;
        }
        while (w.left > 0) {
            struct pollfd pfd = { .fd = iscsi_get_fd(ic), .events = iscsi_which_events(ic) };
            assert_true(poll(&pfd, 1, 5000) > 0);
            assert_int_equal(iscsi_service(ic, pfd.revents), 0);
        }
        assert_int_equal(w.bad, 0);
        memset(want, 0xff, sizeof(want));
        t = iscsi_read16_sync(ic, 0, 200, 4 * BS, BS, 0, 0, 0, 0, 0);
        assert_non_null(t);
        assert_int_equal(t->datain.size, 4 * BS);
        assert_memory_equal(t->datain.data, want, 4 * BS);
        scsi_free_scsi_task(t);
    }

    /* beyond the end: LBA OUT OF RANGE; protection bits: INVALID FIELD */
    t = iscsi_orwrite_sync(ic, 0, LUN_BYTES / BS - 1, bits[0], 2 * BS, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
    assert_int_equal(t->sense.ascq, SCSI_SENSE_ASCQ_LBA_OUT_OF_RANGE);
    scsi_free_scsi_task(t);
    t = iscsi_orwrite_sync(ic, 0, 0, bits[0], BS, BS, 1, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
    assert_int_equal(t->sense.ascq, SCSI_SENSE_ASCQ_INVALID_FIELD_IN_CDB);
    scsi_free_scsi_task(t);
    iscsi_destroy_context(ic);
    assert_int_equal(srv_stop(&sp), 0);
}

static int prout(struct iscsi_context *ic, int sa, int type, uint64_t key, uint64_t sark)
{
    struct scsi_persistent_reserve_out_basic p = { .reservation_key = key,
                                                   .service_action_reservation_key = sark };
    struct scsi_task *t = iscsi_persistent_reserve_out_sync(ic, 0, sa, 0, type, &p);
    int st;

    assert_non_null(t);
    st = t->status;
    scsi_free_scsi_task(t);
    return st;
}

static int write_status(struct iscsi_context *ic)
{
    unsigned char b[BS] = { 1 };
    struct scsi_task *t = iscsi_write10_sync(ic, 0, 5, b, BS, BS, 0, 0, 0, 0, 0);
    int st;

    assert_non_null(t);
    st = t->status;
    scsi_free_scsi_task(t);
    return st;
}

static int read_status(struct iscsi_context *ic)
{
    struct scsi_task *t = iscsi_read10_sync(ic, 0, 5, BS, BS, 0, 0, 0, 0, 0);
    int st;

    assert_non_null(t);
    st = t->status;
    scsi_free_scsi_task(t);
    return st;
}

static void test_pr_two_sessions(void **state)
{
    char path[128];
    struct tgt_lun_config lun;
    struct tgt_config cfg;
    struct srv_proc sp;
    struct iscsi_context *a = start_file_lun(&sp, &lun, &cfg, path, sizeof(path), "pr"), *b;
    struct scsi_task *t;

    assert_non_null(a);
    b = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-b");
    assert_non_null(b);
    /* A reserves Write Exclusive: B reads, B's writes conflict */
    assert_int_equal(prout(a, SCSI_PERSISTENT_RESERVE_REGISTER, 0, 0, 0xaa), SCSI_STATUS_GOOD);
    assert_int_equal(prout(a, SCSI_PERSISTENT_RESERVE_RESERVE,
                           SCSI_PERSISTENT_RESERVE_TYPE_WRITE_EXCLUSIVE, 0xaa, 0),
                     SCSI_STATUS_GOOD);
    assert_int_equal(write_status(a), SCSI_STATUS_GOOD);
    assert_int_equal(read_status(b), SCSI_STATUS_GOOD);
    assert_int_equal(write_status(b), SCSI_STATUS_RESERVATION_CONFLICT);
    /* B is no registrant: RESERVE, and REGISTER with a key, conflict */
    assert_int_equal(prout(b, SCSI_PERSISTENT_RESERVE_RESERVE,
                           SCSI_PERSISTENT_RESERVE_TYPE_WRITE_EXCLUSIVE, 0xbb, 0),
                     SCSI_STATUS_RESERVATION_CONFLICT);
    assert_int_equal(prout(b, SCSI_PERSISTENT_RESERVE_REGISTER, 0, 0xbb, 0xbb),
                     SCSI_STATUS_RESERVATION_CONFLICT);
    /* RESERVE(6) conflicts with a persistent reservation */
    t = iscsi_reserve6_sync(b, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_RESERVATION_CONFLICT);
    scsi_free_scsi_task(t);
    /* B registers and sees both keys, the reservation with A's key */
    assert_int_equal(prout(b, SCSI_PERSISTENT_RESERVE_REGISTER, 0, 0, 0xbb), SCSI_STATUS_GOOD);
    t = iscsi_persistent_reserve_in_sync(b, 0, SCSI_PERSISTENT_RESERVE_READ_KEYS, 256);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    assert_int_equal(t->datain.size, 8 + 16);
    assert_int_equal(t->datain.data[7], 16);
    scsi_free_scsi_task(t);
    t = iscsi_persistent_reserve_in_sync(b, 0, SCSI_PERSISTENT_RESERVE_READ_RESERVATION, 256);
    assert_non_null(t);
    assert_int_equal(t->datain.size, 24);
    assert_int_equal(t->datain.data[15], 0xaa);
    assert_int_equal(t->datain.data[21], SCSI_PERSISTENT_RESERVE_TYPE_WRITE_EXCLUSIVE);
    scsi_free_scsi_task(t);
    /* a registrant still conflicts under Write Exclusive; B preempts A
     * (removing A's key) and A, now unregistered, conflicts */
    assert_int_equal(write_status(b), SCSI_STATUS_RESERVATION_CONFLICT);
    assert_int_equal(prout(b, SCSI_PERSISTENT_RESERVE_PREEMPT,
                           SCSI_PERSISTENT_RESERVE_TYPE_EXCLUSIVE_ACCESS, 0xbb, 0xaa),
                     SCSI_STATUS_GOOD);
    assert_int_equal(write_status(b), SCSI_STATUS_GOOD);
    /* A's next command reports the preemption (SPC-4 5.14.12): UNIT
     * ATTENTION, REGISTRATIONS PREEMPTED, once; then A conflicts */
    t = iscsi_read10_sync(a, 0, 5, BS, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
    assert_int_equal(t->sense.key, SCSI_SENSE_UNIT_ATTENTION);
    assert_int_equal(t->sense.ascq, 0x2a05);
    scsi_free_scsi_task(t);
    assert_int_equal(read_status(a), SCSI_STATUS_RESERVATION_CONFLICT);
    assert_int_equal(prout(a, SCSI_PERSISTENT_RESERVE_RELEASE,
                           SCSI_PERSISTENT_RESERVE_TYPE_EXCLUSIVE_ACCESS, 0xaa, 0),
                     SCSI_STATUS_RESERVATION_CONFLICT);
    /* releasing with the wrong type is refused; the right one frees it */
    t = NULL;
    {
        struct scsi_persistent_reserve_out_basic p = { .reservation_key = 0xbb };
        t = iscsi_persistent_reserve_out_sync(b, 0, SCSI_PERSISTENT_RESERVE_RELEASE, 0,
                                              SCSI_PERSISTENT_RESERVE_TYPE_WRITE_EXCLUSIVE, &p);
    }
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
    assert_int_equal(t->sense.ascq, 0x2604);   /* INVALID RELEASE OF PERSISTENT RESERVATION */
    scsi_free_scsi_task(t);
    assert_int_equal(prout(b, SCSI_PERSISTENT_RESERVE_RELEASE,
                           SCSI_PERSISTENT_RESERVE_TYPE_EXCLUSIVE_ACCESS, 0xbb, 0),
                     SCSI_STATUS_GOOD);
    assert_int_equal(write_status(a), SCSI_STATUS_GOOD);
    /* the registration outlives B's session: same name, new ISID is
     * another nexus, so it cannot use B's key */
    iscsi_destroy_context(b);
    b = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-b");
    assert_non_null(b);
    assert_int_equal(prout(b, SCSI_PERSISTENT_RESERVE_CLEAR, 0, 0xbb, 0),
                     SCSI_STATUS_RESERVATION_CONFLICT);
    t = iscsi_persistent_reserve_in_sync(a, 0, SCSI_PERSISTENT_RESERVE_READ_KEYS, 256);
    assert_non_null(t);
    assert_int_equal(t->datain.size, 8 + 8);
    scsi_free_scsi_task(t);
    /* a parameter list of the wrong length, an unknown PR IN action */
    {
        unsigned char cdb[10] = { 0x5f, 0x00, 0, 0, 0, 0, 0, 0, 16, 0 };
        unsigned char data[16] = { 0 };
        struct iscsi_data d = { .size = 16, .data = data };
        t = iscsi_scsi_command_sync(b, 0, scsi_create_task(10, cdb, SCSI_XFER_WRITE, 16), &d);
        assert_non_null(t);
        assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
        assert_int_equal(t->sense.ascq, SCSI_SENSE_ASCQ_PARAMETER_LIST_LENGTH_ERROR);
        scsi_free_scsi_task(t);
    }
    t = iscsi_persistent_reserve_in_sync(b, 0, 7, 256);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
    assert_int_equal(t->sense.ascq, SCSI_SENSE_ASCQ_INVALID_FIELD_IN_CDB);
    scsi_free_scsi_task(t);
    iscsi_destroy_context(a);
    iscsi_destroy_context(b);
    assert_int_equal(srv_stop(&sp), 0);
}

/* The next command of ic reports a unit attention with asc_ascq, once. */
static void expect_ua(struct iscsi_context *ic, int asc_ascq)
{
    struct scsi_task *t = iscsi_read10_sync(ic, 0, 5, BS, BS, 0, 0, 0, 0, 0);

    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
    assert_int_equal(t->sense.key, SCSI_SENSE_UNIT_ATTENTION);
    assert_int_equal(t->sense.ascq, asc_ascq);
    scsi_free_scsi_task(t);
    assert_int_equal(read_status(ic), SCSI_STATUS_GOOD);
}

/* SPC-4 5.14.11/5.14.12: releasing a registrants-only reservation tells
 * the other registrants RESERVATIONS RELEASED (2A/04); a CLEAR tells them
 * RESERVATIONS PREEMPTED (2A/03); the initiator that acted is not told. */
static void test_pr_unit_attentions(void **state)
{
    char path[128];
    struct tgt_lun_config lun;
    struct tgt_config cfg;
    struct srv_proc sp;
    struct iscsi_context *a = start_file_lun(&sp, &lun, &cfg, path, sizeof(path), "prua"), *b;
    const int wero = SCSI_PERSISTENT_RESERVE_TYPE_WRITE_EXCLUSIVE_REGISTRANTS_ONLY;

    assert_non_null(a);
    b = srv_login(&sp, IQN, 0, "iqn.2026-01.org.ipvfs:init-b");
    assert_non_null(b);
    assert_int_equal(prout(a, SCSI_PERSISTENT_RESERVE_REGISTER, 0, 0, 0xaa), SCSI_STATUS_GOOD);
    assert_int_equal(prout(b, SCSI_PERSISTENT_RESERVE_REGISTER, 0, 0, 0xbb), SCSI_STATUS_GOOD);
    assert_int_equal(prout(a, SCSI_PERSISTENT_RESERVE_RESERVE, wero, 0xaa, 0), SCSI_STATUS_GOOD);
    assert_int_equal(write_status(b), SCSI_STATUS_GOOD);     /* a registrant may write */
    assert_int_equal(prout(a, SCSI_PERSISTENT_RESERVE_RELEASE, wero, 0xaa, 0), SCSI_STATUS_GOOD);
    assert_int_equal(read_status(a), SCSI_STATUS_GOOD);
    expect_ua(b, 0x2a04);
    assert_int_equal(prout(a, SCSI_PERSISTENT_RESERVE_RESERVE, wero, 0xaa, 0), SCSI_STATUS_GOOD);
    assert_int_equal(prout(b, SCSI_PERSISTENT_RESERVE_CLEAR, 0, 0xbb, 0), SCSI_STATUS_GOOD);
    assert_int_equal(read_status(b), SCSI_STATUS_GOOD);
    expect_ua(a, 0x2a03);
    iscsi_destroy_context(a);
    iscsi_destroy_context(b);
    assert_int_equal(srv_stop(&sp), 0);
}

static void test_write_same_to_end(void **state)
{
    char path[128];
    struct tgt_lun_config lun;
    struct tgt_config cfg;
    struct srv_proc sp;
    struct iscsi_context *ic = start_file_lun(&sp, &lun, &cfg, path, sizeof(path), "ws");
    unsigned char blk[BS];
    struct scsi_task *t;
    const uint64_t nb = LUN_BYTES / BS;

    assert_non_null(ic);
    memset(blk, 0xc3, BS);
    /* 0 blocks: from the LBA to the last one, and no further */
    t = iscsi_writesame16_sync(ic, 0, nb - 3000, blk, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_GOOD);
    scsi_free_scsi_task(t);
    t = iscsi_read16_sync(ic, 0, nb - 3001, 3001 * BS, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->datain.size, 3001 * BS);
    for (int i = 0; i < BS; i++)
        assert_int_equal(t->datain.data[i], 0);
    for (int i = BS; i < 3001 * BS; i++)
        assert_int_equal(t->datain.data[i], 0xc3);
    scsi_free_scsi_task(t);
    t = iscsi_writesame16_sync(ic, 0, nb, blk, BS, 0, 0, 0, 0, 0);
    assert_non_null(t);
    assert_int_equal(t->status, SCSI_STATUS_CHECK_CONDITION);
    assert_int_equal(t->sense.ascq, SCSI_SENSE_ASCQ_LBA_OUT_OF_RANGE);
    scsi_free_scsi_task(t);
    iscsi_destroy_context(ic);
    assert_int_equal(srv_stop(&sp), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_get_lba_status_hole, srv_kill_all),
        cmocka_unit_test_teardown(test_orwrite, srv_kill_all),
        cmocka_unit_test_teardown(test_pr_two_sessions, srv_kill_all),
        cmocka_unit_test_teardown(test_pr_unit_attentions, srv_kill_all),
        cmocka_unit_test_teardown(test_write_same_to_end, srv_kill_all),
    };

    if (srv_tests_begin(tmpdir) < 0)
        return 1;
    return srv_tests_end(tmpdir, cmocka_run_group_tests(tests, NULL, NULL));
}
