#include "common/size.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

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
