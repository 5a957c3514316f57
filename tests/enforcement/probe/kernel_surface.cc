// Kernel surface actions: socket families and protocols that autoload modules, line disciplines, personality.
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <string>

#include "probe.h"

namespace {

int family_of(const std::string& name) {
  static const std::map<std::string, int> families = {
      {"unix", AF_UNIX}, {"inet", AF_INET}, {"inet6", AF_INET6}, {"tipc", AF_TIPC}};
  auto it = families.find(name);
  return it == families.end() ? -1 : it->second;
}

int type_of(const std::string& name) {
  static const std::map<std::string, int> types = {
      {"stream", SOCK_STREAM}, {"dgram", SOCK_DGRAM}, {"seqpacket", SOCK_SEQPACKET}};
  auto it = types.find(name);
  return it == types.end() ? -1 : it->second;
}

}  // namespace

// Nothing is sent: the socket is made and closed.
OI_PROBE("socket", "unix|inet|inet6|tipc stream|dgram|seqpacket PROTOCOL  (socket(), then close)") {
  if (args.size() != 3 || family_of(args[0]) < 0 || type_of(args[1]) < 0) return 2;
  int fd = ::socket(family_of(args[0]), type_of(args[1]) | SOCK_CLOEXEC, std::stoi(args[2]));
  probe::report(fd);
  if (fd >= 0) ::close(fd);
  return 0;
}

OI_PROBE("socketpair", "unix|inet|inet6|tipc stream|dgram|seqpacket  (socketpair(FAMILY, TYPE, 0), then close)") {
  if (args.size() != 2 || family_of(args[0]) < 0 || type_of(args[1]) < 0) return 2;
  int pair[2];
  int rc = ::socketpair(family_of(args[0]), type_of(args[1]) | SOCK_CLOEXEC, 0, pair);
  probe::report(rc);
  if (rc == 0) {
    ::close(pair[0]);
    ::close(pair[1]);
  }
  return 0;
}

OI_PROBE("ldisc", "get|set  (a new pty from /dev/ptmx; TIOCGETD, or TIOCSETD to N_TTY, the discipline it has)") {
  if (args.size() != 1 || (args[0] != "get" && args[0] != "set")) return 2;
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  int slave = -1;
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0 ||
      (slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
    std::printf("setup failed: %s\n", strerrorname_np(errno));
    return 0;
  }
  int ldisc = 0;  // N_TTY: setting it reloads the default discipline and loads no module
  return probe::report(::ioctl(slave, args[0] == "get" ? TIOCGETD : TIOCSETD, &ldisc));
}

OI_PROBE("personality", "VALUE  (personality(VALUE), e.g. 0xffffffff; prints 'persona 0x...', the previous persona)") {
  if (args.size() != 1) return 2;
  long rc = ::syscall(SYS_personality, std::stoul(args[0], nullptr, 0));
  if (rc < 0) return probe::report(rc);
  std::printf("persona 0x%lx\n", rc);
  return 0;
}
