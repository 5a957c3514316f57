#include "agent/llm/key_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/host/atomic_file.h"
#include "base/unique_fd.h"

namespace oishell::agent {
namespace {

constexpr size_t kMaxKeyBytes = 4096;

bool valid_variable(const std::string& v) {
  if (v.empty() || v.size() > 64) return false;
  for (char c : v) {
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> KeyStore::get(const std::string& variable, std::string* problem) const {
  if (!valid_variable(variable)) return std::nullopt;
  std::string p = path(variable);
  UniqueFd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    if (errno != ENOENT && problem) *problem = p + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0 ||
      static_cast<size_t>(st.st_size) > kMaxKeyBytes) {
    if (problem) *problem = p + " is not used: it must be a small regular file of yours that only you can read (0600)";
    return std::nullopt;
  }
  std::string key(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < key.size()) {
    ssize_t n = ::read(fd.get(), key.data() + got, key.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  key.resize(got);
  while (!key.empty() && (key.back() == '\n' || key.back() == '\r' || key.back() == ' ')) key.pop_back();
  if (key.empty()) return std::nullopt;
  return key;
}

Status KeyStore::save(const std::string& variable, const std::string& key) const {
  if (!valid_variable(variable)) return Status::error("not a key variable: " + variable);
  OI_TRY(make_dirs(dir_, 0700));
  // make_dirs leaves an existing directory as it was: the key goes only into a directory nobody else can list.
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0) return Status::from_errno(errno, "stat(" + dir_ + ")");
  if ((st.st_mode & 077) != 0 && ::chmod(dir_.c_str(), 0700) != 0) {
    return Status::from_errno(errno, "chmod(" + dir_ + ", 0700)");
  }
  return write_file_atomic(path(variable), key + "\n", 0600).with_context("saving the API key");
}

std::vector<std::string> KeyStore::all() const {
  std::vector<std::string> keys;
  DIR* d = ::opendir(dir_.c_str());
  if (!d) return keys;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!valid_variable(name)) continue;
    if (auto k = get(name)) keys.push_back(*k);
  }
  ::closedir(d);
  return keys;
}

}  // namespace oishell::agent
