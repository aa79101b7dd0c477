/* Noncontiguous read and write (ReadStrided, WriteStrided; explicit offset
 * and individual file pointer): list I/O.
 *
 * The memory type (tiled count times from buf) and the file view (the
 * filetype tiled from disp) are flattened (ADIOI_Flatten_and_find) and
 * walked together: each step takes the bytes up to the nearer end of the
 * current memory block and file block.  File pieces that continue each
 * other are coalesced into one (offset, length) pair, memory pieces into
 * one iovec.  Up to ADIOI_IPVFS_LIST_MAX pairs and as many iovecs form a
 * batch, handed to ipvfs_read_list/ipvfs_write_list, which sends one
 * request per I/O node per schedule block of data, with the iovecs
 * pointing into the user's buffer (no staging copy).  So memory stays
 * bounded (two arrays of ADIOI_IPVFS_LIST_MAX entries) whatever the number
 * of extents, and a server never gets more than IPVFS_MAX_PAIRS pairs in
 * one request.
 *
 * The nonblocking forms (ad_ipvfs_iostrided.c) walk the same way but start
 * each batch (ipvfs_aio_start copies the pairs and iovecs, not the data)
 * and hand it to a generalized request instead of waiting for it.
 *
 * With the hint ipvfs_listio=disable (for comparisons) a batch holds one
 * piece: one call, and so one round trip per contiguous piece.
 *
 * Writes never read-modify-write (no data sieving): bytes between the
 * pieces are left alone, so ranks writing interleaved bytes do not lose
 * each other's updates. */
#include "ad_ipvfs.h"
#include "adio_extern.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* A flattened type tiled from origin every extent bytes. */
struct flat_walk {
    const ADIOI_Flatlist_node *flat;
    ADIO_Offset origin;
    ADIO_Offset extent;
    ADIO_Offset tile;
    MPI_Count idx;
    ADIO_Offset used;           /* bytes used of block idx */
};

/* One batch of pairs and iovecs being filled. */
struct list_batch {
    struct ipvfs_extent *ext;
    struct iovec *iov;
    size_t next;
    int niov;
    size_t cap;
    uint64_t bytes;
};

/* Moves past empty blocks (ROMIO marks lb and ub with them) and past the
 * end of a tile.  The caller guarantees the type holds data. */
static void walk_settle(struct flat_walk *w)
{
    while (w->used >= w->flat->blocklens[w->idx]) {
        w->used = 0;
        if (++w->idx == w->flat->count) {
            w->idx = 0;
            w->tile++;
        }
    }
}

static ADIO_Offset walk_pos(const struct flat_walk *w)
{
    return w->origin + w->tile * w->extent + w->flat->indices[w->idx] + w->used;
}

static ADIO_Offset walk_left(const struct flat_walk *w)
{
    return w->flat->blocklens[w->idx] - w->used;
}

static void walk_advance(struct flat_walk *w, ADIO_Offset n)
{
    w->used += n;
    walk_settle(w);
}

/* Places the walk data_off bytes of data past the start of tile 0. */
static void walk_seek(struct flat_walk *w, ADIO_Offset data_off, ADIO_Offset type_size)
{
    w->tile = data_off / type_size;
    data_off %= type_size;
    w->idx = 0;
    while (data_off >= w->flat->blocklens[w->idx]) {
        data_off -= w->flat->blocklens[w->idx];
        w->idx++;
    }
    w->used = data_off;
    walk_settle(w);
}

/* The flattened type, or for a contiguous one a single block of size
 * bytes in *one (ROMIO flattens only noncontiguous types up front). */
static const ADIOI_Flatlist_node *flat_of(MPI_Datatype type, ADIO_Offset size,
                                          ADIOI_Flatlist_node * one, ADIO_Offset * blocklen,
                                          ADIO_Offset * index)
{
    int contig;

    ADIOI_Datatype_iscontig(type, &contig);
    if (!contig)
        return ADIOI_Flatten_and_find(type);
    *blocklen = size;
    *index = 0;
    one->count = 1;
    one->blocklens = blocklen;
    one->indices = index;
    return one;
}

