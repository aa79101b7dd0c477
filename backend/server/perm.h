/* POSIX permission rules, as the metadata rank applies them to a proven
 * user (backend/server/access.h says who is proven how).  Pure functions
 * over a credential and the mode and owner of a name: no I/O, no state;
 * unit-tested in test/test_server_perm.c.
 *
 * The rules are those of POSIX and Linux for a process with that uid, gid
 * and supplementary groups:
 * - access: the owner's bits for the owner, else the group's bits for a
 *   member of the group, else the others' bits; root may do anything but
 *   execute (search) what has no x bit at all, and search any directory;
 * - removing or renaming a name needs write and search on its directory,
 *   and in a sticky directory (S_ISVTX) ownership of the name or of the
 *   directory (or root);
 * - chmod: the owner or root; a non-member's chmod drops S_ISGID;
 * - chown: only root gives a name away; the owner may change its group to
 *   one of its own groups;
 * - setting times to given values: the owner or root; to now: also a
 *   writer;
 * - what a user creates is owned by the user and one of its groups.
 * Calls return 0 when allowed, else -EACCES (a permission bit is missing)
 * or -EPERM (only the owner or root may). */
#ifndef IPVFS_SERVER_PERM_H
#define IPVFS_SERVER_PERM_H

#include <stdint.h>

#define PERM_MAX_GROUPS 64u

struct perm_cred {
    uint32_t uid;
    uint32_t gid;
    uint32_t ngroups;                    /* supplementary groups */
    uint32_t groups[PERM_MAX_GROUPS];
};

/* What a name is, for the rules. */
struct perm_obj {
    uint32_t mode;                       /* permission bits (07777) */
    uint32_t uid;
    uint32_t gid;
    int is_dir;
};

#define PERM_R 4u
#define PERM_W 2u
#define PERM_X 1u

int perm_in_group(const struct perm_cred *c, uint32_t gid);
/* want: PERM_* bits. */
int perm_access(const struct perm_cred *c, const struct perm_obj *o, unsigned want);
/* Removing (or renaming away, or replacing) name o from directory dir. */
int perm_unlink(const struct perm_cred *c, const struct perm_obj *dir, const struct perm_obj *o);
/* chmod of o to mode: *out_mode is what to store. */
int perm_chmod(const struct perm_cred *c, const struct perm_obj *o, uint32_t mode,
               uint32_t *out_mode);
/* chown of o; set_uid/set_gid say which of uid and gid change. */
int perm_chown(const struct perm_cred *c, const struct perm_obj *o, int set_uid, uint32_t uid,
               int set_gid, uint32_t gid);
/* Times of o: to given values (explicit 1) or to now (0). */
int perm_utimes(const struct perm_cred *c, const struct perm_obj *o, int explicit_times);
/* The owner a user names for what it creates. */
int perm_owner(const struct perm_cred *c, uint32_t uid, uint32_t gid);

#endif
