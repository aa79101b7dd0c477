/* Where a client's server map comes from.
 *
 *   IPVFS_MAP=/path/ipvfs.map   the file rank 0 wrote (on a directory the
 *                               client's host shares with the servers)
 *   IPVFS_MAP=HOST:PORT         the metadata rank at HOST:PORT (the server's
 *                               --meta-port) hands out the map's addresses
 *                               and layout (op MAP); the cluster key, which
 *                               never travels, comes from the file that
 *                               IPVFS_KEY names, if any (a copy of the
 *                               servers' DATA/secret, for admin tools; users
 *                               prove themselves with MUNGE instead)
 *
 * A spec is HOST:PORT when it holds no '/' and ends in ':' and a port
 * number; anything else is a file. */
#include "adio/client/client_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/wire.h"

/* Splits HOST:PORT; 0 when spec is a file name instead. */
static int remote_spec(const char *spec, char *out_host, size_t hostlen, uint16_t *out_port)
{
    const char *colon = strrchr(spec, ':');
    unsigned long port;
    char *end;

    if (strchr(spec, '/') || !colon || colon == spec || !isdigit((unsigned char)colon[1]))
        return 0;
    errno = 0;
    port = strtoul(colon + 1, &end, 10);
    if (*end || errno || port == 0 || port > 65535 || (size_t)(colon - spec) >= hostlen)
        return 0;
    memcpy(out_host, spec, (size_t)(colon - spec));
    out_host[colon - spec] = '\0';
    *out_port = (uint16_t)port;
    return 1;
}

/* The cluster key from the file IPVFS_KEY names, if it names one: without
 * it the client proves who it is instead (common/proto.h, AUTH). */
static int read_key(struct ipvfs_map *map, char *msg, size_t msglen)
{
    const char *path = getenv("IPVFS_KEY");
    int rc;

    if (!path || !path[0])
        return 0;
    if ((rc = ipvfs_key_read(path, map->secret, msg, msglen)) < 0)
        return rc;
    map->have_key = 1;
    return 0;
}

static int load_remote(const char *spec, const char *host, uint16_t port, int connect_ms,
                       int request_ms, struct ipvfs_map *out, char *msg, size_t msglen)
{
    struct wire_reply rep;
    char origin[128], detail[200];
    int rc;

    if ((rc = wire_fetch_map(host, port, connect_ms, request_ms, &rep, detail,
                             sizeof(detail))) < 0) {
        snprintf(msg, msglen, "cannot get the server map from the metadata rank at %s: %s",
                 spec, detail);
        return rc;
    }
    snprintf(origin, sizeof(origin), "the server map from %s", spec);
    rc = ipvfs_map_parse((const char *)rep.body, origin, 0, out, msg, msglen);
    wire_reply_free(&rep);
    if (rc == 0 && (rc = read_key(out, msg, msglen)) < 0)
        ipvfs_map_free(out);
    return rc;
}

int client_map_load(const char *spec, int connect_ms, int request_ms, struct ipvfs_map *out,
                    struct stat *out_st, char *msg, size_t msglen)
{
    char host[256];
    uint16_t port;
    int rc;

    memset(out_st, 0, sizeof(*out_st));
    if (remote_spec(spec, host, sizeof(host), &port))
        return load_remote(spec, host, port, connect_ms, request_ms, out, msg, msglen);
    if (stat(spec, out_st) < 0) {
        rc = -errno;
        snprintf(msg, msglen, "cannot read server map %s: %s", spec, strerror(-rc));
        return rc;
    }
    return ipvfs_map_read(spec, out, msg, msglen);
}

int client_map_remote(const char *spec)
{
    char host[256];
    uint16_t port;

    return remote_spec(spec, host, sizeof(host), &port);
}

int client_map_changed(const char *spec, const struct stat *st)
{
    struct stat now;

    if (client_map_remote(spec))
        return 1;   /* ask the metadata rank again */
    if (stat(spec, &now) < 0)
        return 0;   /* keep what we have; connecting will tell */
    return now.st_ino != st->st_ino || now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
           now.st_mtim.tv_nsec != st->st_mtim.tv_nsec || now.st_size != st->st_size;
}
