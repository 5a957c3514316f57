#include "pty_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace oishell::test {

PtyRun::PtyRun(const std::vector<std::string>& argv, unsigned short rows, unsigned short cols) {
  winsize size{};
  size.ws_row = rows;
  size.ws_col = cols;
  pid_ = ::forkpty(&master_, nullptr, nullptr, &size);
  if (pid_ < 0) throw std::runtime_error(std::string("forkpty: ") + std::strerror(errno));
  if (pid_ == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::fcntl(master_, F_SETFD, FD_CLOEXEC);
  slave_ = ::open(::ptsname(master_), O_RDWR | O_NOCTTY | O_CLOEXEC);
}

PtyRun::~PtyRun() {
  if (pid_ > 0 && status_ < 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (slave_ >= 0) ::close(slave_);
  if (master_ >= 0) ::close(master_);
}

void PtyRun::pump(int timeout_ms) {
  pollfd p{master_, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return;
  char buffer[65536];
  ssize_t n = ::read(master_, buffer, sizeof buffer);
  if (n > 0) output_.append(buffer, static_cast<size_t>(n));
}

bool PtyRun::wait_for(const std::string& needle, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (output_.find(needle) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pump(static_cast<int>(std::min<long>(left.count(), 100)));
  }
  return true;
}

int PtyRun::wait_exit(std::chrono::milliseconds timeout) {
  if (status_ >= 0) return status_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int wstatus = 0;
  for (;;) {
    pid_t done = ::waitpid(pid_, &wstatus, WNOHANG);
    if (done == pid_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &wstatus, 0);
      break;
    }
    pump(20);
  }
  // What the program wrote before it ended (the slave stays open here, so no EIO ends this early).
  for (int i = 0; i < 5; ++i) pump(10);
  status_ = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return status_;
}

void PtyRun::type(const std::string& keys) { (void)!::write(master_, keys.data(), keys.size()); }

void PtyRun::resize(unsigned short rows, unsigned short cols) {
  winsize size{};
  size.ws_row = rows;
  size.ws_col = cols;
  ::ioctl(master_, TIOCSWINSZ, &size);
}

termios PtyRun::modes() const {
  termios t{};
  ::tcgetattr(slave_, &t);
  return t;
}

int PtyRun::line_discipline() const {
  int ldisc = -1;
  ::ioctl(slave_, TIOCGETD, &ldisc);
  return ldisc;
}

int PtyRun::pending_input() const {
  int n = -1;
  ::ioctl(slave_, FIONREAD, &n);
  return n;
}

}  // namespace oishell::test
