/* Unshared clients: ipvfs_client_new() for programs that drive several
 * clients of one cluster at once from different threads (the FUSE
 * mount's pool).  Kept apart from conn.c's registry of shared clients,
 * which it never joins; ipvfs_client_put() frees such a client as it
 * frees a shared one whose last reference goes.  Both are set up by
 * conn.c's client_make, so they differ in nothing but the registry. */
#include "adio/client/client_internal.h"

#include <errno.h>

int ipvfs_client_new(const char *map_path, uint32_t client_id,
                     struct ipvfs_client **out_client, struct ipvfs_error *out_err)
{
    if (!map_path)
        return client_error(out_err, ENOENT, "finding the server map", NULL, NULL, -1,
                            "no server map named (--map FILE or IPVFS_MAP)");
    return client_make(map_path, client_id, out_client, out_err);
}
