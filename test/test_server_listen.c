/* Unit tests of the address choice of --listen (backend/server/listen.c):
 * one host, hosts on one subnet, a host with a second network that only
 * some hosts share, an interface named, a wildcard, and a host with no
 * address besides loopback among several hosts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend/server/listen.h"

static char bind_addr[64], publish[64], warn[256], err[256];

static void add(struct listen_host *h, const char *ifname, const char *addr, int prefix)
{
    struct listen_addr *a = &h->addrs[h->naddrs++];
    struct in_addr in;

    assert_int_equal(inet_pton(AF_INET, addr, &in), 1);
    a->addr = in.s_addr;
    a->mask = prefix ? htonl(~0u << (32 - prefix)) : 0;
    snprintf(a->ifname, sizeof(a->ifname), "%s", ifname);
}

static struct listen_host host(const char *name)
{
    struct listen_host h;

    memset(&h, 0, sizeof(h));
    snprintf(h.name, sizeof(h.name), "%s", name);
    return h;
}

static int choose(const struct listen_host *all, int n, int me, const char *spec)
{
    return listen_choose(all, n, me, spec, bind_addr, publish, sizeof(publish), warn, err,
                         sizeof(err));
}

static void test_one_host_is_loopback(void **state)
{
    struct listen_host all[3];

    (void)state;
    all[0] = host("vm");
    add(&all[0], "eth0", "192.0.2.10", 24);
    all[1] = all[2] = all[0];
    assert_int_equal(choose(all, 3, 1, "auto"), 0);
    assert_string_equal(bind_addr, "127.0.0.1");
    assert_string_equal(publish, "127.0.0.1");
    assert_string_equal(warn, "");
}

static void test_hosts_on_one_subnet(void **state)
{
    struct listen_host all[4];

    (void)state;
    all[0] = host("node1");
    add(&all[0], "docker0", "172.17.0.1", 16);   /* reaches nobody */
    add(&all[0], "eth0", "198.18.0.1", 24);
    all[1] = all[0];                              /* a second rank on node1 */
    all[2] = host("node2");
    add(&all[2], "eth0", "198.18.0.2", 24);
    all[3] = host("node3");
    add(&all[3], "eth0", "198.18.0.3", 24);
    assert_int_equal(choose(all, 4, 1, "auto"), 0);
    assert_string_equal(publish, "198.18.0.1");
    assert_string_equal(bind_addr, "198.18.0.1");
    assert_int_equal(choose(all, 4, 3, "auto"), 0);
    assert_string_equal(publish, "198.18.0.3");
}

/* node1 has a management network shared with node2 only and the data
 * network shared with both others: the data network wins. */
static void test_most_reached_network_wins(void **state)
{
    struct listen_host all[3];

    (void)state;
    all[0] = host("node1");
    add(&all[0], "mgmt", "192.0.2.1", 24);
    add(&all[0], "data", "198.18.1.1", 24);
    all[1] = host("node2");
    add(&all[1], "mgmt", "192.0.2.2", 24);
    add(&all[1], "data", "198.18.1.2", 24);
    all[2] = host("node3");
    add(&all[2], "data", "198.18.1.3", 24);
    assert_int_equal(choose(all, 3, 0, "auto"), 0);
    assert_string_equal(publish, "198.18.1.1");
    /* a named interface overrides the rule */
    assert_int_equal(choose(all, 3, 0, "mgmt"), 0);
    assert_string_equal(publish, "192.0.2.1");
    assert_string_equal(bind_addr, "192.0.2.1");
}

static void test_wildcard_publishes_auto(void **state)
{
    struct listen_host all[2];

    (void)state;
    all[0] = host("node1");
    add(&all[0], "eth0", "198.18.0.1", 24);
    all[1] = host("node2");
    add(&all[1], "eth0", "198.18.0.2", 24);
    assert_int_equal(choose(all, 2, 0, "0.0.0.0"), 0);
    assert_string_equal(bind_addr, "0.0.0.0");
    assert_string_equal(publish, "198.18.0.1");
    assert_int_equal(choose(all, 2, 1, "198.18.0.2"), 0);
    assert_string_equal(bind_addr, "198.18.0.2");
    assert_string_equal(publish, "198.18.0.2");
}

static void test_routed_and_unreachable(void **state)
{
    struct listen_host all[2];

    (void)state;
    all[0] = host("node1");
    add(&all[0], "eth0", "203.0.113.5", 24);
    all[1] = host("node2");
    add(&all[1], "eth0", "198.51.100.7", 24);
    /* no shared subnet: routed networks, with a warning */
    assert_int_equal(choose(all, 2, 0, "auto"), 0);
    assert_string_equal(publish, "203.0.113.5");
    assert_non_null(strstr(warn, "routed"));
    /* several hosts, but this one has loopback only: a clear error */
    all[0].naddrs = 0;
    assert_int_equal(choose(all, 2, 0, "auto"), -EADDRNOTAVAIL);
    assert_non_null(strstr(err, "no IPv4 address other than loopback"));
}

static void test_describe_this_host(void **state)
{
    struct listen_host h;

    (void)state;
    assert_int_equal(listen_describe_host(&h), 0);
    assert_true(h.name[0] != '\0');
    assert_true(h.naddrs <= LISTEN_MAX_ADDRS);
    for (uint32_t i = 0; i < h.naddrs; i++)
        assert_true((ntohl(h.addrs[i].addr) >> 24) != 127);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_host_is_loopback),
        cmocka_unit_test(test_hosts_on_one_subnet),
        cmocka_unit_test(test_most_reached_network_wins),
        cmocka_unit_test(test_wildcard_publishes_auto),
        cmocka_unit_test(test_routed_and_unreachable),
        cmocka_unit_test(test_describe_this_host),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
