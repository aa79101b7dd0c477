/* Unshared clients: ipvfs_client_new() for programs that drive several
 * clients of one cluster at once from different threads (the FUSE
 * mount's pool).  Kept apart from conn.c's registry of shared clients,
 * which it never joins; ipvfs_client_put() frees such a client as it
 * frees a shared one whose last reference goes. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ipvfs_client_new(const char *map_path, uint32_t client_id,
                     struct ipvfs_client **out_client, struct ipvfs_error *out_err)
{
    struct ipvfs_client *c;
    char msg[256] = "";
    int rc;

    if (!map_path)
        return client_error(out_err, ENOENT, "finding the server map", NULL, NULL, -1,
                            "no server map named (--map FILE or IPVFS_MAP)");
    if (!(c = calloc(1, sizeof(*c))))
        return client_error(out_err, ENOMEM, "client setup", NULL, NULL, -1, NULL);
    if (!(c->map_path = strdup(map_path))) {
        rc = client_error(out_err, ENOMEM, "client setup", NULL, NULL, -1, NULL);
        goto free_client;
    }
    c->connect_ms = client_env_ms("IPVFS_TIMEOUT_MS", IPVFS_CLIENT_CONNECT_MS);
    c->request_ms = client_env_ms("IPVFS_TIMEOUT_MS", IPVFS_CLIENT_REQUEST_MS);
    if ((rc = client_map_load(map_path, c->connect_ms, c->request_ms, &c->map, &c->map_stat,
                              msg, sizeof(msg))) < 0) {
        rc = client_error(out_err, -rc, "reading the server map", NULL, NULL, -1, msg);
        goto free_path;
    }
    if (!(c->fds = malloc(c->map.nranks * sizeof(*c->fds)))) {
        rc = client_error(out_err, ENOMEM, "client setup", NULL, NULL, -1, NULL);
        goto free_map;
    }
    for (uint32_t r = 0; r < c->map.nranks; r++)
        c->fds[r] = -1;
    /* without the key, the capabilities each connection was shown */
    if (!c->map.have_key && !(c->shown = calloc(c->map.nranks, sizeof(*c->shown)))) {
        rc = client_error(out_err, ENOMEM, "client setup", NULL, NULL, -1, NULL);
        goto free_fds;
    }
    if ((rc = client_qos_init(c, msg, sizeof(msg))) < 0) {
        rc = client_error(out_err, -rc, "client setup", NULL, NULL, -1, msg);
        goto free_shown;
    }
    c->client_id = client_id;
    c->sched_rng = ((uint64_t)client_id + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 20;
    c->refs = 1;
    *out_client = c;
    return 0;

free_shown:
    free(c->shown);
free_fds:
    free(c->fds);
free_map:
    ipvfs_map_free(&c->map);
free_path:
    free(c->map_path);
free_client:
    free(c);
    return rc;
}
