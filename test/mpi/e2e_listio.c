/* End-to-end list I/O and collective I/O through ROMIO + ad_ipvfs:
 * byte-exact checks of noncontiguous accesses.
 *
 *   e2e_listio PREFIX [--schedule first|random|hash] [--block B] [--quick 1]
 *   e2e_listio PREFIX --count STATS_PREFIX [--block B] [--count-coll 1]
 * Other options: --cb-nodes N (also cb_config_list *:*, so one host can
 * hold N aggregators), --cb-buffer-size B, --coll ipvfs|generic (the
 * hint ipvfs_coll), --cb enable|disable|automatic (romio_cb_write and
 * romio_cb_read), --count-rows N (rows of the --count tile, default 64).
 *
 * Every byte of a test file at offset off holds e2e_pattern(off, seed).
 * A pattern names, for rank r, the file offset of the k-th byte of its
 * view (file_off) and the memory position of that byte (mem_pos); the
 * test builds the matching MPI types, writes through them, reads back
 * through a neighbour's view (read after write by another rank) and
 * checks every byte, including that gaps of the memory buffer stay
 * untouched.  Patterns: contiguous, strided (interleaved blocks), tiled
 * (2-D subarray), BTIO-like nested strided (3-D subarray of 40-byte cells,
 * memory with ghost cells), a resized filetype with a non-zero lower bound,
 * and 100,000 one-byte extents interleaved between all ranks.  Each runs
 * independent and collective, blocking and nonblocking, with explicit
 * offsets and individual file pointers.  Then a collective write in which
 * odd ranks write nothing, and a collective read past the end of the file
 * whose status must count only the bytes before the end.  --quick 1 leaves
 * out the 100,000-extent patterns.
 *
 * --count: one tile write and one tile read per rank (independent, or
 * collective with --count-coll 1); rank 0 saves `ipvfs-ctl stats --json` before, between and after into
 * STATS_PREFIX.{0,1,2}.json for the script to compare. */
#include "e2e_util.h"

#include <unistd.h>

E2E_GLOBALS;

#define GHOST 2
#define CELL 40                 /* BTIO: 5 doubles per cell */

/* How a rank's view and memory look. */
struct pattern {
    const char *name;
    uint64_t nbytes;            /* data bytes per rank */
    size_t memsize;             /* bytes of the memory buffer */
    MPI_Offset disp;
    MPI_Datatype filetype, memtype;     /* memtype: one element holds nbytes */
    uint64_t (*file_off)(const struct pattern *p, int r, uint64_t k);
    uint64_t (*mem_pos)(const struct pattern *p, uint64_t k);
    uint64_t a, b, c, d;        /* shape parameters, per pattern */
};

static const char *prefix;
static MPI_Info hints;
static unsigned seed_base;
static int count_coll;
static int count_rows = 64;       /* --count-rows: the count tile's rows */

/* ---- layouts ---------------------------------------------------------- */

static uint64_t mem_identity(const struct pattern *p, uint64_t k)
{
    (void) p;
    return k;
}

/* contiguous: rank r owns [r*a, (r+1)*a) */
static uint64_t contig_off(const struct pattern *p, int r, uint64_t k)
{
    return (uint64_t) r * p->a + k;
}

/* strided: blocks of a bytes dealt round robin */
static uint64_t strided_off(const struct pattern *p, int r, uint64_t k)
{
    return (k / p->a) * p->a * (uint64_t) e2e_nprocs + (uint64_t) r * p->a + k % p->a;
}

/* memory of the strided case: blocks of a bytes with gaps of a bytes */
static uint64_t gapped_pos(const struct pattern *p, uint64_t k)
{
    return (k / p->a) * 2 * p->a + k % p->a;
}

/* tiled: a x b tiles of rows x cols (c x d) elements of 24 bytes; tile
 * (r / b, r % b) */
