#pragma once
// Protected paths (files the host runs later: .git/hooks, .git/config, ...) are bound read-only where they exist
// at start. Paths that did not exist then are writable through the workspace, so the supervisor snapshots every
// protected path at start and names any that appeared, changed or vanished when the run ends.
#include <map>
#include <string>
#include <vector>

namespace oishell {

class ProtectWatch {
 public:
  // Records the state of each host path (recursively for directories, up to kMaxEntries entries in all).
  void snapshot(const std::vector<std::string>& paths);
  // Paths whose state differs from the snapshot, sorted: "appeared: P", "changed: P", "removed: P".
  std::vector<std::string> changes() const;

  static constexpr size_t kMaxEntries = 10000;

 private:
  using State = std::map<std::string, std::string>;  // path -> type/size/mtime/ctime/inode/mode signature
  State scan() const;
  std::vector<std::string> paths_;
  State initial_;
};

}  // namespace oishell
