# tests of the romio component (libipvfs-romio.so): integration scripts run
# by test/run-suite.sh, and the conformance harness they share
EXTRA_DIST += test/t_romio_preload.sh test/t_romio_conformance.sh \
	test/t_romio_conformance_ipvfs.sh \
	test/romio-conformance/run.sh test/romio-conformance/tests.txt \
	test/romio-conformance/adapt.txt test/romio-conformance/rt_helpers.h \
	test/romio-conformance/rt_util.c test/t_romio_errclass.sh
