#pragma once
// oishell-probe: each action attempts one thing and prints "ok" (or a value) or the errno name, then exits 0.
// A test asserts on that one line. Register actions with OI_PROBE(name) in a probe/<area>.cc file.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace probe {

using Args = std::vector<std::string>;
using Action = int (*)(const Args& args);

struct Register {
  Register(const char* name, const char* usage, Action action);
};

// Prints "ok" when rc >= 0, else the errno name ("EACCES"); returns 0.
inline int report(long rc) {
  if (rc >= 0) {
    std::puts("ok");
  } else {
    const char* name = strerrorname_np(errno);
    std::puts(name ? name : "EUNKNOWN");
  }
  return 0;
}

}  // namespace probe

#define OI_PROBE_CAT2(a, b) a##b
#define OI_PROBE_CAT(a, b) OI_PROBE_CAT2(a, b)
#define OI_PROBE(name, usage)                                                        \
  static int OI_PROBE_CAT(probe_action_, __LINE__)(const ::probe::Args& args);       \
  static ::probe::Register OI_PROBE_CAT(probe_reg_, __LINE__)(name, usage,           \
                                                              &OI_PROBE_CAT(probe_action_, __LINE__)); \
  static int OI_PROBE_CAT(probe_action_, __LINE__)([[maybe_unused]] const ::probe::Args& args)
