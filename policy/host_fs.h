#pragma once
// The host filesystem facts compilation needs (does a path exist, what kind, where does it really lead), behind a
// seam so tests compile against a fixed, fake host and golden files stay stable.
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace oishell {

class HostFs {
 public:
  enum class Kind { missing, directory, file, symlink, other };
  virtual ~HostFs() = default;
  // lstat-like: a symlink is reported as a symlink.
  virtual Kind kind(const std::string& path) const = 0;
  // The link's contents, for a symlink.
  virtual std::optional<std::string> read_link(const std::string& path) const = 0;
  // realpath(3): every symlink resolved; nullopt when some component is missing.
  virtual std::optional<std::string> real_path(const std::string& path) const = 0;
  // The first `max_bytes` of a regular file (symlinks followed); nullopt when it cannot be read.
  virtual std::optional<std::string> read_file(const std::string& path, size_t max_bytes) const = 0;
  // The names in a directory (not . and ..), sorted; empty when it cannot be listed.
  virtual std::vector<std::string> list_dir(const std::string& path) const = 0;
  // True when `path` (symlinks followed) is a unix socket (`kind` reports one as `other`).
  virtual bool is_socket(const std::string& path) const = 0;

  // The process's view of the host.
  static const HostFs& real();
};

// Another HostFs's answers, remembered: one compile asks about the same paths many times (the workspace, /usr, the
// protected names) and the host is taken to hold still while it runs. Not for longer than one compile.
class CachedHostFs : public HostFs {
 public:
  explicit CachedHostFs(const HostFs& inner) : inner_(inner) {}
  Kind kind(const std::string& path) const override;
  std::optional<std::string> read_link(const std::string& path) const override;
  std::optional<std::string> real_path(const std::string& path) const override;
  std::optional<std::string> read_file(const std::string& path, size_t max_bytes) const override {
    return inner_.read_file(path, max_bytes);
  }
  std::vector<std::string> list_dir(const std::string& path) const override { return inner_.list_dir(path); }
  bool is_socket(const std::string& path) const override;

 private:
  const HostFs& inner_;
  mutable std::map<std::string, Kind> kinds_;
  mutable std::map<std::string, std::optional<std::string>> links_;
  mutable std::map<std::string, std::optional<std::string>> real_paths_;
  mutable std::map<std::string, bool> sockets_;
};

// A host described by hand (tests): paths -> kind, symlinks -> targets. Parent directories are implied.
class FakeHostFs : public HostFs {
 public:
  FakeHostFs& dir(const std::string& path);
  FakeHostFs& file(const std::string& path, std::string contents = "");
  FakeHostFs& symlink(const std::string& path, const std::string& target);
  FakeHostFs& socket(const std::string& path);  // kind `other`, is_socket true

  Kind kind(const std::string& path) const override;
  std::optional<std::string> read_link(const std::string& path) const override;
  std::optional<std::string> real_path(const std::string& path) const override;
  std::optional<std::string> read_file(const std::string& path, size_t max_bytes) const override;
  std::vector<std::string> list_dir(const std::string& path) const override;
  bool is_socket(const std::string& path) const override;

 private:
  std::map<std::string, Kind> kinds_;
  std::map<std::string, std::string> contents_;
  std::map<std::string, std::string> links_;
  std::set<std::string> sockets_;
};

}  // namespace oishell
