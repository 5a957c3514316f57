#include "runtime/userns.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/unique_fd.h"

namespace oishell {
namespace {

Status write_proc_file(const char* name, const std::string& content) {
  std::string path = std::string("/proc/self/") + name;
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

}  // namespace oishell
