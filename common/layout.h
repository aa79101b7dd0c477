/* File striping across I/O nodes: pure, invertible arithmetic.
 *
 * A file of stripe unit U and stripe factor F starting at server S0 keeps
 * its byte at offset off in datafile idx = (off / U) % F, which lives on
 * I/O node (S0 + idx) % Nio, at datafile offset
 * ((off / U) / F) * U + off % U.  stripe_map() and stripe_unmap() are exact
 * inverses; test/test_common_layout.c checks the round trip. */
#ifndef IPVFS_LAYOUT_H
#define IPVFS_LAYOUT_H

#include <stdint.h>

struct stripe_layout {
    uint64_t unit;          /* bytes per stripe unit, > 0 */
    uint32_t factor;        /* number of datafiles, 1..nio */
    uint32_t first_server;  /* I/O node index of datafile 0 */
    uint32_t nio;           /* I/O nodes in the cluster */
};

struct stripe_pos {
    uint32_t dfile;         /* datafile index, 0..factor-1 */
    uint32_t server;        /* I/O node index holding it */
    uint64_t df_offset;     /* offset inside that datafile */
    uint64_t run;           /* bytes from here to the end of the unit */
};

void stripe_map(const struct stripe_layout *l, uint64_t off, struct stripe_pos *out);
uint64_t stripe_unmap(const struct stripe_layout *l, uint32_t dfile, uint64_t df_offset);

/* Length of datafile dfile when the logical file is file_size bytes long. */
uint64_t stripe_dfile_size(const struct stripe_layout *l, uint32_t dfile, uint64_t file_size);

/* Logical size implied by datafile dfile being df_size bytes long (0 if 0). */
uint64_t stripe_file_size(const struct stripe_layout *l, uint32_t dfile, uint64_t df_size);

#endif
