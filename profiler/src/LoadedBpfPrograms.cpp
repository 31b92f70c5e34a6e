#include "mtm/profiler/LoadedBpfPrograms.h"

#include <bpf/bpf.h>

#include "mtm/UniqueFd.h"

namespace mtm::profiler {

std::vector<LoadedBpfProgram> loadedBpfPrograms() {
  std::vector<LoadedBpfProgram> out;
  for (__u32 id = 0; bpf_prog_get_next_id(id, &id) == 0;) {
    const UniqueFd fd(bpf_prog_get_fd_by_id(id));
    if (!fd) continue;  // unloaded meanwhile
    bpf_prog_info info{};
    __u32 len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) continue;
    out.push_back({id, info.name, info.run_cnt, info.run_time_ns});
  }
  return out;
}

}  // namespace mtm::profiler
