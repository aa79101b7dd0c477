## iPVFS's replacement sources for the standalone ROMIO.  scripts/build-romio.sh
## copies adio/romio-fixes/*.[ch] and this file into ROMIO's ipvfs-fixes/ and
## generates errmsg_table.c there; 04-ipvfs-fixes.patch includes this file
## from ROMIO's Makefile.am.

AM_CPPFLAGS += -I$(top_srcdir)/ipvfs-fixes

noinst_HEADERS += ipvfs-fixes/ipvfs_fixes.h

romio_other_sources +=              \
    ipvfs-fixes/mpir_compat.c       \
    ipvfs-fixes/mpio_err.c          \
    ipvfs-fixes/file_errhandler.c   \
    ipvfs-fixes/errmsg_table.c
