/* tools/cachesim/trace.c: the text trace format (cachesim.h): reading with
 * a clear error per malformed line, and writing (--emit-trace). */
#include "tools/cachesim/cachesim.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_MAX_LINE 256
#define TRACE_MAX_LENGTH (1ull << 30)
/* Datafile ends past 2^50 are refused by the servers too (dfstore.h); it
 * also keeps block numbers well inside a cache key. */
#define TRACE_MAX_END (1ull << 50)
#define TRACE_MAX_FILE ((1u << CACHE_OBJECT_BITS) - 1)

/* A decimal number no larger than max from the next blank-separated field
 * of *cur; 0 or -1. */
static int field_u64(char **cur, uint64_t max, uint64_t *out)
{
    char *tok = strtok_r(NULL, " \t\r\n", cur), *end;
    unsigned long long v;

    if (!tok || tok[0] < '0' || tok[0] > '9')
        return -1;
    errno = 0;
    v = strtoull(tok, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Parses one non-empty line into out; 0 or -1. */
static int parse_line(char *line, struct sim_req *out)
{
    char *cur = NULL, *op;
    uint64_t client, file, off, len;

    /* Each field is strtok_r(NULL, ..., &cur): it goes on from cur. */
    cur = line;
    if (field_u64(&cur, UINT32_MAX, &client) < 0 || field_u64(&cur, TRACE_MAX_FILE, &file) < 0 ||
        field_u64(&cur, TRACE_MAX_END, &off) < 0 || field_u64(&cur, TRACE_MAX_LENGTH, &len) < 0 ||
        len == 0 || off + len > TRACE_MAX_END)
        return -1;
    op = strtok_r(NULL, " \t\r\n", &cur);
    if (!op || (strcmp(op, "r") != 0 && strcmp(op, "w") != 0) || strtok_r(NULL, " \t\r\n", &cur))
        return -1;
    *out = (struct sim_req){ .client = (uint32_t)client, .file = (uint32_t)file,
                             .offset = off, .length = len, .write = op[0] == 'w' };
    return 0;
}

int trace_next(FILE *in, uint64_t *io_lineno, struct sim_req *out, char *err, size_t errlen)
{
    char line[TRACE_MAX_LINE + 2], *hash, *p;

    while (fgets(line, sizeof(line), in)) {
        ++*io_lineno;
        if (!strchr(line, '\n') && !feof(in)) {
            snprintf(err, errlen, "line %" PRIu64 ": longer than %d characters", *io_lineno,
                     TRACE_MAX_LINE);
            return -1;
        }
        if ((hash = strchr(line, '#')))
            *hash = '\0';
        for (p = line; *p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'; p++)
            ;
        if (!*p || (*p >= 'A' && *p <= 'Z'))
            continue;   /* blank, or a version-2 event (cachesim.h) */
        if (parse_line(p, out) < 0) {
            snprintf(err, errlen, "line %" PRIu64 ": expected 'CLIENT FILE OFFSET LENGTH r|w' "
                     "(FILE < 2^24, 0 < LENGTH <= 1 GiB, OFFSET + LENGTH <= 2^50)", *io_lineno);
            return -1;
        }
        return 1;
    }
    if (ferror(in)) {
        snprintf(err, errlen, "reading the trace after line %" PRIu64 ": %s", *io_lineno,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int trace_write(FILE *out, const struct sim_req *r)
{
    return fprintf(out, "%u %u %" PRIu64 " %" PRIu64 " %c\n", r->client, r->file, r->offset,
                   r->length, r->write ? 'w' : 'r') < 0 ? -1 : 0;
}
