/* POSIX permission rules: see perm.h. */
#include "backend/server/perm.h"

#include <errno.h>

int perm_in_group(const struct perm_cred *c, uint32_t gid)
{
    if (c->gid == gid)
        return 1;
    for (uint32_t i = 0; i < c->ngroups && i < PERM_MAX_GROUPS; i++)
        if (c->groups[i] == gid)
            return 1;
    return 0;
}

int perm_access(const struct perm_cred *c, const struct perm_obj *o, unsigned want)
{
    unsigned bits;

    want &= PERM_R | PERM_W | PERM_X;
    if (c->uid == 0) {
        /* root searches every directory, but executes only what someone may */
        if ((want & PERM_X) && !o->is_dir && !(o->mode & 0111))
            return -EACCES;
        return 0;
    }
    if (c->uid == o->uid)
        bits = o->mode >> 6;
    else if (perm_in_group(c, o->gid))
        bits = o->mode >> 3;
    else
        bits = o->mode;
    return (bits & want) == want ? 0 : -EACCES;
}

int perm_unlink(const struct perm_cred *c, const struct perm_obj *dir, const struct perm_obj *o)
{
    int rc = perm_access(c, dir, PERM_W | PERM_X);

    if (rc < 0)
        return rc;
    if ((dir->mode & 01000) && c->uid != 0 && c->uid != o->uid && c->uid != dir->uid)
        return -EPERM;
    return 0;
}

int perm_chmod(const struct perm_cred *c, const struct perm_obj *o, uint32_t mode,
               uint32_t *out_mode)
{
    if (c->uid != 0 && c->uid != o->uid)
        return -EPERM;
    if (c->uid != 0 && !perm_in_group(c, o->gid))
        mode &= ~02000u;
    *out_mode = mode & 07777;
    return 0;
}

int perm_chown(const struct perm_cred *c, const struct perm_obj *o, int set_uid, uint32_t uid,
               int set_gid, uint32_t gid)
{
    if (c->uid == 0)
        return 0;
    if (set_uid && uid != o->uid)
        return -EPERM;
    if (set_gid && gid != o->gid && (c->uid != o->uid || !perm_in_group(c, gid)))
        return -EPERM;
    if ((set_uid || set_gid) && c->uid != o->uid)
        return -EPERM;
    return 0;
}

int perm_utimes(const struct perm_cred *c, const struct perm_obj *o, int explicit_times)
{
    if (c->uid == 0 || c->uid == o->uid)
        return 0;
    if (explicit_times)
        return -EPERM;
    return perm_access(c, o, PERM_W);
}

int perm_owner(const struct perm_cred *c, uint32_t uid, uint32_t gid)
{
    if (c->uid == 0)
        return 0;
    return uid == c->uid && perm_in_group(c, gid) ? 0 : -EPERM;
}
