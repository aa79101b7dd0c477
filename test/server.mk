# tests of the server component: unit tests of the namespace store and the
# option parser; integration scripts test/t_server_*.sh (run by
# test/run-suite.sh) start real clusters through test/lib.sh.
check_PROGRAMS += test/test_server_metadb test/test_server_options test/test_server_tagged \
	test/test_small_readq test/test_server_listen \
	test/test_security_perm test/test_qos test/test_qos_depth
test_test_server_metadb_SOURCES = test/test_server_metadb.c
test_test_server_metadb_LDADD = backend/server/libserver-core.la $(CMOCKA_LIBS)
test_test_server_metadb_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_server_options_SOURCES = test/test_server_options.c
test_test_server_options_LDADD = backend/server/libserver-core.la $(CMOCKA_LIBS)
test_test_server_options_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_server_listen_SOURCES = test/test_server_listen.c
test_test_server_listen_LDADD = backend/server/libserver-core.la $(CMOCKA_LIBS)
test_test_server_listen_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_server_tagged_SOURCES = test/test_server_tagged.c
test_test_server_tagged_LDADD = backend/server/libserver-core.la $(CMOCKA_LIBS)
test_test_server_tagged_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_small_readq_SOURCES = test/test_small_readq.c
test_test_small_readq_LDADD = backend/server/libserver-core.la $(CMOCKA_LIBS)
test_test_small_readq_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

dist_noinst_SCRIPTS += test/t_server_basic.sh test/t_server_badinput.sh test/t_server_asan.sh \
	test/t_server_durability.sh test/t_server_crashloop.sh test/t_server_backoff_stop.sh \
	test/t_server_logs.sh test/t_qos_basic.sh test/t_server_slowmember.sh
dist_noinst_SCRIPTS += test/t_server_l1cache.sh test/t_server_l1admit.sh test/t_server_readahead.sh test/t_transport_tagged.sh \
	test/t_transport_killread.sh

test_test_security_perm_SOURCES = test/test_security_perm.c
test_test_security_perm_LDADD = backend/server/libserver-core.la $(CMOCKA_LIBS)
test_test_security_perm_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_qos_SOURCES = test/test_qos.c test/qos_test.h
test_test_qos_LDADD = backend/server/libserver-core.la $(CMOCKA_LIBS)
test_test_qos_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
test_test_qos_depth_SOURCES = test/test_qos_depth.c test/qos_test.h
test_test_qos_depth_LDADD = backend/server/libserver-core.la $(CMOCKA_LIBS)
test_test_qos_depth_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
