#pragma once
// The real kernel as a mover's dependencies: syscalls, huge-page finder, /proc, a steady clock.

#include "mtm/KernelFs.h"
#include "mtm/migrate/Clock.h"
#include "mtm/migrate/HugePages.h"
#include "mtm/migrate/Mover.h"
#include "mtm/migrate/Syscalls.h"

namespace mtm::migrate {

struct LiveKernel {
  KernelSyscalls sys;
  KernelHugePageFinder huge;
  KernelFs fs{"/"};
  SteadyClock clock;
  MoverDeps deps() { return {sys, huge, fs, clock}; }
};

}  // namespace mtm::migrate
