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

#include <stddef.h>
#include <stdint.h>

/* The rule in a few words, for error messages. */
#define SIZE_RULE "bytes, or a number with K, M, G or T (powers of 1024)"

/* Parses text as a size.  Returns 0 and stores it in *out; -EINVAL when
 * text does not follow the rule (*out untouched), -ERANGE when the value
 * does not fit 64 bits. */
int size_parse(const char *text, uint64_t *out);

/* Amounts in one fixed unit, written by people: "40", "40MB/s", "100ms".
 *   AMOUNT = NUMBER [UNIT]
 * NUMBER is a finite decimal number (as strtod reads it); UNIT, when given,
 * must be exactly the caller's unit: no other unit is converted.  Used by
 * every QoS SLO: ipvfs-ctl qos set, the hints at open, --qos-slo files. */
#define AMOUNT_POSITIVE 1       /* also refuse <= 0 and absurd (> 1e12) values */

/* Parses text as an amount in unit.  Returns 0 and stores it in *out;
 * -EINVAL with a message naming what (e.g. "rate", "hint ipvfs_qos_rate")
 * and text in msg otherwise (*out untouched).  The callers check their own
 * ranges; AMOUNT_POSITIVE only keeps a later conversion defined. */
int amount_parse(const char *what, const char *text, const char *unit, int flags, double *out,
                 char *msg, size_t msglen);

#endif
