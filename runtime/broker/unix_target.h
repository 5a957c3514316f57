#pragma once
// Pathname unix sockets as the caller sees them: the path resolved inside the caller's root (absolute symlinks
// stay in its view, magic links are not followed) with the caller's permissions, opened O_PATH once, so that the
// inode checked is the inode connected to (a symlink swapped in after the check changes nothing).
#include <sys/stat.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"
#include "runtime/broker/as_sandbox.h"
#include "runtime/broker/caller.h"

namespace oishell::broker {

struct UnixTarget {
  UniqueFd path;       // O_PATH
  struct stat st {};
  std::string where;   // the path as the caller sees it, for messages
};

// `sun_path` as the caller wrote it (relative paths against its cwd), resolved on `as` (as_sandbox.h): with the
// sandbox's ids and no capabilities, so that ENOENT, EACCES etc. are what the sandbox's own connect(2) would meet
// (the caller's cwd and root are read here, with the supervisor's rights: they are the caller's own).
Result<UnixTarget> open_unix_target(const Caller& caller, std::string_view sun_path, AsSandbox& as);

// An inode: the identity a socket is allowed by.
struct InodeId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const InodeId&) const = default;
};

// The sockets of `network.unix` as they are now on the host (missing ones are skipped: a socket can appear later,
// so this is called per decision).
std::vector<InodeId> allowed_unix_inodes(const std::vector<std::string>& host_paths);

}  // namespace oishell::broker
