/* The operations table of ad_ipvfs (table only). */
#include "ad_ipvfs.h"

struct ADIOI_Fns_struct ADIO_IPVFS_operations = {
    ADIOI_IPVFS_Open,           /* Open */
    ADIOI_IPVFS_OpenColl,       /* OpenColl: rank 0 looks up, then broadcasts */
    ADIOI_IPVFS_Atomic_ReadContig,      /* ReadContig (atomic mode: ad_ipvfs_lock.c) */
    ADIOI_IPVFS_Atomic_WriteContig,     /* WriteContig */
    ADIOI_IPVFS_ReadStridedColl,        /* ReadStridedColl: ad_ipvfs_coll.c */
    ADIOI_IPVFS_WriteStridedColl,       /* WriteStridedColl */
    ADIOI_GEN_SeekIndividual,   /* SeekIndividual */
    ADIOI_IPVFS_Fcntl,          /* Fcntl */
    ADIOI_IPVFS_SetInfo,        /* SetInfo */
    ADIOI_IPVFS_Atomic_ReadStrided,     /* ReadStrided: list I/O */
    ADIOI_IPVFS_Atomic_WriteStrided,    /* WriteStrided: list I/O, no data sieving */
    ADIOI_IPVFS_Close,          /* Close */
    ADIOI_IPVFS_IreadContig,    /* IreadContig: generalized request */
    ADIOI_IPVFS_IwriteContig,   /* IwriteContig */
    ADIOI_FAKE_IODone,          /* ReadDone */
    ADIOI_FAKE_IODone,          /* WriteDone */
    ADIOI_FAKE_IOComplete,      /* ReadComplete */
    ADIOI_FAKE_IOComplete,      /* WriteComplete */
    ADIOI_IPVFS_IreadStrided,   /* IreadStrided: list I/O, generalized request */
    ADIOI_IPVFS_IwriteStrided,  /* IwriteStrided */
    ADIOI_IPVFS_Flush,          /* Flush */
    ADIOI_IPVFS_Resize,         /* Resize */
    ADIOI_IPVFS_Delete,         /* Delete */
    ADIOI_IPVFS_Feature,        /* Feature */
    "IPVFS: the iPVFS parallel file system",
    ADIOI_IPVFS_IreadStridedColl,       /* IreadStridedColl: ad_ipvfs_icoll.c */
    ADIOI_IPVFS_IwriteStridedColl,      /* IwriteStridedColl */
#if defined(F_SETLKW64)
    ADIOI_GEN_SetLock           /* SetLock */
#else
    ADIOI_GEN_SetLock64         /* SetLock */
#endif
};
