// `oishell run` on a terminal: the command gets a terminal of the sandbox's own, relayed by the supervisor, and the
// user's terminal never enters the sandbox. Each case runs oishell on a pseudo-terminal the test plays (PtyRun).
// Without the relay the command had the user's terminal as fds 0-2: it could set it raw, change its line
// discipline, push input into it, write the clipboard with OSC 52, and answer oishell's own network question.
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"
#include "pty_harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> oishell_run(const SandboxWorkspace& w, const std::vector<std::string>& command,
                                     const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {oishell_bin(), "run"};
  for (const auto& a : w.args(extra)) argv.push_back(a);
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

bool same_modes(const termios& a, const termios& b) {
  return a.c_iflag == b.c_iflag && a.c_oflag == b.c_oflag && a.c_cflag == b.c_cflag && a.c_lflag == b.c_lflag &&
         std::memcmp(a.c_cc, b.c_cc, sizeof a.c_cc) == 0;
}

TEST(Terminal, TheCommandHasATerminalOfTheSandboxsOwn) {
  SandboxWorkspace w;
  PtyRun run(oishell_run(w, {"/bin/sh", "-c", "tty; [ -t 0 ] && [ -t 1 ] && echo on-a-terminal; exit 7"}));
  EXPECT_EQ(7, run.wait_exit()) << run.output();  // the command's exit status is kept
  EXPECT_NE(std::string::npos, run.output().find("/dev/pts/0")) << run.output();
  EXPECT_NE(std::string::npos, run.output().find("on-a-terminal")) << run.output();
}

TEST(Terminal, ModeChangesInsideDoNotReachTheUsersTerminal) {
  SandboxWorkspace w;
  PtyRun run(oishell_run(w, {"/bin/sh", "-c", "stty raw -echo -icanon; stty -a | head -1; echo done-stty"}));
  termios before = run.modes();
  ASSERT_EQ(0, run.wait_exit()) << run.output();
  EXPECT_NE(std::string::npos, run.output().find("done-stty")) << run.output();
  // Without the relay the user's terminal would stay raw and silent after the command.
  EXPECT_TRUE(same_modes(before, run.modes()));
  EXPECT_TRUE(run.modes().c_lflag & ECHO);
  EXPECT_TRUE(run.modes().c_lflag & ICANON);
}

TEST(Terminal, InjectingInputAndLineDisciplinesStayInside) {
  SandboxWorkspace w;
  // TIOCSTI into the command's own terminal (denied by seccomp), then TIOCSETD on it (denied by seccomp); with the
  // user's terminal as fd 0, both would have acted on it.
  const char* script =
      "import fcntl, struct\n"
      "for name, request, arg in (('TIOCSTI', 0x5412, b'x'), ('TIOCSETD', 0x5423, struct.pack('i', 2))):\n"
      "    try:\n"
      "        fcntl.ioctl(0, request, arg)\n"
      "        print(name, 'ok')\n"
      "    except OSError as e:\n"
      "        print(name, e.errno)\n"
      "print('probes-done')\n";
  PtyRun run(oishell_run(w, {"/usr/bin/python3", "-c", script}));
  ASSERT_EQ(0, run.wait_exit()) << run.output();
  EXPECT_NE(std::string::npos, run.output().find("probes-done")) << run.output();
  EXPECT_NE(std::string::npos, run.output().find("TIOCSTI 1")) << run.output();   // EPERM
  EXPECT_NE(std::string::npos, run.output().find("TIOCSETD 1")) << run.output();  // EPERM
  EXPECT_EQ(0, run.pending_input());  // nothing was typed into the user's terminal
  EXPECT_EQ(N_TTY, run.line_discipline());
}

TEST(Terminal, ClipboardAndOtherEscapesBeyondTheScreenAreFiltered) {
  SandboxWorkspace w;
  PtyRun run(oishell_run(w, {"/bin/sh", "-c",
                             "printf '\\033]52;c;ZXZpbA==\\007'; printf '\\033P+q544e\\033\\\\';"
                             "printf '\\033]0;a-title\\007visible-text\\033[1mbold\\033[0m\\n'"}));
  ASSERT_EQ(0, run.wait_exit()) << run.output();
  const std::string& out = run.output();
  EXPECT_EQ(std::string::npos, out.find("\x1b]52")) << "OSC 52 reached the terminal";
  EXPECT_EQ(std::string::npos, out.find("ZXZpbA==")) << "the clipboard payload reached the terminal";
  EXPECT_EQ(std::string::npos, out.find("\x1bP")) << "a DCS reached the terminal";
  // The neighbours: a title, text and colours pass untouched.
  EXPECT_NE(std::string::npos, out.find("\x1b]0;a-title\x07")) << out;
  EXPECT_NE(std::string::npos, out.find("visible-text\x1b[1mbold\x1b[0m")) << out;
}

