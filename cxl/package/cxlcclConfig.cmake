# find_package(cxlccl): the imported target cxlccl::cxlccl (libcxlccl and its header).
include("${CMAKE_CURRENT_LIST_DIR}/cxlcclTargets.cmake")
