// The workspace snapshot (a bounded walk with fds: openat with O_NOFOLLOW below the root, so a directory replaced
// by a link during the walk is not followed out of the workspace) and the comparison of two snapshots.
#include "agent/sandbox/workspace_changes.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/unique_fd.h"

namespace oishell::agent {

class SnapshotWalk {
 public:
  SnapshotWalk(WorkspaceSnapshot* snapshot, const ChangeLimits& limits) : s_(snapshot), limits_(limits) {}

  void run() {
    UniqueFd root(::open(s_->root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root) {
      note("the workspace " + s_->root_ + " could not be read: " + std::strerror(errno));
      return;
    }
    struct stat st {};
    if (::fstat(root.get(), &st) != 0) return note(std::string("fstat(workspace): ") + std::strerror(errno));
    device_ = st.st_dev;
    walk(std::move(root), "", 0);
  }

 private:
  static constexpr int kMaxDepth = 64;

  void note(const std::string& why) {
    if (s_->incomplete_.empty()) s_->incomplete_ = why;
  }

  void walk(UniqueFd dir_fd, const std::string& prefix, int depth) {
    if (depth > kMaxDepth) return note("directories deeper than " + std::to_string(kMaxDepth) + " levels not read");
    DIR* dir = ::fdopendir(dir_fd.get());
    if (dir == nullptr) return note("cannot list " + (prefix.empty() ? "." : prefix) + ": " + std::strerror(errno));
    const int fd = dir_fd.release();  // owned by `dir` now
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    }
    std::sort(names.begin(), names.end());  // the same files left out of both snapshots when a bound is reached
    for (const std::string& name : names) {
      if (stopped_) break;
      const std::string path = prefix.empty() ? name : prefix + "/" + name;
      struct stat st {};
      if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
      if (S_ISDIR(st.st_mode)) {
        if (name == ".git" || st.st_dev != device_) continue;
        UniqueFd child(::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!child) {
          note("cannot read " + path + ": " + std::strerror(errno));
          continue;
        }
        walk(std::move(child), path, depth + 1);
      } else if (S_ISREG(st.st_mode)) {
        add_file(fd, name, path, st);
      }
    }
    ::closedir(dir);
  }

  void add_file(int dir_fd, const std::string& name, const std::string& path, const struct stat& st) {
    if (s_->entries_.size() >= limits_.max_files) {
      stopped_ = true;
      s_->files_bounded_ = true;
      return note("more than " + std::to_string(limits_.max_files) + " files: the rest not compared");
    }
    WorkspaceSnapshot::Entry entry;
    entry.size = static_cast<uint64_t>(st.st_size);
    entry.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    entry.inode = st.st_ino;
    if (entry.size <= limits_.max_file_bytes && total_ + entry.size <= limits_.max_total_bytes) {
      entry.content = read_all(dir_fd, name, entry.size);
      if (entry.content) total_ += entry.content->size();
    }
    s_->entries_.emplace(path, std::move(entry));
  }

  // The file's bytes (at most a little over `expected`: a file growing meanwhile is cut, and then compared by size).
  std::optional<std::string> read_all(int dir_fd, const std::string& name, uint64_t expected) const {
    UniqueFd file(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!file) return std::nullopt;
    std::string content;
    content.resize(expected + 1);
    size_t got = 0;
    while (got < content.size()) {
      const ssize_t n = ::read(file.get(), content.data() + got, content.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return std::nullopt;
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    if (got > expected) return std::nullopt;  // grew while read: not a stable text to show
    content.resize(got);
    return content;
  }

  WorkspaceSnapshot* s_;
  ChangeLimits limits_;
  dev_t device_ = 0;
  uint64_t total_ = 0;
  bool stopped_ = false;
};

WorkspaceSnapshot WorkspaceSnapshot::take(const std::string& root, const ChangeLimits& limits) {
  WorkspaceSnapshot snapshot;
  snapshot.root_ = root;
  SnapshotWalk(&snapshot, limits).run();
  return snapshot;
}

namespace {

bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t extra = 0;
    if (c < 0x80) {
      if (c == 0) return false;
      ++i;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) extra = 1;
    else if (c >= 0xE0 && c <= 0xEF) extra = 2;
    else if (c >= 0xF0 && c <= 0xF4) extra = 3;
    else return false;
    if (i + extra >= s.size()) return false;
    for (size_t k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += extra + 1;
  }
  return true;
}

bool same_file(const WorkspaceSnapshot::Entry& a, const WorkspaceSnapshot::Entry& b) {
  if (a.content && b.content) return *a.content == *b.content;
  return a.size == b.size && a.mtime_ns == b.mtime_ns && a.inode == b.inode;
}

}  // namespace

std::vector<FileChange> workspace_changes(const WorkspaceSnapshot& before, const WorkspaceSnapshot& after) {
  std::vector<FileChange> out;
  auto add = [&](FileChange::Kind kind, const std::string& path, const WorkspaceSnapshot::Entry* old_entry,
                 const WorkspaceSnapshot::Entry* new_entry) {
    FileChange change;
    change.kind = kind;
    change.path = path;
    if (old_entry) change.old_size = old_entry->size;
    if (new_entry) change.new_size = new_entry->size;
    const bool old_read = !old_entry || old_entry->content;
    const bool new_read = !new_entry || new_entry->content;
    if (!old_read || !new_read) {
      change.too_large = true;
    } else if ((old_entry && !valid_utf8(*old_entry->content)) || (new_entry && !valid_utf8(*new_entry->content))) {
      change.binary = true;
    } else {
      if (old_entry) change.old_text = *old_entry->content;
      if (new_entry) change.new_text = *new_entry->content;
    }
    out.push_back(std::move(change));
  };
  const auto& a = before.entries();
  const auto& b = after.entries();
  // A walk cut at max_files leaves out files the other walk may have read: a file seen by only one is then not
  // known to be created or deleted (incomplete() says the comparison was partial).
  const bool one_sided_known = !before.files_bounded() && !after.files_bounded();
  auto i = a.begin();
  auto j = b.begin();
  while (i != a.end() || j != b.end()) {
    if (j == b.end() || (i != a.end() && i->first < j->first)) {
      if (one_sided_known) add(FileChange::Kind::deleted, i->first, &i->second, nullptr);
      ++i;
    } else if (i == a.end() || j->first < i->first) {
      if (one_sided_known) add(FileChange::Kind::created, j->first, nullptr, &j->second);
      ++j;
    } else {
      if (!same_file(i->second, j->second)) add(FileChange::Kind::modified, i->first, &i->second, &j->second);
      ++i;
      ++j;
    }
  }
  return out;
}

std::string describe_change(const FileChange& change) {
  switch (change.kind) {
    case FileChange::Kind::created: return "created " + change.path;
    case FileChange::Kind::modified: return "modified " + change.path;
    case FileChange::Kind::deleted: return "deleted " + change.path;
  }
  return change.path;
}

}  // namespace oishell::agent
