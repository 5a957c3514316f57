#include "agent/interrupt.h"

#include <fcntl.h>
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

}  // namespace oishell::agent::interrupt
