/* common/u64map: insert, lookup, replace, delete, growth, iteration, many
 * keys, and keys that share a home slot (probe chains, also across the
 * table's end), each checked against a plain array model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/u64map.h"

/* Capacity of a map after its first insert (and until its 13th). */
#define FIRST_CAP 16

/* Fills keys[0..n) with distinct keys >= *next whose home slot in a table
 * of FIRST_CAP is home. */
static void keys_with_home(uint64_t home, uint64_t *keys, int n, uint64_t *next)
{
    for (int found = 0; found < n; (*next)++)
        if ((u64map_hash(*next) & (FIRST_CAP - 1)) == home)
            keys[found++] = *next;
}

/* Every key of keys[0..n) with present[i] maps to vals[i], the others to
 * nothing, and the map holds exactly the present ones: iteration yields
 * as many entries, each one a lookup agrees with. */
static void check_model(const struct u64map *m, const uint64_t *keys, const uint64_t *vals,
                        const int *present, int n)
{
    uint64_t count = 0, iterated = 0, pos = 0, k, v;

    for (int i = 0; i < n; i++) {
        if (present[i]) {
            assert_int_equal(u64map_get(m, keys[i]), vals[i]);
            count++;
        } else {
            assert_int_equal(u64map_get(m, keys[i]), U64MAP_NONE);
        }
    }
    assert_int_equal(m->count, count);
    while (u64map_next(m, &pos, &k, &v)) {
        assert_int_equal(u64map_get(m, k), v);
        iterated++;
    }
    assert_int_equal(iterated, count);
}

static void test_empty(void **state)
{
    struct u64map m = { 0 };
    uint64_t pos = 0, k, v;

    (void)state;
    assert_int_equal(u64map_get(&m, 0), U64MAP_NONE);
    assert_int_equal(u64map_get(&m, 42), U64MAP_NONE);
    u64map_del(&m, 42);
    assert_int_equal(m.count, 0);
    assert_int_equal(u64map_next(&m, &pos, &k, &v), 0);
    u64map_free(&m);
    u64map_free(&m);
}

static void test_put_get_replace_del(void **state)
{
    struct u64map m = { 0 };

    (void)state;
    assert_int_equal(u64map_put(&m, 0, 100), 0);
    assert_int_equal(u64map_put(&m, 7, 700), 0);
    assert_int_equal(u64map_put(&m, UINT64_MAX, 1), 0);
    assert_int_equal(m.count, 3);
    assert_int_equal(u64map_get(&m, 0), 100);
    assert_int_equal(u64map_get(&m, 7), 700);
    assert_int_equal(u64map_get(&m, UINT64_MAX), 1);
    assert_int_equal(u64map_get(&m, 8), U64MAP_NONE);

    assert_int_equal(u64map_put(&m, 7, 701), 0);
    assert_int_equal(m.count, 3);
    assert_int_equal(u64map_get(&m, 7), 701);

    u64map_del(&m, 7);
    assert_int_equal(m.count, 2);
    assert_int_equal(u64map_get(&m, 7), U64MAP_NONE);
    u64map_del(&m, 7);
    u64map_del(&m, 12345);
    assert_int_equal(m.count, 2);
    assert_int_equal(u64map_get(&m, 0), 100);
    assert_int_equal(u64map_get(&m, UINT64_MAX), 1);

    assert_int_equal(u64map_put(&m, 7, 702), 0);
    assert_int_equal(u64map_get(&m, 7), 702);
    u64map_free(&m);
    assert_int_equal(m.count, 0);
    assert_int_equal(u64map_get(&m, 0), U64MAP_NONE);
}

/* The table doubles when an insert would pass 3/4 full, and every entry
 * is still found after each rehash. */
static void test_growth(void **state)
{
    enum { N = 5000 };
    struct u64map m = { 0 };
    uint64_t cap = 0;
    int grew = 0;

    (void)state;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t key = i * 0x9e3779b97f4a7c15ull;
        assert_int_equal(u64map_put(&m, key, i), 0);
        assert_int_equal(m.count, i + 1);
        assert_true(m.count * 4 <= m.cap * 3);
        assert_int_equal(m.cap & (m.cap - 1), 0);
        if (m.cap != cap) {
            assert_int_equal(m.cap, cap ? 2 * cap : FIRST_CAP);
            cap = m.cap;
            grew++;
            for (uint64_t j = 0; j <= i; j++)
                assert_int_equal(u64map_get(&m, j * 0x9e3779b97f4a7c15ull), j);
        }
    }
    /* 16 -> 8192 for 5000 keys */
    assert_int_equal(grew, 10);
    assert_int_equal(m.cap, 8192);
    u64map_free(&m);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Iteration yields every entry once, with its value. */
