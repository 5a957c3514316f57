// `interpreter --gui` at a real terminal (a pseudo-terminal): the terminal and the page drive one session. A
// message sent from the page is taken while the user is typing at the prompt, and the half-typed line is there again
// afterwards; a question shown at the terminal is answered from the page; Ctrl-D and Ctrl-C at the terminal still end
// it.
// (The page itself, in a browser: tests/agent/gui/gui_e2e.mjs.)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "base/unique_fd.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

// One POST to the page's API, as the page sends it; the response's status code (0: no connection).
int post(int port, const std::string& token, const std::string& path, const json& body) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return 0;
  const std::string payload = body.dump();
  const std::string origin = "http://127.0.0.1:" + std::to_string(port);
  const std::string request = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                              "\r\nOrigin: " + origin + "\r\nAuthorization: Bearer " + token +
                              "\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(payload.size()) + "\r\n\r\n" + payload;
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) return 0;
  std::string response;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd.get(), buf, sizeof buf, 0)) > 0) response.append(buf, static_cast<size_t>(n));
  if (response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

struct PageAddress {
  int port = 0;
  std::string token;
};
// "http://127.0.0.1:PORT/#token=<64 hex>" in what the agent printed (std::regex is avoided: GCC 12 warns in its
// headers under the sanitizers, and warnings are errors).
std::optional<PageAddress> page_address(const std::string& out) {
  static const std::string kPrefix = "http://127.0.0.1:";
  size_t at = out.find(kPrefix);
  if (at == std::string::npos) return std::nullopt;
  at += kPrefix.size();
  size_t slash = out.find("/#token=", at);
  if (slash == std::string::npos || slash == at || slash - at > 5) return std::nullopt;
  const std::string port = out.substr(at, slash - at);
  const std::string token = out.substr(slash + 8, 64);
  if (port.find_first_not_of("0123456789") != std::string::npos || token.size() != 64 ||
      token.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return std::nullopt;
  }
  return PageAddress{std::stoi(port), token};
}

void type(int terminal, const std::string& keys) {
  [[maybe_unused]] ssize_t n = ::write(terminal, keys.data(), keys.size());
}

TEST(GuiAtTheTerminal, APageMessageComesBetweenKeystrokesAndTheHalfTypedLineStays) {
  TempDir workspace, home;
  ScriptedServer server(json::array({say("Page answer."), say("Terminal answer.")}));
  RunOptions o;
  o.args = {"--gui", "--model", "scripted-model", "--api_base", server.base()};
  o.env = {{"OPENAI_API_KEY", "sk-gui"}, {"TERM", "xterm"}};
  o.cwd = workspace.path();
  o.home = home.path();
  int step = 0;
  int status = -1;
  RunResult r = run_in_terminal(o, [&](int terminal, const std::string& out) {
    auto page = page_address(out);
    if (!page) return;
    if (step == 0 && out.find("> ") != std::string::npos) {
      type(terminal, "half typed");
      step = 1;
    } else if (step == 1 && out.find("half typed") != std::string::npos) {
      status = post(page->port, page->token, "/api/message", {{"text", "from the page"}});
      step = 2;
    } else if (step == 2 && out.find("Page answer.") != std::string::npos &&
               out.rfind("half typed") > out.find("Page answer.")) {
      type(terminal, " and more\r");  // the line came back: it is finished at the terminal
      step = 3;
    } else if (step == 3 && out.find("Terminal answer.") != std::string::npos &&
               out.find("> ", out.find("Terminal answer.")) != std::string::npos) {  // at the prompt again
      type(terminal, "\x04");  // Ctrl-D: the session ends, as without --gui
      step = 4;
    }
  });
  EXPECT_FALSE(r.timed_out) << json(r.out).dump();
  EXPECT_EQ(4, step) << json(r.out).dump();
  EXPECT_EQ(202, status);
  EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
  EXPECT_NE(std::string::npos, r.out.find("from the page   (sent from the page)")) << json(r.out).dump();
  auto requests = server.requests();
  ASSERT_EQ(2u, requests.size());
  EXPECT_NE(std::string::npos, conversation_text(requests[0]["body"]).find("from the page"));
  EXPECT_NE(std::string::npos, conversation_text(requests[1]["body"]).find("half typed and more"));
}

TEST(GuiAtTheTerminal, TheConfirmationAtTheTerminalIsAnsweredFromThePage) {
  TempDir workspace, home;
  ScriptedServer server(json::array({tool("shell", "touch ran-it"), say("It ran.")}));
  RunOptions o;
  o.args = {"--gui", "--model", "scripted-model", "--api_base", server.base(), "--safe_mode", "ask"};
  o.env = {{"OPENAI_API_KEY", "sk-gui"}, {"TERM", "xterm"}};
  o.cwd = workspace.path();
  o.home = home.path();
  int step = 0;
  int wrong = -1, answered = -1;
  RunResult r = run_in_terminal(o, [&](int terminal, const std::string& out) {
    auto page = page_address(out);
    if (!page) return;
    if (step == 0 && out.find("> ") != std::string::npos) {
      type(terminal, "touch it\r");
      step = 1;
    } else if (step == 1 && out.find("Would you like to run this code?") != std::string::npos) {
      wrong = post(page->port, page->token, "/api/answer", {{"id", 2}, {"answer", "y"}});  // not the open one
      answered = post(page->port, page->token, "/api/answer", {{"id", 1}, {"answer", "y"}});
      step = 2;
    } else if (step == 2 && out.find("It ran.") != std::string::npos &&
               out.find("> ", out.find("It ran.")) != std::string::npos) {
      type(terminal, "\x03");  // Ctrl-C at the prompt: the session ends (the server's threads take no signal)
      step = 3;
    }
  });
  EXPECT_FALSE(r.timed_out) << json(r.out).dump();
  EXPECT_EQ(3, step) << json(r.out).dump();
  EXPECT_EQ(409, wrong);
  EXPECT_EQ(200, answered);
  EXPECT_NE(std::string::npos, r.out.find("y   (answered on the page)")) << json(r.out).dump();
  struct stat st {};
  EXPECT_EQ(0, ::stat((workspace.path() + "/ran-it").c_str(), &st));
}

}  // namespace
}  // namespace oishell::agent::test

