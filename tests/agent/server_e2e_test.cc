// End to end: `interpreter --server` on an ephemeral loopback port against the scripted model, its code run by
// `oishell supervise` in the openshell sandbox, driven by server_client.py (a websocket client and HTTP requests
// written with Python's standard library, not with this server's code). Each test stops the server with SIGTERM
// and expects a clean exit.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

constexpr const char* kServerModelKey = "sk-oishell-server-SECRET-9a8b7c";

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A connection of the test's own making to the server on 127.0.0.1:`port` (one that stalls); -1 on failure.
int connect_raw(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// What `fd` receives until the peer closes or `timeout_ms` passes; closes it.
std::string read_and_close(int fd, int timeout_ms) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  if (fd >= 0) ::close(fd);
  return got;
}

class ServerE2E : public ::testing::Test {
 protected:
  // Starts the server; once it has printed its URL and token, runs `body`, then sends SIGTERM.
  RunResult serve(ScriptedServer& model, std::vector<std::string> extra, const std::function<void()>& body,
                  std::map<std::string, std::string> env = {}, int stop_signal = SIGTERM) {
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", model.base(), "--sandbox", "openshell", "--server"};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    o.env = {{"OPENAI_API_KEY", kServerModelKey}, {"INTERPRETER_PORT", "0"}};
    for (auto& [k, v] : env) o.env[k] = v;
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.timeout_ms = 180000;
    bool ran = false;
    o.on_output = [&](pid_t pid, const std::string& out) {
      if (ran) return;
      // (No std::regex: GCC 12 warns inside it under the sanitizers, and warnings are errors.)
      const std::string url = "listening on http://127.0.0.1:";
      size_t at = out.find(url), token_at = out.find("token:");
      if (at == std::string::npos || token_at == std::string::npos) return;
      size_t url_end = out.find('\n', at), token_end = out.find('\n', token_at);
      if (url_end == std::string::npos || token_end == std::string::npos) return;
      port_ = std::stoi(out.substr(at + url.size(), url_end - at - url.size()));
      size_t value = out.find_first_not_of(' ', token_at + 6);
      token_ = env.count("INTERPRETER_API_KEY") ? env["INTERPRETER_API_KEY"] : out.substr(value, token_end - value);
      ran = true;
      body();
      ::kill(pid, stop_signal);
    };
    RunResult r = run_interpreter(o);
    EXPECT_TRUE(ran) << "the server never printed its URL and token:\n" << r.out << r.err;
    EXPECT_FALSE(r.timed_out) << r.out << r.err;
    EXPECT_EQ(0, r.exit_code) << r.out << r.err;  // SIGTERM or Ctrl-C: a clean stop
    EXPECT_NE(std::string::npos, r.out.find("interpreter --server: stopped")) << r.out << r.err;
    return r;
  }

