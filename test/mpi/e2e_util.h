/* Helpers shared by the end-to-end MPI test programs. */
#ifndef E2E_UTIL_H
#define E2E_UTIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int e2e_rank, e2e_nprocs, e2e_failures;

/* Byte value of the test pattern at file offset off, for a given seed. */
static inline unsigned char e2e_pattern(uint64_t off, unsigned seed)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)seed * 0xC2B2AE3D27D4EB4Full;

    return (unsigned char)(x >> 56 ^ x >> 13);
}

static inline void e2e_fill(unsigned char *buf, uint64_t off, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = e2e_pattern(off + i, seed);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long e2e_verify(const unsigned char *buf, uint64_t off, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != e2e_pattern(off + i, seed))
            return (long)i;
    return -1;
}

static inline long e2e_first_nonzero(const unsigned char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i])
            return (long)i;
    return -1;
}

#define E2E_FAIL(...) do { \
        fprintf(stderr, "FAIL rank %d %s:%d: ", e2e_rank, __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); \
        e2e_failures++; \
    } while (0)

#define E2E_CHECK(cond, ...) do { if (!(cond)) E2E_FAIL(__VA_ARGS__); } while (0)

/* An MPI call that must succeed; on failure prints the error string. */
#define E2E_MPI(call) do { \
        int e2e_rc_ = (call); \
        if (e2e_rc_ != MPI_SUCCESS) { \
            char e2e_s_[MPI_MAX_ERROR_STRING]; int e2e_l_ = 0; \
            MPI_Error_string(e2e_rc_, e2e_s_, &e2e_l_); \
            E2E_FAIL("%s: %s", #call, e2e_s_); \
        } \
    } while (0)

/* Ends a program: all ranks agree on pass or fail. */
static inline int e2e_finish(const char *name)
{
    int total = 0;

    MPI_Allreduce(&e2e_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (e2e_rank == 0)
        printf("%s %s (%d failures)\n", total ? "FAIL" : "PASS", name, total);
    MPI_Finalize();
    return total ? 1 : 0;
}

static inline void e2e_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &e2e_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &e2e_nprocs);
    /* errors come back as codes so the tests can report them */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
}

#define E2E_GLOBALS int e2e_rank, e2e_nprocs, e2e_failures

#endif