static uint64_t tile_off(const struct pattern *p, int r, uint64_t k)
{
    uint64_t rowb = p->d * 24, i = k / rowb, j = k % rowb;
    uint64_t ti = (uint64_t) r / p->b, tj = (uint64_t) r % p->b;

    return ((ti * p->c + i) * p->d * p->b + tj * p->d) * 24 + j;
}

/* BTIO-like: an a^3 array of cells; rank r owns z in [zr*a/pz..) and y in
 * [yr*a/py..), all x (pz = b, py = c ranks) */
static void btio_local(const struct pattern *p, uint64_t *lz, uint64_t *ly)
{
    *lz = p->a / p->b;
    *ly = p->a / p->c;
}

static uint64_t btio_off(const struct pattern *p, int r, uint64_t k)
{
    uint64_t lz, ly, n = p->a, cell = k / CELL, z, y, x;

    btio_local(p, &lz, &ly);
    z = cell / (ly * n);
    y = cell / n % ly;
    x = cell % n;
    z += (uint64_t) r / p->c * lz;
    y += (uint64_t) r % p->c * ly;
    return ((z * n + y) * n + x) * CELL + k % CELL;
}

static uint64_t btio_pos(const struct pattern *p, uint64_t k)
{
    uint64_t lz, ly, n = p->a, cell = k / CELL, z, y, x;

    btio_local(p, &lz, &ly);
    z = cell / (ly * n);
    y = cell / n % ly;
    x = cell % n;
    return (((z + GHOST) * (ly + 2 * GHOST) + y + GHOST) * (n + 2 * GHOST) + x + GHOST) * CELL +
        k % CELL;
}

/* resized: one int per 12 bytes (lb 4, extent 12), region a per rank */
static uint64_t resized_off(const struct pattern *p, int r, uint64_t k)
{
    return (uint64_t) r * p->a + k / 4 * 12 + k % 4;
}

/* tiny: every nprocs-th byte, starting at r */
static uint64_t tiny_off(const struct pattern *p, int r, uint64_t k)
{
    (void) p;
    return (uint64_t) r + k * (uint64_t) e2e_nprocs;
}

/* ---- building the patterns ------------------------------------------- */

static void commit(MPI_Datatype *t)
{
    E2E_MPI(MPI_Type_commit(t));
}

static void make_contig(struct pattern *p, int r)
{
    p->name = "contiguous";
    p->a = 300000;
    p->nbytes = p->memsize = p->a;
    p->disp = (MPI_Offset) r * (MPI_Offset) p->a;
    p->filetype = MPI_BYTE;
    MPI_Type_contiguous((int) p->nbytes, MPI_BYTE, &p->memtype);
    commit(&p->memtype);
    p->file_off = contig_off;
    p->mem_pos = mem_identity;
}

static void make_strided(struct pattern *p, int r)
{
    MPI_Datatype blk;
    int nblocks = 700;

    p->name = "strided";
    p->a = 1000;
    p->nbytes = p->a * (uint64_t) nblocks;
    p->memsize = 2 * p->nbytes;
    p->disp = (MPI_Offset) r * (MPI_Offset) p->a;
    MPI_Type_contiguous((int) p->a, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint) (p->a * (uint64_t) e2e_nprocs), &p->filetype);
    commit(&p->filetype);
    MPI_Type_vector(nblocks, (int) p->a, (int) (2 * p->a), MPI_BYTE, &p->memtype);
    commit(&p->memtype);
    MPI_Type_free(&blk);
    p->file_off = strided_off;
    p->mem_pos = gapped_pos;
}

