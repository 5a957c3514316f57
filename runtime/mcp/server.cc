#include "runtime/mcp/server.h"

#include <algorithm>
#include <array>

#include "base/base64.h"
#include "runtime/executors/language.h"
#include "runtime/mcp/tools.h"

namespace oishell::mcp {
namespace {

using nlohmann::json;

constexpr std::array<const char*, 8> kLevels = {"debug",    "info",  "notice", "warning",
                                                "error",    "critical", "alert", "emergency"};
constexpr size_t kMaxLogEvents = 10000;
constexpr size_t kMaxImagesPerCall = 32;
constexpr size_t kMaxDenialsPerCall = 50;
constexpr uint64_t kDefaultRead = 8u << 20;
constexpr size_t kMaxHelperOutput = 64u << 20;
const char* const kEventLogUri = "oishell://session/events";
// MCP's code for a resource that does not exist (2025-11-25).
constexpr int kResourceNotFound = -32002;

int level_index(const std::string& level) {
  for (size_t i = 0; i < kLevels.size(); ++i) {
    if (level == kLevels[i]) return static_cast<int>(i);
  }
  return -1;
}

json notification(const std::string& method, json params) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

json response(const json& id, json result) { return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}; }

json error_response(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

bool valid_id(const json& id) { return id.is_string() || id.is_number_integer(); }

// The request's progress token (`_meta.progressToken`), or null.
json progress_token(const json& params) {
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return nullptr;
  auto token = meta->find("progressToken");
  if (token == meta->end() || !(token->is_string() || token->is_number_integer())) return nullptr;
  return *token;
}

std::optional<uint64_t> timeout_ms(const json& arguments) {
  if (!arguments.contains("timeout")) return std::nullopt;
  const double seconds = arguments["timeout"].get<double>();
  return static_cast<uint64_t>(std::max(1.0, std::min(seconds * 1000.0, 1e12)));
}

const char* mime_of(const std::string& path) {
  auto ends = [&](const char* suffix) { return path.ends_with(suffix); };
  if (ends(".png")) return "image/png";
  if (ends(".jpg") || ends(".jpeg")) return "image/jpeg";
  if (ends(".gif")) return "image/gif";
  if (ends(".json")) return "application/json";
  if (ends(".md")) return "text/markdown";
  if (ends(".html") || ends(".htm")) return "text/html";
  if (ends(".py")) return "text/x-python";
  return nullptr;
}

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

// ---- tools ----

void McpServer::call_tool(const json& id, const json& params) {
  if (!params.contains("name") || !params["name"].is_string())
    throw std::invalid_argument("tools/call: `name` must be a string");
  const std::string name = params["name"];
  const json arguments = params.value("arguments", json::object());
  static const std::set<std::string> kTools = {"run_code",   "run_command", "read_file", "write_file", "edit_file",
                                               "list_files", "interrupt",   "policy",    "reset"};
  if (!kTools.count(name)) return channel_.respond_error(id, rpc::error::invalid_params, "Unknown tool: " + name);
  if (!arguments.is_object()) return channel_.respond(id, error_result("`arguments` must be an object"));
  if (std::string problem = check_arguments(name, arguments, config_.languages); !problem.empty())
    return channel_.respond(id, error_result(name + ": " + problem));

  if (name == "policy") return channel_.respond(id, policy());
  if (name == "interrupt") return channel_.respond(id, interrupt(arguments));
  if (name == "reset") return channel_.respond(id, reset(arguments));
  if (name == "run_code") {
    const executors::Language* language = executors::find_language(arguments["language"].get<std::string>());
    if (!language) {
      std::string names;
      for (const auto& l : config_.languages) names += (names.empty() ? "" : ", ") + l;
      return channel_.respond(id, error_result("run_code: unknown language `" + arguments["language"].get<std::string>() +
                                               "` (this sandbox has " + names + ")"));
    }
    Call call;
    call.tool = name;
    call.language = language->name;
    json request = {{"op", "exec"}, {"language", language->name}, {"code", arguments["code"]}};
    if (auto t = timeout_ms(arguments)) request["timeout_ms"] = *t;
    return start_call(id, params, std::move(call), std::move(request));
  }
  if (name == "run_command") {
    json argv = arguments.contains("argv") ? arguments["argv"]
                                           : json::array({"bash", "-c", arguments["command"].get<std::string>()});
    json request = {{"op", "run"}, {"argv", argv}};
    if (arguments.contains("cwd")) request["cwd"] = sandbox_path(arguments["cwd"], config_.spec);
    if (arguments.contains("stdin")) request["stdin"] = arguments["stdin"];
    if (auto t = timeout_ms(arguments)) request["timeout_ms"] = *t;
    Call call;
    call.tool = name;
    return start_call(id, params, std::move(call), std::move(request));
  }
  const std::string path = sandbox_path(arguments.value("path", std::string()), config_.spec);
  if (name == "read_file") {
    const uint64_t offset = arguments.value("offset", uint64_t{0});
    const uint64_t length = arguments.value("length", kDefaultRead);
    return run_fs(id, params, Kind::fs_read, path, {"read", path, std::to_string(offset), std::to_string(length)},
                  std::nullopt);
  }
  if (name == "write_file") {
    return run_fs(id, params, Kind::fs_write, path,
                  {"write", path, arguments.value("append", false) ? "append" : "truncate"},
                  arguments["content"].get<std::string>());
  }
  if (name == "edit_file") {
    json edit = {{"old", arguments["old_text"]},
                 {"new", arguments["new_text"]},
                 {"replace_all", arguments.value("replace_all", false)}};
    return run_fs(id, params, Kind::fs_edit, path, {"edit", path}, edit.dump());
  }
  // list_files
  return run_fs(id, params, Kind::fs_list, path, {"list", path, std::to_string(arguments.value("depth", 1))},
                std::nullopt);
}

void McpServer::run_fs(const json& id, const json& params, Kind kind, const std::string& path,
                       std::vector<std::string> args, std::optional<std::string> stdin_data) {
  json argv = json::array({config_.fs_helper});
  for (auto& a : args) argv.push_back(std::move(a));
  json request = {{"op", "run"}, {"argv", std::move(argv)}};
  if (stdin_data) request["stdin"] = std::move(*stdin_data);
  Call call;
  call.tool = params.value("name", std::string("resources/read"));
  call.kind = kind;
  call.path = path;
  start_call(id, params, std::move(call), std::move(request));
}

void McpServer::start_call(const json& id, const json& params, Call call, json request) {
  std::string session_id;
  {
    std::lock_guard lock(mutex_);
    if (session_ended_) {
      channel_.respond_error(id, rpc::error::internal_error, "the sandbox's session has ended");
      return;
    }
    session_id = "c" + std::to_string(next_call_++);
    call.rpc_id = id;
    call.progress_token = progress_token(params);
    if (call.kind == Kind::run && !call.language.empty()) languages_used_.insert(call.language);
    calls_.emplace(session_id, std::move(call));
  }
  request["id"] = session_id;
  if (!bridge_.send(request)) {
    bool answer = false;
    {
      std::lock_guard lock(mutex_);
      answer = calls_.erase(session_id) > 0;
    }
    if (answer) channel_.respond_error(id, rpc::error::internal_error, "the sandbox's session has ended");
  }
}

json McpServer::interrupt(const json& arguments) {
  std::string only;
  if (arguments.contains("language")) {
    const executors::Language* language = executors::find_language(arguments["language"].get<std::string>());
    if (!language) return error_result("interrupt: unknown language `" + arguments["language"].get<std::string>() + "`");
    only = language->name;
  }
  std::vector<std::string> ids;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [session_id, call] : calls_) {
      if (call.kind != Kind::run) continue;
      if (!only.empty() && call.language != only) continue;
      ids.push_back(session_id);
    }
  }
  for (const auto& session_id : ids) (void)bridge_.send({{"op", "interrupt"}, {"id", session_id}});
  return structured_result({{"interrupted", ids.size()}},
                           ids.empty() ? "nothing was running" : "interrupted " + std::to_string(ids.size()) + " call(s)");
}

