// cxlccl_torch._C: makes "cxlccl" process groups for torch.distributed (registered by the
// package's __init__.py), and leaves their communicators at interpreter exit.
#include <pybind11/chrono.h>
#include <torch/python.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

#include "ProcessGroupCxlccl.h"

namespace {

// The live groups, for shutdownAll(): torch 1.13 never destroys a default process group, so
// without this a rank would leave its communicator's region in the pool for the next run to
// reclaim.
std::mutex liveMutex;
std::vector<c10::weak_intrusive_ptr<cxlccl_torch::ProcessGroupCxlccl>> live;

c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                              const std::chrono::duration<float>& timeout) {
  auto group = c10::make_intrusive<cxlccl_torch::ProcessGroupCxlccl>(store, rank, size,
                                                                     std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  std::lock_guard<std::mutex> lock(liveMutex);
  live.erase(std::remove_if(live.begin(), live.end(), [](const auto& weak) { return weak.expired(); }), live.end());
  live.emplace_back(group);
  return group;
}

void shutdownAll() {
  std::vector<c10::weak_intrusive_ptr<cxlccl_torch::ProcessGroupCxlccl>> groups;
  {
    std::lock_guard<std::mutex> lock(liveMutex);
    groups.swap(live);
  }
  for (const auto& weak : groups)
    if (auto group = weak.lock()) group->shutdown();
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "libcxlccl process groups for torch.distributed (import cxlccl_torch to register the backend \"cxlccl\")";
  m.def("create_process_group", &create, pybind11::arg("store"), pybind11::arg("rank"), pybind11::arg("world_size"),
        pybind11::arg("timeout"), "A cxlccl process group: torch.distributed calls this through Backend.register_backend",
        pybind11::call_guard<pybind11::gil_scoped_release>());
  m.def("shutdown_all", &shutdownAll, "Leaves the communicators of all live cxlccl process groups (at interpreter exit)",
        pybind11::call_guard<pybind11::gil_scoped_release>());
  m.def("version", [] {
    int version = 0;
    cxlcclGetVersion(&version);
    return version;
  });
}