static void make_tile(struct pattern *p, int r, int rows, int cols)
{
    MPI_Datatype elem;
    int gsize[2], sub[2], start[2];

    p->name = "tiled";
    p->b = e2e_nprocs >= 2 ? 2 : 1;     /* tile columns */
    p->c = (uint64_t) rows;
    p->d = (uint64_t) cols;
    p->a = (uint64_t) e2e_nprocs / p->b;
    p->nbytes = p->memsize = p->c * p->d * 24;
    p->disp = 0;
    MPI_Type_contiguous(24, MPI_BYTE, &elem);
    gsize[0] = (int) (p->a * p->c);
    gsize[1] = (int) (p->b * p->d);
    sub[0] = rows;
    sub[1] = cols;
    start[0] = (int) ((uint64_t) r / p->b * p->c);
    start[1] = (int) ((uint64_t) r % p->b * p->d);
    MPI_Type_create_subarray(2, gsize, sub, start, MPI_ORDER_C, elem, &p->filetype);
    commit(&p->filetype);
    MPI_Type_contiguous((int) p->nbytes, MPI_BYTE, &p->memtype);
    commit(&p->memtype);
    MPI_Type_free(&elem);
    p->file_off = tile_off;
    p->mem_pos = mem_identity;
}

static void make_btio(struct pattern *p, int r)
{
    MPI_Datatype cell;
    uint64_t lz, ly;
    int gsize[3], sub[3], start[3], lsize[3], lstart[3];

    p->name = "btio";
    p->a = 24;
    p->c = e2e_nprocs >= 2 ? 2 : 1;     /* ranks along y */
    p->b = (uint64_t) e2e_nprocs / p->c;        /* ranks along z */
    btio_local(p, &lz, &ly);
    p->nbytes = lz * ly * p->a * CELL;
    p->memsize = (lz + 2 * GHOST) * (ly + 2 * GHOST) * (p->a + 2 * GHOST) * CELL;
    p->disp = 0;
    MPI_Type_contiguous(5, MPI_DOUBLE, &cell);
    gsize[0] = gsize[1] = gsize[2] = (int) p->a;
    sub[0] = (int) lz;
    sub[1] = (int) ly;
    sub[2] = (int) p->a;
    start[0] = (int) ((uint64_t) r / p->c * lz);
    start[1] = (int) ((uint64_t) r % p->c * ly);
    start[2] = 0;
    MPI_Type_create_subarray(3, gsize, sub, start, MPI_ORDER_C, cell, &p->filetype);
    commit(&p->filetype);
    lsize[0] = (int) lz + 2 * GHOST;
    lsize[1] = (int) ly + 2 * GHOST;
    lsize[2] = (int) p->a + 2 * GHOST;
    lstart[0] = lstart[1] = lstart[2] = GHOST;
    MPI_Type_create_subarray(3, lsize, sub, lstart, MPI_ORDER_C, cell, &p->memtype);
    commit(&p->memtype);
    MPI_Type_free(&cell);
    p->file_off = btio_off;
    p->mem_pos = btio_pos;
}

static void make_resized(struct pattern *p, int r)
{
    p->name = "resized-lb";
    p->a = 120000;
    p->nbytes = p->memsize = p->a / 12 * 4;
    p->disp = (MPI_Offset) r * (MPI_Offset) p->a;
    MPI_Type_create_resized(MPI_INT, 4, 12, &p->filetype);
    commit(&p->filetype);
    MPI_Type_contiguous((int) p->nbytes, MPI_BYTE, &p->memtype);
    commit(&p->memtype);
    p->file_off = resized_off;
    p->mem_pos = mem_identity;
}

static void make_tiny(struct pattern *p, int r)
{
    p->name = "tiny-100000";
    p->nbytes = p->memsize = 100000;
    p->disp = r;
    MPI_Type_create_resized(MPI_BYTE, 0, e2e_nprocs, &p->filetype);
    commit(&p->filetype);
    MPI_Type_contiguous((int) p->nbytes, MPI_BYTE, &p->memtype);
    commit(&p->memtype);
    p->file_off = tiny_off;
    p->mem_pos = mem_identity;
}

static void free_pattern(struct pattern *p)
{
    if (p->filetype != MPI_BYTE)
        MPI_Type_free(&p->filetype);
    MPI_Type_free(&p->memtype);
}

/* ---- one access ------------------------------------------------------- */

