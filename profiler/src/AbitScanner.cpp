#include "mtm/profiler/AbitScanner.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "abit.h"
#include "abit.skel.h"
#include "mtm/Log.h"

namespace mtm::profiler {
namespace {

// mmap_lock_released's `write` argument: index 2 of (mm, memcg_path, write) before Linux 6.11,
// index 1 of (mm, write) after; 0 when the tracepoint is absent.
unsigned lockWriteArgument() {
  struct btf* vmlinux = btf__load_vmlinux_btf();
  if (libbpf_get_error(vmlinux)) return 0;
  unsigned index = 0;
  int id = btf__find_by_name_kind(vmlinux, "btf_trace_mmap_lock_released", BTF_KIND_TYPEDEF);
  if (id > 0) {
    const struct btf_type* t = btf__type_by_id(vmlinux, id);
    t = btf__type_by_id(vmlinux, t->type);                       // pointer
    if (t && btf_is_ptr(t)) t = btf__type_by_id(vmlinux, t->type);  // function prototype
    if (t && btf_is_func_proto(t)) index = btf_vlen(t) - 2;       // less the leading void *
  }
  btf__free(vmlinux);
  return index == 1 || index == 2 ? index : 0;
}

Error bpfError(const std::string& what, int err) {
  std::string hint;
  if (err == EPERM) hint = ": needs root (CAP_BPF and CAP_PERFMON)";
  else if (err == EINVAL || err == EOPNOTSUPP) hint = ": the kernel lacks it (task iterators with a tid filter need Linux 6.1+)";
  else if (err == ENOENT || err == ESRCH) hint = ": no such process";
  return Error::fromErrno(what, err).context(hint.empty() ? "loading the accessed-bit BPF program" : hint.substr(2));
}

}  // namespace

Result<std::unique_ptr<AbitScanner>> AbitScanner::open(int pid) {
  if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    return Error("no kernel BTF (/sys/kernel/btf/vmlinux): the accessed-bit BPF program needs CONFIG_DEBUG_INFO_BTF");
  std::unique_ptr<AbitScanner> s(new AbitScanner());
  s->pid_ = pid;
  s->skel_ = abit__open();
  if (!s->skel_) return bpfError("open BPF skeleton", errno);
  s->skel_->rodata->target_tgid = static_cast<__u32>(pid);
  // Probe the tracepoint's arguments and load the one matching variant (or none).
  const unsigned writeArg = lockWriteArgument();
  bpf_program__set_autoload(s->skel_->progs.abit_layout_v1, writeArg == 2);
  bpf_program__set_autoload(s->skel_->progs.abit_layout_v2, writeArg == 1);
  if (int err = abit__load(s->skel_); err != 0) return bpfError("load BPF program", -err);

  union bpf_iter_link_info info {};
  info.task.tid = static_cast<__u32>(pid);
  DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof info);
  s->iterLink_ = bpf_program__attach_iter(s->skel_->progs.abit_walk, &opts);
  if (!s->iterLink_) return bpfError("attach task iterator to pid " + std::to_string(pid), errno);

  if (writeArg) {
    s->layoutLink_ = bpf_program__attach(writeArg == 2 ? s->skel_->progs.abit_layout_v1 : s->skel_->progs.abit_layout_v2);
    if (!s->layoutLink_) MTM_INFO("abit pid={} layout_tracking=off reason=\"attach mmap_lock_released: {}\"", pid, std::strerror(errno));
  } else {
    MTM_INFO("abit pid={} layout_tracking=off reason=\"no mmap_lock_released tracepoint\"", pid);
  }
  s->exitLink_ = bpf_program__attach(s->skel_->progs.abit_exit);

  s->skel_->bss->cmd = ABIT_CMD_DERIVE;
  if (auto st = s->run(); !st.ok()) return std::move(st).takeError();
  s->skel_->bss->cmd = ABIT_CMD_WALK;
  if (s->skel_->bss->levels == 0)
    return Error("pid " + std::to_string(pid) + ": could not derive the kernel's direct-map base from the page tables");
  MTM_DEBUG("abit pid={} page_offset_base={:#x} levels={}", pid, s->pageOffsetBase(), s->levels());
  return s;
}

AbitScanner::~AbitScanner() {
  for (auto* link : {iterLink_, layoutLink_, exitLink_})
    if (link) bpf_link__destroy(link);
  if (skel_) abit__destroy(skel_);
}

Status AbitScanner::run() {
  const uint64_t before = skel_->bss->runs;
  int fd = bpf_iter_create(bpf_link__fd(iterLink_));
  if (fd < 0) return Error::fromErrno("bpf_iter_create", errno);
  char buf[64];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) {
  }
  const int err = n < 0 ? errno : 0;
  ::close(fd);
  if (err) return Error::fromErrno("read task iterator", err);
  if (skel_->bss->runs == before) return Error("pid " + std::to_string(pid_) + ": no such process (exited)", ESRCH);
  return {};
}

Status AbitScanner::read(const std::vector<uint64_t>& addrs, std::vector<uint8_t>& flags, std::vector<uint64_t>* pfns) {
  flags.resize(addrs.size());
  if (pfns) pfns->resize(addrs.size());
  for (size_t first = 0; first < addrs.size(); first += ABIT_MAX_ADDRS) {
    const size_t count = std::min<size_t>(ABIT_MAX_ADDRS, addrs.size() - first);
    std::memcpy(skel_->bss->addrs, addrs.data() + first, count * sizeof(uint64_t));
    skel_->bss->n = static_cast<__u32>(count);
    if (auto st = run(); !st.ok()) return st;
    std::memcpy(flags.data() + first, skel_->bss->flags, count);
    if (pfns) std::memcpy(pfns->data() + first, skel_->bss->pfns, count * sizeof(uint64_t));
  }
  return {};
}

uint64_t AbitScanner::layoutGeneration() const { return skel_->bss->layout_gen; }
bool AbitScanner::exited() const { return skel_->bss->exited != 0; }
uint64_t AbitScanner::pageOffsetBase() const { return skel_->bss->page_offset_base; }
unsigned AbitScanner::levels() const { return skel_->bss->levels; }

}  // namespace mtm::profiler
