// Ctrl-C at a prompt or a question (agent/host/interrupt.h): a wait for input ends on a Ctrl-C counted after the wait's
// reader began, even one that landed before the wait itself (a plain blocking read lost it: the handler ran, then
// the read blocked; seen once in CI as a --gui session that Ctrl-C did not end), and on nothing older.
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "agent/host/interrupt.h"
#include "agent/user/user_input.h"
#include "base/unique_fd.h"

namespace oishell::agent {
namespace {

struct Pipe {
  Pipe() {
    int p[2];
    EXPECT_EQ(0, ::pipe(p));
    r.reset(p[0]);
    w.reset(p[1]);
  }
  UniqueFd r, w;
};

bool pending(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST(InterruptWait, ACtrlCJustBeforeTheWaitEndsIt) {
  interrupt::install();
  Pipe input;
  const unsigned seen = interrupt::count();
  interrupt::request();  // lands after the reader began, before it waits
  EXPECT_EQ(interrupt::Ready::interrupted, interrupt::wait_readable(input.r.get(), -1, seen));
  // Its byte stays for whoever waits next (a running block's loop polls the same pipe).
  EXPECT_TRUE(pending(interrupt::wake_fd()));
  interrupt::drain();
}

TEST(InterruptWait, OlderCtrlCsDoNotEndItAndTypedInputDoes) {
  interrupt::install();
  interrupt::request();  // before the read began: not for this prompt
  Pipe input;
  const unsigned seen = interrupt::count();
  std::thread typist([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    [[maybe_unused]] ssize_t n = ::write(input.w.get(), "x", 1);
  });
  EXPECT_EQ(interrupt::Ready::fd, interrupt::wait_readable(input.r.get(), -1, seen));
  typist.join();
  EXPECT_FALSE(pending(interrupt::wake_fd()));  // the stale byte was emptied
}

TEST(InterruptWait, ALineReaderEndsOnACtrlCWhileItWaits) {
  interrupt::install();
  Pipe input;
  LineReader reader(input.r.get());
  std::thread ctrl_c([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    interrupt::request();  // no signal interrupts the read: only the self-pipe can end it
  });
  bool interrupted = false;
  EXPECT_FALSE(reader.read_line(&interrupted));
  ctrl_c.join();
  EXPECT_TRUE(interrupted);
  interrupt::drain();
  // The neighbour: a line typed ends the next read with the line.
  ASSERT_EQ(3, ::write(input.w.get(), "hi\n", 3));
  EXPECT_EQ("hi", reader.read_line(&interrupted).value_or("?"));
  EXPECT_FALSE(interrupted);
}

}  // namespace
}  // namespace oishell::agent
