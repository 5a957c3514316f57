// The ACP server's JSON-RPC framing (agent/acp/rpc_channel.h) and its answers to bad input, over a pipe pair:
// one message per line, a parse error for what is not JSON (and the connection goes on), an unknown method, a
// prompt for an unknown session, a bad `cwd`. The whole protocol is played by the official client library in
// acp/acp_e2e.mjs.
#include "agent/acp/rpc_channel.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "agent/acp/acp_server.h"

namespace oishell::agent::acp {
namespace {

using nlohmann::json;

struct Pipe {
  Pipe() { EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0); }
  ~Pipe() {
    for (int fd : fds) if (fd >= 0) ::close(fd);
  }
  void close_write() { ::close(std::exchange(fds[1], -1)); }
  int fds[2] = {-1, -1};
};

void write_all(int fd, const std::string& text) { ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size())); }

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(AcpRpcChannel, OneMessagePerLineAndBadLinesSaySo) {
  Pipe in, out;
  RpcChannel channel(in.fds[0], out.fds[1]);
  write_all(in.fds[1], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n\n  \r\n[1,2]\n{oops\n{\"id\":2}");
  in.close_write();
  auto first = channel.read();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->message["method"], "a");
  auto second = channel.read();  // blank lines skipped
  ASSERT_TRUE(second);
  EXPECT_EQ(second->error, "not a JSON-RPC message (an object)");
  auto third = channel.read();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->error, "not JSON");
  auto last = channel.read();  // the last line needs no newline
  ASSERT_TRUE(last);
  EXPECT_EQ(last->message["id"], 2);
  EXPECT_FALSE(channel.read());
}

TEST(AcpRpcChannel, ACallWaitsForItsAnswerAndAbandonEndsIt) {
  Pipe in, out;
  RpcChannel channel(in.fds[0], out.fds[1]);
  std::optional<json> answer;
  std::thread caller([&] { answer = channel.call("session/request_permission", {{"x", 1}}); });
  char buf[256] = {};
  ssize_t n = ::read(out.fds[0], buf, sizeof buf - 1);  // the request, as one line
  ASSERT_GT(n, 0);
  const json request = json::parse(std::string(buf, static_cast<size_t>(n)));
  EXPECT_EQ(request["method"], "session/request_permission");
  EXPECT_FALSE(channel.deliver({{"jsonrpc", "2.0"}, {"id", 999}, {"result", 1}}));  // answers nothing we asked
  EXPECT_TRUE(channel.deliver({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", {{"ok", true}}}}));
  caller.join();
  ASSERT_TRUE(answer);
  EXPECT_EQ((*answer)["ok"], true);
  // Abandoned (a cancelled turn): the waiting call returns nullopt.
  std::thread waiting([&] { answer = channel.call("m", json::object()); });
  (void)::read(out.fds[0], buf, sizeof buf);
  channel.abandon();
  waiting.join();
  EXPECT_FALSE(answer);
}

// The server as a whole, without a model or a sandbox: the errors an editor gets for bad requests.
TEST(AcpServer, BadRequestsGetJsonRpcErrorsAndTheConnectionGoesOn) {
  Pipe in, out;
  write_all(in.fds[1],
            "{not json\n"
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no/such\"}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"x\",\"prompt\":[]}}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/new\",\"params\":{\"cwd\":\"relative\",\"mcpServers\":[]}}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session/load\",\"params\":{\"sessionId\":\"../x\",\"cwd\":\"/\"}}\n"
            "{\"jsonrpc\":\"2.0\",\"method\":\"session/cancel\",\"params\":{\"sessionId\":\"x\"}}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n");
  in.close_write();
  AcpParts parts;
  parts.in_fd = in.fds[0];
  parts.out_fd = out.fds[1];
  struct NoSandbox final : Executor {
    Status start() override { return Status::ok(); }
    Result<ExecResult> exec(const std::string&, const std::string&, ExecObserver&) override {
      return Status::error("no sandbox in this test");
    }
    Status reset(const std::string&) override { return Status::ok(); }
    std::vector<std::string> languages() const override { return {}; }
    std::string policy_summary() const override { return ""; }
    std::string description() const override { return "none"; }
    void shutdown() override {}
  } executor;
  parts.executor = &executor;
  parts.env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  EXPECT_EQ(run_acp(std::move(parts)), 0);  // returns when the input ends
  ::close(std::exchange(out.fds[1], -1));
  std::vector<json> answers;
  std::string text = read_all(out.fds[0]);
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    answers.push_back(json::parse(text.substr(start, end - start)));
  }
  ASSERT_EQ(answers.size(), 6u) << text;  // the cancel, a notification, is not answered
  EXPECT_EQ(answers[0]["error"]["code"], rpc_error::parse_error);
  EXPECT_TRUE(answers[0]["id"].is_null());
  EXPECT_EQ(answers[1]["error"]["code"], rpc_error::method_not_found);
  EXPECT_EQ(answers[2]["error"]["message"], "no such session: `x`");
  EXPECT_EQ(answers[3]["error"]["message"], "`cwd` must be an absolute path");
  EXPECT_EQ(answers[4]["error"]["code"], rpc_error::invalid_params);
  EXPECT_EQ(answers[5]["result"]["protocolVersion"], 1);
  EXPECT_EQ(answers[5]["result"]["agentCapabilities"]["loadSession"], true);
}

}  // namespace
}  // namespace oishell::agent::acp
