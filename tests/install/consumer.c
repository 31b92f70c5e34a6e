/* A program built against an installed libcxlccl, by find_package(cxlccl) or by pkg-config:
 * prints the library's version and exits 0 when the library it runs with is the one it was
 * compiled for. */
#include <cxlccl.h>
#include <stdio.h>

int main(void) {
  int version = 0;
  if (cxlcclGetVersion(&version) != cxlcclSuccess) return 1;
  printf("libcxlccl %d (built for %d): %s\n", version, CXLCCL_VERSION_CODE, cxlcclGetErrorString(cxlcclSuccess));
  return version == CXLCCL_VERSION_CODE ? 0 : 1;
}
