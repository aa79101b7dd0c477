#include "common/size.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Shift of a unit letter, or -1 when c is not one. */
static int unit_shift(char c)
{
    switch (toupper((unsigned char)c)) {
    case 'K': return 10;
    case 'M': return 20;
    case 'G': return 30;
    case 'T': return 40;
    default: return -1;
    }
}

int size_parse(const char *text, uint64_t *out)
{
    unsigned long long v;
    char *end;
    int shift = 0;

    /* strtoull would take a sign, spaces or a 0x prefix: refuse them first */
    if (!text || !isdigit((unsigned char)text[0]))
        return -EINVAL;
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    if (unit_shift(*end) >= 0) {
        shift = unit_shift(*end++);
        if (*end == 'i' || *end == 'I')
            end++;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0')
        return -EINVAL;
    if (v > (UINT64_MAX >> shift))
        return -ERANGE;
    *out = (uint64_t)v << shift;
    return 0;
}

int amount_parse(const char *what, const char *text, const char *unit, int flags, double *out,
                 char *msg, size_t msglen)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (end == text || errno == ERANGE || !isfinite(v)) {
        snprintf(msg, msglen, "%s '%s' is not a number", what, text);
        return -EINVAL;
    }
    if (*end && strcmp(end, unit) != 0) {
        snprintf(msg, msglen, "%s '%s': unknown unit '%s' (it is in %s)", what, text, end, unit);
        return -EINVAL;
    }
    if ((flags & AMOUNT_POSITIVE) && v <= 0) {
        snprintf(msg, msglen, "%s '%s' must be more than 0", what, text);
        return -EINVAL;
    }
    if ((flags & AMOUNT_POSITIVE) && v > 1e12) {
        snprintf(msg, msglen, "%s '%s' is absurdly large (in %s)", what, text, unit);
        return -EINVAL;
    }
    *out = v;
    return 0;
}
