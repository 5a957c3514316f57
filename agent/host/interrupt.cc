#include "agent/host/interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace oishell::agent::interrupt {
namespace {

std::atomic<unsigned> g_count{0};
int g_pipe[2] = {-1, -1};

void count_one() {
  g_count.fetch_add(1, std::memory_order_relaxed);
  if (g_pipe[1] >= 0) {
    char c = 1;
    [[maybe_unused]] ssize_t n = ::write(g_pipe[1], &c, 1);  // a full pipe already wakes the reader
  }
}

void on_sigint(int) {
  int saved = errno;
  count_one();
  errno = saved;
}

}  // namespace

void install() {
  if (g_pipe[0] >= 0) return;
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_pipe[0] = g_pipe[1] = -1;
  }
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking read of the user's answer returns EINTR
  ::sigaction(SIGINT, &sa, nullptr);
}

int wake_fd() { return g_pipe[0]; }

unsigned count() { return g_count.load(std::memory_order_relaxed); }

void request() { count_one(); }

void drain() {
  if (g_pipe[0] < 0) return;
  char buf[64];
  while (::read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

Ready wait_readable(int fd, int other, unsigned seen) {
  while (true) {
    if (count() != seen) return Ready::interrupted;
    pollfd fds[3] = {{fd, POLLIN, 0}, {other, POLLIN, 0}, {g_pipe[0], POLLIN, 0}};
    int n = ::poll(fds, 3, -1);  // a negative fd is skipped
    if (n < 0) {
      if (errno == EINTR) continue;  // the count says whether it was a Ctrl-C
      return Ready::error;
    }
    if (fds[0].revents) return Ready::fd;  // what was typed first (a hang-up too: the read sees the end)
    if (fds[1].revents) return Ready::other;
    if (fds[2].revents && count() == seen) {
      // Bytes of Ctrl-Cs from before this wait: emptied, so that they do not wake it again. A Ctrl-C counted
      // meanwhile puts its byte back: whoever waits next (a running block's loop) must see it too.
      drain();
      if (count() != seen) {
        char c = 1;
        [[maybe_unused]] ssize_t w = ::write(g_pipe[1], &c, 1);
      }
    }
  }
}

}  // namespace oishell::agent::interrupt
