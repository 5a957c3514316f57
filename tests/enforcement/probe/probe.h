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
// One registration per use: __COUNTER__ (not __LINE__) names it, unique within a translation unit even when a unity
// build compiles several probe files as one.
#define OI_PROBE(name, usage) OI_PROBE_NUMBERED(name, usage, __COUNTER__)
#define OI_PROBE_NUMBERED(name, usage, n)                                                                   \
  static int OI_PROBE_CAT(probe_action_, n)(const ::probe::Args& args);                                    \
  static ::probe::Register OI_PROBE_CAT(probe_reg_, n)(name, usage, &OI_PROBE_CAT(probe_action_, n));      \
  static int OI_PROBE_CAT(probe_action_, n)([[maybe_unused]] const ::probe::Args& args)