json McpServer::reset(const json& arguments) {
  std::vector<std::string> languages;
  if (arguments.contains("language")) {
    const executors::Language* language = executors::find_language(arguments["language"].get<std::string>());
    if (!language || std::find(config_.languages.begin(), config_.languages.end(), language->name) == config_.languages.end())
      return error_result("reset: no language `" + arguments["language"].get<std::string>() + "` in this sandbox");
    languages.push_back(language->name);
  } else {
    std::lock_guard lock(mutex_);
    languages.assign(languages_used_.begin(), languages_used_.end());
  }
  for (const auto& language : languages) (void)bridge_.send({{"op", "reset"}, {"language", language}});
  std::string text = languages.empty() ? "no executor has run yet" : "reset:";
  for (const auto& l : languages) text += " " + l;
  return structured_result({{"reset", languages}}, text);
}

json McpServer::policy() const {
  std::string questions;
  const std::string mode = network_questions();
  if (mode == "elicitation") {
    questions = "A destination the policy does not list is asked about: this client is shown the question "
                "(elicitation) and its answer decides (allow once, allow always, deny).";
  } else if (mode == "denied") {
    questions = "The policy asks about destinations it does not list, but this client cannot be asked "
                "(it does not declare elicitation): they are denied.";
  } else {
    questions = "Destinations the policy does not list are denied without asking.";
  }
  std::string text = config_.policy_text + "\nNetwork questions here: " + questions + "\n";
  if (!config_.degradations.empty()) {
    text += "\nOn this machine:\n";
    for (const auto& d : config_.degradations) text += "- " + d + "\n";
  }
  return structured_result({{"text", text}, {"network_questions", mode}, {"summary", config_.policy_summary}}, text);
}

