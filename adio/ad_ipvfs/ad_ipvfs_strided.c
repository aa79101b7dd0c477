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
 * The nonblocking forms (ad_ipvfs_iostrided.c, ad_ipvfs_iocontig.c) get a
 * plan (ADIOI_IPVFS_Plan_new): the same walk, kept with copies of the
 * flattened types (the program may free its datatype once the I* call
 * returned), from which the request's window (ad_ipvfs_ireq.c) starts one
 * batch of at most the piece size at a time (ipvfs_aio_start copies the
 * pairs and iovecs, not the data).
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
#include <string.h>

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

/* Runs the batch and waits for it. */
static int run_batch(ADIO_File fd, struct list_batch *b, int writing, uint64_t * io_bytes,
                     struct ipvfs_error *err)
{
    struct ipvfs_file *file = ADIOI_IPVFS_File(fd);
    uint64_t got = 0;
    int rc;

    if (writing)
        rc = ipvfs_write_list(file, b->ext, b->next, b->iov, b->niov, &got, err);
    else
        rc = ipvfs_read_list(file, b->ext, b->next, b->iov, b->niov, &got, err);
    *io_bytes += got;
    return rc;
}

void ADIOI_IPVFS_Rdwr_strided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                              int writing, int *error_code)
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
        if (run_batch(fd, &b, writing, &io_bytes, &err) < 0) {
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

/* A nonblocking access's plan: the walk where the next piece starts, over
 * copies of the flattened types. */
struct strided_plan {
    ADIO_File fd;
    int writing;
    uint64_t left;              /* bytes not yet started */
    ADIOI_Flatlist_node mem_flat, file_flat;
    struct flat_walk mem, file;
    struct list_batch b;
};

/* dst: a copy of src's blocks (the walk reads count, blocklens, indices). */
static int flat_keep(const ADIOI_Flatlist_node * src, ADIOI_Flatlist_node * dst)
{
    size_t n = (size_t) src->count;
    ADIO_Offset *a = malloc(2 * (n ? n : 1) * sizeof(*a));

    if (!a)
        return -1;
    memcpy(a, src->blocklens, n * sizeof(*a));
    memcpy(a + n, src->indices, n * sizeof(*a));
    memset(dst, 0, sizeof(*dst));
    dst->count = src->count;
    dst->blocklens = a;
    dst->indices = a + n;
    return 0;
}

static void plan_free(void *plan)
{
    struct strided_plan *p = plan;

    if (!p)
        return;
    free(p->mem_flat.blocklens);
    free(p->file_flat.blocklens);
    free(p->b.ext);
    free(p->b.iov);
    free(p);
}

static int plan_start_next(void *plan, uint64_t max_bytes, struct ipvfs_aio **out_aio,
                           uint64_t * out_bytes, struct ipvfs_error *out_err)
{
    struct strided_plan *p = plan;
    struct flat_walk mem = p->mem, file = p->file;
    int rc;

    batch_fill(&p->b, &mem, &file, max_bytes < p->left ? max_bytes : p->left);
    rc = ipvfs_aio_start(ADIOI_IPVFS_File(p->fd), p->writing, p->b.ext, p->b.next, p->b.iov,
                         p->b.niov, out_aio, out_err);
    if (rc < 0)
        return rc;              /* nothing started: the walk stays */
    p->mem = mem;
    p->file = file;
    p->left -= p->b.bytes;
    *out_bytes = p->b.bytes;
    return 0;
}

const struct ADIOI_IPVFS_plan_ops ADIOI_IPVFS_Plan_ops = {
    .start_next = plan_start_next,
    .free = plan_free,
};

/* The file side of a plan: one run of total bytes at offset (contig), or
 * the view from the access's first byte.  Returns the end of the access
 * (one past its last byte), -1 when out of memory. */
static ADIO_Offset plan_file(struct strided_plan *p, int file_ptr_type, ADIO_Offset offset,
                             int contig, uint64_t total)
{
    ADIO_File fd = p->fd;
    const ADIOI_Flatlist_node *flat;
    ADIOI_Flatlist_node one;
    ADIO_Offset len, idx, start;
    struct flat_walk last;
    MPI_Count file_size;
    MPI_Aint lb, file_extent;

    if (contig) {
        if (file_ptr_type == ADIO_INDIVIDUAL)
            offset = fd->fp_ind;
        if (flat_keep(flat_of(MPI_BYTE, (ADIO_Offset) total, &one, &len, &idx),
                      &p->file_flat) < 0)
            return -1;
        p->file = (struct flat_walk) {.flat = &p->file_flat,.origin = offset,
            .extent = (ADIO_Offset) total };
        return offset + (ADIO_Offset) total;
    }
    MPI_Type_size_x(fd->filetype, &file_size);
    MPI_Type_get_extent(fd->filetype, &lb, &file_extent);
    flat = flat_of(fd->filetype, file_size, &one, &len, &idx);
    if (flat_keep(flat, &p->file_flat) < 0)
        return -1;
    p->file = (struct flat_walk) {.flat = &p->file_flat,.origin = fd->disp,
        .extent = flat == &one ? file_size : file_extent };
    start = start_data_offset(fd, &p->file, file_size, file_ptr_type, offset);
    last = p->file;
    walk_seek(&last, start + (ADIO_Offset) total - 1, file_size);
    walk_seek(&p->file, start, file_size);
    return walk_pos(&last) + 1;
}

int ADIOI_IPVFS_Plan_new(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, int contig, int writing,
                         void **out_plan, uint64_t * out_total, struct ipvfs_error *out_err)
{
    struct strided_plan *p = calloc(1, sizeof(*p));
    ADIOI_Flatlist_node one;
    ADIO_Offset len, idx, end;
    MPI_Count buf_size, file_size;
    MPI_Aint lb, buf_extent;

    MPI_Type_size_x(datatype, &buf_size);
    MPI_Type_size_x(fd->filetype, &file_size);
    MPI_Type_get_extent(datatype, &lb, &buf_extent);
    if (!p)
        goto no_memory;
    p->fd = fd;
    p->writing = writing;
    p->left = (uint64_t) count * (uint64_t) buf_size;
    if (p->left == 0 || (!contig && file_size == 0)) {
        p->left = 0;            /* nothing to move: completes at the first test */
        goto done;
    }
    if (flat_keep(flat_of(datatype, (ADIO_Offset) p->left, &one, &len, &idx), &p->mem_flat) < 0)
        goto no_memory;
    p->mem = (struct flat_walk) {.flat = &p->mem_flat,.origin = (ADIO_Offset) (intptr_t) buf,
        .extent = buf_extent };
    walk_settle(&p->mem);
    end = plan_file(p, file_ptr_type, offset, contig, p->left);
    if (end < 0 || batch_alloc(&p->b, ADIOI_IPVFS_Piecewise(fd) ? 1 : ADIOI_IPVFS_LIST_MAX) < 0)
        goto no_memory;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind = end;       /* MPI moves it by the amount requested */
    fd->fp_sys_posn = -1;
  done:
    *out_plan = p;
    *out_total = p->left;
    return 0;

  no_memory:
    plan_free(p);
    out_err->code = ENOMEM;
    snprintf(out_err->msg, sizeof(out_err->msg), "ipvfs: %s of %.200s failed: out of memory",
             writing ? "write" : "read", fd->filename);
    return -ENOMEM;
}

void ADIOI_IPVFS_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code)
{
    ADIOI_IPVFS_Rdwr_strided(fd, buf, count, datatype, file_ptr_type, offset, status, 0,
                             error_code);
}

void ADIOI_IPVFS_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                              int *error_code)
{
    /* the worker only reads from buf when writing */
    ADIOI_IPVFS_Rdwr_strided(fd, (void *) buf, count, datatype, file_ptr_type, offset, status,
                             1, error_code);
}
