/* cache/: every policy on tiny traces worked out by hand (the expected
 * hits, victims and contents are in the comments), the two-level protocol
 * of uCache (L1 LRU over an L2, as tools/cachesim/sim.c drives it) with
 * exact hit counts per level, and the exclusive property: under demote and
 * demote-mq no block is ever in both levels, checked after every step of a
 * long pseudo-random trace. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cache/cache.h"

#define A 1
#define B 2
#define C 3
#define D 4

static void level(struct cache *c, const char *policy, uint64_t blocks)
{
    const struct cache_ops *ops = cache_policy_find(policy);

    assert_non_null(ops);
    assert_int_equal(cache_init(c, ops, blocks), 0);
}

/* Reads trace[0..n) at one level; returns the hits. */
static int play(struct cache *c, const uint64_t *trace, int n)
{
    struct cache_victim v;
    int hits = 0;

    for (int i = 0; i < n; i++)
        hits += cache_access(c, trace[i], 0, &v);
    return hits;
}

/* Two levels as uCache runs them: L1 access; on a miss a DPO read from L2;
 * then L1's victim goes down (store if dirty, demote if clean). */
struct two {
    struct cache l1, l2;
    int l1_hits, l2_hits, l2_reads;
};

static void two_access(struct two *t, uint64_t key, int write)
{
    struct cache_victim v, v2;

    if (cache_access(&t->l1, key, write ? CACHE_DIRTY : 0, &v)) {
        t->l1_hits++;
    } else {
        t->l2_reads++;
        t->l2_hits += cache_access(&t->l2, key, CACHE_DPO, &v2);
    }
    if (v.valid && v.dirty)
        cache_store(&t->l2, v.key, &v2);
    else if (v.valid)
        (void)cache_demote(&t->l2, v.key, &v2);
}

static void two_free(struct two *t)
{
    cache_fini(&t->l1);
    cache_fini(&t->l2);
}

static void test_names_and_bad_sizes(void **state)
{
    struct cache c;

    (void)state;
    for (int i = 0; cache_policy_names[i]; i++)
        assert_string_equal(cache_policy_find(cache_policy_names[i])->name, cache_policy_names[i]);
    assert_null(cache_policy_find("arc"));
    assert_null(cache_policy_find(""));
    assert_int_equal(cache_init(&c, cache_policy_find("lru"), 0), -EINVAL);
    assert_int_equal(cache_init(&c, cache_policy_find("lru"), 1ull << 31), -EINVAL);
    /* A failed init leaves a cache that answers "not there" and frees. */
    assert_int_equal(cache_contains(&c, A), 0);
    cache_fini(&c);
    assert_int_equal(cache_key(1, 5), (1ull << CACHE_BLOCK_BITS) | 5);
}

/* LRU, 2 blocks: A B A C B A
 *   A miss [A]; B miss [A B]; A hit [B A]; C miss, out B [A C];
 *   B miss, out A [C B]; A miss, out C [B A]: 1 hit, 3 evictions. */
static void test_lru(void **state)
{
    static const uint64_t trace[] = { A, B, A, C, B, A };
    struct cache c;

    (void)state;
    level(&c, "lru", 2);
    assert_int_equal(play(&c, trace, 6), 1);
    assert_int_equal(c.stats.hits, 1);
    assert_int_equal(c.stats.misses, 5);
    assert_int_equal(c.stats.evictions, 3);
    assert_true(cache_contains(&c, A) && cache_contains(&c, B) && !cache_contains(&c, C));
    assert_int_equal(c.resident, 2);
    cache_fini(&c);
}

/* LRU, 1 block: write A, read B (out A dirty), read C (out B clean);
 * a flushed block leaves clean; a removed one is gone. */