// ---- resources ----

void McpServer::list_resources(const json& id, const json& params) {
  Call call;
  call.kind = Kind::resource_list;
  call.path = config_.spec.cwd;
  call.tool = "resources/list";
  json argv = json::array({config_.fs_helper, "list", config_.spec.cwd, "4"});
  start_call(id, params, std::move(call), {{"op", "run"}, {"argv", std::move(argv)}});
}

void McpServer::read_resource(const json& id, const json& params) {
  const std::string uri = params.value("uri", std::string());
  if (uri == kEventLogUri) {
    std::string text;
    {
      std::lock_guard lock(mutex_);
      for (const auto& event : event_log_) text += event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    }
    return channel_.respond(
        id, {{"contents", json::array({{{"uri", uri}, {"mimeType", "application/jsonl"}, {"text", text}}})}});
  }
  const std::string prefix = "file://";
  if (!uri.starts_with(prefix)) {
    return channel_.respond_error(id, kResourceNotFound, "Resource not found: " + uri);
  }
  const std::string path = sandbox_path(uri.substr(prefix.size()), config_.spec);
  const std::string& workspace = config_.spec.cwd;
  if (path != workspace && !path.starts_with(workspace == "/" ? "/" : workspace + "/")) {
    return channel_.respond_error(id, kResourceNotFound,
                                  "Resource not found: " + uri + " (resources are the workspace's files, under " +
                                      workspace + "; read_file reads elsewhere)");
  }
  Call call;
  call.kind = Kind::resource_read;
  call.path = path;
  call.tool = uri;  // kept for the answer
  json argv = json::array({config_.fs_helper, "read", path, "0", std::to_string(kDefaultRead)});
  start_call(id, params, std::move(call), {{"op", "run"}, {"argv", std::move(argv)}});
}

// ---- events out ----

void McpServer::log(const std::string& level, const std::string& text, Outgoing& out) {
  if (level_index(level) < log_level_) return;
  out.messages.push_back(notification("notifications/message", {{"level", level}, {"logger", "oishell"}, {"data", text}}));
}