TEST(Terminal, CtrlCReachesTheCommandThroughItsTerminal) {
  SandboxWorkspace w;
  PtyRun run(oishell_run(w, {"/bin/sh", "-c", "echo ready; exec sleep 30"}));
  ASSERT_TRUE(run.wait_for("ready")) << run.output();
  std::this_thread::sleep_for(200ms);
  run.type("\x03");  // raw mode: the byte goes to the sandbox's terminal, whose line discipline sends SIGINT
  EXPECT_EQ(130, run.wait_exit(10s)) << run.output();
}

TEST(Terminal, TheWindowSizeFollowsTheUsersTerminal) {
  SandboxWorkspace w;
  PtyRun run(oishell_run(w, {"/bin/sh", "-c",
                             "stty size; trap 'stty size; exit 0' WINCH; echo waiting; "
                             "i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; exit 3"}),
             30, 100);
  ASSERT_TRUE(run.wait_for("waiting")) << run.output();
  EXPECT_NE(std::string::npos, run.output().find("30 100")) << run.output();
  run.resize(40, 120);
  EXPECT_EQ(0, run.wait_exit()) << run.output();
  EXPECT_NE(std::string::npos, run.output().find("40 120")) << run.output();
}

// A local HTTP server on 127.0.0.1 (the only address a test may reach), answering "hello" to each request.
class LocalServer {
 public:
  LocalServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 8);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        char buf[4096];
        (void)!::read(c, buf, sizeof buf);
        const char reply[] = "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        (void)!::write(c, reply, sizeof reply - 1);
        ::close(c);
      }
    });
  }
  ~LocalServer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// The command waits, then fetches http://local.test (pinned to the local server) through the proxy; unlisted, so
// oishell asks the user on the terminal.
std::vector<std::string> ask_run(const SandboxWorkspace& w, const LocalServer& server) {
  std::string policy = w.path("ask.yaml");
  std::string text = "version: 1\nextends: " + w.policy() +
                     "\nnetwork:\n  on_unlisted: ask\n  hosts: {local.test: 127.0.0.1}\n  allow_private: [127.0.0.0/8]\n";
  FILE* f = std::fopen(policy.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  std::vector<std::string> argv = {oishell_bin(), "run", "--policy", policy, "--workspace", w.ws(), "--",
                                   "/bin/sh", "-c",
                                   "echo started; sleep 1; curl -s -o /dev/null -w 'code=%{http_code}\\n' "
                                   "http://local.test:" + std::to_string(server.port()) + "/"};
  return argv;
}

TEST(Terminal, APreTypedAnswerCannotAnswerTheNetworkQuestion) {
  SandboxWorkspace w;
  LocalServer server;
  PtyRun run(ask_run(w, server));
  ASSERT_TRUE(run.wait_for("started")) << run.output();
  run.type("y\r");  // typed before the question exists: it is the command's input, never the answer
  ASSERT_TRUE(run.wait_for("wants to connect to local.test")) << run.output();
  std::this_thread::sleep_for(300ms);
  run.type("n\r");
  EXPECT_EQ(0, run.wait_exit()) << run.output();
  EXPECT_NE(std::string::npos, run.output().find("code=403")) << run.output();
}

// Types `keys` once the network question is on the terminal; the command's fetch then reports `outcome`. Whatever
// the answer, the question's single-key mode does not outlive it: the terminal is cooked and echoes, as the test
// started it, and nothing typed is left over for the next reader.
void answer_the_question(const std::string& keys, const std::string& outcome) {
  SandboxWorkspace w;
  LocalServer server;
  PtyRun run(ask_run(w, server));
  ASSERT_TRUE(run.wait_for("wants to connect to local.test")) << run.output();
  std::this_thread::sleep_for(200ms);
  run.type(keys);
  EXPECT_EQ(0, run.wait_exit()) << run.output();
  EXPECT_NE(std::string::npos, run.output().find(outcome)) << run.output();
  EXPECT_EQ(tcflag_t(ICANON | ECHO), run.modes().c_lflag & (ICANON | ECHO));
  EXPECT_EQ(0, run.pending_input());
}

TEST(Terminal, AnAnswerTypedAtTheQuestionIsTaken) { answer_the_question("y\r", "code=200"); }

// The key alone answers: before, the question waited for Enter and the request went unanswered.
TEST(Terminal, TheQuestionTakesTheKeyAlone) { answer_the_question("y", "code=200"); }

TEST(Terminal, AWordTypedWholeIsTakenToo) { answer_the_question("always\r", "code=200"); }

TEST(Terminal, EnterAloneAtTheQuestionIsNo) { answer_the_question("\r", "code=403"); }

}  // namespace
}  // namespace oishell::test
