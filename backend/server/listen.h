/* Where a rank listens: --listen ADDR|IFACE|auto.
 *
 * Every rank describes its host (host name and IPv4 interface addresses,
 * listen_describe_host), the descriptions are gathered on every rank
 * (main.c, one MPI_Allgather before any socket is bound), and each rank
 * picks its own address from them with listen_choose(), which is pure so
 * that the rule is unit-tested (test/test_server_listen.c):
 *
 *   ADDR   that address (an IPv4 literal or a name); 0.0.0.0 listens on
 *          every interface and publishes the address auto would pick
 *   IFACE  the first IPv4 address of that interface of this host
 *   auto   127.0.0.1 when every rank runs on one host (same host name,
 *          same addresses); else the address of this host's interface
 *          whose subnet holds addresses of the most other hosts (the
 *          network that reaches them), the first such on a tie; an
 *          address sharing no subnet with any other host (routed
 *          networks) only when nothing better exists, with a warning.
 *
 * The address published in the map (what clients and the other ranks
 * connect to) is never a wildcard. */
#ifndef IPVFS_SERVER_LISTEN_H
#define IPVFS_SERVER_LISTEN_H

#include <stddef.h>
#include <stdint.h>

#define LISTEN_MAX_ADDRS 8

struct listen_addr {
    uint32_t addr;           /* IPv4, network byte order */
    uint32_t mask;           /* its netmask, network byte order */
    char ifname[16];
};

/* One host as one rank sees it; fixed size, sent as bytes. */
struct listen_host {
    char name[64];           /* gethostname() */
    uint32_t naddrs;
    uint32_t reserved;
    struct listen_addr addrs[LISTEN_MAX_ADDRS]; /* up, not loopback */
};

/* Fills *out with this host's name and its up, non-loopback IPv4
 * addresses (the first LISTEN_MAX_ADDRS).  Returns 0 or -errno. */
int listen_describe_host(struct listen_host *out);

/* The choice, from the gathered hosts (all[0..n-1], ours is all[me]).
 * out_bind: the address to bind ("0.0.0.0" for a wildcard); out_publish:
 * the address others connect to.  warn (may be empty on return) carries a
 * note worth logging.  Returns 0, or -EADDRNOTAVAIL with err naming why
 * (an interface without an IPv4 address, a host with no address that
 * reaches the others). */
int listen_choose(const struct listen_host *all, int n, int me, const char *spec,
                  char *out_bind, char *out_publish, size_t addrlen, char *warn,
                  char *err, size_t msglen);

#endif
