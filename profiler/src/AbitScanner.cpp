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
#include "mtm/UniqueFd.h"

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
    t = btf__type_by_id(vmlinux, t->type);                          // pointer
    if (t && btf_is_ptr(t)) t = btf__type_by_id(vmlinux, t->type);  // function prototype
    if (t && btf_is_func_proto(t)) index = btf_vlen(t) - 2;         // less the leading void *
  }
  btf__free(vmlinux);
  return index == 1 || index == 2 ? index : 0;
}

Error bpfError(const std::string& what, int err) {
  std::string hint;
  if (err == EPERM)
    hint = ": needs root (CAP_BPF and CAP_PERFMON)";
  else if (err == EINVAL || err == EOPNOTSUPP)
    hint = ": the kernel lacks it (task iterators with a tid filter need Linux 6.1+)";
  else if (err == ENOENT || err == ESRCH)
    hint = ": no such process";
  return Error::fromErrno(what, err).context(hint.empty() ? "loading the accessed-bit BPF program" : hint.substr(2));
}

}  // namespace

void BpfLinkDeleter::operator()(::bpf_link* link) const { bpf_link__destroy(link); }

Result<std::shared_ptr<AbitProgram>> AbitProgram::open() {
  if (::access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    return Error("no kernel BTF (/sys/kernel/btf/vmlinux): the accessed-bit BPF program needs CONFIG_DEBUG_INFO_BTF");
  std::shared_ptr<AbitProgram> p(new AbitProgram());
  p->skel_ = abit__open();
  if (!p->skel_) return bpfError("open BPF skeleton", errno);
  // Probe the tracepoint's arguments and load the one matching variant (or none).
  const unsigned writeArg = lockWriteArgument();
  bpf_program__set_autoload(p->skel_->progs.abit_layout_v1, writeArg == 2);
  bpf_program__set_autoload(p->skel_->progs.abit_layout_v2, writeArg == 1);
  if (int err = abit__load(p->skel_); err != 0) return bpfError("load BPF program", -err);
  if (writeArg) {
    p->layoutLink_.reset(bpf_program__attach(writeArg == 2 ? p->skel_->progs.abit_layout_v1 : p->skel_->progs.abit_layout_v2));
    if (!p->layoutLink_) MTM_INFO("abit layout_tracking=off reason=\"attach mmap_lock_released: {}\"", std::strerror(errno));
  } else {
    MTM_INFO("abit layout_tracking=off reason=\"no mmap_lock_released tracepoint\"");
  }
  p->exitLink_.reset(bpf_program__attach(p->skel_->progs.abit_exit));

  // The direct map's base and the paging depth are the kernel's: derive them once, from mtmd's
  // own page tables.
  const int self = static_cast<int>(::getpid());
  auto iterator = p->attachIterator(self);
  if (!iterator) return std::move(iterator).takeError();
  std::lock_guard lock(p->mu_);
  p->skel_->bss->cmd = ABIT_CMD_DERIVE;
  if (auto st = p->run(iterator->get(), self); !st.ok()) return std::move(st).takeError();
  p->skel_->bss->cmd = ABIT_CMD_WALK;
  if (p->skel_->bss->levels == 0) return Error("could not derive the kernel's direct-map base from the page tables");
  MTM_DEBUG("abit page_offset_base={:#x} levels={}", p->pageOffsetBase(), p->levels());
  return p;
}

AbitProgram::~AbitProgram() {
  layoutLink_.reset();
  exitLink_.reset();
  if (skel_) abit__destroy(skel_);
}

Result<BpfLink> AbitProgram::attachIterator(int pid) {
  union bpf_iter_link_info info {};
  info.task.tid = static_cast<__u32>(pid);
  DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof info);
  BpfLink link(bpf_program__attach_iter(skel_->progs.abit_walk, &opts));
  if (!link) return bpfError("attach task iterator to pid " + std::to_string(pid), errno);
  return link;
}