static void test_iteration(void **state)
{
    enum { N = 1000 };
    struct u64map m = { 0 };
    uint64_t *seen = calloc(N, sizeof(*seen));
    uint64_t pos = 0, k, v, n = 0;

    (void)state;
    assert_non_null(seen);
    for (uint64_t i = 0; i < N; i++)
        assert_int_equal(u64map_put(&m, 3 * i + 1, i), 0);
    for (uint64_t i = 0; i < N; i += 2)
        u64map_del(&m, 3 * i + 1);
    while (u64map_next(&m, &pos, &k, &v)) {
        assert_true(n < N / 2);
        assert_int_equal(k, 3 * v + 1);
        assert_int_equal(v % 2, 1);
        seen[n++] = k;
    }
    assert_int_equal(n, N / 2);
    assert_int_equal(u64map_next(&m, &pos, &k, &v), 0);
    qsort(seen, n, sizeof(*seen), cmp_u64);
    for (uint64_t i = 1; i < n; i++)
        assert_true(seen[i] > seen[i - 1]);
    free(seen);
    u64map_free(&m);
}

/* Keys sharing home slots 14 and 15 make one probe chain that wraps past
 * the table's end into slots 0.. (11 keys stay below the first growth).
 * Deleting any one key, or all of them in several orders, keeps every
 * other key reachable. */
static void test_colliding_keys(void **state)
{
    enum { N = 11 };
    uint64_t keys[N], vals[N], next = 1;
    int present[N];

    (void)state;
    keys_with_home(15, keys, 4, &next);
    keys_with_home(14, keys + 4, 4, &next);
    keys_with_home(0, keys + 8, 2, &next);
    keys_with_home(1, keys + 10, 1, &next);
    for (int i = 0; i < N; i++)
        vals[i] = 1000 + (uint64_t)i;

    for (int victim = 0; victim < N; victim++) {
        struct u64map m = { 0 };
        for (int i = 0; i < N; i++) {
            assert_int_equal(u64map_put(&m, keys[i], vals[i]), 0);
            present[i] = 1;
        }
        assert_int_equal(m.cap, FIRST_CAP);
        check_model(&m, keys, vals, present, N);
        u64map_del(&m, keys[victim]);
        present[victim] = 0;
        check_model(&m, keys, vals, present, N);
        /* the freed place is usable again */
        assert_int_equal(u64map_put(&m, keys[victim], 7), 0);
        present[victim] = 1;
        vals[victim] = 7;
        check_model(&m, keys, vals, present, N);
        vals[victim] = 1000 + (uint64_t)victim;
        u64map_free(&m);
    }

    for (int order = 0; order < 3; order++) {
        struct u64map m = { 0 };
        for (int i = 0; i < N; i++) {
            assert_int_equal(u64map_put(&m, keys[i], vals[i]), 0);
            present[i] = 1;
        }
        for (int s = 0; s < N; s++) {
            /* forwards, backwards, and every third key first */
            int i = order == 0 ? s : order == 1 ? N - 1 - s : (s * 3) % N;
            u64map_del(&m, keys[i]);
            present[i] = 0;
            check_model(&m, keys, vals, present, N);
        }
        u64map_free(&m);
    }
}

/* Random puts, replaces and deletes over a small key space (so chains
 * grow, shrink and collide), the map checked against an array. */
static void test_many_keys_random(void **state)
{
    enum { KEYS = 4096, OPS = 200000 };
    struct u64map m = { 0 };
    uint64_t *keys = malloc(KEYS * sizeof(*keys)), *vals = malloc(KEYS * sizeof(*vals));
    int *present = calloc(KEYS, sizeof(*present));
    uint64_t rng = 0x2545f4914f6cdd1dull;

    (void)state;
    assert_true(keys && vals && present);
    for (int i = 0; i < KEYS; i++)
        keys[i] = (uint64_t)i << 20;      /* spread keys, the hash must mix */
    for (int op = 0; op < OPS; op++) {
        int i;
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        i = (int)(rng % KEYS);
        /* deletes a little rarer than puts: entries come and go */
        if ((rng >> 32) % 5 < 2) {
            u64map_del(&m, keys[i]);
            present[i] = 0;
        } else {
            vals[i] = rng >> 8;
            assert_int_equal(u64map_put(&m, keys[i], vals[i]), 0);
            present[i] = 1;
        }
        assert_int_equal(u64map_get(&m, keys[i]), present[i] ? vals[i] : U64MAP_NONE);
        if (op % 20000 == 0)
            check_model(&m, keys, vals, present, KEYS);
    }
    check_model(&m, keys, vals, present, KEYS);
    free(present);
    free(vals);
    free(keys);
    u64map_free(&m);
}

/* After reserving n, n puts leave the table as it is (no growth, so none
 * can fail), and the table keeps a quarter free. */
static void test_reserve(void **state)
{
    struct u64map m = { 0 };
    uint64_t cap;

    (void)state;
    assert_int_equal(u64map_reserve(&m, 1000), 0);
    cap = m.cap;
    assert_true(cap * 3 >= 1000 * 4 && cap * 3 / 2 < 1000 * 4);
    for (uint64_t k = 0; k < 1000; k++)
        assert_int_equal(u64map_put(&m, k * 7919, k), 0);
    assert_int_equal(m.cap, cap);
    assert_int_equal(m.count, 1000);
    assert_int_equal(u64map_reserve(&m, 10), 0);
    assert_int_equal(m.cap, cap);
    u64map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_put_get_replace_del),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_iteration),
        cmocka_unit_test(test_colliding_keys),
        cmocka_unit_test(test_many_keys_random),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
