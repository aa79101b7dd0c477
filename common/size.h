/* Sizes written by people: "512", "64K", "512M", "1G", "2T".
 *
 * The one rule, used by every option, argument and hint that takes a size:
 *   SIZE = DIGITS [UNIT ["i"]] ["B"]
 * DIGITS is a decimal number (no sign, no spaces, no hex); UNIT is one of
 * K M G T, each a power of 1024 (K = 1024); letters may be in either case.
 * So "65536", "64K", "64k", "64KB", "64KiB" are all 65536 bytes, and "512B"
 * is 512.  Nothing may follow. */
#ifndef IPVFS_SIZE_H
#define IPVFS_SIZE_H

#include <stdint.h>

/* The rule in a few words, for error messages. */
#define SIZE_RULE "bytes, or a number with K, M, G or T (powers of 1024)"

/* Parses text as a size.  Returns 0 and stores it in *out; -EINVAL when
 * text does not follow the rule (*out untouched), -ERANGE when the value
 * does not fit 64 bits. */
int size_parse(const char *text, uint64_t *out);

#endif
