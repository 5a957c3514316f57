#include "runtime/inside/userns.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/unique_fd.h"

namespace oishell {
namespace {

Status write_file(const std::string& path, const std::string& content) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return Status::from_errno(errno, "open(\"" + path + "\")");
  ssize_t n;
  do {
    n = ::write(fd.get(), content.data(), content.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::from_errno(errno, "write(\"" + path + "\", \"" + content.substr(0, content.size() - 1) + "\")");
  if (static_cast<size_t>(n) != content.size()) return Status::error("short write to " + path);
  return Status::ok();
}

Status write_proc_file(const char* name, const std::string& content) {
  return write_file(std::string("/proc/self/") + name, content);
}

}  // namespace

Status write_own_id_maps(uid_t uid, gid_t gid) {
  // setgroups must be denied before an unprivileged gid_map write; deny it as root too so that the sandbox can
  // never drop a supplementary group to escape a group-based denial.
  OI_TRY_CTX(write_proc_file("setgroups", "deny\n"), "uid/gid maps");
  OI_TRY_CTX(write_proc_file("uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n"),
             "uid/gid maps");
  OI_TRY_CTX(write_proc_file("gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n"),
             "uid/gid maps");
  return Status::ok();
}

Result<uint32_t> root_caller_outside_id() {
  constexpr uint64_t kPreferred = 2147483646;  // 2^31 - 2: no distribution allocates it, no file owns it
  UniqueFd fd(::open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC));
  if (!fd) return Status::from_errno(errno, "open(\"/proc/self/uid_map\")");
  char buf[4096];
  ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n < 0) return Status::from_errno(errno, "read(\"/proc/self/uid_map\")");
  buf[n] = '\0';
  uint64_t best = 0;
  bool preferred = false;
  for (const char* line = buf; *line;) {
    unsigned long long inside = 0, outside = 0, count = 0;
    if (std::sscanf(line, "%llu %llu %llu", &inside, &outside, &count) == 3 && count > 0) {
      if (kPreferred >= inside && kPreferred < inside + count) preferred = true;
      uint64_t top = inside + count - 1;
      if (top > 0 && top - 1 > best) best = top - 1;  // the top id itself may be 2^32-1, never valid
    }
    const char* next = std::strchr(line, '\n');
    if (!next) break;
    line = next + 1;
  }
  if (preferred) return static_cast<uint32_t>(kPreferred);
  if (best == 0 || best > 0xfffffffeULL) {
    return Status::error("started by root, the sandbox needs an unused id to run as, and this user namespace maps "
                         "none besides 0; run oishell as an ordinary user");
  }
  return static_cast<uint32_t>(best);
}

Status write_root_caller_maps(pid_t init_pid, uint32_t outside_id) {
  const std::string dir = "/proc/" + std::to_string(init_pid) + "/";
  const std::string map = "0 " + std::to_string(outside_id) + " 1\n";
  OI_TRY_CTX(write_file(dir + "uid_map", map), "root caller: uid map");
  OI_TRY_CTX(write_file(dir + "gid_map", map), "root caller: gid map");
  return Status::ok();
}

Status become_namespace_root() {
  if (::setgroups(0, nullptr) != 0) return Status::from_errno(errno, "setgroups(0)");
  // Changing uid from the unmapped host root to the namespace's root keeps the capabilities (they follow the
  // namespace root), so init can still build its mounts.
  if (::setresgid(0, 0, 0) != 0) return Status::from_errno(errno, "setresgid(0, 0, 0)");
  if (::setresuid(0, 0, 0) != 0) return Status::from_errno(errno, "setresuid(0, 0, 0)");
  // commit_creds() cleared both when the effective ids changed.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return Status::from_errno(errno, "prctl(PR_SET_PDEATHSIG)");
  if (::prctl(PR_SET_DUMPABLE, 0) != 0) return Status::from_errno(errno, "prctl(PR_SET_DUMPABLE, 0)");
  return Status::ok();
}

}  // namespace oishell
