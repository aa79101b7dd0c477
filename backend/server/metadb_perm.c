/* The namespace's permission checks (perm.h's rules on its records),
 * worded for the user: called by metadb.c and metadb_attr.c along every
 * path they walk; calls nothing of theirs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "backend/server/metadb_internal.h"

void md_root_rec(struct md_rec *out)
{
    memset(out, 0, sizeof(*out));
    out->type = IPVFS_TYPE_DIR;
    out->mode = METADB_ROOT_MODE;
}

void md_obj(const struct md_rec *rec, struct perm_obj *out)
{
    *out = (struct perm_obj){ .mode = rec->mode, .uid = rec->uid, .gid = rec->gid,
                              .is_dir = rec->type == IPVFS_TYPE_DIR };
}

int md_deny(int rc, const struct perm_cred *cred, const char *verb, const char *path, size_t len,
            char *msg, size_t msglen)
{
    snprintf(msg, msglen, "%s: uid %u may not %s %.*s",
             rc == -EPERM ? "not the owner" : "permission denied", cred->uid, verb, (int)len,
             path);
    return rc;
}

int md_allow(const struct perm_cred *cred, const struct md_rec *rec, unsigned want,
             const char *verb, const char *path, size_t len, char *msg, size_t msglen)
{
    struct perm_obj o;
    int rc;

    if (!cred)
        return 0;
    md_obj(rec, &o);
    rc = perm_access(cred, &o, want);
    return rc < 0 ? md_deny(rc, cred, verb, path, len, msg, msglen) : 0;
}

int md_may_unlink(const struct perm_cred *cred, const struct md_rec *dir,
                  const struct md_rec *rec, const char *path, size_t len, char *msg,
                  size_t msglen)
{
    struct perm_obj d, o;
    int rc;

    if (!cred)
        return 0;
    md_obj(dir, &d);
    md_obj(rec, &o);
    rc = perm_unlink(cred, &d, &o);
    return rc < 0 ? md_deny(rc, cred, "remove", path, len, msg, msglen) : 0;
}
