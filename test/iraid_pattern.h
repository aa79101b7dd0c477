/* The data pattern of the iRAID test tools (iraid-model-tool and
 * iraid-crashlog-tool): every byte a function of its volume offset and a
 * seed, so a tool can tell from a read which write (seed) a byte came
 * from, and a block that holds another offset's bytes never passes. */
#ifndef IPVFS_TEST_IRAID_PATTERN_H
#define IPVFS_TEST_IRAID_PATTERN_H

#include <stdint.h>

static inline uint8_t iraid_pattern(uint64_t off, uint32_t seed)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32 | seed);
    return (uint8_t)(x >> 29 ^ x >> 7);
}

/* Fills buf with the pattern of volume bytes [off, off + len). */
static inline void iraid_pattern_fill(uint8_t *buf, uint64_t off, uint64_t len, uint32_t seed)
{
    for (uint64_t i = 0; i < len; i++)
        buf[i] = iraid_pattern(off + i, seed);
}

#endif
