#pragma once
// OISHELL_TRACE_STARTUP=1 prints one line per marked start-up step on stderr: "startup <pid> <ms> <step>", the
// milliseconds counted from the first mark of the process. Sandbox init is a clone of the supervisor, so its marks
// share that origin. For bench/startup/phases.py and docs/performance.md; off (one branch) otherwise.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace oishell {

inline void trace_startup(const char* step) {
  static const bool enabled = std::getenv("OISHELL_TRACE_STARTUP") != nullptr;
  if (!enabled) return;
  static timespec origin = [] {
    timespec now;
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return now;
  }();
  timespec now;
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const double ms = static_cast<double>(now.tv_sec - origin.tv_sec) * 1e3 +
                    static_cast<double>(now.tv_nsec - origin.tv_nsec) / 1e6;
  dprintf(2, "startup %d %.3f %s\n", static_cast<int>(::getpid()), ms, step);
}

}  // namespace oishell
