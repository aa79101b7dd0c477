/* End-to-end checks of MPI-IO on one file-system prefix, byte-exact:
 * contiguous, strided (file views, derived datatypes) and collective I/O,
 * holes, short reads at EOF, size/resize/preallocate, delete, open modes,
 * striping hints, large offsets and a single access beyond 2^31 bytes.
 *
 *   e2e_io BASE [--nio N] [--large] [--no-hints]
 *
 * BASE is a directory name with prefix, e.g. ipvfs:/e2e or ufs:/tmp/x.
 * --nio N: the cluster has N I/O nodes (checks the striping_factor
 * fallback).  Prints "PASS e2e_io" or "FAIL ..." and exits 0 or 1. */
#include "e2e_util.h"

#include <limits.h>

E2E_GLOBALS;

static char base[512];

static void path_of(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", base, name);
}

static MPI_File open_file(const char *name, int amode, MPI_Info info)
{
    char path[600];
    MPI_File fh = MPI_FILE_NULL;

    path_of(path, sizeof(path), name);
    E2E_MPI(MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh));
    return fh;
}

static void remove_file(const char *name)
{
    char path[600];

    path_of(path, sizeof(path), name);
    MPI_Barrier(MPI_COMM_WORLD);  /* nobody still uses it */
    if (e2e_rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Reads len bytes at off and checks count and pattern (zeros where
 * zero_upto > file offset). */
static void read_check(MPI_File fh, MPI_Offset off, size_t len, unsigned seed, const char *what)
{
    unsigned char *buf = malloc(len ? len : 1);
    MPI_Status st;
    int count = -1;
    long bad;

    E2E_MPI(MPI_File_read_at(fh, off, buf, (int)len, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    E2E_CHECK(count == (int)len, "%s: count %d, expected %zu", what, count, len);
    bad = e2e_verify(buf, (uint64_t)off, len, seed);
    E2E_CHECK(bad < 0, "%s: byte %ld differs", what, bad);
    free(buf);
}

static void test_contig(void)
{
    const size_t B = 100003;
    const MPI_Offset first = 7, end = first + 2 * (MPI_Offset)e2e_nprocs * (MPI_Offset)B;
    unsigned char *buf = malloc(B), *all;
    MPI_Offset off = first + (MPI_Offset)e2e_rank * (MPI_Offset)B, pos, size;
    MPI_File fh;
    MPI_Status st;
    int count;

    remove_file("contig");
    fh = open_file("contig", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
    e2e_fill(buf, (uint64_t)off, B, 1);
    E2E_MPI(MPI_File_write_at(fh, off, buf, (int)B, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    E2E_CHECK(count == (int)B, "write_at count %d", count);
    /* the individual file pointer */
    off += (MPI_Offset)e2e_nprocs * (MPI_Offset)B;
    e2e_fill(buf, (uint64_t)off, B, 1);
    E2E_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET));
    E2E_MPI(MPI_File_write(fh, buf, (int)B, MPI_BYTE, &st));
    E2E_MPI(MPI_File_get_position(fh, &pos));
    E2E_CHECK(pos == off + (MPI_Offset)B, "position %lld after write", (long long)pos);
    E2E_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_sync(fh));
    /* someone else's blocks */
    read_check(fh, first + (MPI_Offset)((e2e_rank + 1) % e2e_nprocs) * (MPI_Offset)B, B, 1,
               "neighbour block");
    E2E_MPI(MPI_File_get_size(fh, &size));
    E2E_CHECK(size == end, "size %lld, expected %lld", (long long)size, (long long)end);
    if (e2e_rank == 0) {
        all = calloc(1, (size_t)end + 100);
        memset(all, 0xAA, (size_t)end + 100);
        E2E_MPI(MPI_File_read_at(fh, 0, all, (int)end + 100, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        E2E_CHECK(count == (int)end, "whole-file read count %d, expected %lld", count,
                  (long long)end);
        E2E_CHECK(e2e_first_nonzero(all, (size_t)first) < 0, "head not zero");
        E2E_CHECK(e2e_verify(all + first, (uint64_t)first, (size_t)(end - first), 1) < 0,
                  "whole-file pattern");
        /* reads at and past the end */
        E2E_MPI(MPI_File_read_at(fh, end - 10, all, 100, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        E2E_CHECK(count == 10, "short read count %d, expected 10", count);
        E2E_MPI(MPI_File_read_at(fh, end + 1000, all, 100, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        E2E_CHECK(count == 0, "read past EOF count %d", count);
        /* individual pointer read */
        E2E_MPI(MPI_File_seek(fh, first, MPI_SEEK_SET));
        E2E_MPI(MPI_File_read(fh, all, 1000, MPI_BYTE, &st));
        E2E_CHECK(e2e_verify(all, (uint64_t)first, 1000, 1) < 0, "read via pointer");
        E2E_MPI(MPI_File_get_position(fh, &pos));
        E2E_CHECK(pos == first + 1000, "position after read %lld", (long long)pos);
        free(all);
    }
    E2E_MPI(MPI_File_close(&fh));
    free(buf);
}

static void test_holes(void)
{
    const MPI_Offset mark = (3 << 20) + 1, span = mark + 5;
    MPI_Offset part = span / e2e_nprocs + 1, lo = part * e2e_rank, n;
    unsigned char five[5], *buf;
    MPI_File fh;
    MPI_Status st;

    remove_file("holes");
    fh = open_file("holes", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
    if (e2e_rank == 0) {
        e2e_fill(five, (uint64_t)mark, 5, 2);
        E2E_MPI(MPI_File_write_at(fh, mark, five, 5, MPI_BYTE, &st));
    }
    E2E_MPI(MPI_File_sync(fh));
    n = lo + part > span ? span - lo : part;
    buf = malloc((size_t)part);
    E2E_MPI(MPI_File_read_at_all(fh, lo, buf, (int)n, MPI_BYTE, &st));
    for (MPI_Offset i = 0; i < n; i++) {
        unsigned char want = lo + i >= mark ? e2e_pattern((uint64_t)(lo + i), 2) : 0;

        if (buf[i] != want) {
            E2E_FAIL("hole byte at %lld is %u", (long long)(lo + i), buf[i]);
            break;
        }
    }
    free(buf);
    E2E_MPI(MPI_File_close(&fh));
}

/* Vector file view: rank r owns blocks r, r+n, r+2n ... of L bytes,
 * after a displacement; collective and independent writes and reads. */
static void test_strided(void)
{
    const int L = 1001, K = 37, disp = 13;
    MPI_Datatype ftype, vec, memtype;
    size_t len = (size_t)L * K, total = len * (size_t)e2e_nprocs;
    unsigned char *buf = malloc(len), *gap = calloc(2, len), *all;
    MPI_File fh;
    MPI_Status st;
    int count;

    MPI_Type_vector(K, L, L * e2e_nprocs, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)L * e2e_nprocs * K, &ftype);
    MPI_Type_commit(&ftype);
    for (int k = 0; k < K; k++)
        e2e_fill(buf + (size_t)k * L,
                 (uint64_t)disp + ((uint64_t)k * e2e_nprocs + e2e_rank) * L, L, 3);
    remove_file("strided");
    fh = open_file("strided", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
    E2E_MPI(MPI_File_set_view(fh, disp + (MPI_Offset)e2e_rank * L, MPI_BYTE, ftype, "native",
                              MPI_INFO_NULL));
    E2E_MPI(MPI_File_write_all(fh, buf, (int)len, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    E2E_CHECK(count == (int)len, "write_all count %d", count);
    E2E_MPI(MPI_File_sync(fh));
    memset(buf, 0, len);
    E2E_MPI(MPI_File_read_at_all(fh, 0, buf, (int)len, MPI_BYTE, &st));
    for (int k = 0; k < K; k++)
        E2E_CHECK(e2e_verify(buf + (size_t)k * L,
                             (uint64_t)disp + ((uint64_t)k * e2e_nprocs + e2e_rank) * L, L,
                             3) < 0, "read_all with view, block %d", k);
    /* independent read with the view, into noncontiguous memory */
    MPI_Type_vector(K, L, 2 * L, MPI_BYTE, &memtype);
    MPI_Type_commit(&memtype);
    E2E_MPI(MPI_File_read_at(fh, 0, gap, 1, memtype, &st));
    MPI_Get_elements(&st, MPI_BYTE, &count);
    E2E_CHECK(count == (int)len, "strided read elements %d", count);
    for (int k = 0; k < K; k++) {
        E2E_CHECK(e2e_verify(gap + (size_t)2 * k * L,
                             (uint64_t)disp + ((uint64_t)k * e2e_nprocs + e2e_rank) * L, L,
                             3) < 0, "noncontiguous memory read, block %d", k);
        E2E_CHECK(e2e_first_nonzero(gap + (size_t)(2 * k + 1) * L, L) < 0, "gap written");
    }
    /* independent strided write (pattern seed 4) over the same view */
    for (int k = 0; k < K; k++)
        e2e_fill(gap + (size_t)2 * k * L,
                 (uint64_t)disp + ((uint64_t)k * e2e_nprocs + e2e_rank) * L, L, 4);
    E2E_MPI(MPI_File_write_at(fh, 0, gap, 1, memtype, &st));
    E2E_MPI(MPI_File_sync(fh));
    E2E_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (e2e_rank == e2e_nprocs - 1) {
        all = malloc(total + disp);
        E2E_MPI(MPI_File_read_at(fh, 0, all, (int)(total + disp), MPI_BYTE, &st));
        E2E_CHECK(e2e_first_nonzero(all, disp) < 0, "strided head not zero");
        E2E_CHECK(e2e_verify(all + disp, disp, total, 4) < 0, "strided whole file");
        free(all);
    }
    E2E_MPI(MPI_File_close(&fh));
    MPI_Type_free(&memtype);
    MPI_Type_free(&ftype);
    MPI_Type_free(&vec);
    free(gap);
    free(buf);
}

/* A 2-D int array in column blocks, written collectively with a subarray
 * view, read back whole on every rank. */
static void test_subarray(void)
{
    const int R = 333, C = 17 * e2e_nprocs, cw = 17;
    int sizes[2] = { R, C }, subs[2] = { R, cw }, starts[2] = { 0, cw * e2e_rank };
    int *mine = malloc(sizeof(int) * R * cw), *all = malloc(sizeof(int) * R * C);
    MPI_Datatype sub;
    MPI_File fh;
    MPI_Status st;

    for (int i = 0; i < R; i++)
        for (int j = 0; j < cw; j++)
            mine[i * cw + j] = i * C + starts[1] + j + 1;
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_commit(&sub);
    remove_file("subarray");
    fh = open_file("subarray", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
    E2E_MPI(MPI_File_set_view(fh, 0, MPI_INT, sub, "native", MPI_INFO_NULL));
    E2E_MPI(MPI_File_write_all(fh, mine, R * cw, MPI_INT, &st));
    E2E_MPI(MPI_File_close(&fh));
    fh = open_file("subarray", MPI_MODE_RDONLY, MPI_INFO_NULL);
    E2E_MPI(MPI_File_read_at_all(fh, 0, all, R * C, MPI_INT, &st));
    for (int i = 0; i < R * C; i++)
        if (all[i] != i + 1) {
            E2E_FAIL("subarray element %d is %d", i, all[i]);
            break;
        }
    E2E_MPI(MPI_File_close(&fh));
    MPI_Type_free(&sub);
    free(all);
    free(mine);
}

static MPI_Offset size_of(MPI_File fh)
{
    MPI_Offset size = -1;

    E2E_MPI(MPI_File_get_size(fh, &size));
    return size;
}

static void test_size(void)
{
    unsigned char buf[100], zeros[4096];
    MPI_File fh;
    MPI_Status st;
    int count;

    remove_file("size");
    fh = open_file("size", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
    E2E_MPI(MPI_File_set_size(fh, 1000003));
    E2E_CHECK(size_of(fh) == 1000003, "size after grow %lld", (long long)size_of(fh));
    if (e2e_rank == 1 % e2e_nprocs) {
        e2e_fill(buf, 0, 10, 5);
        E2E_MPI(MPI_File_write_at(fh, 0, buf, 10, MPI_BYTE, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_set_size(fh, 5));
    E2E_CHECK(size_of(fh) == 5, "size after shrink %lld", (long long)size_of(fh));
    E2E_MPI(MPI_File_read_at(fh, 0, buf, 100, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    E2E_CHECK(count == 5, "read count after shrink %d", count);
    E2E_CHECK(e2e_verify(buf, 0, 5, 5) < 0, "data after shrink");
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_set_size(fh, 200000));
    E2E_MPI(MPI_File_read_at(fh, 150000, zeros, sizeof(zeros), MPI_BYTE, &st));
    E2E_CHECK(e2e_first_nonzero(zeros, sizeof(zeros)) < 0, "grown region not zero");
    E2E_MPI(MPI_File_read_at(fh, 5, zeros, sizeof(zeros), MPI_BYTE, &st));
    E2E_CHECK(e2e_first_nonzero(zeros, sizeof(zeros)) < 0, "old data survived shrink+grow");
    MPI_Barrier(MPI_COMM_WORLD);
    E2E_MPI(MPI_File_preallocate(fh, 300001));
    E2E_CHECK(size_of(fh) == 300001, "size after preallocate %lld", (long long)size_of(fh));
    E2E_MPI(MPI_File_preallocate(fh, 1000));
    E2E_CHECK(size_of(fh) == 300001, "preallocate shrank to %lld", (long long)size_of(fh));
    E2E_MPI(MPI_File_read_at(fh, 290000, zeros, sizeof(zeros), MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    E2E_CHECK(count == (int)sizeof(zeros), "read of preallocated count %d", count);
    E2E_CHECK(e2e_first_nonzero(zeros, sizeof(zeros)) < 0, "preallocated not zero");
    E2E_MPI(MPI_File_close(&fh));
}

static int open_class(const char *name, int amode)
{
    char path[600];
    MPI_File fh = MPI_FILE_NULL;
    int rc, cls = MPI_SUCCESS;

    path_of(path, sizeof(path), name);
    rc = MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh);
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);
    else
        MPI_Error_class(rc, &cls);
    return cls;
}

/* DELETE_ON_CLOSE of a file whose cluster only the ipvfs_map hint names
 * ($IPVFS_MAP unset while it is open and closed). */
static void delete_on_close_hint_only(void)
{
    char *map = strdup(getenv("IPVFS_MAP"));
    MPI_Info info;
    MPI_File fh;
    int cls;

    MPI_Info_create(&info);
    MPI_Info_set(info, "ipvfs_map", map);
    unsetenv("IPVFS_MAP");
    fh = open_file("modes", MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info);
    E2E_MPI(MPI_File_close(&fh));
    setenv("IPVFS_MAP", map, 1);
    MPI_Info_free(&info);
    free(map);
    cls = open_class("modes", MPI_MODE_RDONLY);
    E2E_CHECK(cls == MPI_ERR_NO_SUCH_FILE,
              "DELETE_ON_CLOSE with the map named by the hint left the file: class %d", cls);
}

static void test_modes(void)
{
    unsigned char buf[100];
    MPI_Offset pos;
    MPI_File fh;
    MPI_Status st;
    char path[600];
    int cls;

    remove_file("modes");
    fh = open_file("modes", MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY, MPI_INFO_NULL);
    if (e2e_rank == 0) {
        e2e_fill(buf, 0, 100, 6);
        E2E_MPI(MPI_File_write_at(fh, 0, buf, 100, MPI_BYTE, &st));
    }
    E2E_MPI(MPI_File_close(&fh));
    cls = open_class("modes", MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR);
    E2E_CHECK(cls == MPI_ERR_FILE_EXISTS, "EXCL on an existing file: class %d", cls);
    fh = open_file("modes", MPI_MODE_APPEND | MPI_MODE_WRONLY, MPI_INFO_NULL);
    E2E_MPI(MPI_File_get_position(fh, &pos));
    E2E_CHECK(pos == 100, "APPEND position %lld", (long long)pos);
    if (e2e_rank == 0) {
        e2e_fill(buf, 100, 10, 6);
        E2E_MPI(MPI_File_write(fh, buf, 10, MPI_BYTE, &st));
    }
    E2E_MPI(MPI_File_close(&fh));
    fh = open_file("modes", MPI_MODE_RDONLY, MPI_INFO_NULL);
    E2E_CHECK(size_of(fh) == 110, "size after append %lld", (long long)size_of(fh));
    read_check(fh, 0, 110, 6, "appended file");
    E2E_MPI(MPI_File_close(&fh));
    /* delete, then open without CREATE fails alike everywhere */
    path_of(path, sizeof(path), "modes");
    MPI_Barrier(MPI_COMM_WORLD);  /* nobody still reads it */
    if (e2e_rank == 0)
        E2E_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    cls = open_class("modes", MPI_MODE_RDONLY);
    E2E_CHECK(cls == MPI_ERR_NO_SUCH_FILE, "open of a deleted file: class %d", cls);
    fh = open_file("modes", MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                   MPI_INFO_NULL);
    E2E_MPI(MPI_File_close(&fh));
    cls = open_class("modes", MPI_MODE_RDONLY);
    E2E_CHECK(cls == MPI_ERR_NO_SUCH_FILE, "DELETE_ON_CLOSE left the file: class %d", cls);
    delete_on_close_hint_only();
}

static void info_value(MPI_File fh, const char *key, char *out, size_t len)
{
    MPI_Info info;
    int flag = 0;

    out[0] = '\0';
    E2E_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, key, (int)len - 1, out, &flag);
    MPI_Info_free(&info);
    E2E_CHECK(flag, "get_info lacks %s", key);
}

static void test_hints(int nio)
{
    char unit[64], factor[64], path[600];
    unsigned char *buf = malloc(300000);
    MPI_File fh;
    MPI_Info info;
    int rc, cls = 0;

    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "4096");
    MPI_Info_set(info, "striping_factor", "1");
    remove_file("hints1");
    fh = open_file("hints1", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    info_value(fh, "striping_unit", unit, sizeof(unit));
    info_value(fh, "striping_factor", factor, sizeof(factor));
    E2E_CHECK(strcmp(unit, "4096") == 0 && strcmp(factor, "1") == 0,
              "hints in effect: unit %s factor %s", unit, factor);
    if (e2e_rank == 0) {
        MPI_Status st;

        e2e_fill(buf, 1234, 300000, 7);
        E2E_MPI(MPI_File_write_at(fh, 1234, buf, 300000, MPI_BYTE, &st));
        read_check(fh, 1234, 300000, 7, "striping_unit 4096 data");
    }
    E2E_MPI(MPI_File_close(&fh));
    /* a factor above the I/O node count falls back to all of them */
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "striping_factor", "64");
    remove_file("hints2");
    fh = open_file("hints2", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    info_value(fh, "striping_factor", factor, sizeof(factor));
    E2E_CHECK(atoi(factor) == nio, "striping_factor 64 gave %s, expected %d", factor, nio);
    E2E_MPI(MPI_File_close(&fh));
    /* malformed values fail the open with a message naming the hint */
    MPI_Info_set(info, "striping_unit", "lots");
    path_of(path, sizeof(path), "hints3");
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    if (rc == MPI_SUCCESS) {
        E2E_FAIL("malformed striping_unit accepted");
        MPI_File_close(&fh);
    } else {
        char s[MPI_MAX_ERROR_STRING];
        int l;

        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, s, &l);
        E2E_CHECK(cls == MPI_ERR_ARG && strstr(s, "striping_unit"),
                  "malformed hint: class %d, message %s", cls, s);
        if (e2e_rank == 0)
            printf("malformed hint message: %s\n", s);
    }
    MPI_Info_free(&info);
    free(buf);
}

/* ipvfs_readahead: in effect after the open, data exact with read-ahead
 * off (0) and on (1M) for the file, malformed values refused with
 * MPI_ERR_ARG naming the hint. */
static void test_readahead_hint(void)
{
    static const char *const good[] = { "0", "1M" }, *const bad[] = { "lots", "2G", "-1" };
    const size_t len = 3u << 20, piece = 256u << 10;
    char value[64], path[600];
    MPI_Info info;
    MPI_File fh;
    MPI_Status st;

    MPI_Info_create(&info);
    for (int i = 0; i < 2; i++) {
        unsigned char *buf = malloc(len);
        MPI_Info_set(info, "ipvfs_readahead", good[i]);
        remove_file("ra");
        fh = open_file("ra", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
        info_value(fh, "ipvfs_readahead", value, sizeof(value));
        E2E_CHECK(strtoull(value, NULL, 10) == (i ? 1ull << 20 : 0),
                  "ipvfs_readahead=%s in effect: %s", good[i], value);
        if (e2e_rank == 0) {
            e2e_fill(buf, 0, len, 11);
            E2E_MPI(MPI_File_write_at(fh, 0, buf, (int)len, MPI_BYTE, &st));
        }
        /* MPI's way to make rank 0's write visible: sync, barrier, sync */
        E2E_MPI(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        E2E_MPI(MPI_File_sync(fh));
        for (size_t off = 0; off < len; off += piece)
            read_check(fh, (MPI_Offset)off, piece, 11, "sequential read with ipvfs_readahead");
        E2E_MPI(MPI_File_close(&fh));
        free(buf);
    }
    path_of(path, sizeof(path), "ra");
    for (int i = 0; i < 3; i++) {
        int rc, cls = 0;
        MPI_Info_set(info, "ipvfs_readahead", bad[i]);
        rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, info, &fh);
        if (rc == MPI_SUCCESS) {
            E2E_FAIL("ipvfs_readahead=%s accepted", bad[i]);
            MPI_File_close(&fh);
        } else {
            char s[MPI_MAX_ERROR_STRING];
            int l;

            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, s, &l);
            E2E_CHECK(cls == MPI_ERR_ARG && strstr(s, "ipvfs_readahead"),
                      "ipvfs_readahead=%s: class %d, message %s", bad[i], cls, s);
        }
    }
    MPI_Info_free(&info);
    remove_file("ra");
}

/* Offsets beyond 2^32, and one read of more than 2^31 bytes from a sparse
 * file (cheap: mostly a hole). */
static void test_large(void)
{
    const size_t B = 65536 + 3, chunk = 4096;
    const MPI_Offset S = (MPI_Offset)(1ull << 31) + 3 * (MPI_Offset)chunk;
    MPI_Offset off = (MPI_Offset)(1ull << 32) + ((MPI_Offset)e2e_rank << 20) + 11;
    unsigned char *buf = malloc(B);
    MPI_Datatype page;
    MPI_File fh;
    MPI_Status st;
    int count;

    remove_file("large");
    fh = open_file("large", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL);
    e2e_fill(buf, (uint64_t)off, B, 8);
    E2E_MPI(MPI_File_write_at(fh, off, buf, (int)B, MPI_BYTE, &st));
    E2E_MPI(MPI_File_sync(fh));
    read_check(fh, off, B, 8, "beyond 2^32");
    E2E_CHECK(size_of(fh) ==
              (MPI_Offset)(1ull << 32) + ((MPI_Offset)(e2e_nprocs - 1) << 20) + 11 + (MPI_Offset)B,
              "size with large offsets %lld", (long long)size_of(fh));
    E2E_MPI(MPI_File_set_size(fh, S));
    if (e2e_rank == 0) {
        unsigned char *big = malloc((size_t)S);
        MPI_Offset marks[3] = { 0, (MPI_Offset)(1ull << 31) - 100, S - (MPI_Offset)chunk };

        for (int i = 0; i < 3; i++) {
            e2e_fill(buf, (uint64_t)marks[i], chunk, 9);
            E2E_MPI(MPI_File_write_at(fh, marks[i], buf, (int)chunk, MPI_BYTE, &st));
        }
        MPI_Type_contiguous((int)chunk, MPI_BYTE, &page);
        MPI_Type_commit(&page);
        E2E_MPI(MPI_File_read_at(fh, 0, big, (int)(S / (MPI_Offset)chunk), page, &st));
        MPI_Get_count(&st, page, &count);
        E2E_CHECK(count == (int)(S / (MPI_Offset)chunk), "2 GiB read count %d", count);
        for (int i = 0; i < 3; i++)
            E2E_CHECK(e2e_verify(big + marks[i], (uint64_t)marks[i], chunk, 9) < 0,
                      "marker %d of the 2 GiB read", i);
        E2E_CHECK(e2e_first_nonzero(big + chunk, (size_t)marks[1] - chunk) < 0,
                  "hole of the 2 GiB read not zero");
        /* and one write of more than 2^31 bytes, read back whole */
        e2e_fill(big, 0, (size_t)S, 10);
        E2E_MPI(MPI_File_write_at(fh, 0, big, (int)(S / (MPI_Offset)chunk), page, &st));
        MPI_Get_count(&st, page, &count);
        E2E_CHECK(count == (int)(S / (MPI_Offset)chunk), "2 GiB write count %d", count);
        memset(big, 0, (size_t)S);
        E2E_MPI(MPI_File_read_at(fh, 0, big, (int)(S / (MPI_Offset)chunk), page, &st));
        E2E_CHECK(e2e_verify(big, 0, (size_t)S, 10) < 0, "the 2 GiB write read back differs");
        MPI_Type_free(&page);
        free(big);
    }
    E2E_MPI(MPI_File_close(&fh));
    remove_file("large");
    free(buf);
}

int main(int argc, char **argv)
{
    int large = 0, hints = 1, nio = 0;

    e2e_init(&argc, &argv);
    if (argc < 2) {
        if (e2e_rank == 0)
            fprintf(stderr, "usage: e2e_io BASE [--nio N] [--large] [--no-hints]\n");
        MPI_Finalize();
        return 2;
    }
    snprintf(base, sizeof(base), "%s", argv[1]);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--large") == 0)
            large = 1;
        else if (strcmp(argv[i], "--no-hints") == 0)
            hints = 0;
        else if (strcmp(argv[i], "--nio") == 0 && i + 1 < argc)
            nio = atoi(argv[++i]);
    }
    test_contig();
    test_holes();
    test_strided();
    test_subarray();
    test_size();
    test_modes();
    if (hints) {
        test_hints(nio);
        test_readahead_hint();
    }
    if (large)
        test_large();
    return e2e_finish("e2e_io");
}
