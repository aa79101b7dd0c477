/* memcpy-bw: memory copy bandwidth, one limit row of benchmarks/transport.sh.
 *
 *   memcpy-bw [MIB] [SECONDS]
 *
 * Copies a MIB-MiB buffer (default 64, larger than the caches, so the
 * figure is the memory's and not a cache's) into another, again and again
 * for about SECONDS (default 1), and prints one line
 *   MEMCPY bytes=N seconds=S MiBps=R
 * MiB/s counts the bytes copied (each is read once and written once).
 * Exit status 0, 2 on a bad argument, 1 when memory runs out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_arg(const char *s, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (*s == '\0' || *end != '\0' || v <= 0 || v > max) {
        fprintf(stderr, "memcpy-bw: '%s' is not a number from 1 to %ld\n", s, max);
        return -1;
    }
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    long mib = 64, secs = 1;
    size_t len;
    unsigned char *src, *dst;
    double t0, t;
    unsigned long long copied = 0;

    if ((argc > 1 && parse_arg(argv[1], 4096, &mib) < 0) ||
        (argc > 2 && parse_arg(argv[2], 600, &secs) < 0))
        return 2;
    len = (size_t)mib << 20;
    src = malloc(len);
    dst = malloc(len);
    if (!src || !dst) {
        fprintf(stderr, "memcpy-bw: out of memory for 2 x %ld MiB\n", mib);
        free(src);
        free(dst);
        return 1;
    }
    /* Touch both first: page faults are not the copy's cost. */
    memset(src, 0x5a, len);
    memset(dst, 0, len);
    t0 = now();
    do {
        memcpy(dst, src, len);
        copied += len;
        src[copied % len] ^= dst[(copied / 2) % len];   /* keep the copy observable */
    } while ((t = now()) - t0 < (double)secs);
    printf("MEMCPY bytes=%llu seconds=%.3f MiBps=%.1f\n", copied, t - t0,
           (double)copied / (1 << 20) / (t - t0));
    free(src);
    free(dst);
    return 0;
}
