# tests of the client component: unit tests of the request splitting, and
# MPI programs (test/mpi/*) that test/t_e2e_*.sh run under mpiexec with
# libipvfs-romio.so preloaded.
check_PROGRAMS += test/test_client_plan
test_test_client_plan_SOURCES = test/test_client_plan.c
test_test_client_plan_LDADD = adio/client/libipvfs-client.la $(CMOCKA_LIBS)
test_test_client_plan_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += test/test_client_colldom
test_test_client_colldom_SOURCES = test/test_client_colldom.c
test_test_client_colldom_LDADD = adio/client/libipvfs-client.la $(CMOCKA_LIBS)
test_test_client_colldom_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += test/test_adio_collchoice
test_test_adio_collchoice_SOURCES = test/test_adio_collchoice.c adio/ad_ipvfs/ad_ipvfs_choice.c
test_test_adio_collchoice_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_adio_collchoice_LDADD = $(CMOCKA_LIBS)
check_PROGRAMS += test/test_client_xfer
test_test_client_xfer_SOURCES = test/test_client_xfer.c
test_test_client_xfer_LDADD = adio/client/libipvfs-client.la $(CMOCKA_LIBS)
test_test_client_xfer_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += test/test_client_admin
test_test_client_admin_SOURCES = test/test_client_admin.c test/script_server.h
test_test_client_admin_LDADD = adio/client/libipvfs-client.la $(CMOCKA_LIBS)
test_test_client_admin_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += test/test_client_tagged
test_test_client_tagged_SOURCES = test/test_client_tagged.c test/script_server.h
test_test_client_tagged_LDADD = adio/client/libipvfs-client.la $(CMOCKA_LIBS)
test_test_client_tagged_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += test/test_client_capjoin
test_test_client_capjoin_SOURCES = test/test_client_capjoin.c test/script_server.h
test_test_client_capjoin_LDADD = adio/client/libipvfs-client.la $(CMOCKA_LIBS)
test_test_client_capjoin_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += test/test_client_reconnect
test_test_client_reconnect_SOURCES = test/test_client_reconnect.c test/script_server.h
test_test_client_reconnect_LDADD = adio/client/libipvfs-client.la $(CMOCKA_LIBS)
test_test_client_reconnect_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
check_PROGRAMS += test/test_client_retry
test_test_client_retry_SOURCES = test/test_client_retry.c
test_test_client_retry_LDADD = adio/client/libipvfs-client.la $(CMOCKA_LIBS)
test_test_client_retry_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# MPI programs: plain MPI (no ROMIO of ours linked); the scripts preload
# libipvfs-romio.so.
# MPI_CFLAGS go into CPPFLAGS: configure's MPI_CFLAGS may carry mpicc's -c,
# which must stay out of the link line.
E2E_MPI_CPPFLAGS = $(AM_CPPFLAGS) $(MPI_CFLAGS)
check_PROGRAMS += test/mpi/e2e_io test/mpi/e2e_persist test/mpi/e2e_errors test/mpi/e2e_listio
check_PROGRAMS += test/mpi/e2e_nonblock test/mpi/e2e_survive
test_mpi_e2e_survive_SOURCES = test/mpi/e2e_survive.c test/mpi/e2e_util.h
test_mpi_e2e_survive_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_survive_LDADD = $(MPI_LIBS)
check_PROGRAMS += test/mpi/e2e_small
test_mpi_e2e_small_SOURCES = test/mpi/e2e_small.c test/mpi/e2e_util.h
test_mpi_e2e_small_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_small_LDADD = $(MPI_LIBS)
check_PROGRAMS += test/mpi/e2e_collchoice test/mpi/e2e_nbcancel
test_mpi_e2e_nbcancel_SOURCES = test/mpi/e2e_nbcancel.c test/mpi/e2e_util.h
test_mpi_e2e_nbcancel_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_nbcancel_LDADD = $(MPI_LIBS)
test_mpi_e2e_collchoice_SOURCES = test/mpi/e2e_collchoice.c test/mpi/e2e_util.h
test_mpi_e2e_collchoice_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_collchoice_LDADD = $(MPI_LIBS)
check_PROGRAMS += test/mpi/mpi_fcopy
test_mpi_mpi_fcopy_SOURCES = test/mpi/mpi_fcopy.c
test_mpi_mpi_fcopy_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_mpi_fcopy_LDADD = $(MPI_LIBS)
test_mpi_e2e_nonblock_SOURCES = test/mpi/e2e_nonblock.c test/mpi/e2e_util.h
test_mpi_e2e_nonblock_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_nonblock_LDADD = $(MPI_LIBS)
test_mpi_e2e_listio_SOURCES = test/mpi/e2e_listio.c test/mpi/e2e_util.h
test_mpi_e2e_listio_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_listio_LDADD = $(MPI_LIBS)
test_mpi_e2e_io_SOURCES = test/mpi/e2e_io.c test/mpi/e2e_util.h
test_mpi_e2e_io_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_io_LDADD = $(MPI_LIBS)
test_mpi_e2e_persist_SOURCES = test/mpi/e2e_persist.c test/mpi/e2e_util.h
test_mpi_e2e_persist_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_persist_LDADD = $(MPI_LIBS)
test_mpi_e2e_errors_SOURCES = test/mpi/e2e_errors.c test/mpi/e2e_util.h
test_mpi_e2e_errors_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_errors_LDADD = $(MPI_LIBS)

# A parallel HDF5 writer for t_fuse_hdf5 (h5dump through the mount).
if HAVE_HDF5
check_PROGRAMS += test/mpi/h5_write
test_mpi_h5_write_SOURCES = test/mpi/h5_write.c
test_mpi_h5_write_CPPFLAGS = $(E2E_MPI_CPPFLAGS) $(HDF5_CFLAGS)
test_mpi_h5_write_LDADD = $(HDF5_LIBS) $(MPI_LIBS)
endif
EXTRA_DIST += test/mpi/h5_write.c test/t_fuse_hdf5.sh

# e2e_sharedfp also links the client library: a forked child holds a lock.
check_PROGRAMS += test/mpi/e2e_sharedfp
test_mpi_e2e_sharedfp_SOURCES = test/mpi/e2e_sharedfp.c test/mpi/e2e_util.h
test_mpi_e2e_sharedfp_CPPFLAGS = $(E2E_MPI_CPPFLAGS)
test_mpi_e2e_sharedfp_LDADD = adio/client/libipvfs-client.la $(MPI_LIBS)

EXTRA_DIST += test/t_e2e_sharedfp.sh test/t_cp_basic.sh test/t_cp_large.sh test/t_fuse_basic.sh test/t_fuse_posix.sh test/fuse_lib.sh test/posix-conformance/run.sh test/posix-conformance/checks.py test/posix-conformance/expected-differences
EXTRA_DIST += test/mpi/e2e_lib.sh test/t_e2e_nonblock.sh test/t_e2e_nonblock_cancel.sh test/t_e2e_readorder.sh test/t_e2e_io.sh test/t_e2e_listio.sh test/t_e2e_persist.sh test/t_e2e_errors.sh test/t_e2e_fulldisk.sh

# ipvfs-ctl's path parser (tools/ctl_files.c).
check_PROGRAMS += test/test_tools_ctlpath
test_test_tools_ctlpath_SOURCES = test/test_tools_ctlpath.c tools/ctl_files.c
test_test_tools_ctlpath_LDADD = adio/client/libipvfs-client.la $(CMOCKA_LIBS)
test_test_tools_ctlpath_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
