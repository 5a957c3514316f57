// Filesystem actions.
#include <fcntl.h>
#include <unistd.h>

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
