// Process actions: other processes, the environment, orphans, exit statuses.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "probe.h"

namespace {

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (::nanosleep(&ts, &ts) != 0) {}
}

// Writes a counter to `path` every 50 ms, forever.
[[noreturn]] void heartbeat(const std::string& path) {
  for (long beat = 0;; ++beat) {
    std::string tmp = path + ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      std::string text = std::to_string(beat) + "\n";
      (void)!::write(fd, text.data(), text.size());
      ::close(fd);
      ::rename(tmp.c_str(), path.c_str());
    }
    sleep_ms(50);
  }
}

}  // namespace

OI_PROBE("kill", "PID SIGNAL  (kill(PID, SIGNAL); PID 'self' = getpid())") {
  if (args.size() != 2) return 2;
  pid_t pid = args[0] == "self" ? ::getpid() : static_cast<pid_t>(std::stol(args[0]));
  return probe::report(::kill(pid, std::stoi(args[1])));
}

OI_PROBE("stat", "PATH") {
  if (args.size() != 1) return 2;
  struct stat st;
  return probe::report(::stat(args[0].c_str(), &st));
}

OI_PROBE("getenv", "NAME  (prints the value, or <unset>)") {
  if (args.size() != 1) return 2;
  const char* value = std::getenv(args[0].c_str());
  std::puts(value ? value : "<unset>");
  return 0;
}

OI_PROBE("open_via_child_cwd", "DIR NAME  (a child chdirs to DIR; open /proc/CHILD/cwd/NAME for reading)") {
  if (args.size() != 2) return 2;
  int ready[2];
  if (::pipe(ready) != 0) return probe::report(-1);
  pid_t child = ::fork();
  if (child == 0) {
    if (::chdir(args[0].c_str()) != 0) _exit(1);
    (void)!::write(ready[1], "x", 1);
    ::pause();
    _exit(0);
  }
  char c;
  if (::read(ready[0], &c, 1) != 1) {
    std::puts("child could not chdir");
    return 0;
  }
  std::string path = "/proc/" + std::to_string(child) + "/cwd/" + args[1];
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  probe::report(fd);
  if (fd >= 0) ::close(fd);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  return 0;
}

OI_PROBE("daemonize", "FILE  (double-fork a session leader that rewrites FILE every 50 ms; wait for its first beat)") {
  if (args.size() != 1) return 2;
  pid_t child = ::fork();
  if (child < 0) return probe::report(-1);
  if (child == 0) {
    ::setsid();
    if (::fork() != 0) _exit(0);
    for (int fd = 0; fd < 3; ++fd) ::close(fd);
    heartbeat(args[0]);
  }
  ::waitpid(child, nullptr, 0);
  struct stat st;
  for (int i = 0; i < 200 && ::stat(args[0].c_str(), &st) != 0; ++i) sleep_ms(10);
  return probe::report(::stat(args[0].c_str(), &st));
}

OI_PROBE("heartbeat", "FILE  (rewrite FILE every 50 ms, forever)") {
  if (args.size() != 1) return 2;
  heartbeat(args[0]);
}

OI_PROBE("exit", "CODE  (exit with CODE)") {
  if (args.size() != 1) return 2;
  std::exit(std::stoi(args[0]));
}

OI_PROBE("raise", "SIGNAL  (die of SIGNAL)") {
  if (args.size() != 1) return 2;
  int sig = std::stoi(args[0]);
  ::signal(sig, SIG_DFL);
  ::kill(::getpid(), sig);
  sleep_ms(1000);
  return 1;
}

OI_PROBE("sleep", "MILLISECONDS") {
  if (args.size() != 1) return 2;
  sleep_ms(std::stol(args[0]));
  return probe::report(0);
}
