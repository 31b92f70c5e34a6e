# Every external dependency, found once. All of them are Debian 12 packages that
# tools/install-deps installs; each failure says which package brings the missing piece.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

macro(mtm_require found what package)
  if(NOT ${found})
    message(FATAL_ERROR "${what} not found: install the Debian package '${package}' "
                        "(or run tools/install-deps as root)")
  endif()
endmacro()

find_package(spdlog CONFIG QUIET)
mtm_require(spdlog_FOUND "spdlog" libspdlog-dev)
find_package(yaml-cpp CONFIG QUIET)
mtm_require(yaml-cpp_FOUND "yaml-cpp" libyaml-cpp-dev)
find_package(CLI11 CONFIG QUIET)
mtm_require(CLI11_FOUND "CLI11" libcli11-dev)
find_package(prometheus-cpp CONFIG QUIET)
mtm_require(prometheus-cpp_FOUND "prometheus-cpp" prometheus-cpp-dev)

pkg_check_modules(NUMA QUIET IMPORTED_TARGET numa)
mtm_require(NUMA_FOUND "libnuma" libnuma-dev)
pkg_check_modules(LIBBPF QUIET IMPORTED_TARGET libbpf)
mtm_require(LIBBPF_FOUND "libbpf" libbpf-dev)

# libpfm4 ships neither a CMake config nor a pkg-config file.
find_library(PFM_LIBRARY pfm)
find_path(PFM_INCLUDE_DIR perfmon/pfmlib.h)
if(PFM_LIBRARY AND PFM_INCLUDE_DIR)
  set(PFM_FOUND TRUE)
endif()
mtm_require(PFM_FOUND "libpfm4" libpfm4-dev)
add_library(mtm_pfm INTERFACE)
add_library(PFM::pfm ALIAS mtm_pfm)
target_link_libraries(mtm_pfm INTERFACE ${PFM_LIBRARY})
target_include_directories(mtm_pfm SYSTEM INTERFACE ${PFM_INCLUDE_DIR})

# BPF objects are compiled with clang and turned into skeletons with bpftool.
find_program(MTM_BPF_CLANG NAMES clang clang-14)
mtm_require(MTM_BPF_CLANG "clang (for BPF objects)" clang)
find_program(MTM_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
mtm_require(MTM_BPFTOOL "bpftool (for BPF skeletons)" bpftool)

if(MTM_BUILD_TESTS)
  find_package(Catch2 2 CONFIG QUIET)
  mtm_require(Catch2_FOUND "Catch2 v2" catch2)
endif()