enum mode { M_AT, M_PTR, M_AT_ALL, M_ALL, M_IAT, M_IPTR, M_IAT_ALL, M_IALL, M_NMODES };
static const char *const mode_names[] = {
    "write_at", "write", "write_at_all", "write_all", "iwrite_at", "iwrite", "iwrite_at_all",
    "iwrite_all"
};

/* Etype is MPI_BYTE, so view offset 0 is the view's start. */
static int access_data(MPI_File fh, enum mode m, int writing, void *buf, MPI_Datatype t)
{
    MPI_Request req;
    MPI_Status st;
    int rc;

    switch (m) {
    case M_AT:
        return writing ? MPI_File_write_at(fh, 0, buf, 1, t, &st) :
            MPI_File_read_at(fh, 0, buf, 1, t, &st);
    case M_PTR:
        return writing ? MPI_File_write(fh, buf, 1, t, &st) : MPI_File_read(fh, buf, 1, t, &st);
    case M_AT_ALL:
        return writing ? MPI_File_write_at_all(fh, 0, buf, 1, t, &st) :
            MPI_File_read_at_all(fh, 0, buf, 1, t, &st);
    case M_ALL:
        return writing ? MPI_File_write_all(fh, buf, 1, t, &st) :
            MPI_File_read_all(fh, buf, 1, t, &st);
    case M_IAT:
        rc = writing ? MPI_File_iwrite_at(fh, 0, buf, 1, t, &req) :
            MPI_File_iread_at(fh, 0, buf, 1, t, &req);
        break;
    case M_IPTR:
        rc = writing ? MPI_File_iwrite(fh, buf, 1, t, &req) : MPI_File_iread(fh, buf, 1, t, &req);
        break;
    case M_IAT_ALL:
        rc = writing ? MPI_File_iwrite_at_all(fh, 0, buf, 1, t, &req) :
            MPI_File_iread_at_all(fh, 0, buf, 1, t, &req);
        break;
    default:
        rc = writing ? MPI_File_iwrite_all(fh, buf, 1, t, &req) :
            MPI_File_iread_all(fh, buf, 1, t, &req);
        break;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Wait(&req, &st);
}

static void fill_mem(const struct pattern *p, unsigned char *mem, int r, unsigned seed)
{
    memset(mem, 0xEE, p->memsize);
    for (uint64_t k = 0; k < p->nbytes; k++)
        mem[p->mem_pos(p, k)] = e2e_pattern(p->file_off(p, r, k), seed);
}

/* Counts wrong bytes: data against the pattern, gaps against 0xEE. */
static uint64_t check_mem(const struct pattern *p, const unsigned char *mem, int r,
                          unsigned seed, uint64_t *first_bad)
{
    unsigned char *want = malloc(p->memsize);
    uint64_t bad = 0;

    fill_mem(p, want, r, seed);
    for (size_t i = 0; i < p->memsize; i++) {
        if (mem[i] != want[i] && bad++ == 0)
            *first_bad = i;
    }
    free(want);
    return bad;
}

static int open_view(const struct pattern *p, int r, int amode, MPI_File *fh)
{
    char path[512];
    int rc;

    snprintf(path, sizeof(path), "%s-%s", prefix, p->name);
    rc = MPI_File_open(MPI_COMM_WORLD, path, amode, hints, fh);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_File_set_view(*fh, p->disp, MPI_BYTE, p->filetype, "native", hints);
}

/* Writes pattern p with mode m, then reads a neighbour's part with mode
 * rm (a blocking or nonblocking read of the same family) and checks. */
static void run_case(struct pattern *mine, struct pattern *other, int other_rank, enum mode m,
                     enum mode rm, unsigned seed)
{
    unsigned char *mem = malloc(mine->memsize > other->memsize ? mine->memsize : other->memsize);
    uint64_t bad, first = 0;
    MPI_File fh;

    fill_mem(mine, mem, e2e_rank, seed);
    E2E_MPI(open_view(mine, e2e_rank, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh));
    E2E_MPI(access_data(fh, m, 1, mem, mine->memtype));
    E2E_MPI(MPI_File_sync(fh));
    E2E_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    memset(mem, 0xEE, other->memsize);
    E2E_MPI(open_view(other, other_rank, MPI_MODE_RDONLY, &fh));
    E2E_MPI(access_data(fh, rm, 0, mem, other->memtype));
    E2E_MPI(MPI_File_close(&fh));
    bad = check_mem(other, mem, other_rank, seed, &first);
    E2E_CHECK(bad == 0, "%s: %s then %s of rank %d's part: %llu wrong bytes, first at memory "
              "offset %llu", mine->name, mode_names[m], mode_names[rm], other_rank,
              (unsigned long long) bad, (unsigned long long) first);
    free(mem);
    MPI_Barrier(MPI_COMM_WORLD);
}

typedef void (*make_fn)(struct pattern *p, int r);

static void make_tile_small(struct pattern *p, int r)
{
    make_tile(p, r, 96, 64);
}

static void run_pattern(make_fn make, unsigned seed)
{
    int other_rank = (e2e_rank + 1) % e2e_nprocs;
    struct pattern mine = { 0 }, other = { 0 };

    make(&mine, e2e_rank);
    make(&other, other_rank);
    for (int m = 0; m < M_NMODES; m++) {
        /* read back with the "next" mode: mixes blocking and nonblocking,
         * explicit and individual, independent and collective */
        enum mode rm = (enum mode) ((m + 3) % M_NMODES);

        run_case(&mine, &other, other_rank, (enum mode) m, rm, seed + (unsigned) m);
    }
    if (e2e_rank == 0)
        printf("ok %s (%d modes)\n", mine.name, M_NMODES);
    free_pattern(&mine);
    free_pattern(&other);
}

/* The lost-update case: all ranks write interleaved single bytes at the
 * same time, then rank 0 checks the whole region. */
static void run_interleaved(unsigned seed)
{
    struct pattern p = { 0 };
    uint64_t total;
    unsigned char *all;
    char path[512];
    MPI_File fh;
    long bad;

    make_tiny(&p, e2e_rank);
    total = p.nbytes * (uint64_t) e2e_nprocs;
    all = malloc(total);
    fill_mem(&p, all, e2e_rank, seed);
    E2E_MPI(open_view(&p, e2e_rank, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh));
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_write_at(fh, 0, all, 1, p.memtype, MPI_STATUS_IGNORE));
    E2E_MPI(MPI_File_sync(fh));
    E2E_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        snprintf(path, sizeof(path), "%s-%s", prefix, p.name);
        E2E_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, hints, &fh));
        E2E_MPI(MPI_File_read_at(fh, 0, all, (int) total, MPI_BYTE, MPI_STATUS_IGNORE));
        E2E_MPI(MPI_File_close(&fh));
        bad = e2e_verify(all, 0, total, seed);
        E2E_CHECK(bad < 0, "interleaved one-byte writes of %d ranks: byte %ld lost", e2e_nprocs,
                  bad);
        printf("ok %s interleaved by %d ranks\n", p.name, e2e_nprocs);
    }
    free(all);
    free_pattern(&p);
    run_pattern(make_tiny, seed + 100);
}

