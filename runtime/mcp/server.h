#pragma once
// `oishell mcp`: one sandbox served as a Model Context Protocol server (docs/mcp.md), JSON-RPC 2.0 on a pair of
// file descriptors, one message per line (MCP's stdio transport). The initialize handshake negotiates the
// protocol version (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05); the tools (runtime/mcp/tools.h) run in
// the sandbox through the executors' session (runtime/mcp/session_bridge.h); progress notifications carry a
// call's output while it runs; notifications/cancelled interrupts a call; log notifications carry the sandbox's
// denials; network questions become elicitation requests when the client can answer them. Resources: the
// workspace's files and the session's event log.
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_rpc.h"
#include "policy/sandbox_spec.h"
#include "runtime/mcp/results.h"
#include "runtime/mcp/session_bridge.h"
#include "runtime/relay/relay.h"

namespace oishell::mcp {

// The protocol versions served, newest first.
const std::vector<std::string>& supported_protocol_versions();
// The version to answer an initialize that asked for `requested`: the same when it is served, else the newest.
std::string negotiate_protocol_version(const std::string& requested);

struct ServerConfig {
  std::string version;                  // oishell's
  SandboxSpec spec;                     // paths and the mount plan, for path verdicts
  nlohmann::json policy_summary;        // policy/summary.h
  std::string policy_text;              // policy/explain.h
  std::vector<std::string> degradations;
  std::vector<std::string> languages;   // the executors present
  std::string fs_helper;                // oishell-fs, as the sandbox sees it
  bool network_asks = false;            // on_unlisted: ask
  size_t max_message_bytes = rpc::RpcChannel::kMaxLineBytes;
};

class McpServer {
 public:
  McpServer(int in_fd, int out_fd, ServerConfig config);
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // Where the session's and the runtime's events go (the sandbox's EventSink: the bridge is one).
  SessionBridge& bridge() { return bridge_; }
  // The sandbox's ask handler (called on the relay's thread) and how answers go back to the sandbox.
  void on_ask(const relay::AskRequest& ask);
  void set_ask_answer(std::function<void(uint64_t, relay::AskAnswer)> answer) { answer_ask_ = std::move(answer); }
  // What the sandbox could not enforce here (Sandbox::degradations()), for `policy`; before serve().
  void set_degradations(std::vector<std::string> degradations) { config_.degradations = std::move(degradations); }

  // Reads the client's first message and answers it when it is `initialize` (or `ping`), before the sandbox is
  // built, so that the handshake does not wait for it; anything else is kept for serve(). Single-threaded (no
  // session yet): call it before Sandbox::create. False when the input ended first.
  bool greet();
  // Serves messages until the input ends (the client closed it or went away); then what runs is stopped and the
  // session ends. Precondition: bridge().start() was called.
  int serve();

 private:
  enum class Kind { run, fs_read, fs_write, fs_edit, fs_list, resource_list, resource_read };
  struct Call {
    nlohmann::json rpc_id;
    nlohmann::json progress_token;  // null: none
    std::string tool;
    std::string language;           // run_code
    Kind kind = Kind::run;
    std::string path;               // file tools: the sandbox path
    RunOutput output;
    uint64_t progress = 0;
    bool cancelled = false;
  };
  struct Outgoing {  // what the session thread sends once it has let go of mutex_
    std::vector<nlohmann::json> messages;
  };

  void handle(const nlohmann::json& message);
  void handle_request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params);
  void handle_notification(const std::string& method, const nlohmann::json& params);
  nlohmann::json initialize(const nlohmann::json& params);
  void call_tool(const nlohmann::json& id, const nlohmann::json& params);
  // Starts a session request for a call; false (and the call answered) when the session has ended.
  void start_call(const nlohmann::json& id, const nlohmann::json& params, Call call, nlohmann::json request);
  void run_fs(const nlohmann::json& id, const nlohmann::json& params, Kind kind, const std::string& path,
              std::vector<std::string> args, std::optional<std::string> stdin_data);
  nlohmann::json interrupt(const nlohmann::json& arguments);
  nlohmann::json reset(const nlohmann::json& arguments);
  nlohmann::json policy() const;
  void list_resources(const nlohmann::json& id, const nlohmann::json& params);
  void read_resource(const nlohmann::json& id, const nlohmann::json& params);

  // From the bridge (the session's or the relay's thread).
  void on_event(const nlohmann::json& event);
  // With mutex_ held: the answer to a call that ended.
  nlohmann::json finish(Call& call, const nlohmann::json& done);
  void log(const std::string& level, const std::string& text, Outgoing& out);  // with mutex_ held
  void flush(Outgoing& out);
  std::string network_questions() const;

  ServerConfig config_;
  rpc::RpcChannel channel_;
  SessionBridge bridge_;
  std::function<void(uint64_t, relay::AskAnswer)> answer_ask_;
  std::optional<rpc::Incoming> first_;  // read by greet() and left for serve()

  std::mutex mutex_;
  bool initialized_ = false;
  std::string protocol_version_;
  bool client_elicitation_ = false;
  int log_level_ = 1;  // index into the levels; "info"
  uint64_t next_call_ = 1;
  std::map<std::string, Call> calls_;  // by session id ("c1", ...)
  std::set<std::string> languages_used_;
  std::deque<nlohmann::json> event_log_;  // the last kMaxLogEvents runtime events
  std::vector<std::thread> askers_;
  bool session_ended_ = false;
  bool closed_ = false;  // serve() has ended: nobody answers elicitation any more
};

}  // namespace oishell::mcp
