#include "runtime/cgroup_fs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/unique_fd.h"

namespace oishell::cgroup {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

struct Mount {
  std::string root, point, fstype, super_options;
};

std::vector<Mount> cgroup_mounts() {
  std::vector<Mount> mounts;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    // id parent dev root point options [optional...] - fstype source super_options
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    auto head = split(line.substr(0, dash), ' ');
    auto tail = split(line.substr(dash + 3), ' ');
    if (head.size() < 5 || tail.size() < 3) continue;
    if (tail[0] != "cgroup" && tail[0] != "cgroup2") continue;
    mounts.push_back({head[3], head[4], tail[0], tail[2]});
  }
  return mounts;
}

// The path of our cgroup in the hierarchy whose /proc/self/cgroup controller list matches `pred`.
template <typename Pred>
std::optional<std::string> own_path(Pred pred) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(':');
    size_t b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    if (pred(line.substr(0, a), line.substr(a + 1, b - a - 1))) return line.substr(b + 1);
  }
  return std::nullopt;
}

std::string join(const Mount& m, const std::string& cgroup_path) {
  std::string rel = cgroup_path;
  if (m.root != "/" && rel.rfind(m.root, 0) == 0) rel = rel.substr(m.root.size());
  if (rel == "/") rel.clear();
  return m.point + rel;
}

}  // namespace

std::optional<std::string> v1_own_dir(const std::string& controller) {
  for (const auto& m : cgroup_mounts()) {
    if (m.fstype != "cgroup") continue;
    auto opts = split(m.super_options, ',');
    if (std::find(opts.begin(), opts.end(), controller) == opts.end()) continue;
    auto path = own_path([&](const std::string&, const std::string& ctls) {
      auto list = split(ctls, ',');
      return std::find(list.begin(), list.end(), controller) != list.end();
    });
    if (path) return join(m, *path);
  }
  return std::nullopt;
}

std::optional<std::string> v2_own_dir() {
  for (const auto& m : cgroup_mounts()) {
    if (m.fstype != "cgroup2") continue;
    auto path = own_path([](const std::string& id, const std::string& ctls) { return id == "0" && ctls.empty(); });
    if (path) return join(m, *path);
  }
  return std::nullopt;
}

std::vector<std::string> v2_controllers(const std::string& dir) {
  auto text = read_file(dir + "/cgroup.controllers");
  std::vector<std::string> out;
  if (!text) return out;
  std::istringstream in(*text);
  std::string c;
  while (in >> c) out.push_back(c);
  return out;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::optional<uint64_t> keyed_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return std::nullopt;
}

Result<OwnedCgroup> OwnedCgroup::create(const std::string& parent, const std::string& name) {
  std::string path = parent + "/" + name;
  if (::mkdir(path.c_str(), 0755) != 0) return Status::from_errno(errno, "mkdir(\"" + path + "\")");
  return OwnedCgroup(path);
}

OwnedCgroup& OwnedCgroup::operator=(OwnedCgroup&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

bool OwnedCgroup::has(const std::string& file) const { return ::access((path_ + "/" + file).c_str(), F_OK) == 0; }

Status OwnedCgroup::write(const std::string& file, const std::string& value) const {
  return write_file(path_ + "/" + file, value);
}

Status write_file(const std::string& path, const std::string& value) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return Status::from_errno(errno, "open(\"" + path + "\")");
  ssize_t n;
  do {
    n = ::write(fd.get(), value.data(), value.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(value.size())) {
    return Status::from_errno(n < 0 ? errno : EIO, "write(\"" + path + "\", \"" + value + "\")");
  }
  return Status::ok();
}

void OwnedCgroup::remove() {
  if (path_.empty()) return;
  // Usually the group is empty by now (the sandbox's pid namespace is gone): try the rmdir first.
  if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) {
    path_.clear();
    return;
  }
  const bool v2_kill = has("cgroup.kill");
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (v2_kill) {
      (void)write("cgroup.kill", "1");
    } else if (auto procs = read("cgroup.procs")) {
      std::istringstream in(*procs);
      pid_t pid;
      while (in >> pid) ::kill(pid, SIGKILL);
    }
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) break;
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  path_.clear();
}

}  // namespace oishell::cgroup