/* ---- zero-length participants and reads past the end ------------------ */

#define ZBLK 1000

/* A view of rank r's 1000-byte blocks among all ranks' (collective
 * buffering forced on: ROMIO's interleaving check looks at neighbours
 * only, and a rank that moves nothing hides them). */
static void open_blocks(const char *name, MPI_File *fh)
{
    MPI_Datatype blk, ftype;
    MPI_Info info;
    char path[512];

    snprintf(path, sizeof(path), "%s-%s", prefix, name);
    E2E_MPI(MPI_Info_dup(hints, &info));
    E2E_MPI(MPI_Info_set(info, "romio_cb_write", "enable"));
    E2E_MPI(MPI_Info_set(info, "romio_cb_read", "enable"));
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, fh));
    E2E_MPI(MPI_Type_contiguous(ZBLK, MPI_BYTE, &blk));
    E2E_MPI(MPI_Type_create_resized(blk, 0, ZBLK * (MPI_Aint) e2e_nprocs, &ftype));
    E2E_MPI(MPI_Type_commit(&ftype));
    E2E_MPI(MPI_File_set_view(*fh, ZBLK * (MPI_Offset) e2e_rank, MPI_BYTE, ftype, "native",
                              info));
    MPI_Type_free(&ftype);
    MPI_Type_free(&blk);
    MPI_Info_free(&info);
}

