/* MPI_File_delete: not collective and without hints, so the cluster comes
 * from $IPVFS_MAP. */
#include "ad_ipvfs.h"

void ADIOI_IPVFS_Delete(const char *filename, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_DELETE";
    struct ipvfs_client *client;
    struct ipvfs_error err;

    if (ipvfs_client_get(ipvfs_client_map_path(NULL), (uint32_t) ADIOI_IPVFS_Client_id(),
                         &client, &err) < 0) {
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        return;
    }
    if (ipvfs_remove(client, filename, &err) < 0)
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
    else
        *error_code = MPI_SUCCESS;
    ipvfs_client_put(client);
}
