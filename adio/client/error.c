/* Translation of errno values plus context into messages for people. */
#include "adio/client/client_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Why an errno happened, in this system's terms, where strerror is vague. */
static const char *hint_for(int code, int transport)
{
    switch (code) {
    case EACCES:
        return transport ? "the cluster keys differ (stale or wrong map?)" : NULL;
    case ECONNREFUSED:
        return "no server listens there (cluster stopped? stale map?)";
    case ETIMEDOUT:
        return "the server did not answer in time (IPVFS_TIMEOUT_MS)";
    case EHOSTUNREACH:
    case ENETUNREACH:
        return "no route from this host to that address (host down, or a network this "
               "host is not on: see the servers' --listen)";
    case ECONNRESET:
        return "the server closed the connection";
    case EPROTO:
        return "malformed reply";
    default:
        return NULL;
    }
}

static void format_error(char *buf, size_t len, int code, const char *op, const char *path,
                         const struct ipvfs_client *c, long rank, const char *detail,
                         int transport)
{
    const char *hint = hint_for(code, transport);
    int n;

    n = snprintf(buf, len, "ipvfs: %s%s%s failed: %s", op, path ? " of " : "", path ? path : "",
                 strerror(code));
    if (n < 0 || (size_t)n >= len)
        return;
    if (c && rank >= 0 && (uint32_t)rank < c->map.nranks)
        n += snprintf(buf + n, len - (size_t)n, " (server rank %ld at %s:%u)", rank,
                      c->map.ranks[rank].host, c->map.ranks[rank].port);
    if (n < 0 || (size_t)n >= len)
        return;
    if (detail && detail[0] && hint && code != EACCES)
        n += snprintf(buf + n, len - (size_t)n, ": %s: %s", detail, hint);
    else if (detail && detail[0])
        n += snprintf(buf + n, len - (size_t)n, ": %s", detail);
    else if (hint)
        n += snprintf(buf + n, len - (size_t)n, ": %s", hint);
    (void)n;
}

int client_error(struct ipvfs_error *out_err, int code, const char *op, const char *path,
                 const struct ipvfs_client *c, long rank, const char *detail)
{
    if (out_err) {
        out_err->code = code;
        format_error(out_err->msg, sizeof(out_err->msg), code, op, path, c, rank, detail, 0);
    }
    return -code;
}

int client_xfer_error(struct ipvfs_error *out_err, const struct xfer_req *r, const char *op,
                      const char *path, const struct ipvfs_client *c)
{
    if (out_err) {
        out_err->code = r->err;
        format_error(out_err->msg, sizeof(out_err->msg), r->err, op, path, c, r->rank,
                     r->msg, r->transport);
    }
    return -r->err;
}
