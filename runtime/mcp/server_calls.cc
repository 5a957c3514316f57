// `oishell mcp`'s tools and resources (runtime/mcp/server.h): each call checked and turned into a session request
// (code, a command, or the oishell-fs helper for the file tools and the workspace's files), kept until the session
// answers it (server_events.cc); interrupt, reset and policy answered at once.
#include <algorithm>
#include <set>

#include "runtime/executors/language.h"
#include "runtime/mcp/protocol_names.h"
#include "runtime/mcp/server.h"
#include "runtime/mcp/tools.h"

namespace oishell::mcp {
namespace {

using nlohmann::json;

constexpr uint64_t kDefaultRead = 8u << 20;

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

}  // namespace

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

}  // namespace oishell::mcp