/* Odd ranks write nothing, even ranks 10 blocks, all collectively; then
 * every rank reads 12 blocks collectively, past the end of the file: the
 * status counts only the bytes before it, the data is the pattern where
 * even ranks wrote and zeros in the holes. */
static void run_zero_and_eof(unsigned seed)
{
    int wblocks = e2e_rank % 2 ? 0 : 10, rblocks = 12, last = (e2e_nprocs - 1) / 2 * 2, got;
    uint64_t size = (uint64_t) 9 * ZBLK * (uint64_t) e2e_nprocs + (uint64_t) (last + 1) * ZBLK;
    uint64_t want = 0, bad = 0;
    unsigned char *mem = malloc((size_t) rblocks * ZBLK);
    MPI_Status st;
    MPI_File fh;

    E2E_CHECK(mem != NULL, "out of memory");
    for (int k = 0; k < wblocks; k++)
        e2e_fill(mem + k * ZBLK, ((uint64_t) k * (uint64_t) e2e_nprocs + (uint64_t) e2e_rank) *
                 ZBLK, ZBLK, seed);
    open_blocks("zero-eof", &fh);
    E2E_MPI(MPI_File_write_at_all(fh, 0, mem, wblocks * ZBLK, MPI_BYTE, &st));
    E2E_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
    E2E_CHECK(got == wblocks * ZBLK, "write_at_all of %d bytes: status says %d", wblocks * ZBLK,
              got);
    E2E_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_sync(fh));
    memset(mem, 0xEE, (size_t) rblocks * ZBLK);
    E2E_MPI(MPI_File_read_at_all(fh, 0, mem, rblocks * ZBLK, MPI_BYTE, &st));
    E2E_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
    E2E_MPI(MPI_File_close(&fh));
    for (int k = 0; k < rblocks; k++) {
        uint64_t off = ((uint64_t) k * (uint64_t) e2e_nprocs + (uint64_t) e2e_rank) * ZBLK;
        int written = k < wblocks;

        for (uint64_t i = 0; i < ZBLK && off + i < size; i++) {
            unsigned char expect = written ? e2e_pattern(off + i, seed) : 0;

            bad += mem[(uint64_t) k * ZBLK + i] != expect;
            want++;
        }
    }
    E2E_CHECK(got == (int) want, "read_at_all past the end: status says %d bytes, %llu lie "
              "before the end", got, (unsigned long long) want);
    E2E_CHECK(bad == 0, "read_at_all past the end: %llu wrong bytes", (unsigned long long) bad);
    if (e2e_rank == 0)
        printf("ok zero-length participants, read past the end\n");
    free(mem);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- request counting --------------------------------------------------- */

