#include "agent/host/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "base/unique_fd.h"

namespace oishell::agent {

Result<PrivateFile> PrivateFile::create(std::string_view prefix, const std::string& name, std::string_view content) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp == '/' ? tmp : "/tmp") + "/" + std::string(prefix) + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return Status::from_errno(errno, "mkdtemp(\"" + tmpl + "\")");
  PrivateFile file;
  file.dir_ = tmpl;  // removed by `file` from here on, whatever fails next
  std::string path = tmpl + "/" + name;
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return Status::from_errno(errno, "open(\"" + path + "\")");
  file.path_ = path;
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd.get(), content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::from_errno(errno, "write(\"" + path + "\")");
    off += static_cast<size_t>(n);
  }
  return file;
}

PrivateFile& PrivateFile::operator=(PrivateFile&& other) noexcept {
  if (this != &other) {
    remove();
    dir_ = std::exchange(other.dir_, {});
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

void PrivateFile::remove() {
  if (!path_.empty()) ::unlink(path_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
  path_.clear();
  dir_.clear();
}

}  // namespace oishell::agent
