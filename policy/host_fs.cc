// HostFs: the real host (lstat, readlink, O_PATH + /proc/self/fd or realpath) and a fake one for tests.
#include "policy/host_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "policy/paths.h"

namespace oishell {
namespace {

class RealHostFs : public HostFs {
 public:
  Kind kind(const std::string& path) const override {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return Kind::missing;
    if (S_ISLNK(st.st_mode)) return Kind::symlink;
    if (S_ISDIR(st.st_mode)) return Kind::directory;
    if (S_ISREG(st.st_mode)) return Kind::file;
    return Kind::other;
  }
  std::optional<std::string> read_link(const std::string& path) const override {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
    if (n < 0 || static_cast<size_t>(n) >= sizeof buf) return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
  }
  std::optional<std::string> real_path(const std::string& path) const override {
    // One open and one readlink of its /proc/self/fd entry, instead of realpath(3)'s readlink per component.
    char buf[PATH_MAX];
    int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char link[32];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(link, buf, sizeof buf);
    ::close(fd);
    if (n > 0 && static_cast<size_t>(n) < sizeof buf && buf[0] == '/') return std::string(buf, static_cast<size_t>(n));
    // No /proc here (or a name the kernel cannot express from this root): the component-wise way.
    if (!::realpath(path.c_str(), buf)) return std::nullopt;
    return std::string(buf);
  }
  std::optional<std::string> read_file(const std::string& path, size_t max_bytes) const override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    std::string out;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      out.resize(max_bytes);
      size_t got = 0;
      while (got < max_bytes) {
        ssize_t n = ::read(fd, out.data() + got, max_bytes - got);
        if (n <= 0) break;
        got += static_cast<size_t>(n);
      }
      out.resize(got);
    }
    ::close(fd);
    if (!S_ISREG(st.st_mode)) return std::nullopt;
    return out;
  }
  std::vector<std::string> list_dir(const std::string& path) const override {
    std::vector<std::string> names;
    DIR* dir = ::opendir(path.c_str());
    if (!dir) return names;
    while (dirent* d = ::readdir(dir)) {
      std::string name = d->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
  }
  bool is_socket(const std::string& path) const override {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
  }
};

}  // namespace

HostFs::Kind CachedHostFs::kind(const std::string& path) const {
  auto [it, fresh] = kinds_.try_emplace(path, Kind::missing);
  if (fresh) it->second = inner_.kind(path);
  return it->second;
}

std::optional<std::string> CachedHostFs::read_link(const std::string& path) const {
  auto [it, fresh] = links_.try_emplace(path);
  if (fresh) it->second = inner_.read_link(path);
  return it->second;
}

std::optional<std::string> CachedHostFs::real_path(const std::string& path) const {
  auto [it, fresh] = real_paths_.try_emplace(path);
  if (fresh) it->second = inner_.real_path(path);
  return it->second;
}

bool CachedHostFs::is_socket(const std::string& path) const {
  auto [it, fresh] = sockets_.try_emplace(path, false);
  if (fresh) it->second = inner_.is_socket(path);
  return it->second;
}

const HostFs& HostFs::real() {
  static const RealHostFs fs;
  return fs;
}

FakeHostFs& FakeHostFs::dir(const std::string& path) {
  std::string p = policy::normalise_path(path);
  kinds_[p] = Kind::directory;
  for (auto slash = p.rfind('/'); slash != std::string::npos && slash > 0; slash = p.rfind('/', slash - 1)) {
    kinds_.emplace(p.substr(0, slash), Kind::directory);
  }
  return *this;
}

FakeHostFs& FakeHostFs::file(const std::string& path, std::string contents) {
  std::string p = policy::normalise_path(path);
  auto slash = p.rfind('/');
  if (slash > 0) dir(p.substr(0, slash));
  kinds_[p] = Kind::file;
  contents_[p] = std::move(contents);
  return *this;
}

FakeHostFs& FakeHostFs::symlink(const std::string& path, const std::string& target) {
  std::string p = policy::normalise_path(path);
  auto slash = p.rfind('/');
  if (slash > 0) dir(p.substr(0, slash));
  kinds_[p] = Kind::symlink;
  links_[p] = target;
  return *this;
}

FakeHostFs& FakeHostFs::socket(const std::string& path) {
  std::string p = policy::normalise_path(path);
  auto slash = p.rfind('/');
  if (slash > 0) dir(p.substr(0, slash));
  kinds_[p] = Kind::other;
  sockets_.insert(p);
  return *this;
}

bool FakeHostFs::is_socket(const std::string& path) const {
  auto real = real_path(path);
  return real && sockets_.count(*real) > 0;
}

HostFs::Kind FakeHostFs::kind(const std::string& path) const {
  if (path == "/") return Kind::directory;
  auto it = kinds_.find(path);
  return it == kinds_.end() ? Kind::missing : it->second;
}

std::optional<std::string> FakeHostFs::read_link(const std::string& path) const {
  auto it = links_.find(path);
  if (it == links_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> FakeHostFs::real_path(const std::string& path) const {
  // Resolve component by component, following links (relative ones against their directory); 40 hops at most.
  std::vector<std::string> pending;
  std::string rest = path;
  std::string resolved;
  int hops = 0;
  size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && rest[i] == '/') ++i;
    size_t end = rest.find('/', i);
    if (end == std::string::npos) end = rest.size();
    std::string part = rest.substr(i, end - i);
    i = end;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      auto slash = resolved.rfind('/');
      resolved = slash == std::string::npos ? "" : resolved.substr(0, slash);
      continue;
    }
    std::string candidate = resolved + "/" + part;
    Kind k = kind(candidate);
    if (k == Kind::missing) return std::nullopt;
    if (k == Kind::symlink) {
      if (++hops > 40) return std::nullopt;
      std::string target = links_.at(candidate);
      std::string remaining = rest.substr(i);
      if (!target.empty() && target[0] == '/') {
        resolved.clear();
        rest = target + remaining;
      } else {
        rest = target + remaining;
      }
      i = 0;
      continue;
    }
    resolved = candidate;
  }
  return resolved.empty() ? "/" : resolved;
}

std::optional<std::string> FakeHostFs::read_file(const std::string& path, size_t max_bytes) const {
  auto real = real_path(path);
  if (!real) return std::nullopt;
  auto it = contents_.find(*real);
  if (it == contents_.end()) return std::nullopt;
  return it->second.substr(0, max_bytes);
}

std::vector<std::string> FakeHostFs::list_dir(const std::string& path) const {
  std::vector<std::string> names;
  const std::string prefix = path == "/" ? "/" : path + "/";
  for (auto it = kinds_.lower_bound(prefix); it != kinds_.end() && it->first.starts_with(prefix); ++it) {
    std::string rest = it->first.substr(prefix.size());
    if (!rest.empty() && rest.find('/') == std::string::npos) names.push_back(rest);
  }
  return names;  // std::map order: sorted
}

}  // namespace oishell
