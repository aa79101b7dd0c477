/* Helpers every file of the server may call: the cluster's iSCSI names and
 * the per-client counters.  They read and change only struct server. */
#include <stdio.h>
#include <stdlib.h>

#include "backend/server/server.h"

void server_target_iqn(const struct server *srv, uint32_t io, uint32_t k, char *out,
                       size_t outlen)
{
    snprintf(out, outlen, "iqn.2026-11.org.ipvfs:%s.t%u.%u", srv->cluster, io, k);
}

void server_initiator_iqn(const struct server *srv, char *out, size_t outlen)
{
    snprintf(out, outlen, "iqn.2026-11.org.ipvfs:%s.io%u", srv->cluster, srv->io_index);
}

struct client_counters *server_client_counters(struct server *srv, uint32_t id)
{
    struct client_counters *grown;

    for (size_t i = 0; i < srv->nclients; i++)
        if (srv->clients[i].client_id == id)
            return &srv->clients[i];
    grown = realloc(srv->clients, (srv->nclients + 1) * sizeof(*grown));
    if (!grown)
        return NULL;
    srv->clients = grown;
    srv->clients[srv->nclients] = (struct client_counters){ .client_id = id };
    return &srv->clients[srv->nclients++];
}