static void test_lru_dirty(void **state)
{
    struct cache c;
    struct cache_victim v;

    (void)state;
    level(&c, "lru", 1);
    assert_int_equal(cache_access(&c, A, CACHE_DIRTY, &v), 0);
    assert_false(v.valid);
    assert_true(cache_is_dirty(&c, A));
    assert_int_equal(cache_access(&c, B, 0, &v), 0);
    assert_true(v.valid && v.dirty && v.key == A);
    assert_int_equal(cache_access(&c, C, 0, &v), 0);
    assert_true(v.valid && !v.dirty && v.key == B);
    assert_int_equal(cache_access(&c, C, CACHE_DIRTY, &v), 1);
    cache_set_clean(&c, C);
    assert_false(cache_is_dirty(&c, C));
    assert_int_equal(cache_access(&c, D, 0, &v), 0);
    assert_true(v.valid && !v.dirty && v.key == C);
    assert_int_equal(c.stats.dirty_evictions, 1);
    cache_remove(&c, D);
    assert_false(cache_contains(&c, D));
    assert_int_equal(c.resident, 0);
    cache_fini(&c);
}

/* MQ, 2 blocks (lifetime 4 accesses): A A B C A B C
 *   t1 A miss Q0; t2 A hit, f2 -> Q1; t3 B miss Q0; t4 C miss, out B (Q0
 *   head; LRU would take A) to history; t5 A hit, f3; t6 B miss, history
 *   f1 -> f2 Q1, out C to history; t7 C miss, f2, out A (Q0 empty, Q1
 *   head).  2 hits where LRU gets 1. */
static void test_mq(void **state)
{
    static const uint64_t trace[] = { A, A, B, C, A, B, C };
    struct cache c, lru;

    (void)state;
    level(&c, "mq", 2);
    level(&lru, "lru", 2);
    assert_int_equal(play(&c, trace, 7), 2);
    assert_int_equal(play(&lru, trace, 7), 1);
    assert_true(cache_contains(&c, B) && cache_contains(&c, C) && !cache_contains(&c, A));
    cache_fini(&c);
    cache_fini(&lru);
}

/* MQ ageing, 2 blocks: A A (A in Q1, expires at 6), then B..G once each
 * push each other out of Q0; at t7 A's time is up and it falls to Q0
 * behind F; t8 G takes F; t9 H takes A. */
static void test_mq_ageing(void **state)
{
    static const uint64_t trace[] = { A, A, 10, 11, 12, 13, 14, 15, 16 };
    struct cache c;

    (void)state;
    level(&c, "mq", 2);
    assert_int_equal(play(&c, trace, 8), 1);
    assert_true(cache_contains(&c, A));
    assert_int_equal(play(&c, trace + 8, 1), 0);
    assert_false(cache_contains(&c, A));
    /* It comes back with its frequency from the history: f3, queue 1. */
    assert_int_equal(play(&c, trace, 1), 0);
    assert_true(cache_contains(&c, A));
    cache_fini(&c);
}

/* A loop of 3 blocks over L1 2 + L2 2.  Inclusive (lru): L2 holds the same
 * blocks as L1 minus one, every access misses both levels.  Exclusive
 * (demote): A, B, C miss; then A comes up from L2 (A was demoted when C
 * came in), B and C likewise: 3 L2 hits. */
static void test_two_level_loop(void **state)
{
    static const uint64_t loop[] = { A, B, C, A, B, C };
    struct two inc = { 0 }, exc = { 0 };

    (void)state;
    level(&inc.l1, "lru", 2);
    level(&inc.l2, "lru", 2);
    level(&exc.l1, "lru", 2);
    level(&exc.l2, "demote", 2);
    for (int i = 0; i < 6; i++) {
        two_access(&inc, loop[i], 0);
        two_access(&exc, loop[i], 0);
    }
    assert_int_equal(inc.l1_hits, 0);
    assert_int_equal(inc.l2_hits, 0);
    assert_int_equal(exc.l1_hits, 0);
    assert_int_equal(exc.l2_reads, 6);
    assert_int_equal(exc.l2_hits, 3);
    assert_int_equal(exc.l2.stats.dropped, 3);
    assert_int_equal(exc.l2.stats.demotes_kept, 4);
    assert_int_equal(inc.l2.stats.demotes_ignored, 4);
    /* L2 holds A (demoted when C came up), L1 holds B and C. */
    assert_true(cache_contains(&exc.l2, A) && exc.l2.resident == 1);
    two_free(&inc);
    two_free(&exc);
}

