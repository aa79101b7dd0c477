# tests of the storage component (iraid/ and the datafile store)
check_PROGRAMS += test/test_iraid_layout
test_test_iraid_layout_SOURCES = test/test_iraid_layout.c iraid/layout.c iraid/layout.h
test_test_iraid_layout_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_iraid_layout_LDADD = $(CMOCKA_LIBS)

check_PROGRAMS += test/test_iraid_room
test_test_iraid_room_SOURCES = test/test_iraid_room.c
test_test_iraid_room_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_iraid_room_LDADD = iraid/libiraid.la $(CMOCKA_LIBS)

check_PROGRAMS += test/test_dfstore_unmap
test_test_dfstore_unmap_SOURCES = test/test_dfstore_unmap.c
test_test_dfstore_unmap_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_dfstore_unmap_LDADD = backend/dfstore/libdfstore.la $(CMOCKA_LIBS)

check_PROGRAMS += test/test_dfstore_readahead
test_test_dfstore_readahead_SOURCES = test/test_dfstore_readahead.c
test_test_dfstore_readahead_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_dfstore_readahead_LDADD = backend/dfstore/libdfstore.la $(CMOCKA_LIBS)

# Tools the integration scripts drive (test/t_storage_*.sh).
# Named without the test_ prefix: run-suite.sh runs every test/test_*
# binary without arguments, and these need targets set up by the scripts.
check_PROGRAMS += test/storage-volume-tool
test_storage_volume_tool_SOURCES = test/test_storage_volume.c
test_storage_volume_tool_LDADD = iraid/libiraid.la

check_PROGRAMS += test/storage-dfstore-tool
test_storage_dfstore_tool_SOURCES = test/test_storage_dfstore.c
test_storage_dfstore_tool_LDADD = backend/dfstore/libdfstore.la

dist_noinst_SCRIPTS += test/t_storage_volume.sh test/t_storage_dfstore.sh

# RAID-1/5 against a brute-force model, degraded/rebuild and write-hole runs
# (test/t_iraid_*.sh drive it; not test_ prefixed for the same reason).
check_PROGRAMS += test/iraid-model-tool
test_iraid_model_tool_SOURCES = test/test_iraid_model.c test/iraid_pattern.h
test_iraid_model_tool_LDADD = iraid/libiraid.la

dist_noinst_SCRIPTS += test/t_iraid_raid5.sh test/t_iraid_writehole.sh test/t_iraid_twofail.sh \
	test/t_iraid_flushlose.sh

# The block-level crash-state checker: record a volume's member writes,
# replay prefixes (test/t_iraid_crash_replay.sh drives it).
check_PROGRAMS += test/iraid-crashlog-tool
test_iraid_crashlog_tool_SOURCES = test/test_iraid_crashlog.c test/iraid_pattern.h
test_iraid_crashlog_tool_LDADD = iraid/libiraid.la

dist_noinst_SCRIPTS += test/t_iraid_crash_replay.sh
EXTRA_DIST += test/iraid_lib.sh

# iRAID throughput benchmark (benchmarks/iraid-bench.sh runs it).
noinst_PROGRAMS += benchmarks/iraid-bench
benchmarks_iraid_bench_SOURCES = benchmarks/iraid-bench.c
benchmarks_iraid_bench_LDADD = iraid/libiraid.la
dist_noinst_SCRIPTS += benchmarks/iraid-bench.sh

# faultfs: one file through FUSE with sectors that fail reads until they are
# written (test/t_raid_tgtd.sh serves a tgtd LUN through it).
noinst_PROGRAMS += test/faultfs
test_faultfs_SOURCES = test/faultfs.c
test_faultfs_CFLAGS = $(AM_CFLAGS) $(FUSE3_CFLAGS)
test_faultfs_LDADD = $(FUSE3_LIBS)

check_PROGRAMS += test/test_small_l1sect
test_test_small_l1sect_SOURCES = test/test_small_l1sect.c
test_test_small_l1sect_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_small_l1sect_LDADD = cache/libipvfs-cache.la $(CMOCKA_LIBS)

check_PROGRAMS += test/test_small_place
test_test_small_place_SOURCES = test/test_small_place.c
test_test_small_place_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_small_place_LDADD = backend/dfstore/libdfstore.la $(CMOCKA_LIBS)

check_PROGRAMS += test/test_small_stride
test_test_small_stride_SOURCES = test/test_small_stride.c
test_test_small_stride_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_small_stride_LDADD = backend/dfstore/libdfstore.la $(CMOCKA_LIBS)

check_PROGRAMS += test/test_small_commit
test_test_small_commit_SOURCES = test/test_small_commit.c
test_test_small_commit_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(ISCSI_CFLAGS)
test_test_small_commit_LDADD = backend/dfstore/libdfstore.la $(CMOCKA_LIBS)

check_PROGRAMS += test/storage-small-tool
test_storage_small_tool_SOURCES = test/test_small_dfstore.c
test_storage_small_tool_LDADD = backend/dfstore/libdfstore.la
dist_noinst_SCRIPTS += test/t_small_partial.sh