/* Adds n bytes at file offset foff from memory mem to the batch. */
static void batch_add(struct list_batch *b, ADIO_Offset foff, char *mem, ADIO_Offset n)
{
    struct ipvfs_extent *e = b->next ? &b->ext[b->next - 1] : NULL;
    struct iovec *v = b->niov ? &b->iov[b->niov - 1] : NULL;

    if (e && e->offset + e->len == (uint64_t) foff)
        e->len += (uint64_t) n;
    else
        b->ext[b->next++] = (struct ipvfs_extent) {.offset = (uint64_t) foff,.len = (uint64_t) n };
    if (v && (char *) v->iov_base + v->iov_len == mem)
        v->iov_len += (size_t) n;
    else
        b->iov[b->niov++] = (struct iovec) {.iov_base = mem,.iov_len = (size_t) n };
    b->bytes += (uint64_t) n;
}

/* Fills the batch with at most left bytes; returns the end offset of the
 * last file piece taken. */
static ADIO_Offset batch_fill(struct list_batch *b, struct flat_walk *mem, struct flat_walk *file,
                              uint64_t left)
{
    ADIO_Offset end = 0;

    b->next = 0;
    b->niov = 0;
    b->bytes = 0;
    while (b->bytes < left && b->next < b->cap && (size_t) b->niov < b->cap) {
        ADIO_Offset n = walk_left(mem) < walk_left(file) ? walk_left(mem) : walk_left(file);
        ADIO_Offset foff = walk_pos(file);

        if ((uint64_t) n > left - b->bytes)
            n = (ADIO_Offset) (left - b->bytes);
        batch_add(b, foff, (char *) (intptr_t) walk_pos(mem), n);
        end = foff + n;
        walk_advance(mem, n);
        walk_advance(file, n);
    }
    return end;
}

/* Bytes of view data of tile u that lie before the relative offset rel. */
static ADIO_Offset tile_data_before(const struct flat_walk *w, ADIO_Offset u, ADIO_Offset rel)
{
    ADIO_Offset sum = 0;

    for (MPI_Count i = 0; u >= 0 && i < w->flat->count; i++) {
        ADIO_Offset c = rel - (u * w->extent + w->flat->indices[i]);

        if (c > 0)
            sum += c < w->flat->blocklens[i] ? c : w->flat->blocklens[i];
    }
    return sum;
}

/* Where the access starts, in bytes of view data.  For the individual
 * pointer this is the data before fp_ind.  (Not ADIOI_Get_position: it
 * counts a zero-length lb marker that lies above the data, as a resized
 * filetype with lb > 0 has, as a negative amount.)  Tiles do not overlap
 * (MPI requires monotone filetypes), but a block may reach past its
 * tile's extent, so the neighbours of the tile holding fp_ind count too. */
static ADIO_Offset start_data_offset(ADIO_File fd, const struct flat_walk *w,
                                     ADIO_Offset type_size, int file_ptr_type, ADIO_Offset offset)
{
    ADIO_Offset rel = fd->fp_ind - fd->disp, t;

    if (file_ptr_type != ADIO_INDIVIDUAL)
        return offset * fd->etype_size;
    if (rel <= 0)
        return 0;
    t = rel / w->extent;
    return (t > 1 ? (t - 1) * type_size : 0) + tile_data_before(w, t - 1, rel) +
        tile_data_before(w, t, rel) + tile_data_before(w, t + 1, rel);
}

static int batch_alloc(struct list_batch *b, size_t cap)
{
    b->cap = cap;
    b->ext = malloc(cap * sizeof(*b->ext));
    b->iov = malloc(cap * sizeof(*b->iov));
    return b->ext && b->iov ? 0 : -1;
}

/* Runs the batch now, or with ireq starts it and hands it over. */
static int run_batch(ADIO_File fd, struct list_batch *b, int writing,
                     struct ADIOI_IPVFS_ireq *ireq, uint64_t * io_bytes,
                     struct ipvfs_error *err)
{
    struct ipvfs_file *file = ADIOI_IPVFS_File(fd);
    struct ipvfs_aio *aio;
    uint64_t got = 0;
    int rc;

