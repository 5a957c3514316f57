// `oishell mcp`'s server (runtime/mcp/server.h): its lifecycle and the messages coming in (the handshake,
// JSON-RPC's checks, the dispatch of requests and notifications), and the network questions asked of the client.
// The tools and resources (server_calls.cc) start session requests; what the session reports comes back as answers
// and notifications (server_events.cc).
#include "runtime/mcp/server.h"

#include <algorithm>

#include "runtime/mcp/protocol_names.h"
#include "runtime/mcp/tools.h"

namespace oishell::mcp {
namespace {

using nlohmann::json;

bool valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

}  // namespace

const std::vector<std::string>& supported_protocol_versions() {
  static const std::vector<std::string> versions = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  return versions;
}

std::string negotiate_protocol_version(const std::string& requested) {
  const auto& versions = supported_protocol_versions();
  return std::find(versions.begin(), versions.end(), requested) != versions.end() ? requested : versions.front();
}

McpServer::McpServer(int in_fd, int out_fd, ServerConfig config)
    : config_(std::move(config)),
      channel_(in_fd, out_fd, config_.max_message_bytes),
      bridge_([this](const json& event) { on_event(event); }) {}

McpServer::~McpServer() {
  channel_.close();
  for (auto& t : askers_) t.join();
}

std::string McpServer::network_questions() const {
  if (!config_.network_asks) return "none";
  return client_elicitation_ ? "elicitation" : "denied";
}

// ---- messages in ----

bool McpServer::greet() {
  auto incoming = channel_.read();
  if (!incoming) return false;
  const json& m = incoming->message;
  const std::string method = m.is_object() && m.contains("method") && m["method"].is_string() ? m["method"] : "";
  if (incoming->error.empty() && (method == "initialize" || method == "ping")) {
    handle(m);
  } else {
    first_ = std::move(incoming);
  }
  return true;
}

int McpServer::serve() {
  for (;;) {
    auto incoming = first_ ? std::exchange(first_, std::nullopt) : channel_.read();
    if (!incoming) break;
    if (!incoming->error.empty()) {
      channel_.respond_error(nullptr, incoming->code ? incoming->code : rpc::error::parse_error,
                             (incoming->code == rpc::error::invalid_request ? "invalid request: " : "parse error: ") +
                                 incoming->error);
      continue;
    }
    handle(incoming->message);
  }
  // The client is gone (or closed our input): questions waiting are denied (while the sandbox they answer still
  // lives), what runs is stopped.
  channel_.close();
  std::vector<std::thread> askers;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;  // later questions are denied on the relay's thread, without a thread of their own
    askers.swap(askers_);
  }
  for (auto& t : askers) t.join();
  bridge_.client_gone();
  bridge_.stop();
  return 0;
}

void McpServer::handle(const json& message) {
  const bool has_id = message.contains("id");
  const json id = has_id ? message["id"] : json(nullptr);
  if (!message.contains("method")) {
    if (has_id && (message.contains("result") || message.contains("error"))) (void)channel_.deliver(message);
    return;  // a response to nothing we asked: dropped
  }
  if (message.value("jsonrpc", json()) != "2.0") {
    if (has_id) channel_.respond_error(valid_id(id) ? id : json(nullptr), rpc::error::invalid_request,
                                       "invalid request: `jsonrpc` must be \"2.0\"");
    return;
  }
  if (!message["method"].is_string()) {
    if (has_id) channel_.respond_error(valid_id(id) ? id : json(nullptr), rpc::error::invalid_request,
                                       "invalid request: `method` must be a string");
    return;
  }
  if (has_id && !valid_id(id)) {
    channel_.respond_error(nullptr, rpc::error::invalid_request, "invalid request: `id` must be a string or an integer");
    return;
  }
  const std::string method = message["method"];
  if (message.contains("params") && !message["params"].is_object()) {
    if (has_id) channel_.respond_error(id, rpc::error::invalid_params, "`params` must be an object");
    return;
  }
  const json params = message.contains("params") ? message["params"] : json::object();
  if (!has_id) return handle_notification(method, params);
  try {
    handle_request(id, method, params);
  } catch (const json::exception& e) {
    channel_.respond_error(id, rpc::error::invalid_params, std::string("bad parameters: ") + e.what());
  }
}

void McpServer::handle_notification(const std::string& method, const json& params) {
  if (method == "notifications/initialized") {
    std::lock_guard lock(mutex_);
    initialized_ = true;
    return;
  }
  if (method == "notifications/cancelled") {
    const json request_id = params.value("requestId", json());
    std::vector<std::string> stop;
    {
      std::lock_guard lock(mutex_);
      for (auto& [session_id, call] : calls_) {
        if (call.rpc_id == request_id && !call.cancelled) {
          call.cancelled = true;
          stop.push_back(session_id);
        }
      }
    }
    for (const auto& session_id : stop) (void)bridge_.send({{"op", "interrupt"}, {"id", session_id}});
    return;
  }
  // Anything else (roots/list_changed, progress from the client, ...) needs nothing from this server.
}

