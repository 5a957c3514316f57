#pragma once
// A file only this user can read, in a directory of its own (mode 0700, made by mkdtemp under $TMPDIR or /tmp),
// removed with its directory when the owner goes. For what the agent hands to `oishell supervise` by path and must
// not leave behind: a profile's inline policy (agent/config/profile_policy.h).
#include <string>
#include <string_view>

#include "base/status.h"

namespace oishell::agent {

class PrivateFile {
 public:
  PrivateFile() = default;
  // Writes `content` to DIR/`name` (0600, created exclusively) in a fresh directory named after `prefix`.
  [[nodiscard]] static Result<PrivateFile> create(std::string_view prefix, const std::string& name,
                                                  std::string_view content);
  PrivateFile(PrivateFile&& other) noexcept { *this = std::move(other); }
  PrivateFile& operator=(PrivateFile&& other) noexcept;
  PrivateFile(const PrivateFile&) = delete;
  PrivateFile& operator=(const PrivateFile&) = delete;
  ~PrivateFile() { remove(); }

  const std::string& path() const { return path_; }  // empty when none

 private:
  void remove();
  std::string dir_, path_;
};

}  // namespace oishell::agent
