// SPDX-License-Identifier: GPL-2.0
/* Accessed-bit reader: walks a task's page tables for a list of addresses and reports each leaf
 * entry's present, accessed and dirty bits (PTE, or PMD for a THP). It runs as an iter/task
 * program with one link per watched task (bpf_iter_link_info.task.tid), triggered by reading
 * that link's iterator; the links share the inputs and outputs below, so their owner runs one at
 * a time. Reads go through bpf_probe_read_kernel, so a table freed under a concurrent munmap,
 * split or migration yields a stale bit or ABIT_FAULT, never a crash.
 *
 * Two more programs follow the watched processes' address spaces, one copy for all of them: a
 * write release of a watched process's mmap_lock (mmap, munmap, mprotect, brk ...) bumps its
 * `layout_gen` in `targets`; its exit sets `exited`. Each costs one hash lookup per event,
 * however many processes are watched. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "abit.h"

char LICENSE[] SEC("license") = "GPL";

/* The watched processes, by tgid: the owner adds and removes them. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __uint(max_entries, ABIT_MAX_TARGETS);
  __type(key, __u32);
  __type(value, struct abit_target);
} targets SEC(".maps");

/* Inputs and outputs, in the skeleton's mmapped .bss. */
__u32 cmd = ABIT_CMD_WALK;
__u32 n = 0;
__u64 addrs[ABIT_MAX_ADDRS];
__u8 flags[ABIT_MAX_ADDRS];
__u64 pfns[ABIT_MAX_ADDRS]; /* the leaf's page frame (for a huge leaf: of the address within it) */
__u64 page_offset_base = 0; /* derived by ABIT_CMD_DERIVE, then used by walks */
__u32 levels = 0;           /* 4 or 5 */
__u64 runs = 0;             /* times an iterator visited its task */

#define PTE_PRESENT 0x1ULL
#define PTE_PSE 0x80ULL
#define PTE_ACCESSED 0x20ULL
#define PTE_DIRTY 0x40ULL
#define PTE_ADDR_MASK 0x000ffffffffff000ULL
#define GiB (1ULL << 30)
#define DERIVE_CANDIDATES 4096 /* physical memory up to 4 TiB */

struct walk_ctx {
  __u64 pgd;
};

static __always_inline int read_entry(__u64 table, __u64 index, __u64* entry) {
  return bpf_probe_read_kernel(entry, sizeof(*entry), (void*)(table + index * 8));
}

/* Leaf flags for `addr` under `pgd`, with a given depth and direct-map base. */
static __always_inline __u8 walk(__u64 pgd, __u64 addr, __u32 depth, __u64 base, __u64* phys) {
  __u64 table = pgd, entry = 0;
  int shift = depth == 5 ? 48 : 39;
  for (int level = 0; level < 5; level++) {
    if (read_entry(table, (addr >> shift) & 511, &entry)) return ABIT_FAULT;
    if (!(entry & PTE_PRESENT)) return 0;
    /* A PSE bit at PUD (shift 30) or PMD (shift 21) ends the walk: a huge leaf. */
    if (shift == 12 || ((shift == 30 || shift == 21) && (entry & PTE_PSE))) {
      __u8 f = ABIT_PRESENT;
      if (entry & PTE_ACCESSED) f |= ABIT_ACCESSED;
      if (entry & PTE_DIRTY) f |= ABIT_DIRTY;
      if (shift != 12) f |= ABIT_HUGE;
      if (phys) {
        __u64 mask = (1ULL << shift) - 1;
        *phys = (entry & PTE_ADDR_MASK & ~mask) | (addr & mask);
      }
      return f;
    }
    table = (entry & PTE_ADDR_MASK) + base;
    shift -= 9;
  }
  return ABIT_FAULT;
}

static long walk_one(__u32 i, struct walk_ctx* ctx) {
  if (i >= n) return 1;
  __u32 k = i & (ABIT_MAX_ADDRS - 1); /* a bound the verifier can see (ABIT_MAX_ADDRS is 2^16) */
  __u64 phys = 0;
  flags[k] = walk(ctx->pgd, addrs[k], levels, page_offset_base, &phys);
  pfns[k] = phys >> 12;
  return 0;
}

