#include "runtime/protect_watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>

namespace oishell {
namespace {

std::string signature(const struct stat& st) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%o:%lld:%lld.%ld:%lld.%ld:%llu", st.st_mode, static_cast<long long>(st.st_size),
                static_cast<long long>(st.st_mtim.tv_sec), st.st_mtim.tv_nsec,
                static_cast<long long>(st.st_ctim.tv_sec), st.st_ctim.tv_nsec,
                static_cast<unsigned long long>(st.st_ino));
  return buf;
}

void scan_path(const std::string& path, std::map<std::string, std::string>* out) {
  if (out->size() >= ProtectWatch::kMaxEntries) return;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return;  // absent: no entry
  (*out)[path] = signature(st);
  if (!S_ISDIR(st.st_mode)) return;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return;
  while (dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    scan_path(path + "/" + name, out);
  }
  ::closedir(dir);
}

}  // namespace

ProtectWatch::State ProtectWatch::scan() const {
  State state;
  for (const auto& path : paths_) scan_path(path, &state);
  return state;
}

void ProtectWatch::snapshot(const std::vector<std::string>& paths) {
  paths_ = paths;
  initial_ = scan();
}

std::vector<std::string> ProtectWatch::changes() const {
  std::vector<std::string> out;
  if (paths_.empty()) return out;
  State now = scan();
  for (const auto& [path, sig] : now) {
    auto it = initial_.find(path);
    if (it == initial_.end()) {
      out.push_back("appeared: " + path);
    } else if (it->second != sig) {
      // A directory's own mtime changes when an entry appears; the entry is reported, not the directory.
      struct stat st;
      if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
      out.push_back("changed: " + path);
    }
  }
  for (const auto& [path, sig] : initial_) {
    if (!now.count(path)) out.push_back("removed: " + path);
  }
  return out;
}

}  // namespace oishell