/* A dirty block L1 evicts is stored in L2 (write-back) and comes up again
 * as an L2 hit; under demote the read drops it from L2. */
static void test_two_level_writeback(void **state)
{
    struct two t = { 0 };

    (void)state;
    level(&t.l1, "lru", 1);
    level(&t.l2, "demote", 1);
    two_access(&t, A, 1);
    two_access(&t, B, 0);       /* A written back into L2 */
    assert_int_equal(t.l2.stats.stores, 1);
    assert_true(cache_contains(&t.l2, A));
    two_access(&t, A, 0);       /* L2 hit, B demoted */
    assert_int_equal(t.l2_hits, 1);
    assert_false(cache_contains(&t.l2, A));
    assert_true(cache_contains(&t.l2, B));
    two_free(&t);
}

/* demote-mq, L1 1 + L2 1: A B A B C D
 *   A: L2 miss, history A f1.  B: miss (B f1); A demoted, admitted (Q0).
 *   A: L2 hit, dropped, f2; B demoted, admitted.  B: hit, f2; A (f2, Q1)
 *   admitted.  C: miss (C f1); B (f2, Q1) offered, L2 holds A in Q1:
 *   admitted, A out.  D: miss; C (f1, Q0) offered against B in Q1:
 *   refused.  2 L2 hits, 4 demotes kept, 1 refused (plain demote keeps all
 *   5 and has 2 hits too; the refusal is what protects B). */
static void test_demote_mq(void **state)
{
    static const uint64_t trace[] = { A, B, A, B, C, D };
    struct two t = { 0 };

    (void)state;
    level(&t.l1, "lru", 1);
    level(&t.l2, "demote-mq", 1);
    for (int i = 0; i < 6; i++)
        two_access(&t, trace[i], 0);
    assert_int_equal(t.l2_reads, 6);
    assert_int_equal(t.l2_hits, 2);
    assert_int_equal(t.l2.stats.demotes_kept, 4);
    assert_int_equal(t.l2.stats.demotes_ignored, 1);
    assert_true(cache_contains(&t.l2, B));
    assert_false(cache_contains(&t.l2, C));
    two_free(&t);
}

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* 20,000 accesses (a quarter writes) to 64 blocks over L1 8 + L2 4:
 * after each one no block is in both levels, and the levels never hold
 * more than their capacity. */
static void check_exclusive(const char *policy)
{
    struct two t = { 0 };
    uint64_t s = 42;

    level(&t.l1, "lru", 8);
    level(&t.l2, policy, 4);
    for (int i = 0; i < 20000; i++) {
        two_access(&t, rng(&s) % 64, rng(&s) % 4 == 0);
        for (uint64_t k = 0; k < 64; k++)
            assert_false(cache_contains(&t.l1, k) && cache_contains(&t.l2, k));
        assert_true(t.l1.resident <= 8 && t.l2.resident <= 4);
    }
    assert_true(t.l2_hits > 0);
    assert_int_equal(t.l1.stats.hits + t.l1.stats.misses, 20000);
    two_free(&t);
}

static void test_exclusive_demote(void **state)
{
    (void)state;
    check_exclusive("demote");
}

static void test_exclusive_demote_mq(void **state)
{
    (void)state;
    check_exclusive("demote-mq");
}

/* Admission on reuse: a key's first miss is refused, its second admitted
 * (and forgotten); only the last cap refusals are remembered. */