    if (ireq) {
        rc = ipvfs_aio_start(file, writing, b->ext, b->next, b->iov, b->niov, &aio, err);
        if (rc == 0 && ADIOI_IPVFS_Ireq_add(ireq, aio) < 0) {
            /* not handed over: wait for it here; the call fails with
             * ENOMEM whatever the access's own result */
            (void) ipvfs_aio_finish(aio, &got, err);
            err->code = ENOMEM;
            snprintf(err->msg, sizeof(err->msg), "ipvfs: %s of %.200s failed: out of memory",
                     writing ? "write" : "read", fd->filename);
            rc = -ENOMEM;
        }
        return rc;
    }
    if (writing)
        rc = ipvfs_write_list(file, b->ext, b->next, b->iov, b->niov, &got, err);
    else
        rc = ipvfs_read_list(file, b->ext, b->next, b->iov, b->niov, &got, err);
    *io_bytes += got;
    return rc;
}

void ADIOI_IPVFS_Rdwr_strided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                              struct ADIOI_IPVFS_ireq *ireq, int writing, int *error_code)
{
    static char myname[] = "ADIOI_IPVFS_RDWR_STRIDED";
    ADIOI_Flatlist_node mem_one, file_one;
    ADIO_Offset mem_len, mem_idx, file_len, file_idx, end = 0;
    struct flat_walk mem = { 0 }, file = { 0 };
    struct list_batch b = { 0 };
    struct ipvfs_error err = { 0 };
    MPI_Count buf_size, file_size;
    MPI_Aint lb, buf_extent, file_extent;
    uint64_t total, done = 0, io_bytes = 0;

    MPI_Type_size_x(datatype, &buf_size);
    MPI_Type_size_x(fd->filetype, &file_size);
    MPI_Type_get_extent(datatype, &lb, &buf_extent);
    MPI_Type_get_extent(fd->filetype, &lb, &file_extent);
    total = (uint64_t) count * (uint64_t) buf_size;
    *error_code = MPI_SUCCESS;
    if (total == 0 || file_size == 0)
        goto set_status;
    mem.flat = flat_of(datatype, (ADIO_Offset) total, &mem_one, &mem_len, &mem_idx);
    mem.origin = (ADIO_Offset) (intptr_t) buf;
    mem.extent = buf_extent;
    walk_settle(&mem);
    file.flat = flat_of(fd->filetype, file_size, &file_one, &file_len, &file_idx);
    file.origin = fd->disp;
    file.extent = file.flat == &file_one ? file_size : file_extent;
    walk_seek(&file, start_data_offset(fd, &file, file_size, file_ptr_type, offset), file_size);
    if (batch_alloc(&b, ADIOI_IPVFS_Piecewise(fd) ? 1 : ADIOI_IPVFS_LIST_MAX) < 0) {
        err.code = ENOMEM;
        snprintf(err.msg, sizeof(err.msg), "ipvfs: %s of %.200s failed: out of memory",
                 writing ? "write" : "read", fd->filename);
        *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
        goto free_batch;
    }
    while (done < total) {
        end = batch_fill(&b, &mem, &file, total - done);
        if (run_batch(fd, &b, writing, ireq, &io_bytes, &err) < 0) {
            *error_code = ADIOI_IPVFS_Error(myname, __LINE__, &err);
            goto free_batch;
        }
        done += b.bytes;
    }
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind = end;
    fd->fp_sys_posn = -1;       /* ROMIO's convention: unknown after strided I/O */
  set_status:
#ifdef HAVE_STATUS_SET_BYTES
    if (status)
        MPIR_Status_set_bytes(status, datatype, (MPI_Count) (writing ? total : io_bytes));
#endif
  free_batch:
    free(b.ext);
    free(b.iov);
}

void ADIOI_IPVFS_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code)
{
    ADIOI_IPVFS_Rdwr_strided(fd, buf, count, datatype, file_ptr_type, offset, status, NULL, 0,
                             error_code);
}

void ADIOI_IPVFS_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                              int *error_code)
{
    /* the worker only reads from buf when writing */
    ADIOI_IPVFS_Rdwr_strided(fd, (void *) buf, count, datatype, file_ptr_type, offset, status,
                             NULL, 1, error_code);
}