  // server_client.py ACTION ARGS... against the running server: its one JSON line.
  json client(std::vector<std::string> args) {
    std::string cmd = std::string("python3 ") + SERVER_CLIENT + " " + std::to_string(port_) + " " +
                      shell_quote(token_);
    for (const auto& a : args) cmd += " " + shell_quote(a);
    cmd += " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while (p && (n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (p) ::pclose(p);
    json j = json::parse(out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << cmd << "\n" << out;
    return j.is_discarded() ? json::object() : j;
  }

  static std::string hex(const std::string& s) {
    static const char* d = "0123456789abcdef";
    std::string h;
    for (unsigned char c : s) {
      h += d[c >> 4];
      h += d[c & 15];
    }
    return h;
  }

  // The content of every chunk of `role` and `type` (and `format`, if given), joined.
  static std::string joined(const json& chunks, const std::string& role, const std::string& type,
                            const std::string& format = "") {
    std::string s;
    for (const auto& c : chunks) {
      if (c.value("role", "") == role && c.value("type", "") == type && c.contains("content") &&
          c["content"].is_string() && (format.empty() || c.value("format", "") == format)) {
        s += c["content"].get<std::string>();
      }
    }
    return s;
  }

  static bool has(const json& chunks, const json& chunk) {
    for (const auto& c : chunks) {
      if (c == chunk) return true;
    }
    return false;
  }

  TempDir workspace_, home_;
  int port_ = 0;
  std::string token_;
};

const json kComplete = {{"role", "server"}, {"type", "status"}, {"content", "complete"}};
const char* kCode = "print('sandboxed', 6 * 7)";

TEST_F(ServerE2E, AWebsocketClientGetsTheAnswerTheCodeAndItsOutput) {
  ScriptedServer model(json::array({tool("python", kCode, "I'll print it."), say("It printed sandboxed 42."),
                                    say("A new conversation.")}));
  json first, second;
  serve(model, {}, [&] {
    first = client({"ws", "print it", "message"});   // {"auth": TOKEN} as the first message
    second = client({"ws", "hello again", "header"});  // X-API-KEY in the handshake
  });
  EXPECT_EQ(101, first["status"]);
  EXPECT_TRUE(first["accept_ok"].get<bool>());
  EXPECT_EQ(json({{"auth", true}}), first["auth"]);
  const json& chunks = first["chunks"];
  EXPECT_EQ("I'll print it.It printed sandboxed 42.", joined(chunks, "assistant", "message")) << chunks.dump(1);
  EXPECT_TRUE(has(chunks, {{"role", "assistant"}, {"type", "code"}, {"format", "python"}, {"start", true}}));
  EXPECT_EQ(kCode, joined(chunks, "assistant", "code"));
  EXPECT_TRUE(has(chunks, {{"role", "computer"}, {"type", "console"}, {"start", true}}));
  EXPECT_EQ("sandboxed 42\n", joined(chunks, "computer", "console", "output")) << chunks.dump(1);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(kComplete, chunks.back());
  EXPECT_EQ(1000, first["close_reply"]);  // a clean close is answered
  EXPECT_EQ("A new conversation.", joined(second["chunks"], "assistant", "message"));
  // The model was told the output, and the second connection started a new conversation.
  auto reqs = model.requests();
  ASSERT_EQ(3u, reqs.size());
  EXPECT_NE(std::string::npos, last_tool_output(reqs[1]["body"]).find("sandboxed 42"));
  EXPECT_EQ(std::string::npos, conversation_text(reqs[2]["body"]).find("print it"));
  EXPECT_NE(std::string::npos, conversation_text(reqs[2]["body"]).find("hello again"));
}

TEST_F(ServerE2E, TheOpenAiEndpointStreamsAndAnswersWhole) {
  ScriptedServer model(json::array({tool("python", kCode, "I'll print it."), say("It printed sandboxed 42."),
                                    tool("python", kCode, "Again."), say("Same again.")}));
  json stream, whole;
  serve(model, {}, [&] {
    stream = client({"openai", "print it", "stream"});
    whole = client({"openai", "print it again", "whole"});
  });
  EXPECT_EQ(200, stream["status"]) << stream.dump(1);
  EXPECT_EQ("text/event-stream", stream["content_type"]);
  EXPECT_TRUE(stream["done"].get<bool>());  // data: [DONE]
  EXPECT_EQ("assistant", stream["first"]["choices"][0]["delta"]["role"]);
  EXPECT_EQ("stop", stream["last"]["choices"][0]["finish_reason"]);
  EXPECT_EQ("chat.completion.chunk", stream["first"]["object"]);
  std::string text = stream["content"];
  EXPECT_NE(std::string::npos, text.find("I'll print it.")) << text;
  EXPECT_NE(std::string::npos, text.find(std::string("```python\n") + kCode + "\n```")) << text;
  EXPECT_NE(std::string::npos, text.find("```output\nsandboxed 42\n```")) << text;
  EXPECT_NE(std::string::npos, text.find("It printed sandboxed 42.")) << text;

  EXPECT_EQ(200, whole["status"]) << whole.dump(1);
  EXPECT_EQ("chat.completion", whole["body"]["object"]);
  EXPECT_EQ("oi", whole["body"]["model"]);
  std::string w = whole["content"];
  EXPECT_NE(std::string::npos, w.find("```output\nsandboxed 42\n```")) << w;
  EXPECT_NE(std::string::npos, w.find("Same again.")) << w;
  // The request's messages are the conversation: the second request's model call knows nothing of the first.
  auto reqs = model.requests();
  ASSERT_EQ(4u, reqs.size());
  EXPECT_EQ(std::string::npos, conversation_text(reqs[2]["body"]).find("It printed sandboxed 42."));
}

TEST_F(ServerE2E, WithoutTheRightTokenNothingReachesTheAgent) {
  ScriptedServer model(json::array({say("should never be asked")}));
  std::vector<json> refused;
  json ws_wrong, ws_bad_header, heartbeat, settings;
  serve(model, {}, [&] {
    refused.push_back(client({"http", "GET", "/heartbeat", "-"}));
    refused.push_back(client({"http", "GET", "/heartbeat", token_ + "0"}));
    refused.push_back(client({"http", "GET", "/settings/auto_run", token_.substr(0, token_.size() - 1)}));
    refused.push_back(client({"openai", "run rm -rf ~", "whole", "not-the-token"}));
    refused.push_back(client({"http", "POST", "/openai/chat/completions", "-",
                              R"({"messages": [{"role": "user", "content": "hi"}]})"}));
    ws_wrong = client({"ws", "run rm -rf ~", "wrong"});
    ws_bad_header = client({"raw", hex("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                                       "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                       "Sec-WebSocket-Version: 13\r\nX-API-KEY: wrong\r\n\r\n")});
    heartbeat = client({"http", "GET", "/heartbeat"});
    settings = client({"http", "GET", "/settings/auto_run"});
  });
  for (const auto& r : refused) {
    EXPECT_EQ(401, r["status"]) << r.dump();
    EXPECT_NE(std::string::npos, r["body"].get<std::string>().find("Authentication failed")) << r.dump();
  }
  EXPECT_EQ(json({{"auth", false}}), ws_wrong["auth"]);
  EXPECT_EQ(1008, ws_wrong["close_code"]);  // policy violation
  EXPECT_TRUE(ws_wrong["chunks"].empty()) << ws_wrong.dump();
  EXPECT_EQ(401, ws_bad_header["status"]);  // no upgrade with a wrong token in the handshake
  EXPECT_EQ(0u, model.requests().size());   // the agent saw none of it
  EXPECT_EQ(200, heartbeat["status"]);
  EXPECT_EQ(R"({"auto_run":true})" "\n", settings["body"]);
}

TEST_F(ServerE2E, BadInputGetsAnErrorAndTheServerKeepsServing) {
  ScriptedServer model(json::array({say("still here")}));
  json garbage, huge_head, chunked, not_loopback, big_frame, unmasked, ping, bad_body, settings, ok;
  serve(model, {}, [&] {
    garbage = client({"raw", hex("\x16\x03\x01 not http at all\r\n\r\n")});
    huge_head = client({"raw", hex("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(20000, 'a') +
                                   "\r\n\r\n")});
    chunked = client({"raw", hex("POST /openai/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-KEY: " + token_ +
                                 "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")});
    not_loopback = client({"raw", hex("GET /heartbeat HTTP/1.1\r\nHost: evil.example:80\r\nX-API-KEY: " + token_ +
                                      "\r\n\r\n")});
    // A frame header announcing 2 GiB: refused from the header (1009), nothing buffered.
    big_frame = client({"ws-raw", "82ff0000000080000000" "01020304"});
    unmasked = client({"ws-raw", hex(std::string("\x81\x02hi", 4))});
    ping = client({"ws-ping"});
    bad_body = client({"http", "POST", "/openai/chat/completions", token_, "{not json"});
    settings = client({"http", "POST", "/settings", token_, R"({"max_turns": 3, "nonsense": 1})"});
    ok = client({"ws", "are you there?", "header"});
  });
  EXPECT_EQ(400, garbage["status"]) << garbage.dump();
  EXPECT_EQ(431, huge_head["status"]) << huge_head.dump();
  EXPECT_EQ(501, chunked["status"]) << chunked.dump();
  EXPECT_EQ(421, not_loopback["status"]) << not_loopback.dump();
  EXPECT_EQ(1009, big_frame["close_code"]) << big_frame.dump();
  EXPECT_EQ(1002, unmasked["close_code"]) << unmasked.dump();
  EXPECT_EQ(json::array({"are-you-there", "between"}), ping["pongs"]);
  ASSERT_EQ(4u, ping["messages"].size()) << ping.dump(1);
  EXPECT_EQ("error", ping["messages"][0]["type"]);  // an end without a start, reassembled across a ping
  EXPECT_EQ(kComplete, ping["messages"][1]);
  EXPECT_EQ("error", ping["messages"][2]["type"]);  // not JSON
  EXPECT_EQ(400, bad_body["status"]);
  EXPECT_EQ(404, settings["status"]);  // nothing applied when one key is unknown
  EXPECT_EQ("still here", joined(ok["chunks"], "assistant", "message")) << ok.dump(1);
  EXPECT_EQ(1u, model.requests().size());
}

TEST_F(ServerE2E, WithAutoRunOffTheWebsocketClientConfirmsAndARequestIsRefused) {
  ScriptedServer model(json::array({tool("python", kCode, "May I?"), say("Ran it."), tool("python", kCode, "May I?"),
                                    say("Understood.")}));
  json ws, openai;
  serve(model, {"--safe_mode", "ask"}, [&] {
    ws = client({"ws", "print it", "message"});  // answers the confirmation with the command `go`
    openai = client({"openai", "print it", "whole"});
  });
  const json& chunks = ws["chunks"];
  EXPECT_TRUE(has(chunks, {{"role", "computer"}, {"type", "confirmation"}, {"format", "execution"},
                           {"content", {{"type", "code"}, {"format", "python"}, {"content", kCode}}}}))
      << chunks.dump(1);
  EXPECT_EQ("sandboxed 42\n", joined(chunks, "computer", "console", "output")) << chunks.dump(1);
  EXPECT_EQ("May I?Ran it.", joined(chunks, "assistant", "message"));
  std::string text = openai["content"];
  EXPECT_NE(std::string::npos, text.find("Not run: auto_run is off")) << text;
  EXPECT_EQ(std::string::npos, text.find("```output")) << text;
  EXPECT_EQ(3u, model.requests().size());  // the refused block ends the request's turn
}

TEST_F(ServerE2E, AClientThatHangsUpStopsTheBlockItStarted) {
  const char* slow = "import time\nprint('started', flush=True)\ntime.sleep(120)\nprint('never')";
  ScriptedServer model(json::array({tool("python", slow), tool("python", slow), tool("python", slow)}));
  json openai, ws, after_openai, after_ws;
  double openai_s = 0, ws_s = 0;
  serve(model, {}, [&] {
    auto t0 = std::chrono::steady_clock::now();
    openai = client({"hangup", "openai", "sleep"});
    after_openai = client({"http", "GET", "/heartbeat"});  // served only once the response is over
    auto t1 = std::chrono::steady_clock::now();
    ws = client({"hangup", "ws", "sleep"});
    after_ws = client({"http", "GET", "/heartbeat"});
    auto t2 = std::chrono::steady_clock::now();
    openai_s = std::chrono::duration<double>(t1 - t0).count();
    ws_s = std::chrono::duration<double>(t2 - t1).count();
  });
  EXPECT_TRUE(openai["saw_output"].get<bool>()) << openai.dump();
  EXPECT_TRUE(ws["saw_output"].get<bool>()) << ws.dump();
  EXPECT_EQ(200, after_openai["status"]);
  EXPECT_EQ(200, after_ws["status"]);
  // Without the stop, each would wait for the block's 120 s sleep.
  EXPECT_LT(openai_s, 60) << "the block ran on after the client left";
  EXPECT_LT(ws_s, 60) << "the block ran on after the client left";
  EXPECT_EQ(2u, model.requests().size());  // once the client has gone, the model is not asked again
}

TEST_F(ServerE2E, OnlyLoopbackAndTheUsersOwnToken) {
  ScriptedServer model(json::array({say("hi")}));
  RunOptions o;
  o.args = {"--model", "scripted-model", "--api_base", model.base(), "--server"};
  o.env = {{"OPENAI_API_KEY", kServerModelKey}, {"INTERPRETER_HOST", "0.0.0.0"}, {"INTERPRETER_PORT", "0"}};
  o.cwd = workspace_.path();
  o.home = home_.path();
  RunResult r = run_interpreter(o);
  EXPECT_EQ(2, r.exit_code) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.err.find("loopback only")) << r.err;

