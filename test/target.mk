# tests of the target component
check_PROGRAMS += test/test_target_io
test_test_target_io_SOURCES = test/test_target_io.c test/test_target_helpers.h
test_test_target_io_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_target_io_LDADD = backend/iscsi/libipvfs-target.la common/libipvfs-common.la \
	$(ISCSI_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += test/test_target_writebehind
test_test_target_writebehind_SOURCES = test/test_target_writebehind.c test/test_target_helpers.h
test_test_target_writebehind_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_target_writebehind_LDADD = backend/iscsi/libipvfs-target.la common/libipvfs-common.la \
	$(ISCSI_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += test/test_target_badinput
test_test_target_badinput_SOURCES = test/test_target_badinput.c test/test_target_helpers.h
test_test_target_badinput_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_target_badinput_LDADD = backend/iscsi/libipvfs-target.la common/libipvfs-common.la \
	$(ISCSI_LIBS) $(CMOCKA_LIBS) $(ISAL_LIBS)

check_PROGRAMS += test/test_target_cmds
test_test_target_cmds_SOURCES = test/test_target_cmds.c test/test_target_helpers.h
test_test_target_cmds_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_target_cmds_LDADD = backend/iscsi/libipvfs-target.la common/libipvfs-common.la \
	$(ISCSI_LIBS) $(CMOCKA_LIBS)

# byte-exact block I/O through an initiator, for t_target_blockdev.sh
check_PROGRAMS += test/iscsi_blockio
test_iscsi_blockio_SOURCES = test/iscsi_blockio.c
test_iscsi_blockio_CFLAGS = $(AM_CFLAGS) $(ISCSI_CFLAGS)
test_iscsi_blockio_LDADD = $(ISCSI_LIBS)

# MD5 and CHAP vectors, and CHAP through the login code
check_PROGRAMS += test/test_target_chap
test_test_target_chap_SOURCES = test/test_target_chap.c test/test_target_helpers.h
test_test_target_chap_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_target_chap_LDADD = backend/iscsi/libipvfs-target.la common/libipvfs-common.la \
	$(ISCSI_LIBS) $(CMOCKA_LIBS)
dist_noinst_SCRIPTS += test/t_target_model_disk.sh
