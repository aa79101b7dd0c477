/* The client's reconnect decisions (adio/client/retry.c) and write
 * verifier bookkeeping (adio/client/verf.c), both pure: which failures
 * reconnect, which requests go again (in doubt or not), the backoff and
 * its deadline, and when a sync must report lost writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "adio/client/client_internal.h"
#include "adio/client/retry.h"

static void test_which_failures(void **state)
{
    (void)state;
    /* a serving process that died: its connections reset or close */
    assert_true(retry_after_lost(ECONNRESET));
    assert_true(retry_after_lost(EPIPE));
    assert_true(retry_after_lost(ECONNABORTED));
    /* a hung server, a malformed reply, a refusal: never */
    assert_false(retry_after_lost(ETIMEDOUT));
    assert_false(retry_after_lost(EPROTO));
    assert_false(retry_after_lost(ECONNREFUSED));
    assert_false(retry_after_lost(EACCES));
    /* while reconnecting, a HELLO waiting for the new process may time out */
    assert_true(retry_reconnect_again(ETIMEDOUT));
    assert_true(retry_reconnect_again(ECONNRESET));
    /* nobody holds the port: the supervisor is gone too */
    assert_false(retry_reconnect_again(ECONNREFUSED));
    assert_false(retry_reconnect_again(EACCES));
    assert_false(retry_reconnect_again(EPROTONOSUPPORT));
}

static void test_which_requests(void **state)
{
    static const uint16_t idempotent[] = {
        IPVFS_OP_READ, IPVFS_OP_WRITE, IPVFS_OP_DF_GETSIZE, IPVFS_OP_DF_SYNC,
        IPVFS_OP_DF_TRUNCATE, IPVFS_OP_DF_PREALLOC, IPVFS_OP_DF_REMOVE, IPVFS_OP_ORPHANS,
        IPVFS_OP_LOOKUP, IPVFS_OP_STATUS, IPVFS_OP_READDIR,
    };
    static const uint16_t stateful[] = { IPVFS_OP_SHFP, IPVFS_OP_LOCK, IPVFS_OP_UNLOCK };
    static const uint16_t once_only[] = { IPVFS_OP_REMOVE, IPVFS_OP_MKDIR, IPVFS_OP_SHUTDOWN,
                                          IPVFS_OP_SCRUB, IPVFS_OP_REBUILD };

    (void)state;
    for (size_t i = 0; i < sizeof(idempotent) / sizeof(idempotent[0]); i++) {
        assert_true(retry_request_again(idempotent[i], 0, 0));
        assert_true(retry_request_again(idempotent[i], 0, 1));
        /* the caller's once: not after it may have been done */
        assert_true(retry_request_again(idempotent[i], 1, 0));
        assert_false(retry_request_again(idempotent[i], 1, 1));
    }
    for (size_t i = 0; i < sizeof(stateful) / sizeof(stateful[0]); i++) {
        assert_false(retry_request_again(stateful[i], 0, 0));
        assert_false(retry_request_again(stateful[i], 0, 1));
    }
    for (size_t i = 0; i < sizeof(once_only) / sizeof(once_only[0]); i++) {
        assert_true(retry_request_again(once_only[i], 0, 0));
        assert_false(retry_request_again(once_only[i], 0, 1));
    }
}

static void test_backoff(void **state)
{
    int64_t elapsed = 0;
    unsigned attempt = 0;
    int delay, last = 0;

    (void)state;
    assert_int_equal(retry_delay_ms(0, 0, IPVFS_CLIENT_RECONNECT_MS), RETRY_FIRST_DELAY_MS);
    assert_int_equal(retry_delay_ms(1, 0, IPVFS_CLIENT_RECONNECT_MS), 2 * RETRY_FIRST_DELAY_MS);
    assert_int_equal(retry_delay_ms(1000, 0, IPVFS_CLIENT_RECONNECT_MS), RETRY_MAX_DELAY_MS);
    /* attempts (taking no time themselves) until the deadline: the waits
     * grow, never pass the cap, and the last one ends within the deadline */
    while ((delay = retry_delay_ms(attempt++, elapsed, IPVFS_CLIENT_RECONNECT_MS)) >= 0) {
        assert_true(delay >= last && delay <= RETRY_MAX_DELAY_MS);
        last = delay;
        elapsed += delay;
        assert_true(attempt < 1000);
    }
    assert_true(elapsed <= IPVFS_CLIENT_RECONNECT_MS);
    assert_true(elapsed > IPVFS_CLIENT_RECONNECT_MS - RETRY_MAX_DELAY_MS);
    /* the supervisor's slowest restart (8 s backoff) fits with room */
    assert_true(IPVFS_CLIENT_RECONNECT_MS >= 8000 + 2 * IPVFS_CLIENT_REQUEST_MS);
    assert_int_equal(retry_delay_ms(0, IPVFS_CLIENT_RECONNECT_MS, IPVFS_CLIENT_RECONNECT_MS), -1);
}

static void test_verifier(void **state)
{
    struct file_verf s = { 0 };

    (void)state;
    /* nothing written: any sync is fine, whatever the verifier */
    assert_false(verf_note_sync(&s, 1));
    assert_false(verf_note_sync(&s, 2));
    /* writes and sync by the same incarnation */
    verf_note_write(&s, 7);
    verf_note_write(&s, 7);
    assert_false(verf_note_sync(&s, 7));
    /* acknowledged by 7, synced by 8: the restart may have lost them */
    verf_note_write(&s, 7);
    assert_true(verf_note_sync(&s, 8));
    /* the state starts afresh after the failure */
    assert_false(verf_note_sync(&s, 8));
    verf_note_write(&s, 8);
    assert_false(verf_note_sync(&s, 8));
    /* a restart between two writes (the second one resent to the new
     * incarnation): the first may be gone although the sync agrees with
     * the last write */
    verf_note_write(&s, 8);
    verf_note_write(&s, 9);
    assert_true(verf_note_sync(&s, 9));
    /* a restart after a sync, before new writes: nothing was at risk */
    verf_note_write(&s, 10);
    assert_false(verf_note_sync(&s, 10));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_which_failures),
        cmocka_unit_test(test_which_requests),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_verifier),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
