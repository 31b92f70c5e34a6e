# cpack -G DEB: three packages from one install, by component --
#   mtm            mtmd, mtmctl, the systemd unit, /etc/mtm/mtm.yaml (a conffile), man pages, docs
#   libcxlccl      libcxlccl.so.0 and its tools (cxlccl-pool, cxlccl-perf, cxlccl-delta-perf)
#   libcxlccl-dev  cxlccl.h, the .so link, cxlccl.pc and the CMake package (find_package(cxlccl))
# tools/package builds them and runs lintian. Installed under /usr, so the config is /etc/mtm and
# the unit /lib/systemd/system (cmake/InstallTimeDirs.cmake).
set(CPACK_PACKAGE_NAME mtm)
set(CPACK_PACKAGE_VENDOR "the mtm developers")
# Whoever publishes the packages sets their own address (-DMTM_PACKAGE_MAINTAINER=...).
set(MTM_PACKAGE_MAINTAINER "mtm developers <mtm@example.org>" CACHE STRING "Maintainer field of the .deb packages")
set(CPACK_PACKAGE_CONTACT "${MTM_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Each package's description below starts with its own summary line; CPack would put the
# project's summary above it unless the summary is CPack's default (CPackDeb.cmake).
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL mtm libcxlccl libcxlccl-dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(CPACK_DEBIAN_MTM_PACKAGE_NAME mtm)
set(CPACK_DEBIAN_MTM_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_MTM_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb/conffiles)
set(CPACK_DEBIAN_MTM_DESCRIPTION "tiered-memory manager: puts each page in the memory tier that earns it
mtmd profiles the page accesses of the processes it manages within a CPU
budget (accessed bits by eBPF, hardware or software samples), ranks their
memory across all tiers (DRAM, CXL, PMem as NUMA nodes) and moves pages
with move_pages(2). mtmctl runs workloads under it, shows tiers, placement
and status, and steers it.")

set(CPACK_DEBIAN_LIBCXLCCL_PACKAGE_NAME libcxlccl)
set(CPACK_DEBIAN_LIBCXLCCL_PACKAGE_SECTION libs)
# ldconfig by trigger, and a shlibs file for packages built against libcxlccl.
configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/shlibs.in ${CMAKE_BINARY_DIR}/deb/shlibs @ONLY)
set(CPACK_DEBIAN_LIBCXLCCL_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb/triggers ${CMAKE_BINARY_DIR}/deb/shlibs)
set(CPACK_DEBIAN_LIBCXLCCL_DESCRIPTION "collectives across hosts that share a CXL memory pool
libcxlccl runs AllGather, Broadcast, Gather, Scatter, Reduce, AllReduce,
ReduceScatter, AllToAll and Send/Recv through a shared CXL memory pool, on CPU
or GPU buffers, with an NCCL-shaped C API. With cxlccl-pool (format, inspect
and clean a pool) and the benchmarks cxlccl-perf and cxlccl-delta-perf.")

set(CPACK_DEBIAN_LIBCXLCCL-DEV_PACKAGE_NAME libcxlccl-dev)
set(CPACK_DEBIAN_LIBCXLCCL-DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_LIBCXLCCL-DEV_PACKAGE_DEPENDS "libcxlccl (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_LIBCXLCCL-DEV_DESCRIPTION "collectives across hosts that share a CXL memory pool (development files)
The header cxlccl.h, the link libcxlccl.so, the pkg-config file cxlccl.pc and
the CMake package (find_package(cxlccl), target cxlccl::cxlccl).")

# Each package's /usr/share/doc/PACKAGE: copyright and changelog.gz, as Debian policy asks.
configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/changelog.in ${CMAKE_BINARY_DIR}/deb/changelog @ONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/deb/changelog.gz
  COMMAND gzip -9nc ${CMAKE_BINARY_DIR}/deb/changelog > ${CMAKE_BINARY_DIR}/deb/changelog.gz
  DEPENDS ${CMAKE_BINARY_DIR}/deb/changelog)
add_custom_target(deb-changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/deb/changelog.gz)
foreach(package mtm libcxlccl libcxlccl-dev)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/deb/copyright ${CMAKE_BINARY_DIR}/deb/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${package})
endforeach()

include(CPack)
