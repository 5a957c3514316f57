// seccomp: the program for a spec (prebuilt by the build when the spec is a built-in level, else compiled by
// libseccomp: runtime/inside/seccomp_compile.h), and loading it (the supervisor serves the
// user-notification fd: runtime/outside/seccomp_notifier.cc).
#include "runtime/inside/seccomp.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/inside/seccomp_compile.h"
#include "runtime/inside/seccomp_prebuilt.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
Result<SeccompProgram> seccomp_compile(const SeccompSpec& spec) {
  if (seccomp_arch_native() != SCMP_ARCH_X86_64) {
    return Status::error("seccomp: only native x86_64 is supported (the deny sets are written for it)");
  }
  // User notification needs kernel 5.0+ and libseccomp API level 5+ (level 6: with TSYNC, unused here).
  const bool notify = seccomp_api_get() >= 5;
  const std::vector<sock_filter>* prebuilt = notify ? prebuilt_seccomp_program(spec) : nullptr;
  if (prebuilt == nullptr) return seccomp_compile_with_libseccomp(spec, notify);
  auto reports = seccomp_plan_reports(spec);
  if (!reports) return reports.status();
  SeccompProgram program;
  program.instructions = *prebuilt;
  program.notify = true;
  program.reports = std::move(*reports);
  return program;
}

std::string seccomp_program_to_bytes(const SeccompProgram& program) {
  return std::string(reinterpret_cast<const char*>(program.instructions.data()),
                     program.instructions.size() * sizeof(sock_filter));
}

Result<SeccompProgram> seccomp_program_from_bytes(const std::string& bytes, bool notify) {
  if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0 || bytes.size() / sizeof(sock_filter) > BPF_MAXINSNS) {
    return Status::error("seccomp: a program of " + std::to_string(bytes.size()) + " bytes is not a BPF program");
  }
  SeccompProgram program;
  program.notify = notify;
  program.instructions.resize(bytes.size() / sizeof(sock_filter));
  std::memcpy(program.instructions.data(), bytes.data(), bytes.size());
  return program;
}

Result<UniqueFd> seccomp_load_program(const SeccompProgram& program) {
  if (program.instructions.empty()) return Status::error("seccomp: empty program");
  sock_fprog fprog{static_cast<unsigned short>(program.instructions.size()),
                   const_cast<sock_filter*>(program.instructions.data())};
  const unsigned flags = program.notify ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
  int rc = sys::seccomp(SECCOMP_SET_MODE_FILTER, flags, &fprog);
  if (rc < 0) {
    return Status::from_errno(errno, program.notify ? "seccomp(SET_MODE_FILTER, NEW_LISTENER)"
                                                    : "seccomp(SET_MODE_FILTER)");
  }
  if (!program.notify) return UniqueFd();
  return UniqueFd(rc);  // the kernel made it O_CLOEXEC
}

Result<UniqueFd> seccomp_apply(const SeccompSpec& spec) {
  auto program = seccomp_compile(spec);
  if (!program) return program.status();
  return seccomp_load_program(*program);
}

}  // namespace oishell