  json heartbeat;
  RunResult served = serve(model, {}, [&] { heartbeat = client({"http", "GET", "/heartbeat", "my-own-long-token-123"}); },
                           {{"INTERPRETER_API_KEY", "my-own-long-token-123"}});
  EXPECT_EQ(200, heartbeat["status"]);
  EXPECT_EQ(std::string::npos, served.out.find("my-own-long-token-123"));  // the user's token is not printed
}

TEST_F(ServerE2E, CtrlCStopsTheServerCleanlyAndControlTokensAreRefused) {
  ScriptedServer model(json::array({say("never")}));
  json control;
  serve(model, {}, [&] { control = client({"openai", "{AUTO_RUN_ON}", "whole"}); }, {}, SIGINT);
  EXPECT_EQ(400, control["status"]) << control.dump();
  EXPECT_EQ(0u, model.requests().size());
}

// Connections are admitted concurrently (issue 33, finding 7): clients that connect and send nothing, trickle a head
// that never ends, or open a websocket and never authenticate hold up nobody; each is answered when its own
// deadline (10 s) passes. Before, the server served one connection at a time, and the heartbeat waited for the
// first stalled connection's deadline.
TEST_F(ServerE2E, AClientThatStallsBeforeAuthenticatingHoldsUpNobody) {
  ScriptedServer model(json::array({say("Not held up.")}));
  json heartbeat, ws, unread_body;
  double heartbeat_s = 0;
  std::string silent_answer, trickle_answer, ws_answer;
  serve(model, {}, [&] {
    int silent = connect_raw(port_);
    int trickle = connect_raw(port_);
    int ws_stall = connect_raw(port_);
    ASSERT_TRUE(silent >= 0 && trickle >= 0 && ws_stall >= 0);
    ASSERT_EQ(10, ::send(trickle, "GET /heart", 10, MSG_NOSIGNAL));
    const std::string upgrade = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    ASSERT_EQ(static_cast<ssize_t>(upgrade.size()), ::send(ws_stall, upgrade.data(), upgrade.size(), MSG_NOSIGNAL));
    ::usleep(300 * 1000);  // the server has taken them in
    ASSERT_EQ(1, ::send(trickle, "b", 1, MSG_NOSIGNAL));
    auto t0 = std::chrono::steady_clock::now();
    heartbeat = client({"http", "GET", "/heartbeat"});
    heartbeat_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ws = client({"ws", "are you held up?", "header"});
    // Without the token a request's head is its last word: the 4 MB it announces are neither awaited nor read.
    unread_body = client({"raw", hex("POST /settings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                                     "\r\nContent-Length: 4000000\r\n\r\n{")});
    silent_answer = read_and_close(silent, 15000);
    trickle_answer = read_and_close(trickle, 15000);
    ws_answer = read_and_close(ws_stall, 15000);
  });
  EXPECT_EQ(200, heartbeat["status"]) << heartbeat.dump();
  // Held up, it would wait for a stalled connection's 10 s deadline; not held, it takes a client's start and one
  // request (1.2 s seen under CI's load): half the deadline tells them apart.
  EXPECT_LT(heartbeat_s, 5.0) << "a stalled connection held up the next one";
  EXPECT_EQ("Not held up.", joined(ws["chunks"], "assistant", "message")) << ws.dump(1);
  EXPECT_EQ(401, unread_body["status"]) << unread_body.dump();
  // The per-connection bound: each stalled connection is answered at its own deadline and closed.
  EXPECT_TRUE(silent_answer.starts_with("HTTP/1.1 408 ")) << silent_answer;
  EXPECT_TRUE(trickle_answer.starts_with("HTTP/1.1 408 ")) << trickle_answer;
  EXPECT_TRUE(ws_answer.starts_with("HTTP/1.1 101 ")) << ws_answer;
  EXPECT_NE(std::string::npos, ws_answer.find(R"({"auth":false})")) << ws_answer;
  EXPECT_NE(std::string::npos, ws_answer.find("authentication failed")) << ws_answer;  // the close frame's reason
  EXPECT_EQ(1u, model.requests().size());
}

// The cap on admissions cannot be turned against a real client: past 16 silent connections each new one cuts off
// the oldest still unauthenticated, and past twice that a flood is closed unanswered, so a client that connects
// after a crowd of silent ones is still admitted at once.
TEST_F(ServerE2E, ACrowdOfSilentConnectionsCannotKeepAClientOut) {
  ScriptedServer model(json::array({say("unused")}));
  json heartbeat;
  double heartbeat_s = 0;
  serve(model, {}, [&] {
    std::vector<int> crowd;
    for (int i = 0; i < 40; ++i) crowd.push_back(connect_raw(port_));
    ::usleep(300 * 1000);
    auto t0 = std::chrono::steady_clock::now();
    heartbeat = client({"http", "GET", "/heartbeat"});
    heartbeat_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int fd : crowd) {
      if (fd >= 0) ::close(fd);
    }
  });
  EXPECT_EQ(200, heartbeat["status"]) << heartbeat.dump();
  // Kept out, it would wait for the crowd's 10 s deadline; let in, it takes a client's start and one request (1.2 s
  // seen under CI's load): half the deadline tells them apart.
  EXPECT_LT(heartbeat_s, 5.0) << "a crowd of silent connections kept the client out";
}

// Origin (issue 33, finding 7): only the server's own origin and those the user allowed; `null` and another
// loopback port's pages are refused (403) before anything else, the websocket's handshake too. Before, any loopback
// origin and `null` were let through.
TEST_F(ServerE2E, OnlyTheServersOwnOriginAndTheAllowedOnes) {
  ScriptedServer model(json::array({say("unused")}));
  std::map<std::string, json> status;
  json ws_null, ws_own;
  std::vector<std::string> refused, allowed;
  serve(model, {}, [&] {
    const std::string own = std::to_string(port_), other = std::to_string(port_ == 65535 ? 1 : port_ + 1);
    refused = {"null", "http://127.0.0.1:" + other, "http://localhost:" + other, "http://127.0.0.1",
               "https://127.0.0.1:" + own, "http://evil.example"};
    allowed = {"http://127.0.0.1:" + own, "http://localhost:" + own, "https://app.example.test"};
    for (const auto* list : {&refused, &allowed}) {
      for (const std::string& origin : *list) {
        status[origin] = client({"raw", hex("GET /heartbeat HTTP/1.1\r\nHost: 127.0.0.1:" + own +
                                            "\r\nX-API-KEY: " + token_ + "\r\nOrigin: " + origin + "\r\n\r\n")});
      }
    }
    const std::string upgrade = "GET / HTTP/1.1\r\nHost: 127.0.0.1:" + own + "\r\nUpgrade: websocket\r\n"
                                "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                "Sec-WebSocket-Version: 13\r\nX-API-KEY: " + token_ + "\r\nOrigin: ";
    ws_null = client({"raw", hex(upgrade + "null\r\n\r\n")});
    ws_own = client({"raw", hex(upgrade + "http://localhost:" + own + "\r\n\r\n")});
  }, {{"INTERPRETER_ALLOWED_ORIGINS", "https://app.example.test/, https://other.example.test"}});
  ASSERT_EQ(6u, refused.size());
  for (const std::string& origin : refused) {
    EXPECT_EQ(403, status[origin]["status"]) << origin << ": " << status[origin].dump();
    EXPECT_NE(std::string::npos, status[origin]["body"].get<std::string>().find("(Origin: " + origin + ")"))
        << status[origin].dump();
  }
  for (const std::string& origin : allowed) {
    EXPECT_EQ(200, status[origin]["status"]) << origin << ": " << status[origin].dump();
  }
  EXPECT_EQ(403, ws_null["status"]) << ws_null.dump();
  EXPECT_EQ(101, ws_own["status"]) << ws_own.dump();
  EXPECT_EQ(0u, model.requests().size());
}

// A chunk whose field has the wrong type (`"start": "yes"`) gets an error naming it; the server keeps serving that
// conversation and the next request. Before, json::value() threw on it and the server died.
TEST_F(ServerE2E, AWrongTypedFieldGetsAnErrorAndTheServerKeepsServing) {
  ScriptedServer model(json::array({say("Still here.")}));
  json ws, heartbeat;
  serve(model, {}, [&] {
    ws = client({"ws-json", json::array({{{"role", "user"}, {"type", "message"}, {"start", "yes"}},
                                         {{"role", "user"}, {"type", "message"}, {"content", "hi"}, {"end", 1}},
                                         {{"role", "user"}, {"type", "message"}, {"start", true}},
                                         {{"role", "user"}, {"type", "message"}, {"content", "are you there?"}},
                                         {{"role", "user"}, {"type", "message"}, {"end", true}}}).dump(),
                 "3"});
    heartbeat = client({"http", "GET", "/heartbeat"});
  });
  const json& m = ws["messages"];
  ASSERT_GE(m.size(), 4u) << ws.dump(1);
  EXPECT_EQ(json({{"role", "server"}, {"type", "error"}, {"content", "`start` must be true or false"}}), m[0]);
  EXPECT_EQ(kComplete, m[1]);
  EXPECT_EQ(json({{"role", "server"}, {"type", "error"}, {"content", "`end` must be true or false"}}), m[2]);
  EXPECT_EQ(kComplete, m[3]);
  EXPECT_EQ("Still here.", joined(m, "assistant", "message")) << ws.dump(1);
  EXPECT_EQ(kComplete, m.back());
  EXPECT_EQ(200, heartbeat["status"]);
  EXPECT_EQ(1u, model.requests().size());
}

}  // namespace
}  // namespace oishell::agent::test
