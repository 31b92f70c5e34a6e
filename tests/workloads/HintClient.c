/* mtm-test-hint SOCKET: a program that hints through mtm/hint.h, as a framework would. It maps
 * 64 MiB, waits (up to 30 s) until mtmd manages it and takes "phase 1 begins", then says the
 * mapping is used together, and checks that an empty group is refused without asking mtmd.
 * Prints "phase ok", "group ok" and "empty refused", or what failed; exits 0 when all held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "mtm/hint.h"

int main(int argc, char** argv) {
  const size_t bytes = 64u << 20;
  struct mtm_hint_range range;
  struct timespec tick = {0, 100 * 1000 * 1000};
  int tries;
  char* buffer;
  if (argc != 2) {
    fprintf(stderr, "usage: mtm-test-hint SOCKET\n");
    return 2;
  }
  setenv("MTM_SOCKET", argv[1], 1);
  buffer = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buffer == MAP_FAILED) return 1;
  memset(buffer, 1, bytes);
  printf("ready\n");
  fflush(stdout);
  for (tries = 0; mtm_hint_phase(1) != 0; ++tries) {
    if (tries == 300) {
      printf("phase failed: %s\n", mtm_hint_error());
      return 1;
    }
    nanosleep(&tick, NULL);
  }
  printf("phase ok\n");
  range.start = buffer;
  range.bytes = bytes;
  if (mtm_hint_group(&range, 1) != 0) {
    printf("group failed: %s\n", mtm_hint_error());
    return 1;
  }
  printf("group ok\n");
  if (mtm_hint_group(&range, 0) == 0 || errno != EINVAL) {
    printf("empty group not refused\n");
    return 1;
  }
  printf("empty refused: %s\n", mtm_hint_error());
  fflush(stdout);
  nanosleep(&tick, NULL);
  return 0;
}
