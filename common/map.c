#include "common/map.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ipvfs_hex_encode(const uint8_t *in, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * len] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int ipvfs_hex_decode(const char *in, uint8_t *out, size_t len)
{
    if (strlen(in) != 2 * len)
        return -EINVAL;
    for (size_t i = 0; i < len; i++) {
        int hi = hexval(in[2 * i]), lo = hexval(in[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -EINVAL;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int ipvfs_map_format(const struct ipvfs_map *map, int with_secret, char **out_text,
                     size_t *out_len)
{
    char hex[2 * IPVFS_SECRET_LEN + 1];
    FILE *f;

    *out_text = NULL;
    if (!(f = open_memstream(out_text, out_len)))
        return -errno;
    fprintf(f, "ipvfs-map 1\n");
    if (with_secret && map->key_path[0]) {
        fprintf(f, "# written by ipvfs-server; clients that may read the key file prove it\n"
                   "key %s\n", map->key_path);
    } else if (with_secret) {
        ipvfs_hex_encode(map->secret, IPVFS_SECRET_LEN, hex);
        fprintf(f, "# written by ipvfs-server; keep it private (mode 0600)\nsecret %s\n", hex);
    }
    fprintf(f, "layout %u %u %u %llu\n", map->nio, map->nt, map->raid_level,
            (unsigned long long)map->stripe_unit);
    for (uint32_t i = 0; i < map->nranks; i++) {
        const struct ipvfs_map_rank *r = &map->ranks[i];
        char tindex[16] = "-";

        if (r->target_index >= 0)
            snprintf(tindex, sizeof(tindex), "%d", r->target_index);
        fprintf(f, "rank %u %u %u %s %s %u %u %u\n", r->rank, r->role, r->io_index, tindex,
                r->host, r->port, r->iscsi_port, r->pid);
    }
    if (fclose(f) != 0) {
        free(*out_text);
        *out_text = NULL;
        return -ENOMEM;
    }
    return 0;
}

int ipvfs_map_write(const char *path, const struct ipvfs_map *map)
{
    char tmp[4096], *text;
    size_t len;
    int fd, rc;

    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= sizeof(tmp))
        return -ENAMETOOLONG;
    if ((rc = ipvfs_map_format(map, 1, &text, &len)) < 0)
        return rc;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, map->key_path[0] ? 0644 : 0600);
    if (fd < 0) {
        rc = -errno;
        goto free_text;
    }
    /* the umask must not make the public map private */
    if (map->key_path[0] && fchmod(fd, 0644) != 0)
        rc = -errno;
    if (rc == 0 && (write(fd, text, len) != (ssize_t)len || fsync(fd) != 0))
        rc = errno ? -errno : -EIO;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc < 0)
        unlink(tmp);
free_text:
    free(text);
    return rc;
}

static int parse_rank(const char *line, struct ipvfs_map *map)
{
    struct ipvfs_map_rank r;
    char tindex[16];
    unsigned rank, role, io, port, iport, pid;

    memset(&r, 0, sizeof(r));
    if (sscanf(line, "rank %u %u %u %15s %63s %u %u %u", &rank, &role, &io, tindex, r.host,
               &port, &iport, &pid) != 8)
        return -EINVAL;
    if (rank >= map->nranks || port == 0 || port > 65535 || iport > 65535 || role == 0 ||
        role > 7)
        return -EINVAL;
    r.rank = rank;
    r.role = role;
    r.io_index = io;
    r.target_index = strcmp(tindex, "-") == 0 ? -1 : atoi(tindex);
    r.port = (uint16_t)port;
    r.iscsi_port = (uint16_t)iport;
    r.pid = pid;
    map->ranks[rank] = r;
    return 0;
}

static int parse_line(const char *line, struct ipvfs_map *map, int *have_secret)
{
    char hex[2 * IPVFS_SECRET_LEN + 2];
    unsigned nio, nt, level;
    unsigned long long unit;

    if (line[0] == '#' || line[0] == '\0')
        return 0;
    if (strncmp(line, "secret ", 7) == 0) {
        if (sscanf(line + 7, "%65s", hex) != 1 ||
            ipvfs_hex_decode(hex, map->secret, IPVFS_SECRET_LEN) < 0)
            return -EINVAL;
        *have_secret = 1;
        map->have_key = 1;
        return 0;
    }
    if (strncmp(line, "key ", 4) == 0) {
        size_t n = strlen(line + 4);

        if (line[4] != '/' || n >= sizeof(map->key_path))
            return -EINVAL;
        memcpy(map->key_path, line + 4, n + 1);
        return 0;
    }
    if (strncmp(line, "layout ", 7) == 0) {
        if (map->ranks || sscanf(line + 7, "%u %u %u %llu", &nio, &nt, &level, &unit) != 4 ||
            nio == 0 || nio > 4096 || nt > 4096 || unit == 0)
            return -EINVAL;
        map->nio = nio;
        map->nt = nt;
        map->raid_level = level;
        map->stripe_unit = unit;
        map->nranks = nio * (1 + nt);
        map->ranks = calloc(map->nranks, sizeof(*map->ranks));
        return map->ranks ? 0 : -ENOMEM;
    }
    if (strncmp(line, "rank ", 5) == 0)
        return map->ranks ? parse_rank(line, map) : -EINVAL;
    return -EINVAL;
}

int ipvfs_map_parse(const char *text, const char *origin, int need_secret,
                    struct ipvfs_map *out_map, char *errbuf, size_t errlen)
{
    char line[512];
    const char *p = text;
    int rc = 0, lineno = 0, have_secret = 0;

    memset(out_map, 0, sizeof(*out_map));
    while (rc == 0 && *p) {
        size_t n = strcspn(p, "\n");

        lineno++;
        if (n >= sizeof(line)) {
            rc = -EINVAL;
            break;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + (p[n] == '\n');
        if (lineno == 1)
            rc = strcmp(line, "ipvfs-map 1") == 0 ? 0 : -EINVAL;
        else
            rc = parse_line(line, out_map, &have_secret);
    }
    if (rc == 0 && ((need_secret && !have_secret) || !out_map->ranks))
        rc = -EINVAL, lineno = 0;
    for (uint32_t i = 0; rc == 0 && i < out_map->nranks; i++)
        if (out_map->ranks[i].port == 0)
            rc = -EINVAL, lineno = 0;
    if (rc < 0) {
        if (lineno)
            snprintf(errbuf, errlen, "%s: malformed line %d", origin, lineno);
        else
            snprintf(errbuf, errlen, "%s: incomplete (%slayout or a rank missing)", origin,
                     need_secret ? "secret, " : "");
        ipvfs_map_free(out_map);
    }
    return rc;
}

int ipvfs_map_read(const char *path, struct ipvfs_map *out_map, char *errbuf, size_t errlen)
{
    char origin[1100], text[1 << 16];
    ssize_t n;
    int fd, rc;

    memset(out_map, 0, sizeof(*out_map));
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        rc = -errno;
        snprintf(errbuf, errlen, "cannot open server map %s: %s", path, strerror(-rc));
        return rc;
    }
    n = read(fd, text, sizeof(text) - 1);
    rc = n < 0 ? -errno : 0;
    close(fd);
    if (rc < 0 || n == (ssize_t)sizeof(text) - 1) {
        snprintf(errbuf, errlen, "cannot read server map %s: %s", path,
                 rc < 0 ? strerror(-rc) : "larger than 64 KiB");
        return rc < 0 ? rc : -EFBIG;
    }
    text[n] = '\0';
    snprintf(origin, sizeof(origin), "server map %s", path);
    if ((rc = ipvfs_map_parse(text, origin, 0, out_map, errbuf, errlen)) < 0)
        return rc;
    if (!out_map->have_key && out_map->key_path[0] &&
        ipvfs_key_read(out_map->key_path, out_map->secret, origin, sizeof(origin)) == 0)
        out_map->have_key = 1;
    return 0;
}

int ipvfs_key_read(const char *path, uint8_t key[IPVFS_SECRET_LEN], char *errbuf, size_t errlen)
{
    ssize_t n;
    int fd, rc;

    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        rc = -errno;
        snprintf(errbuf, errlen, "cannot open the cluster key %s: %s", path, strerror(-rc));
        return rc;
    }
    n = read(fd, key, IPVFS_SECRET_LEN);
    rc = n < 0 ? -errno : 0;
    close(fd);
    if (n != IPVFS_SECRET_LEN) {
        snprintf(errbuf, errlen, "the cluster key %s: %s", path,
                 rc < 0 ? strerror(-rc) : "not 32 bytes long");
        return rc < 0 ? rc : -EINVAL;
    }
    return 0;
}

void ipvfs_map_free(struct ipvfs_map *map)
{
    free(map->ranks);
    map->ranks = NULL;
    map->nranks = 0;
}

const struct ipvfs_map_rank *ipvfs_map_io_node(const struct ipvfs_map *map, uint32_t io_index)
{
    for (uint32_t i = 0; i < map->nranks; i++)
        if ((map->ranks[i].role & IPVFS_ROLE_IO) && map->ranks[i].io_index == io_index)
            return &map->ranks[i];
    return NULL;
}

const struct ipvfs_map_rank *ipvfs_map_metadata(const struct ipvfs_map *map)
{
    for (uint32_t i = 0; i < map->nranks; i++)
        if (map->ranks[i].role & IPVFS_ROLE_METADATA)
            return &map->ranks[i];
    return NULL;
}