/* The direct map places physical address P at P + page_offset_base, which KASLR aligns to
 * 1 GiB. The pgd, the mm_struct and the group leader's task_struct all live in the direct map
 * (slab): under the right depth and base, walking each one's own address leads to a physical
 * address that maps back to it. One address is not enough: a wrong base walks tables read from
 * the wrong physical memory, and that memory can map one address back to itself (seen on the 6.18
 * development host, for some of mtmd's pgd placements: a base 4 GiB too high, after which every
 * walk read "not present"). Three objects in different pages must all agree. */
struct derive_ctx {
  __u64 pgd;
  __u64 objects[3];
  __u32 depth;
};

static __always_inline int maps_back(__u64 pgd, __u64 va, __u32 depth, __u64 base) {
  __u64 phys = 0;
  __u8 f = walk(pgd, va, depth, base, &phys);
  return (f & ABIT_PRESENT) && !(f & ABIT_FAULT) && phys + base == va;
}

static long try_base(__u32 k, struct derive_ctx* ctx) {
  __u64 base = (ctx->pgd & ~(GiB - 1)) - (__u64)k * GiB;
  for (int i = 0; i < 3; i++)
    if (!maps_back(ctx->pgd, ctx->objects[i], ctx->depth, base)) return 0;
  page_offset_base = base;
  levels = ctx->depth;
  return 1;
}

SEC("iter/task")
int abit_walk(struct bpf_iter__task* it) {
  struct task_struct* task = it->task;
  if (!task) return 0;
  struct mm_struct* mm = BPF_CORE_READ(task, mm);
  if (!mm) return 0;
  __u64 pgd = (__u64)BPF_CORE_READ(mm, pgd);
  runs++;
  if (cmd == ABIT_CMD_DERIVE) {
    page_offset_base = 0;
    levels = 0;
    /* group_leader read as a number: the verifier keeps a trusted task pointer out of arithmetic. */
    __u64 leader = (__u64)BPF_CORE_READ(task, group_leader);
    struct derive_ctx d = {.pgd = pgd, .objects = {pgd, (__u64)mm, leader}, .depth = 5};
    bpf_loop(DERIVE_CANDIDATES, try_base, &d, 0);
    if (!levels) {
      d.depth = 4;
      bpf_loop(DERIVE_CANDIDATES, try_base, &d, 0);
    }
    return 0;
  }
  if (!levels) return 0;
  struct walk_ctx w = {.pgd = pgd};
  bpf_loop(n < ABIT_MAX_ADDRS ? n : ABIT_MAX_ADDRS, walk_one, &w, 0);
  return 0;
}

/* A write release of a watched process's mmap_lock: its address space changed. */
static __always_inline int layout_changed(struct mm_struct* mm, __u64 write) {
  if (!(write & 0xff)) return 0;
  struct task_struct* task = bpf_get_current_task_btf();
  if (task->mm != mm) return 0;
  __u32 tgid = task->tgid;
  struct abit_target* t = bpf_map_lookup_elem(&targets, &tgid);
  if (t) __sync_fetch_and_add(&t->layout_gen, 1);
  return 0;
}

/* mmap_lock_released's arguments differ between kernels: (mm, memcg_path, write) before Linux
 * 6.11, (mm, write) after. The owner reads which from BTF and loads the matching variant. */
SEC("tp_btf/mmap_lock_released")
int BPF_PROG(abit_layout_v1, struct mm_struct* mm, const char* memcg_path, bool write) { return layout_changed(mm, write); }

SEC("tp_btf/mmap_lock_released")
int BPF_PROG(abit_layout_v2, struct mm_struct* mm, bool write) { return layout_changed(mm, write); }

SEC("tp_btf/sched_process_exit")
int BPF_PROG(abit_exit, struct task_struct* task) {
  if (task->pid != task->tgid) /* a thread, not the process */
    return 0;
  __u32 tgid = task->tgid;
  struct abit_target* t = bpf_map_lookup_elem(&targets, &tgid);
  if (t) t->exited = 1;
  return 0;
}
