// Limit actions: a memory hog and a fork bomb.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "probe.h"

OI_PROBE("memhog", "MIB  (allocate and touch MIB MiB in 8 MiB steps; 'ok', or 'ENOMEM after N MiB')") {
  if (args.size() != 1) return 2;
  long want = std::stol(args[0]);
  for (long mib = 0; mib < want; mib += 8) {
    void* p = std::malloc(8u << 20);
    if (p == nullptr) {
      std::printf("ENOMEM after %ld MiB\n", mib);
      return 0;
    }
    std::memset(p, 1, 8u << 20);
  }
  std::puts("ok");
  return 0;
}

OI_PROBE("forkbomb", "N  (fork up to N sleeping children; 'ok', or 'EAGAIN after K'; then kill them)") {
  if (args.size() != 1) return 2;
  long n = std::stol(args[0]);
  std::vector<pid_t> kids;
  std::string result = "ok";
  for (long i = 0; i < n; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::pause();
      ::_exit(0);
    }
    if (pid < 0) {
      const char* name = strerrorname_np(errno);
      result = std::string(name ? name : "EUNKNOWN") + " after " + std::to_string(kids.size());
      break;
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) ::kill(k, SIGKILL);
  for (pid_t k : kids) ::waitpid(k, nullptr, 0);
  std::puts(result.c_str());
  return 0;
}
