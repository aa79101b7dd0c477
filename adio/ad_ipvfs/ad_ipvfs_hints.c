/* Hints: ROMIO's generic ones plus striping_unit, striping_factor and
 * ipvfs_map.  ROMIO ignores errors of SetInfo at open time, so the values
 * are kept raw here and checked by the open (ad_ipvfs_open.c), which can
 * fail all ranks alike. */
#include "ad_ipvfs.h"

#include <stdio.h>

static const char *const ipvfs_keys[] = { "striping_unit", "striping_factor", "ipvfs_map" };

/* Copies the user's values of our keys into fd->info as they are. */
static void keep_raw(ADIO_File fd, MPI_Info users_info)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    for (size_t i = 0; i < sizeof(ipvfs_keys) / sizeof(ipvfs_keys[0]); i++) {
        ADIOI_Info_get(users_info, ipvfs_keys[i], MPI_MAX_INFO_VAL, value, &flag);
        if (flag)
            ADIOI_Info_set(fd->info, ipvfs_keys[i], value);
    }
}

/* After the open, fd->info shows what is in effect, whatever later calls
 * ask: a file's striping never changes. */
static void show_in_effect(ADIO_File fd)
{
    const struct ipvfs_file *f = ADIOI_IPVFS_File(fd);
    char value[32];

    snprintf(value, sizeof(value), "%llu", (unsigned long long) f->entry.stripe_unit);
    ADIOI_Info_set(fd->info, "striping_unit", value);
    snprintf(value, sizeof(value), "%u", f->entry.stripe_factor);
    ADIOI_Info_set(fd->info, "striping_factor", value);
    fd->hints->striping_unit = (int) f->entry.stripe_unit;
    fd->hints->striping_factor = (int) f->entry.stripe_factor;
}

void ADIOI_IPVFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    ADIOI_GEN_SetInfo(fd, users_info, error_code);
    if (*error_code != MPI_SUCCESS)
        return;
    if (ADIOI_IPVFS_File(fd)) {
        show_in_effect(fd);
        return;
    }
    if (users_info != MPI_INFO_NULL)
        keep_raw(fd, users_info);
}

void ADIOI_IPVFS_Show_hints(ADIO_File fd, const char *map_path)
{
    ADIOI_Info_set(fd->info, "ipvfs_map", map_path);
    show_in_effect(fd);
}