Result<std::unique_ptr<AbitScanner>> AbitProgram::watch(int pid) {
  std::unique_ptr<AbitScanner> s(new AbitScanner(shared_from_this(), pid));
  auto iterator = attachIterator(pid);
  if (!iterator) return std::move(iterator).takeError();
  s->iterLink_ = std::move(*iterator);
  const __u32 key = static_cast<__u32>(pid);
  const abit_target fresh{};
  if (bpf_map_update_elem(targetsFd(), &key, &fresh, BPF_ANY) != 0) {
    const std::string who = "pid " + std::to_string(pid);
    if (errno == E2BIG)
      return Error(
          who + ": the accessed-bit program watches " + std::to_string(ABIT_MAX_TARGETS) + " processes, the most it can: detach some first",
          E2BIG);
    return Error::fromErrno(who + ": add to the accessed-bit program's map", errno);
  }
  std::lock_guard lock(mu_);
  skel_->bss->n = 0;  // a run that walks nothing: the process is there
  if (auto st = run(s->iterLink_.get(), pid); !st.ok()) return std::move(st).takeError();
  return s;
}

Status AbitProgram::run(::bpf_link* iterator, int pid) {
  const uint64_t before = skel_->bss->runs;
  UniqueFd fd(bpf_iter_create(bpf_link__fd(iterator)));
  if (!fd) return Error::fromErrno("bpf_iter_create", errno);
  char buf[64];
  ssize_t n;
  while ((n = ::read(fd.get(), buf, sizeof buf)) > 0) {
  }
  if (n < 0) return Error::fromErrno("read task iterator", errno);
  if (skel_->bss->runs == before) return Error("pid " + std::to_string(pid) + ": no such process (exited)", ESRCH);
  return {};
}

int AbitProgram::targetsFd() const { return bpf_map__fd(skel_->maps.targets); }
uint64_t AbitProgram::pageOffsetBase() const { return skel_->bss->page_offset_base; }
unsigned AbitProgram::levels() const { return skel_->bss->levels; }

size_t AbitProgram::watching() const {
  size_t count = 0;
  __u32 key = 0, next = 0;
  for (const __u32* prev = nullptr; bpf_map_get_next_key(targetsFd(), prev, &next) == 0; prev = &key) {
    key = next;
    ++count;
  }
  return count;
}

Result<std::unique_ptr<AbitScanner>> AbitScanner::open(int pid) {
  auto program = AbitProgram::open();
  if (!program) return std::move(program).takeError();
  return (*program)->watch(pid);
}

AbitScanner::~AbitScanner() {
  const __u32 key = static_cast<__u32>(pid_);
  bpf_map_delete_elem(program_->targetsFd(), &key);
}

Status AbitScanner::read(const std::vector<uint64_t>& addrs, std::vector<uint8_t>& flags, std::vector<uint64_t>* pfns) {
  flags.resize(addrs.size());
  if (pfns) pfns->resize(addrs.size());
  auto* bss = program_->skel_->bss;
  std::lock_guard lock(program_->mu_);
  for (size_t first = 0; first < addrs.size(); first += ABIT_MAX_ADDRS) {
    const size_t count = std::min<size_t>(ABIT_MAX_ADDRS, addrs.size() - first);
    std::memcpy(bss->addrs, addrs.data() + first, count * sizeof(uint64_t));
    bss->n = static_cast<__u32>(count);
    if (auto st = program_->run(iterLink_.get(), pid_); !st.ok()) return st;
    std::memcpy(flags.data() + first, bss->flags, count);
    if (pfns) std::memcpy(pfns->data() + first, bss->pfns, count * sizeof(uint64_t));
  }
  return {};
}

namespace {
abit_target lookUp(int fd, int pid) {
  const __u32 key = static_cast<__u32>(pid);
  abit_target t{};
  bpf_map_lookup_elem(fd, &key, &t);
  return t;
}
}  // namespace

uint64_t AbitScanner::layoutGeneration() const { return lookUp(program_->targetsFd(), pid_).layout_gen; }
bool AbitScanner::exited() const { return lookUp(program_->targetsFd(), pid_).exited != 0; }

}  // namespace mtm::profiler
