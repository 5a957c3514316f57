#include "seal_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

namespace oishell::test {

std::string errno_result(long rc) {
  if (rc >= 0) return "ok";
  const char* name = strerrorname_np(errno);
  return name ? name : "errno " + std::to_string(errno);
}

void Child::report(const std::string& key, const std::string& value) const {
  std::string line = key + "=" + value + "\n";
  [[maybe_unused]] ssize_t n = ::write(report_fd_, line.data(), line.size());
}

void Child::result(const std::string& key, long rc) const { report(key, errno_result(rc)); }

bool Child::send_fd(int fd) const {
  char byte = 'F';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
  return ::sendmsg(fd_socket_, &msg, MSG_NOSIGNAL) == 1;
}

namespace {

// Receives one fd (or -1 when the child closed the socket without sending one).
int receive_fd(int socket, int timeout_ms) {
  pollfd p{socket, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return -1;
  char byte;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC) != 1) return -1;
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  if (cm == nullptr || cm->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  std::memcpy(&fd, CMSG_DATA(cm), sizeof(int));
  return fd;
}

void parse_lines(std::string& buffer, ChildReport& report) {
  size_t pos;
  while ((pos = buffer.find('\n')) != std::string::npos) {
    std::string line = buffer.substr(0, pos);
    buffer.erase(0, pos + 1);
    report.log += line + "\n";
    size_t eq = line.find('=');
    if (eq != std::string::npos) report.values[line.substr(0, eq)] = line.substr(eq + 1);
  }
}

}  // namespace

ChildReport run_in_child(const std::function<int(const Child&)>& body, const SeccompSpec* notify_spec,
                         EventSink* sink, int timeout_seconds) {
  ChildReport report;
  int rp[2], sp[2];
  if (::pipe2(rp, O_CLOEXEC) != 0 || ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
    report.log = "pipe/socketpair failed";
    return report;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    report.log = "fork failed";
    return report;
  }
  if (pid == 0) {
    ::close(rp[0]);
    ::close(sp[0]);
    Child child(rp[1], sp[1]);
    int rc = body(child);
    ::_exit(rc);
  }
  ::close(rp[1]);
  ::close(sp[1]);
  ::fcntl(rp[0], F_SETFL, O_NONBLOCK);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);

  std::unique_ptr<SeccompNotifier> notifier;
  NullEventSink null_sink;
  if (notify_spec != nullptr) {
    int fd = receive_fd(sp[0], timeout_seconds * 1000);
    if (fd >= 0) notifier = std::make_unique<SeccompNotifier>(UniqueFd(fd), *notify_spec, sink ? *sink : null_sink);
  }
  ::close(sp[0]);

  std::string buffer;
  int wstatus = 0;
  bool exited = false;
  while (!exited) {
    pollfd fds[2] = {{rp[0], POLLIN, 0}, {notifier ? notifier->fd() : -1, POLLIN, 0}};
    ::poll(fds, 2, 50);
    char buf[4096];
    ssize_t n;
    while ((n = ::read(rp[0], buf, sizeof buf)) > 0) buffer.append(buf, static_cast<size_t>(n));
    if (notifier && (fds[1].revents & POLLIN)) {
      if (!notifier->handle_ready().is_ok()) notifier.reset();
    }
    if (notifier && (fds[1].revents & (POLLHUP | POLLERR))) notifier.reset();
    pid_t w = ::waitpid(pid, &wstatus, WNOHANG);
    if (w == pid) exited = true;
    if (!exited && std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      report.log += "[timed out: child killed]\n";
      while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
      exited = true;
    }
  }
  char buf[4096];
  ssize_t n;
  while ((n = ::read(rp[0], buf, sizeof buf)) > 0) buffer.append(buf, static_cast<size_t>(n));
  ::close(rp[0]);
  parse_lines(buffer, report);
  report.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return report;
}

}  // namespace oishell::test