void McpServer::flush(Outgoing& out) {
  for (const auto& message : out.messages) {
    if (!channel_.send(message)) {
      bridge_.client_gone();
      return;
    }
  }
}

void McpServer::on_event(const json& event) {
  Outgoing out;
  {
    std::lock_guard lock(mutex_);
    const std::string kind = event.value("event", std::string());
    const auto id_it = event.find("id");
    auto call = id_it != event.end() && id_it->is_string() ? calls_.find(id_it->get<std::string>()) : calls_.end();
    if (call != calls_.end()) {
      Call& c = call->second;
      if (kind == "output") {
        const std::string stream = event.value("stream", std::string("stdout"));
        const std::string data = event.value("data", std::string());
        // oishell-fs's answer is one JSON object: its 8 MiB of content, escaped, fits in 64 MiB.
        append_output(c.output, stream, data, c.kind == Kind::run ? kMaxResultStream : kMaxHelperOutput);
        if (c.kind == Kind::run && !c.progress_token.is_null() && !c.cancelled && !data.empty()) {
          c.progress += data.size();
          json params = {{"progressToken", c.progress_token}, {"progress", c.progress}, {"message", data}};
          out.messages.push_back(notification("notifications/progress", std::move(params)));
        }
      } else if (kind == "image") {
        if (c.output.images.size() < kMaxImagesPerCall) {
          const std::string format = event.value("format", std::string("png"));
          c.output.images.push_back(
              {{"type", "image"}, {"data", event.value("data", std::string())}, {"mimeType", "image/" + format}});
        }
      } else if (kind == "done" || kind == "error") {
        json done = event;
        if (kind == "error") done = {{"status", "error"}, {"exit_code", -1}, {"reason", event.value("message", "")}};
        if (!c.cancelled) {
          json result = finish(c, done);
          if (result.contains("__error")) {  // resources/*: a JSON-RPC error, not a tool result
            out.messages.push_back(error_response(
                c.rpc_id, result.value("__not_found", false) ? kResourceNotFound : rpc::error::internal_error,
                result["__error"].get<std::string>()));
          } else {
            out.messages.push_back(response(c.rpc_id, std::move(result)));
          }
        }
        calls_.erase(call);
      }
    } else {
      if (kind == "session_ended") {
        session_ended_ = true;
        // Whatever is still waiting is answered: the session cannot finish it any more.
        for (auto& [session_id, c] : calls_) {
          if (!c.cancelled)
            out.messages.push_back(error_response(c.rpc_id, rpc::error::internal_error, "the sandbox's session has ended"));
        }
        calls_.clear();
      } else if (kind != "output" && kind != "active_line" && kind != "done" && kind != "image") {
        if (event_log_.size() >= kMaxLogEvents) event_log_.pop_front();
        event_log_.push_back(event);
        const std::string text = describe_event(event);
        if (!text.empty()) {
          for (auto& [session_id, c] : calls_) {
            if (c.output.denials.size() < kMaxDenialsPerCall) c.output.denials.push_back(text);
          }
          log("warning", text, out);
        } else if (kind == "executor_restarted" || kind == "executor_exited") {
          log("notice", "the " + event.value("language", std::string()) + " executor " +
                            (kind == "executor_restarted" ? "restarted" : "ended") + ": " +
                            event.value("reason", std::string()) + "; lost: " + event.value("lost", std::string()),
              out);
        } else if (kind == "error") {
          log("error", event.value("message", std::string()), out);
        } else if (kind == "net.ask") {
          log("info", "network question: " + event.value("host", std::string()) + ":" +
                          std::to_string(event.value("port", 0)),
              out);
        } else if (kind != "exit") {
          log("debug", event.dump(-1, ' ', false, json::error_handler_t::replace), out);
        }
      }
    }
  }
  flush(out);
}

