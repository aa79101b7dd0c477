/* What ROMIO's generic code may assume of iPVFS. */
#include "ad_ipvfs.h"

int ADIOI_IPVFS_Feature(ADIO_File fd, int flag)
{
    switch (flag) {
        case ADIO_SCALABLE_OPEN:       /* one rank looks up, then broadcasts */
        case ADIO_SCALABLE_RESIZE:     /* one rank truncates every datafile */
        case ADIO_TWO_PHASE:           /* generic two-phase collectives work */
        case ADIO_SHARED_FP:           /* on the metadata rank (ad_ipvfs_sharedfp.c) */
        case ADIO_ATOMIC_MODE:         /* byte-range locks there (ad_ipvfs_lock.c) */
            return 1;
        case ADIO_UNLINK_AFTER_CLOSE:  /* a deleted file is gone, open or not */
        case ADIO_LOCKS:               /* no fcntl locks: no data sieving writes */
        case ADIO_DATA_SIEVING_WRITES:
        default:
            return 0;
    }
}
