// What the sandbox's session reports, as `oishell mcp` sends it (runtime/mcp/server.h): a call's output as progress
// notifications, its end as the tool result or resource contents (oishell-fs's answer turned into words and
// structured content), the sandbox's denials and other events as log notifications and into the event log.
#include "runtime/mcp/protocol_names.h"
#include "runtime/mcp/server.h"
#include "runtime/mcp/tools.h"

namespace oishell::mcp {
namespace {

using nlohmann::json;

constexpr size_t kMaxLogEvents = 10000;
constexpr size_t kMaxImagesPerCall = 32;
constexpr size_t kMaxDenialsPerCall = 50;
constexpr size_t kMaxHelperOutput = 64u << 20;

json notification(const std::string& method, json params) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

json response(const json& id, json result) { return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}; }

json error_response(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
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

}  // namespace oishell::mcp
