#include "runtime/outside/cgroup_fs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
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

std::string parent_dir(const std::string& dir) {
  const size_t slash = dir.rfind('/');
  return slash == 0 || slash == std::string::npos ? std::string("/") : dir.substr(0, slash);
}

std::vector<std::string> words_of(const std::string& path) {
  std::vector<std::string> out;
  auto text = read_file(path);
  if (!text) return out;
  for (std::string_view line : split(*text, '\n')) {
    for (std::string_view word : split(line, ' ')) {
      if (!word.empty()) out.emplace_back(word);
    }
  }
  return out;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::string joined(const std::vector<std::string>& list, const char* sep) {
  std::string out;
  for (const auto& item : list) out += (out.empty() ? "" : sep) + item;
  return out;
}

class KernelTreeOps final : public TreeOps {
 public:
  int make_dir(const std::string& path) const override { return ::mkdir(path.c_str(), 0755) == 0 ? 0 : errno; }
  int remove_dir(const std::string& path) const override { return ::rmdir(path.c_str()) == 0 ? 0 : errno; }
  bool may_write(const std::string& path) const override {
    return ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) == 0;
  }
};

}  // namespace

const TreeOps& kernel_tree_ops() {
  static const KernelTreeOps ops;
  return ops;
}

OwnCgroups OwnCgroups::read() {
  return parse(read_file("/proc/self/mountinfo").value_or(""), read_file("/proc/self/cgroup").value_or(""));
}