json McpServer::initialize(const json& params) {
  if (!params.contains("protocolVersion") || !params["protocolVersion"].is_string())
    throw std::invalid_argument("initialize: `protocolVersion` must be a string");
  const std::string version = negotiate_protocol_version(params["protocolVersion"].get<std::string>());
  const json capabilities = params.value("capabilities", json::object());
  std::lock_guard lock(mutex_);
  protocol_version_ = version;
  if (auto e = capabilities.find("elicitation"); e != capabilities.end() && e->is_object()) {
    // 2025-11-25: {} or {form: {}} can answer a form; {url: {}} alone cannot.
    client_elicitation_ = e->empty() || e->contains("form");
  }
  std::string instructions =
      "Tools that run code, commands and file operations inside an oishell sandbox (Linux namespaces, Landlock, "
      "seccomp, an allowlisting network relay). run_code keeps each language's state between calls. Paths are the "
      "sandbox's view; the workspace is " + config_.spec.cwd + ". Call `policy` to learn what the sandbox allows.";
  return {{"protocolVersion", version},
          {"capabilities",
           {{"tools", {{"listChanged", false}}},
            {"resources", {{"subscribe", false}, {"listChanged", false}}},
            {"logging", json::object()}}},
          {"serverInfo", {{"name", "oishell"}, {"title", "oishell sandbox"}, {"version", config_.version}}},
          {"instructions", instructions}};
}

void McpServer::handle_request(const json& id, const std::string& method, const json& params) {
  try {
    if (method == "initialize") return channel_.respond(id, initialize(params));
    if (method == "ping") return channel_.respond(id, json::object());
    if (method == "tools/list") {
      bool asks;
      {
        std::lock_guard lock(mutex_);
        asks = client_elicitation_;
      }
      std::string questions = !config_.network_asks ? "destinations the policy does not list are refused."
                              : asks ? "a destination the policy does not list is asked about (elicitation)."
                                     : "destinations the policy does not list are refused (this client cannot be asked).";
      return channel_.respond(id, {{"tools", tool_list(config_.languages, questions)}});
    }
    if (method == "tools/call") return call_tool(id, params);
    if (method == "logging/setLevel") {
      const int level = level_index(params.value("level", std::string()));
      if (level < 0) throw std::invalid_argument("logging/setLevel: `level` must be one of debug, info, notice, "
                                                 "warning, error, critical, alert, emergency");
      std::lock_guard lock(mutex_);
      log_level_ = level;
      return channel_.respond(id, json::object());
    }
    if (method == "resources/list") return list_resources(id, params);
    if (method == "resources/read") return read_resource(id, params);
    if (method == "resources/templates/list") {
      return channel_.respond(
          id, {{"resourceTemplates",
                json::array({{{"uriTemplate", "file://{+path}"},
                              {"name", "workspace-file"},
                              {"title", "A file in the sandbox's workspace"},
                              {"description", "A file under " + config_.spec.cwd + ", as the sandbox reads it"}}})}});
    }
    channel_.respond_error(id, rpc::error::method_not_found, "method not found: " + method);
  } catch (const std::invalid_argument& e) {
    channel_.respond_error(id, rpc::error::invalid_params, e.what());
  }
}

// ---- network questions ----

void McpServer::on_ask(const relay::AskRequest& ask) {
  bool elicit;
  std::string version;
  {
    std::lock_guard lock(mutex_);
    elicit = client_elicitation_ && !closed_;
    version = protocol_version_;
  }
  const std::string where = ask.host + ":" + std::to_string(ask.port);
  if (!elicit) {
    if (answer_ask_) answer_ask_(ask.id, relay::AskAnswer::deny);
    Outgoing out;
    {
      std::lock_guard lock(mutex_);
      log("warning",
          "network: " + where + " is not listed by the policy; denied (this client does not declare elicitation, so "
                                "it cannot be asked)",
          out);
    }
    flush(out);
    return;
  }
  json params = {{"message", "Code in the oishell sandbox wants to connect to " + where +
                                 ", which its policy does not list. Allow it?"},
                 {"requestedSchema",
                  {{"type", "object"},
                   {"properties",
                    {{"decision",
                      {{"type", "string"},
                       {"title", "Connect to " + where},
                       {"enum", {"allow_once", "allow_always", "deny"}},
                       {"enumNames", {"Allow once", "Allow for this session", "Deny"}}}}}},
                   {"required", {"decision"}}}}};
  if (version == "2025-11-25") params["mode"] = "form";
  std::unique_lock lock(mutex_);
  if (closed_) {
    lock.unlock();
    if (answer_ask_) answer_ask_(ask.id, relay::AskAnswer::deny);
    return;
  }
  askers_.emplace_back([this, params = std::move(params), id = ask.id] {
    auto result = channel_.call("elicitation/create", params);
    relay::AskAnswer answer = relay::AskAnswer::deny;
    if (result && result->value("action", std::string()) == "accept") {
      const std::string decision = result->value("content", json::object()).value("decision", std::string());
      if (decision == "allow_once") answer = relay::AskAnswer::allow_once;
      if (decision == "allow_always") answer = relay::AskAnswer::allow_always;
    }
    if (answer_ask_) answer_ask_(id, answer);
  });
}

}  // namespace oishell::mcp
