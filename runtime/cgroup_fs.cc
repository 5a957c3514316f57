#include "runtime/cgroup_fs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <charconv>
#include <string_view>
#include <thread>

#include "base/unique_fd.h"

namespace oishell::cgroup {
namespace {

// Plain reads and string_views: these run on every sandbox start, where iostreams cost more than the kernel's
// work (their locale set-up alone is cold code).
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

bool has_item(std::string_view list, std::string_view item, char sep) {
  for (std::string_view x : split(list, sep)) {
    if (x == item) return true;
  }
  return false;
}

// The path of our cgroup in the hierarchy whose /proc/self/cgroup line ("id:controllers:path") matches `pred`.
template <typename Pred>
std::optional<std::string> own_path(std::string_view membership, Pred pred) {
  for (std::string_view line : split(membership, '\n')) {
    size_t a = line.find(':');
    size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    if (pred(line.substr(0, a), line.substr(a + 1, b - a - 1))) return std::string(line.substr(b + 1));
  }
  return std::nullopt;
}

std::string join(const std::string& root, const std::string& point, const std::string& cgroup_path) {
  std::string rel = cgroup_path;
  if (root != "/" && rel.rfind(root, 0) == 0) rel = rel.substr(root.size());
  if (rel == "/") rel.clear();
  return point + rel;
}

}  // namespace

OwnCgroups OwnCgroups::read() {
  OwnCgroups own;
  if (auto text = read_file("/proc/self/mountinfo")) {
    for (std::string_view line : split(*text, '\n')) {
      // id parent dev root point options [optional...] - fstype source super_options
      size_t dash = line.find(" - ");
      if (dash == std::string_view::npos) continue;
      auto head = split(line.substr(0, dash), ' ');
      auto tail = split(line.substr(dash + 3), ' ');
      if (head.size() < 5 || tail.size() < 3) continue;
      if (tail[0] != "cgroup" && tail[0] != "cgroup2") continue;
      own.mounts_.push_back({std::string(head[3]), std::string(head[4]), std::string(tail[0]), std::string(tail[2])});
    }
  }
  own.membership_ = read_file("/proc/self/cgroup").value_or("");
  return own;
}

std::optional<std::string> OwnCgroups::v1_dir(const std::string& controller) const {
  for (const auto& m : mounts_) {
    if (m.fstype != "cgroup" || !has_item(m.super_options, controller, ',')) continue;
    auto path = own_path(membership_, [&](std::string_view, std::string_view ctls) {
      return has_item(ctls, controller, ',');
    });
    if (path) return join(m.root, m.point, *path);
  }
  return std::nullopt;
}

std::optional<std::string> OwnCgroups::v2_dir() const {
  for (const auto& m : mounts_) {
    if (m.fstype != "cgroup2") continue;
    auto path = own_path(membership_, [](std::string_view id, std::string_view ctls) { return id == "0" && ctls.empty(); });
    if (path) return join(m.root, m.point, *path);
  }
  return std::nullopt;
}

std::optional<std::string> v1_own_dir(const std::string& controller) { return OwnCgroups::read().v1_dir(controller); }

std::optional<std::string> v2_own_dir() { return OwnCgroups::read().v2_dir(); }

std::vector<std::string> v2_controllers(const std::string& dir) {
  std::vector<std::string> out;
  auto text = read_file(dir + "/cgroup.controllers");
  if (!text) return out;
  for (std::string_view line : split(*text, '\n')) {
    for (std::string_view c : split(line, ' ')) {
      if (!c.empty()) out.emplace_back(c);
    }
  }
  return out;
}

std::optional<std::string> read_file(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string text;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return text;
    text.append(buf, static_cast<size_t>(n));
  }
}

std::optional<uint64_t> keyed_value(const std::string& text, const std::string& key) {
  for (std::string_view line : split(text, '\n')) {
    auto words = split(line, ' ');
    if (words.size() != 2 || words[0] != key) continue;
    uint64_t value = 0;
    auto [end, err] = std::from_chars(words[1].data(), words[1].data() + words[1].size(), value);
    if (err == std::errc() && end == words[1].data() + words[1].size()) return value;
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
      for (std::string_view line : split(*procs, '\n')) {
        pid_t pid = 0;
        auto [end, err] = std::from_chars(line.data(), line.data() + line.size(), pid);
        if (err == std::errc() && end == line.data() + line.size() && pid > 0) ::kill(pid, SIGKILL);
      }
    }
    if (::rmdir(path_.c_str()) == 0 || errno == ENOENT) break;
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  path_.clear();
}

}  // namespace oishell::cgroup