namespace oishell::agent::test {
namespace {

// With a display, the page is handed to the user's browser ($BROWSER here) as a private file that forwards to it:
// the token is on no command line, where every local user could read it (/proc/PID/cmdline).
TEST(GuiBrowser, TheLauncherGetsAPrivateFileNotTheTokensUrl) {
  TempDir workspace, home, bin;
  const std::string log = bin.path() + "/launched.txt";
  const std::string launcher = bin.path() + "/browser";
  {
    std::ofstream script(launcher);
    script << "#!/bin/sh\n{ printf 'argv:%s\\n' \"$*\"; stat -c 'mode:%a' \"$1\"; cat \"$1\"; } > " << log << ".tmp\n"
           << "mv " << log << ".tmp " << log << "\n";
  }
  ::chmod(launcher.c_str(), 0755);
  json slow = say("Hello from a slow model.");
  slow["chunk"] = 1;
  slow["hold_ms"] = 40;  // the session lasts about a second: the launcher has read its file by then
  ScriptedServer server(json::array({slow}));
  RunOptions o;
  o.args = {"--gui", "--model", "scripted-model", "--api_base", server.base(), "hello"};
  o.env = {{"OPENAI_API_KEY", "sk-gui"}, {"DISPLAY", ":99"}, {"BROWSER", launcher}};
  o.cwd = workspace.path();
  o.home = home.path();
  RunResult r = run_interpreter(o);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto page = page_address(r.out);
  ASSERT_TRUE(page) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("(opened in your browser)")) << r.out;
  std::string launched;
  for (int i = 0; i < 100 && launched.empty(); ++i) {
    std::ifstream in(log);
    launched.assign(std::istreambuf_iterator<char>(in), {});
    if (launched.empty()) ::usleep(20000);
  }
  EXPECT_EQ(std::string::npos, launched.substr(0, launched.find('\n')).find(page->token)) << launched;
  EXPECT_NE(std::string::npos, launched.find("argv:/")) << launched;
  EXPECT_NE(std::string::npos, launched.find("mode:600")) << launched;
  EXPECT_NE(std::string::npos, launched.find("url=http://127.0.0.1:" + std::to_string(page->port) + "/#token=" +
                                             page->token)) << launched;
}

}  // namespace
}  // namespace oishell::agent::test