json McpServer::finish(Call& call, const json& done) {
  if (call.kind == Kind::run) return run_result(call.output, done);
  // The file tools and resources: oishell-fs's one JSON object on stdout.
  const json answer = json::parse(call.output.out, nullptr, false);
  const bool write = call.kind == Kind::fs_write || call.kind == Kind::fs_edit;
  if (!answer.is_object()) {
    std::string why = "the file operation failed in the sandbox (" + done.value("status", std::string("error")) +
                      ", exit code " + std::to_string(done.value("exit_code", -1)) + ")";
    if (!call.output.err.empty()) why += ": " + call.output.err;
    if (!done.value("reason", std::string()).empty()) why += ": " + done.value("reason", std::string());
    for (const auto& d : call.output.denials) why += "\n[sandbox] " + d;
    if (call.kind == Kind::resource_list || call.kind == Kind::resource_read) {
      return {{"__error", why}};
    }
    return error_result(why);
  }
  if (answer.contains("error")) {
    const std::string why = describe_fs_error(answer["error"], config_.spec, write);
    if (call.kind == Kind::resource_read) return {{"__error", why}, {"__not_found", true}};
    if (call.kind == Kind::resource_list) return {{"__error", why}};
    return error_result(why);
  }
  switch (call.kind) {
    case Kind::fs_read: {
      std::string text = answer.value("content", std::string());
      if (answer.value("encoding", std::string()) == "base64") {
        text = "(" + std::to_string(answer.value("length", 0)) + " bytes that are not UTF-8 text, as base64)\n" + text;
      }
      if (answer.value("truncated", false)) {
        text += "\n[" + std::to_string(answer.value("size", uint64_t{0}) - answer.value("offset", uint64_t{0}) -
                                       answer.value("length", uint64_t{0})) +
                " more bytes: read on with offset]";
      }
      return structured_result(answer, text);
    }
    case Kind::fs_write:
      return structured_result(answer, (answer.value("created", false) ? "created " : "wrote ") + call.path + " (" +
                                           std::to_string(answer.value("bytes", 0)) + " bytes)");
    case Kind::fs_edit:
      return structured_result(answer, "edited " + call.path + " (" + std::to_string(answer.value("replacements", 0)) +
                                           " replacement(s))");
    case Kind::fs_list: {
      std::string text;
      for (const auto& e : answer.value("entries", json::array())) {
        text += e.value("path", std::string()) + (e.value("type", std::string()) == "directory" ? "/" : "");
        if (e.contains("size")) text += "  " + std::to_string(e["size"].get<uint64_t>());
        if (e.contains("error")) text += "  (" + e["error"].get<std::string>() + ")";
        text += "\n";
      }
      if (answer.value("truncated", false)) text += "[more entries left out]\n";
      if (text.empty()) text = "(empty)";
      return structured_result(answer, text);
    }
    case Kind::resource_list: {
      json resources = json::array();
      resources.push_back({{"uri", kEventLogUri},
                           {"name", "session-events"},
                           {"title", "The sandbox's event log"},
                           {"description", "What the sandbox reported in this session (denials, limits, network), "
                                           "one JSON object per line (docs/events.md)"},
                           {"mimeType", "application/jsonl"}});
      for (const auto& e : answer.value("entries", json::array())) {
        if (e.value("type", std::string()) != "file") continue;
        const std::string path = call.path + (call.path == "/" ? "" : "/") + e.value("path", std::string());
        json r = {{"uri", "file://" + path}, {"name", e.value("path", std::string())}};
        if (const char* mime = mime_of(path)) r["mimeType"] = mime;
        if (e.contains("size")) r["size"] = e["size"];
        resources.push_back(std::move(r));
      }
      return {{"resources", std::move(resources)}};
    }
    case Kind::resource_read: {
      json content = {{"uri", call.tool}};
      const char* mime = mime_of(call.path);
      if (answer.value("encoding", std::string()) == "base64") {
        content["blob"] = answer.value("content", std::string());
        content["mimeType"] = mime ? mime : "application/octet-stream";
      } else {
        content["text"] = answer.value("content", std::string());
        content["mimeType"] = mime ? mime : "text/plain";
      }
      return {{"contents", json::array({std::move(content)})}};
    }
    case Kind::run:
      break;
  }
  return error_result("internal: unknown call kind");
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
