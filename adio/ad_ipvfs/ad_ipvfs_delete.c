/* MPI_File_delete: not collective and without hints, so the cluster comes
 * from $IPVFS_MAP.  A name that ADIOI_IPVFS_Close just removed for
 * MPI_MODE_DELETE_ON_CLOSE is not removed again (ROMIO deletes after the
 * close; a file created under that name in between must survive). */
#include "ad_ipvfs.h"

#include <stdlib.h>
#include <string.h>

/* The name the last delete-on-close removed, until ROMIO's delete of it. */
static char *removed_at_close;

void ADIOI_IPVFS_Note_removed(const char *filename)
{
    free(removed_at_close);
    removed_at_close = strdup(filename);   /* NULL (out of memory): deleted twice, harmless */
}

static int consume_removed(const char *filename)
{
    int hit = removed_at_close && strcmp(removed_at_close, filename) == 0;

    if (hit) {
        free(removed_at_close);
        removed_at_close = NULL;
    }
    return hit;
}

void ADIOI_IPVFS_Delete(const char *filename, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_DELETE";
    struct ipvfs_client *client;
    struct ipvfs_error err;

    *error_code = MPI_SUCCESS;
    if (consume_removed(filename))
        return;
    if (ipvfs_client_get(ipvfs_client_map_path(NULL), (uint32_t) ADIOI_IPVFS_Client_id(),
                         &client, &err) < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        return;
    }
    if (ipvfs_remove(client, filename, &err) < 0)
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
    ipvfs_client_put(client);
}
