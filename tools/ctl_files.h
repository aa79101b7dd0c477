/* ipvfs-ctl's file commands: stat, mv, chmod, chown and df (ctl_files.c),
 * cp (ctl_cp.c).
 * Each takes the command's words (argv[0] is the command name) and
 * returns ipvfs-ctl's exit status: 0, 1 on failure (message on stderr) or
 * 2 on a usage error.  Paths on the iPVFS side are written ipvfs:/PATH or,
 * where only iPVFS paths make sense (stat, mv), plain /PATH. */
#ifndef IPVFS_TOOLS_CTL_FILES_H
#define IPVFS_TOOLS_CTL_FILES_H

#include <stddef.h>

#include "adio/client/ipvfs_client.h"

int ctl_stat(struct ipvfs_client *client, int argc, char **argv);
int ctl_mv(struct ipvfs_client *client, int argc, char **argv);
int ctl_cp(struct ipvfs_client *client, int argc, char **argv);
/* chmod MODE PATH... and chown UID[:GID] PATH... (numeric, as the servers
 * keep them); each path refused by the permission rules is reported. */
int ctl_chmod(struct ipvfs_client *client, int argc, char **argv);
int ctl_chown(struct ipvfs_client *client, int argc, char **argv);
/* Size, used and free bytes of each I/O node's datafile store, and total. */
int ctl_df(struct ipvfs_client *client, int argc, char **argv);

/* qos set CLASS --rate MBPS --latency MS, qos status [--json]
 * (ctl_qos.c). */
int ctl_qos(struct ipvfs_client *client, int argc, char **argv);

/* Writes the iPVFS path of text (ipvfs:/a//b/, or /a/b where plain is
 * allowed) into out as "/a/b": the prefix dropped, repeated and trailing
 * slashes removed.  Returns 1 for an iPVFS path, 0 when text is not one
 * (a local path), -1 when it does not fit out. */
int ctl_ipvfs_path(const char *text, int plain_ok, char *out, size_t out_len);

#endif
