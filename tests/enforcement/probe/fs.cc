// Filesystem actions.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "probe.h"

namespace {

int open_flags(const std::string& mode) {
  if (mode == "r") return O_RDONLY;
  if (mode == "w") return O_WRONLY;
  if (mode == "rw") return O_RDWR;
  if (mode == "create") return O_WRONLY | O_CREAT | O_EXCL;
  if (mode == "trunc") return O_WRONLY | O_TRUNC;
  return -1;
}

}  // namespace

OI_PROBE("open", "PATH r|w|rw|create|trunc") {
  if (args.size() != 2 || open_flags(args[1]) < 0) return 2;
  int fd = ::open(args[0].c_str(), open_flags(args[1]) | O_CLOEXEC, 0644);
  probe::report(fd);
  if (fd >= 0) ::close(fd);
  return 0;
}

// --- write-side actions outside or inside writable paths ---
OI_PROBE("truncate", "PATH") {
  if (args.size() != 1) return 2;
  return probe::report(::truncate(args[0].c_str(), 0));
}

OI_PROBE("rename", "FROM TO") {
  if (args.size() != 2) return 2;
  return probe::report(::rename(args[0].c_str(), args[1].c_str()));
}

OI_PROBE("chmod", "PATH OCTAL_MODE") {
  if (args.size() != 2) return 2;
  return probe::report(::chmod(args[0].c_str(), static_cast<mode_t>(std::stoul(args[1], nullptr, 8))));
}

OI_PROBE("unlink", "PATH") {
  if (args.size() != 1) return 2;
  return probe::report(::unlink(args[0].c_str()));
}

OI_PROBE("mkdir", "PATH") {
  if (args.size() != 1) return 2;
  return probe::report(::mkdir(args[0].c_str(), 0755));
}

OI_PROBE("write", "PATH TEXT  (open O_WRONLY|O_CREAT|O_TRUNC, write TEXT)") {
  if (args.size() != 2) return 2;
  int fd = ::open(args[0].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return probe::report(-1);
  ssize_t n = ::write(fd, args[1].data(), args[1].size());
  ::close(fd);
  return probe::report(n);
}

// Prints the file's contents (first line) instead of "ok" when it can be read.
OI_PROBE("cat", "PATH") {
  if (args.size() != 1) return 2;
  int fd = ::open(args[0].c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return probe::report(-1);
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n < 0) return probe::report(-1);
  std::string text(buf, static_cast<size_t>(n));
  std::puts(text.empty() ? "<empty>" : text.substr(0, text.find('\n')).c_str());
  return 0;
}

OI_PROBE("open_via_symlink", "TARGET LINK  (symlink LINK -> TARGET, then open LINK for reading)") {
  if (args.size() != 2) return 2;
  if (::symlink(args[0].c_str(), args[1].c_str()) != 0) {
    std::printf("symlink: ");
    return probe::report(-1);
  }
  int fd = ::open(args[1].c_str(), O_RDONLY | O_CLOEXEC);
  probe::report(fd);
  if (fd >= 0) ::close(fd);
  return 0;
}

OI_PROBE("hardlink", "TARGET LINK  (link(TARGET, LINK))") {
  if (args.size() != 2) return 2;
  return probe::report(::link(args[0].c_str(), args[1].c_str()));
}
