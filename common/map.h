/* The server map: the file that tells clients where the cluster is.
 *
 * Written by rank 0 of ipvfs-server once every rank serves (written to a
 * temporary name and renamed, so readers never see half a map).  Text, one
 * item per line:
 *
 *   ipvfs-map 1
 *   key <path of the cluster key file, DATA/secret>   (or, older maps:)
 *   secret <64 hex digits>
 *   layout <nio> <nt> <raid level> <default stripe unit>
 *   rank <r> <role bits> <io index> <target index|-> <host> <port> <iscsi port|0> <pid>
 *   ...
 *
 * Lines starting with '#' are comments.  A map that names its key file
 * holds no secret and is public (mode 0644): every user reads it, and
 * those who may also read the key file (the servers' owner, root) prove
 * the key; the others prove who they are (common/proto.h, AUTH). */
#ifndef IPVFS_MAP_H
#define IPVFS_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/proto.h"

struct ipvfs_map_rank {
    uint32_t rank;
    uint32_t role;           /* enum ipvfs_role bits */
    uint32_t io_index;       /* I/O node index (for targets: their I/O node) */
    int32_t target_index;    /* index inside the iRAID group, -1 if none */
    char host[64];
    uint16_t port;           /* iPVFS protocol port */
    uint16_t iscsi_port;     /* targets: iSCSI portal port */
    uint32_t pid;            /* the rank's supervisor (the MPI process); STATUS
                              * names its serving process */
};

struct ipvfs_map {
    uint8_t secret[IPVFS_SECRET_LEN];   /* valid when have_key */
    int have_key;
    char key_path[512];      /* the key file the map names, "" if none */
    uint32_t nio;
    uint32_t nt;
    uint32_t raid_level;
    uint64_t stripe_unit;
    uint32_t nranks;
    struct ipvfs_map_rank *ranks;  /* indexed by rank */
};

/* Writes map to path atomically: mode 0644 when it names a key file
 * (key_path), else 0600 with the secret in it.  Returns 0 or -errno. */
int ipvfs_map_write(const char *path, const struct ipvfs_map *map);

/* The map as text, in the file's format; the key line (or the secret
 * line, without a key_path) only when with_secret (the map rank 0 hands
 * out over the wire has neither).
 * *out_text is malloc'd (the caller frees it) and NUL-terminated. */
int ipvfs_map_format(const struct ipvfs_map *map, int with_secret, char **out_text,
                     size_t *out_len);

/* Parses and validates a map's text; origin names it in errbuf ("server
 * map FILE", "the map from HOST:PORT").  need_secret: a map without a
 * secret line is incomplete.  Returns 0 or -errno (message in errbuf). */
int ipvfs_map_parse(const char *text, const char *origin, int need_secret,
                    struct ipvfs_map *out_map, char *errbuf, size_t errlen);

/* Reads and validates a map file, and the key file it names when this
 * process may read it (have_key; a key it may not read is no error: the
 * caller proves who it is instead).  On failure returns -errno and puts a
 * message naming the file and the problem into errbuf. */
int ipvfs_map_read(const char *path, struct ipvfs_map *out_map, char *errbuf, size_t errlen);

void ipvfs_map_free(struct ipvfs_map *map);

/* The rank record of I/O node io_index, or of the metadata rank; NULL if
 * the map has none. */
const struct ipvfs_map_rank *ipvfs_map_io_node(const struct ipvfs_map *map, uint32_t io_index);
const struct ipvfs_map_rank *ipvfs_map_metadata(const struct ipvfs_map *map);

/* Reads the IPVFS_SECRET_LEN bytes of a key file into key.  Returns 0 or
 * -errno with a message naming the file in errbuf. */
int ipvfs_key_read(const char *path, uint8_t key[IPVFS_SECRET_LEN], char *errbuf, size_t errlen);

/* Hex helpers for the secret: out must hold 2*len+1 chars. */
void ipvfs_hex_encode(const uint8_t *in, size_t len, char *out);
int ipvfs_hex_decode(const char *in, uint8_t *out, size_t len);

#endif