static void snapshot(const char *stats, int n)
{
    char cmd[1024];

    MPI_Barrier(MPI_COMM_WORLD);
    if (e2e_rank == 0) {
        snprintf(cmd, sizeof(cmd), "ipvfs-ctl stats --json > '%s.%d.json'", stats, n);
        E2E_CHECK(system(cmd) == 0, "%s failed", cmd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void run_count(const char *stats)
{
    struct pattern p = { 0 };
    unsigned char *mem;
    MPI_File fh;

    make_tile(&p, e2e_rank, count_rows, 48);
    mem = malloc(p.memsize);
    fill_mem(&p, mem, e2e_rank, 7);
    E2E_MPI(open_view(&p, e2e_rank, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh));
    /* connect to every I/O node first: HELLOs stay out of the counts */
    {
        MPI_File raw;
        char path[512];
        static unsigned char scratch[1 << 20];

        snprintf(path, sizeof(path), "%s-warm", prefix);
        E2E_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &raw));
        E2E_MPI(MPI_File_read_at(raw, 0, scratch, sizeof(scratch), MPI_BYTE, MPI_STATUS_IGNORE));
        E2E_MPI(MPI_File_close(&raw));
    }
    snapshot(stats, 0);
    if (count_coll)
        E2E_MPI(MPI_File_write_at_all(fh, 0, mem, 1, p.memtype, MPI_STATUS_IGNORE));
    else
        E2E_MPI(MPI_File_write_at(fh, 0, mem, 1, p.memtype, MPI_STATUS_IGNORE));
    snapshot(stats, 1);
    memset(mem, 0, p.memsize);
    if (count_coll)
        E2E_MPI(MPI_File_read_at_all(fh, 0, mem, 1, p.memtype, MPI_STATUS_IGNORE));
    else
        E2E_MPI(MPI_File_read_at(fh, 0, mem, 1, p.memtype, MPI_STATUS_IGNORE));
    snapshot(stats, 2);
    E2E_MPI(MPI_File_close(&fh));
    {
        uint64_t first = 0, bad = check_mem(&p, mem, e2e_rank, 7, &first);

        E2E_CHECK(bad == 0, "count tile read back: %llu wrong bytes", (unsigned long long) bad);
    }
    if (e2e_rank == 0)
        printf("tile bytes per rank %llu\n", (unsigned long long) p.nbytes);
    free(mem);
    free_pattern(&p);
}

int main(int argc, char **argv)
{
    const char *stats = NULL;
    int quick = 0;

    e2e_init(&argc, &argv);
    if (argc < 2) {
        if (e2e_rank == 0)
            fprintf(stderr, "usage: e2e_listio PREFIX [--schedule S] [--block B] "
                    "[--count STATS_PREFIX]\n");
        MPI_Finalize();
        return 2;
    }
    prefix = argv[1];
    MPI_Info_create(&hints);
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--schedule") == 0)
            MPI_Info_set(hints, "ipvfs_io_schedule", argv[i + 1]);
        else if (strcmp(argv[i], "--block") == 0)
            MPI_Info_set(hints, "ipvfs_schedule_block", argv[i + 1]);
        else if (strcmp(argv[i], "--count") == 0)
            stats = argv[i + 1];
        else if (strcmp(argv[i], "--quick") == 0)
            quick = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--count-coll") == 0)
            count_coll = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--coll") == 0)
            MPI_Info_set(hints, "ipvfs_coll", argv[i + 1]);
        else if (strcmp(argv[i], "--cb-nodes") == 0) {
            MPI_Info_set(hints, "cb_nodes", argv[i + 1]);
            MPI_Info_set(hints, "cb_config_list", "*:*");
        }
        else if (strcmp(argv[i], "--cb-buffer-size") == 0)
            MPI_Info_set(hints, "cb_buffer_size", argv[i + 1]);
        else if (strcmp(argv[i], "--count-rows") == 0)
            count_rows = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 64;
        else if (strcmp(argv[i], "--cb") == 0) {
            MPI_Info_set(hints, "romio_cb_write", argv[i + 1]);
            MPI_Info_set(hints, "romio_cb_read", argv[i + 1]);
        }
    }
    seed_base = 1000;
    if (stats) {
        run_count(stats);
    } else {
        run_pattern(make_contig, seed_base + 10);
        run_pattern(make_strided, seed_base + 20);
        run_pattern(make_tile_small, seed_base + 30);
        run_pattern(make_btio, seed_base + 40);
        run_pattern(make_resized, seed_base + 50);
        run_zero_and_eof(seed_base + 70);
        if (!quick)
            run_interleaved(seed_base + 60);
    }
    MPI_Info_free(&hints);
    return e2e_finish("e2e_listio");
}
