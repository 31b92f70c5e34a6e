/* mtm/hint.h: a program tells mtmd what it is about to do, so that predictive placement
 * (policy.predict.mode: on) moves its memory ahead of need. Header-only C (and C++); nothing to
 * link. The program must be managed by mtmd (mtmctl run, mtmctl attach, or the config's targets).
 *
 *   mtm_hint_phase(3);                  this process begins its phase 3 now: what its phase 3
 *                                       used last time moves up at once
 *   struct mtm_hint_range r[] = {{weights, weights_bytes}, {cache, cache_bytes}};
 *   mtm_hint_group(r, 2);               these ranges are used together
 *
 * Each returns 0 when mtmd took the hint, else -1 with errno set (ENOENT or ECONNREFUSED: mtmd
 * is not running; EPROTO: mtmd refused the hint) and mtm_hint_error() saying why. The control
 * socket is $MTM_SOCKET, else /run/mtm/mtmd.sock. A call costs a connection to mtmd (tens of
 * microseconds): hint at phase boundaries, not per operation. */
#ifndef MTM_HINT_H_
#define MTM_HINT_H_

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mtm_hint_range {
  const void* start;
  size_t bytes;
};

/* Why the last failed call on this thread failed ("" after a success). */
static inline char* mtm_hint_error(void) {
  static __thread char why[256];
  return why;
}

/* Sends one request line and reads mtmd's reply: "ok\n..." or "error WHY\n". */
static inline int mtm_hint_request_(const char* request) {
  const char* path = getenv("MTM_SOCKET");
  struct sockaddr_un addr;
  char reply[256];
  size_t got = 0;
  ssize_t n;
  int fd, saved;
  if (path == NULL || path[0] == '\0') path = "/run/mtm/mtmd.sock";
  mtm_hint_error()[0] = '\0';
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof addr.sun_path) {
    snprintf(mtm_hint_error(), 256, "socket path too long: %s", path);
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(addr.sun_path, path);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(mtm_hint_error(), 256, "socket: %s", strerror(errno));
    return -1;
  }
  if (connect(fd, (struct sockaddr*)&addr, sizeof addr) != 0 || write(fd, request, strlen(request)) != (ssize_t)strlen(request)) {
    saved = errno;
    snprintf(mtm_hint_error(), 256, "cannot reach mtmd at %s: %s", path, strerror(saved));
    close(fd);
    errno = saved;
    return -1;
  }
  shutdown(fd, SHUT_WR);
  while (got < sizeof reply - 1 && (n = read(fd, reply + got, sizeof reply - 1 - got)) > 0) got += (size_t)n;
  close(fd);
  reply[got] = '\0';
  if (strncmp(reply, "ok\n", 3) == 0) return 0;
  snprintf(mtm_hint_error(), 256, "%s", strncmp(reply, "error ", 6) == 0 ? reply + 6 : (got ? reply : "no reply from mtmd"));
  if (strchr(mtm_hint_error(), '\n')) *strchr(mtm_hint_error(), '\n') = '\0';
  errno = EPROTO;
  return -1;
}

static inline int mtm_hint_phase(unsigned int phase) {
  char request[64];
  snprintf(request, sizeof request, "hint-phase %ld %u\n", (long)getpid(), phase);
  return mtm_hint_request_(request);
}

/* At most 64 ranges. */
static inline int mtm_hint_group(const struct mtm_hint_range* ranges, size_t count) {
  char request[64 * 40 + 64];
  size_t at, i;
  if (count == 0 || count > 64) {
    snprintf(mtm_hint_error(), 256, "mtm_hint_group takes 1 to 64 ranges, not %zu", count);
    errno = EINVAL;
    return -1;
  }
  at = (size_t)snprintf(request, sizeof request, "hint-group %ld", (long)getpid());
  for (i = 0; i < count; ++i) {
    const uintptr_t start = (uintptr_t)ranges[i].start;
    at += (size_t)snprintf(request + at, sizeof request - at, " %lx-%lx", (unsigned long)start, (unsigned long)(start + ranges[i].bytes));
  }
  snprintf(request + at, sizeof request - at, "\n");
  return mtm_hint_request_(request);
}

#ifdef __cplusplus
}
#endif

#endif /* MTM_HINT_H_ */