OwnCgroups OwnCgroups::parse(std::string_view mountinfo, std::string membership, const TreeOps& ops) {
  OwnCgroups own;
  for (std::string_view line : split(mountinfo, '\n')) {
    // id parent dev root point options [optional...] - fstype source super_options
    size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    auto head = split(line.substr(0, dash), ' ');
    auto tail = split(line.substr(dash + 3), ' ');
    if (head.size() < 5 || tail.size() < 3) continue;
    if (tail[0] != "cgroup" && tail[0] != "cgroup2") continue;
    own.mounts_.push_back({std::string(head[3]), std::string(head[4]), std::string(tail[0]), std::string(tail[2])});
  }
  own.membership_ = std::move(membership);
  own.ops_ = &ops;
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

const OwnCgroups::Mount* OwnCgroups::v2_mount() const {
  for (const auto& m : mounts_) {
    if (m.fstype == "cgroup2") return &m;
  }
  return nullptr;
}

std::optional<std::string> OwnCgroups::v2_dir() const {
  const Mount* m = v2_mount();
  if (!m) return std::nullopt;
  auto path = own_path(membership_, [](std::string_view id, std::string_view ctls) {
    return id == "0" && ctls.empty();
  });
  if (!path) return std::nullopt;
  return join(m->root, m->point, *path);
}

std::optional<std::string> OwnCgroups::v2_mount_point() const {
  const Mount* m = v2_mount();
  if (!m) return std::nullopt;
  return m->point;
}

std::optional<std::string> v1_own_dir(const std::string& controller) { return OwnCgroups::read().v1_dir(controller); }

std::optional<std::string> v2_own_dir() { return OwnCgroups::read().v2_dir(); }

std::vector<std::string> v2_controllers(const std::string& dir) { return words_of(dir + "/cgroup.controllers"); }

std::vector<std::string> v2_subtree_control(const std::string& dir) {
  return words_of(dir + "/cgroup.subtree_control");
}

Result<V2Parent> find_v2_parent(const OwnCgroups& own, const std::vector<std::string>& controllers) {
  const auto dir = own.v2_dir();
  const auto top = own.v2_mount_point();
  if (!dir || !top) return Status::error("not mounted");
  const TreeOps& ops = own.ops();
  std::string refusals;
  auto refuse = [&refusals](const std::string& candidate, const std::string& why) {
    refusals += (refusals.empty() ? "" : "; ") + candidate + ": " + why;
  };
  // Ours and its ancestors within the mount, as far as they are delegated to this process (ownership nests: above
  // the first that is not, none is).
  std::vector<std::string> candidates;
  for (std::string c = *dir;; c = parent_dir(c)) {
    if (!ops.may_write(c) || !ops.may_write(c + "/cgroup.procs")) {
      refuse(c, "not delegated to this process (no write access to it or its cgroup.procs)");
      break;
    }
    candidates.push_back(c);
    if (c.size() <= top->size()) break;
  }
  for (const auto& c : candidates) {  // one that passes them down already
    const auto passed = v2_subtree_control(c);
    if (std::all_of(controllers.begin(), controllers.end(), [&](const auto& x) { return contains(passed, x); })) {
      return V2Parent{c, {}};
    }
  }
  for (const auto& c : candidates) {  // one where they can be enabled
    const auto passed = v2_subtree_control(c);
    const auto offered = v2_controllers(c);
    V2Parent parent{c, {}};
    std::string unoffered;
    for (const auto& x : controllers) {
      if (contains(passed, x)) continue;
      parent.enable.push_back(x);
      if (!contains(offered, x)) unoffered += (unoffered.empty() ? "" : ", ") + x;
    }
    if (!unoffered.empty()) {
      refuse(c, "offers no " + unoffered + " controller (cgroup.controllers: " + joined(offered, " ") + ")");
    } else if (!ops.may_write(c + "/cgroup.subtree_control")) {
      refuse(c, "cgroup.subtree_control not writable");
    } else if (c != *top && !words_of(c + "/cgroup.procs").empty()) {
      refuse(c, "holds processes (a cgroup with processes cannot pass " + joined(parent.enable, ", ") + " down)");
    } else {
      return parent;
    }
  }
  return Status::error("no cgroup v2 directory delegated to this process passes " + joined(controllers, ", ") +
                       " down: " + refusals);
}

Status enable_controllers(const V2Parent& parent) {
  if (parent.enable.empty()) return Status::ok();
  std::string enable;
  for (const auto& c : parent.enable) enable += (enable.empty() ? "+" : " +") + c;
  return write_file(parent.dir + "/cgroup.subtree_control", enable);
}

std::string sandbox_group_name() {
  static std::atomic<int> counter{0};
  return "oishell-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

CgroupMounts cgroup_mounts(std::string_view mountinfo) {
  CgroupMounts out;
  bool v2_seen = false;
  auto field = [](std::string_view* text) {  // the next space-separated field, removed from *text
    const size_t end = std::min(text->find(' '), text->size());
    const std::string_view f = text->substr(0, end);
    text->remove_prefix(std::min(end + 1, text->size()));
    return f;
  };
  while (!mountinfo.empty()) {
    const size_t end = std::min(mountinfo.find('\n'), mountinfo.size());
    std::string_view line = mountinfo.substr(0, end);
    mountinfo.remove_prefix(std::min(end + 1, mountinfo.size()));
    // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTIONS"
    const size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    std::string_view rest = line.substr(dash + 3);
    const std::string_view type = field(&rest);
    if (type != "cgroup" && type != "cgroup2") continue;
    field(&rest);  // source
    std::string_view options = field(&rest);
    for (int i = 0; i < 4; ++i) field(&line);
    const std::string_view mount_point = field(&line);
    if (out.mount_point.empty() || (type == "cgroup2" && !v2_seen)) out.mount_point = std::string(mount_point);
    v2_seen = v2_seen || type == "cgroup2";
    while (!options.empty()) {
      const size_t comma = std::min(options.find(','), options.size());
      if (options.substr(0, comma) == "favordynmods") out.favordynmods = true;
      options.remove_prefix(std::min(comma + 1, options.size()));
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

Result<OwnedCgroup> OwnedCgroup::create(const std::string& parent, const std::string& name, const TreeOps& ops) {
  std::string path = parent + "/" + name;
  if (int err = ops.make_dir(path); err != 0) return Status::from_errno(err, "mkdir(\"" + path + "\")");
  return OwnedCgroup(path, ops);
}

OwnedCgroup& OwnedCgroup::operator=(OwnedCgroup&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::move(other.path_);
    ops_ = other.ops_;
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
  if (int err = ops_->remove_dir(path_); err == 0 || err == ENOENT) {
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
    const int err = ops_->remove_dir(path_);
    if (err == 0 || err == ENOENT || err != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  path_.clear();
}

}  // namespace oishell::cgroup