static void test_admit_reuse(void **state)
{
    struct cache_admit a;

    (void)state;
    assert_int_equal(cache_admit_init(&a, 0), -EINVAL);
    assert_int_equal(cache_admit_init(&a, 3), 0);
    assert_int_equal(cache_admit(&a, A), 0);
    assert_int_equal(cache_admit(&a, A), 1);
    assert_int_equal(cache_admit(&a, A), 0);      /* forgotten when admitted */
    assert_int_equal(cache_admit(&a, B), 0);
    assert_int_equal(cache_admit(&a, C), 0);
    assert_int_equal(cache_admit(&a, D), 0);      /* pushes A's refusal out */
    assert_int_equal(cache_admit(&a, A), 0);
    assert_int_equal(cache_admit(&a, C), 1);      /* still within the last 3 */
    assert_int_equal(cache_admit(&a, B), 0);      /* gone: C, D, A refused since */
    assert_int_equal(a.refused, 7);
    cache_admit_fini(&a);
}

/* Admits key (two misses) and reports the fill; 1 if it was admitted. */
static int admit_fill(struct cache_admit *a, uint64_t key)
{
    if (cache_admit(a, key) || !cache_admit(a, key))
        return 0;
    cache_admit_filled(a);
    return 1;
}

/* The yield gate: an epoch of fills without hits shuts it (one in
 * CACHE_ADMIT_SAMPLE of the misses the reuse rule passes fill, the others
 * are remembered again and ask at their next miss); an epoch with
 * CACHE_ADMIT_YIELD hits per fill opens it. */
static void test_admit_yield(void **state)
{
    struct cache_admit a;
    uint64_t key = 100, passed = 0;

    (void)state;
    assert_int_equal(cache_admit_init(&a, 4096), 0);
    for (unsigned i = 0; i < CACHE_ADMIT_EPOCH; i++)
        assert_int_equal(admit_fill(&a, key++), 1);       /* open: all fill */
    for (unsigned i = 0; i < CACHE_ADMIT_SAMPLE * 4; i++)
        passed += admit_fill(&a, key++);
    assert_int_equal(passed, 4);
    assert_int_equal(a.gated, CACHE_ADMIT_SAMPLE * 4 - 4);
    /* The epoch ends with enough hits: the gate opens. */
    for (unsigned i = 0; i < CACHE_ADMIT_YIELD * CACHE_ADMIT_EPOCH; i++)
        cache_admit_hit(&a);
    while (a.epoch_fills != 0) {
        while (!admit_fill(&a, key++))
            ;
    }
    passed = 0;
    for (unsigned i = 0; i < CACHE_ADMIT_SAMPLE * 4; i++)
        passed += admit_fill(&a, key++);
    assert_int_equal(passed, CACHE_ADMIT_SAMPLE * 4);
    /* One hit short of the yield shuts it again. */
    for (unsigned i = 0; i + 1 < CACHE_ADMIT_YIELD * CACHE_ADMIT_EPOCH; i++)
        cache_admit_hit(&a);
    while (a.epoch_fills != 0) {
        while (!admit_fill(&a, key++))
            ;
    }
    assert_int_equal(admit_fill(&a, key++), 0);
    assert_int_equal(admit_fill(&a, key++), 0);
    assert_int_equal(a.fill_hits, 2 * CACHE_ADMIT_YIELD * CACHE_ADMIT_EPOCH - 1);
    cache_admit_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_bad_sizes),
        cmocka_unit_test(test_lru),
        cmocka_unit_test(test_lru_dirty),
        cmocka_unit_test(test_mq),
        cmocka_unit_test(test_mq_ageing),
        cmocka_unit_test(test_two_level_loop),
        cmocka_unit_test(test_two_level_writeback),
        cmocka_unit_test(test_demote_mq),
        cmocka_unit_test(test_exclusive_demote),
        cmocka_unit_test(test_exclusive_demote_mq),
        cmocka_unit_test(test_admit_reuse),
        cmocka_unit_test(test_admit_yield),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
