/* Volume I/O of one datafile store operation, in rounds (see io.c). */
#ifndef IPVFS_DFSTORE_IO_H
#define IPVFS_DFSTORE_IO_H

struct df_op;

enum df_io_round {
    DF_IO_READ,       /* a read's blocks into op->rdata, holes as zeros */
    DF_IO_RMW_READ,   /* the old sectors the write's partial blocks keep */
    DF_IO_WRITE,      /* the write's (or truncate's, prealloc's) blocks */
};

/* Issues one round of op's volume I/O and calls done(op) once all of it
 * completed (possibly before returning); op->status keeps the first
 * error, also that of a request that could not be issued. */
void df_io_round(struct df_op *op, enum df_io_round kind, void (*done)(struct df_op *op));

#endif
