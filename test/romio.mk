# tests of the romio component (libipvfs-romio.so): integration scripts run
# by test/run-suite.sh
EXTRA_DIST += test/t_romio_preload.sh test/t_romio_conformance.sh \
	test/t_romio_conformance_ipvfs.sh
