/* Helpers every file of the server may call: the cluster's iSCSI names
 * and their CHAP, the per-client counters, the note to the supervisor.  They read and
 * change only struct server. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/server/server.h"
#include "common/auth.h"
#include "common/log.h"
#include "iraid/volume.h"

void server_target_iqn(const struct server *srv, uint32_t io, uint32_t k, char *out,
                       size_t outlen)
{
    snprintf(out, outlen, "iqn.2026-11.org.ipvfs:%s.t%u.%u", srv->cluster, io, k);
}

void server_initiator_iqn(const struct server *srv, char *out, size_t outlen)
{
    snprintf(out, outlen, "iqn.2026-11.org.ipvfs:%s.io%u", srv->cluster, srv->io_index);
}

void server_chap(const struct server *srv, const char *target_iqn, struct iraid_chap *out)
{
    char initiator[256], secret[AUTH_CHAP_SECRET_LEN + 1];

    memset(out, 0, sizeof(*out));
    server_initiator_iqn(srv, initiator, sizeof(initiator));
    snprintf(out->user, sizeof(out->user), "%s", initiator);
    auth_chap_secret(srv->secret, "initiator", target_iqn, secret);
    snprintf(out->secret, sizeof(out->secret), "%s", secret);
    snprintf(out->target_user, sizeof(out->target_user), "%s", target_iqn);
    auth_chap_secret(srv->secret, "target", target_iqn, secret);
    snprintf(out->target_secret, sizeof(out->target_secret), "%s", secret);
}

int server_url_chap(const struct server *srv, const char *url, struct iraid_chap *out)
{
    char ours[128], iqn[256];
    const char *start, *end;

    memset(out, 0, sizeof(*out));
    snprintf(ours, sizeof(ours), "iqn.2026-11.org.ipvfs:%s.t", srv->cluster);
    if (strncmp(url, "iscsi://", 8) != 0 || !(start = strchr(url + 8, '/')) ||
        !(end = strchr(++start, '/')) || (size_t)(end - start) >= sizeof(iqn))
        return 0;
    memcpy(iqn, start, (size_t)(end - start));
    iqn[end - start] = '\0';
    if (strncmp(iqn, ours, strlen(ours)) != 0)
        return 0;
    server_chap(srv, iqn, out);
    return 1;
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

void server_note_stopping(struct server *srv)
{
    char msg = LINK_STOPPING;

    if (srv->link_fd < 0)
        return;
    /* Without the note the supervisor takes the coming exit for a crash and
     * restarts this rank: worth a line in the log. */
    if (write(srv->link_fd, &msg, 1) != 1)
        log_warn("cannot tell the supervisor that this rank stops: %s", strerror(errno));
}
