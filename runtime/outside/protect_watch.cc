#include "runtime/outside/protect_watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <set>

#include "base/unique_fd.h"
#include "runtime/sys/syscalls.h"

namespace oishell {
namespace {

using Entry = ProtectWatch::Entry;
using Tree = ProtectWatch::Tree;

long long nanos(const struct timespec& t) { return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec; }

Entry entry_of(const struct stat& st) {
  Entry e;
  e.kind = S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'o';
  e.mode = st.st_mode;
  e.size = static_cast<long long>(st.st_size);
  e.mtime_ns = nanos(st.st_mtim);
  e.ctime_ns = nanos(st.st_ctim);
  e.ino = st.st_ino;
  e.dev = st.st_dev;
  return e;
}

Entry unreadable(int err) {
  Entry e;
  e.kind = '?';
  e.mode = static_cast<unsigned>(err);
  return e;
}

// Lists the directory `fd` into tree->entries under `prefix`, depth-first, within the bounds.
void list_dir(int fd, const std::string& prefix, int depth, Tree* tree) {
  UniqueFd own(::dup(fd));
  if (!own) return;
  DIR* dir = ::fdopendir(own.get());
  if (!dir) return;
  (void)own.release();  // the DIR owns it now
  while (dirent* d = ::readdir(dir)) {
    std::string name = d->d_name;
    if (name == "." || name == "..") continue;
    if (tree->entries.size() >= ProtectWatch::kMaxEntries) {
      tree->truncated = true;
      break;
    }
    std::string rel = prefix.empty() ? name : prefix + "/" + name;
    struct stat st;
    if (::fstatat(::dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) tree->entries[rel] = unreadable(errno);
      continue;
    }
    tree->entries[rel] = entry_of(st);
    if (!S_ISDIR(st.st_mode)) continue;
    if (depth >= ProtectWatch::kMaxDepth) {
      tree->truncated = true;
      continue;
    }
    UniqueFd child(::openat(::dirfd(dir), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!child) {
      tree->entries[rel] = unreadable(errno);
      continue;
    }
    list_dir(child.get(), rel, depth + 1, tree);
  }
  ::closedir(dir);
}

Tree scan(const std::string& path) {
  Tree tree;
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || path.size() < 2) return tree;  // not an absolute path below "/"
  std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  std::string name = path.substr(slash + 1);
  struct open_how how {};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  UniqueFd dir(sys::openat2(AT_FDCWD, parent.c_str(), &how));
  if (!dir) {
    if (errno == ELOOP) {
      Entry e;
      e.kind = 's';
      tree.entries[""] = e;
    } else if (errno != ENOENT && errno != ENOTDIR) {
      tree.entries[""] = unreadable(errno);
    }
    return tree;  // absent: no entry
  }
  struct stat st;
  if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) tree.entries[""] = unreadable(errno);
    return tree;
  }
  tree.entries[""] = entry_of(st);
  if (!S_ISDIR(st.st_mode)) return tree;
  UniqueFd self(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!self) {
    tree.entries[""] = unreadable(errno);
    return tree;
  }
  list_dir(self.get(), "", 1, &tree);
  return tree;
}

// How `now` differs from `then`, or nullptr when it does not. A directory's own times change whenever an entry is
// added or removed; those entries are reported, so a directory is "modified" only when its mode changes.
const char* difference(const Entry& then, const Entry& now) {
  if (then.kind != now.kind || then.ino != now.ino || then.dev != now.dev) return "replaced";
  if (then.mode != now.mode) return "modified";
  if (then.kind == 'd' || then.kind == 's') return nullptr;
  if (then.size != now.size || then.mtime_ns != now.mtime_ns || then.ctime_ns != now.ctime_ns) return "modified";
  return nullptr;
}

std::string join_rel(const std::string& path, const std::string& rel) { return rel.empty() ? path : path + "/" + rel; }

}  // namespace

void ProtectWatch::snapshot(const std::vector<std::string>& paths) {
  paths_ = paths;
  initial_.clear();
  for (const auto& path : paths_) initial_.push_back(scan(path));
}

std::vector<std::string> ProtectWatch::changes() const {
  std::set<std::string> out;
  for (size_t i = 0; i < paths_.size(); ++i) {
    const std::string& path = paths_[i];
    const Tree& then = initial_[i];
    Tree now = scan(path);
    bool partial = then.truncated || now.truncated;
    for (const auto& [rel, entry] : now.entries) {
      auto it = then.entries.find(rel);
      if (it == then.entries.end()) {
        if (!partial || rel.empty()) out.insert(join_rel(path, rel) + " (created)");
      } else if (const char* what = difference(it->second, entry)) {
        out.insert(join_rel(path, rel) + " (" + what + ")");
      }
    }
    for (const auto& [rel, entry] : then.entries) {
      if (!now.entries.count(rel) && (!partial || rel.empty())) out.insert(join_rel(path, rel) + " (removed)");
    }
    if (partial) {
      out.insert(path + " (not fully checked: more than " + std::to_string(kMaxEntries) + " entries or " +
                 std::to_string(kMaxDepth) + " levels)");
    }
  }
  return {out.begin(), out.end()};
}

}  // namespace oishell
