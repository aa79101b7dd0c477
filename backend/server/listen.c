/* --listen ADDR|IFACE|auto: the rule is in listen.h. */
#include "backend/server/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int listen_describe_host(struct listen_host *out)
{
    struct ifaddrs *ifa, *i;

    memset(out, 0, sizeof(*out));
    if (gethostname(out->name, sizeof(out->name) - 1) < 0)
        return -errno;
    if (getifaddrs(&ifa) < 0)
        return -errno;
    for (i = ifa; i && out->naddrs < LISTEN_MAX_ADDRS; i = i->ifa_next) {
        struct listen_addr *a = &out->addrs[out->naddrs];

        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask ||
            !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        a->addr = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
        a->mask = ((const struct sockaddr_in *)(const void *)i->ifa_netmask)->sin_addr.s_addr;
        snprintf(a->ifname, sizeof(a->ifname), "%s", i->ifa_name);
        out->naddrs++;
    }
    freeifaddrs(ifa);
    return 0;
}

static int same_host(const struct listen_host *a, const struct listen_host *b)
{
    if (strncmp(a->name, b->name, sizeof(a->name)) != 0 || a->naddrs != b->naddrs)
        return 0;
    for (uint32_t i = 0; i < a->naddrs; i++)
        if (a->addrs[i].addr != b->addrs[i].addr)
            return 0;
    return 1;
}

/* How many ranks on other hosts have an address in the subnet of a. */
static int reach(const struct listen_host *all, int n, int me, const struct listen_addr *a)
{
    int count = 0;

    for (int r = 0; r < n; r++) {
        if (r == me || same_host(&all[r], &all[me]))
            continue;
        for (uint32_t j = 0; j < all[r].naddrs && j < LISTEN_MAX_ADDRS; j++) {
            if ((all[r].addrs[j].addr & a->mask) == (a->addr & a->mask)) {
                count++;
                break;
            }
        }
    }
    return count;
}

static void format_addr(uint32_t addr, char *out, size_t outlen)
{
    struct in_addr in = { .s_addr = addr };

    if (!inet_ntop(AF_INET, &in, out, (socklen_t)outlen))
        snprintf(out, outlen, "?");
}

/* auto: the address (into out) that reaches the most other hosts. */
static int choose_auto(const struct listen_host *all, int n, int me, char *out, size_t outlen,
                       char *warn, char *err, size_t msglen)
{
    const struct listen_host *mine = &all[me];
    int best = -1, best_reach = -1, alone = 1;

    for (int r = 0; r < n; r++)
        if (!same_host(&all[r], mine))
            alone = 0;
    if (alone) {
        snprintf(out, outlen, "127.0.0.1");
        return 0;
    }
    for (uint32_t i = 0; i < mine->naddrs && i < LISTEN_MAX_ADDRS; i++) {
        int k = reach(all, n, me, &mine->addrs[i]);

        if (k > best_reach) {
            best = (int)i;
            best_reach = k;
        }
    }
    if (best < 0) {
        snprintf(err, msglen, "--listen auto: the ranks run on several hosts, but host %.64s "
                 "has no IPv4 address other than loopback", mine->name);
        return -EADDRNOTAVAIL;
    }
    format_addr(mine->addrs[best].addr, out, outlen);
    if (best_reach == 0)
        snprintf(warn, msglen, "--listen auto: no interface of %.64s shares a subnet with the "
                 "other hosts; listening on %s (%s), which must be routed to them", mine->name,
                 out, mine->addrs[best].ifname);
    return 0;
}

int listen_choose(const struct listen_host *all, int n, int me, const char *spec,
                  char *out_bind, char *out_publish, size_t addrlen, char *warn,
                  char *err, size_t msglen)
{
    const struct listen_host *mine = &all[me];
    struct in_addr lit;

    warn[0] = '\0';
    if (strcmp(spec, "auto") == 0) {
        if (choose_auto(all, n, me, out_publish, addrlen, warn, err, msglen) < 0)
            return -EADDRNOTAVAIL;
        snprintf(out_bind, addrlen, "%s", out_publish);
        return 0;
    }
    for (uint32_t i = 0; i < mine->naddrs && i < LISTEN_MAX_ADDRS; i++) {
        if (strncmp(spec, mine->addrs[i].ifname, sizeof(mine->addrs[i].ifname)) == 0) {
            format_addr(mine->addrs[i].addr, out_publish, addrlen);
            snprintf(out_bind, addrlen, "%s", out_publish);
            return 0;
        }
    }
    if (strcmp(spec, "lo") == 0) {
        snprintf(out_bind, addrlen, "127.0.0.1");
        snprintf(out_publish, addrlen, "127.0.0.1");
        return 0;
    }
    snprintf(out_bind, addrlen, "%s", spec);
    if (inet_pton(AF_INET, spec, &lit) == 1 && lit.s_addr == htonl(INADDR_ANY))
        /* every interface: publish the one the others reach */
        return choose_auto(all, n, me, out_publish, addrlen, warn, err, msglen);
    snprintf(out_publish, addrlen, "%s", spec);
    return 0;
}
