#pragma once
// Building blocks of the mount plan: descriptor-based mount calls (new mount API) and symlink-free path walks
// beneath a root directory fd. Every path given here is relative to a directory fd; nothing follows a symlink.
#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::mounts {

enum class NodeType { directory, file };

// Opens `path` (absolute inside the new root, e.g. "/usr/lib") beneath `root_fd` as O_PATH, refusing symlinks
// anywhere on the way. ENOENT when it does not exist.
Result<UniqueFd> lookup(int root_fd, const std::string& path);
// Like lookup(), creating what is missing: parent directories (0755) and the last component as `type`
// (an empty 0644 file for a file). An existing last component of the other type is an error.
Result<UniqueFd> ensure(int root_fd, const std::string& path, NodeType type);

// Opens a host path as O_PATH without following any symlink (binds are made from this fd, so a symlink swapped
// in after the policy was compiled cannot redirect the mount: it fails with ELOOP instead).
Result<UniqueFd> open_host_path(const std::string& path);

// A detached copy of the mount(s) at `fd` (recursive: submounts too).
Result<UniqueFd> clone_tree(int fd, bool recursive);
// Sets mount attributes (MOUNT_ATTR_*) on a detached tree or a mount fd.
Status set_attributes(int tree_fd, uint64_t attr_set, bool recursive);
// A new detached filesystem mount: fsopen(type) + string options + fsmount(attributes).
Result<UniqueFd> new_filesystem(const char* type, const std::vector<std::pair<std::string, std::string>>& options,
                                unsigned int attributes);
// Attaches a detached tree onto the mount point `target_fd`.
Status attach(int tree_fd, int target_fd);

}  // namespace oishell::mounts
