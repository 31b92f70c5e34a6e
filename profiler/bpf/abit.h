/* Types shared by abit.bpf.c and its C++ owner (AbitScanner). Fixed-width only. */
#ifndef MTM_ABIT_H
#define MTM_ABIT_H

/* Addresses per iterator run: a larger sample takes several runs (each costs a few µs against
 * the walk's 0.1-0.5 µs an address). All targets share the arrays (17 bytes an address, resident
 * in mtmd's RSS: 272 KiB). */
#define ABIT_MAX_ADDRS 16384

/* Processes one program can watch. */
#define ABIT_MAX_TARGETS 16384

/* A watched process, in the `targets` map. */
struct abit_target {
  __u64 layout_gen; /* bumped on every write release of its mmap_lock */
  __u32 exited;     /* set when it exits */
  __u32 pad;
};

/* What the program is asked to do on its next run. */
#define ABIT_CMD_WALK 0   /* report flags for addrs[0..n) */
#define ABIT_CMD_DERIVE 1 /* find page_offset_base and the paging depth */

/* Per-address result bits. */
#define ABIT_PRESENT 0x1  /* a present PTE, or a present PMD/PUD leaf */
#define ABIT_ACCESSED 0x2 /* the accessed bit of that entry */
#define ABIT_DIRTY 0x4
#define ABIT_HUGE 0x8   /* the leaf is a PMD (THP) or PUD */
#define ABIT_FAULT 0x80 /* a page-table read faulted (a racing change): no answer */

#endif
