// Two "hosts" sharing a pool: two VM-lab guests booted at once, one ivshmem device backed by the
// same host file, an AllGather across them through libcxlccl in flush mode (the pool is
// formatted non-coherent, as a CXL device shared by hosts would be), from ordinary send buffers
// and from buffers in the pool.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <future>
#include <string>

#include "VmLab.h"

TEST_CASE("an AllGather across two guests sharing one pool", "[vm][cxl]") {
  const std::string pool = "/dev/shm/mtm-vm-cxl-pool-" + std::to_string(getpid());
  auto format = mtm::test::run({MTM_BIN_DIR "/cxlccl-pool", "format", pool, "--size", "64M"});
  REQUIRE(format.exitCode == 0);
  auto guest = [&](int rank) {
    return mtm::test::vmlab({"--nodes", "1", "--node-mem", "512M", "--qemu-arg", "-object", "--qemu-arg",
                             "memory-backend-file,id=pool,mem-path=" + pool + ",size=64M,share=on", "--qemu-arg", "-device", "--qemu-arg",
                             "ivshmem-plain,memdev=pool", "--add", mtm::test::sourceDir() + "/tests/vm/cxl-two-hosts.sh:/bin/cxl-two-hosts",
                             "--", "cxl-two-hosts", std::to_string(rank)});
  };
  auto first = std::async(std::launch::async, guest, 0);
  auto second = std::async(std::launch::async, guest, 1);
  auto r0 = first.get();
  auto r1 = second.get();
  unlink(pool.c_str());
  INFO(r0.out << r0.err << "\n---\n" << r1.out << r1.err);
  CHECK(r0.exitCode == 0);
  CHECK(r1.exitCode == 0);
  CHECK(r0.out.find("PASS allgather count=300001 rank=0 of 2") != std::string::npos);
  CHECK(r1.out.find("PASS allgather count=300001 rank=1 of 2") != std::string::npos);
  CHECK(r0.out.find("PASS allgather pool-buffer count=300001 rank=0 of 2") != std::string::npos);
  CHECK(r1.out.find("PASS allgather pool-buffer count=300001 rank=1 of 2") != std::string::npos);
  CHECK(r0.out.find("read where they lie") != std::string::npos);
  CHECK(r0.out.find("coherence flush") != std::string::npos);
}
