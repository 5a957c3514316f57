#include "runtime/mcp/results.h"

#include "policy/path_verdict.h"

namespace oishell::mcp {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// The layers that hold a path decision, in words.
std::string layer_of(policy::PathVerdict::Decision decision) {
  using D = policy::PathVerdict::Decision;
  switch (decision) {
    case D::hidden:
      return "the mount namespace (the path is covered, absent inside) and Landlock";
    case D::read_only:
      return "a read-only bind mount (EROFS) and Landlock";
    case D::protected_:
      return "a read-only bind over the path inside a writable one, and Landlock";
    case D::outside:
      return "the mount namespace (nothing is bound there) and Landlock";
    case D::scratch:
      return "the sandbox's own tmpfs";
    case D::sandbox_own:
      return "the sandbox's own /proc, /dev or generated files";
    case D::allowed:
      break;
  }
  return "";
}

// JSON strings must be UTF-8: what a process wrote is replaced (U+FFFD) where it is not, as the protocol's events are.
std::string utf8_text(const std::string& bytes) {
  return json::parse(json(bytes).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

// Lexical: `.` and `..` resolved, `//` collapsed (the sandbox resolves symlinks itself when the helper opens it).
std::string lexical_normal(const std::string& path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    const std::string part = path.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

}  // namespace

void append_output(RunOutput& run, const std::string& stream, const std::string& data, size_t limit) {
  std::string& to = stream == "stderr" ? run.err : run.out;
  if (to.size() >= limit) {
    run.truncated = run.truncated || !data.empty();
    return;
  }
  const size_t room = limit - to.size();
  if (data.size() > room) run.truncated = true;
  to.append(data, 0, std::min(room, data.size()));
}

json run_result(const RunOutput& run, const json& done) {
  const std::string status = str(done, "status").empty() ? "error" : str(done, "status");
  json structured = {{"status", status},
                     {"exit_code", done.value("exit_code", -1)},
                     {"duration_ms", done.value("duration_ms", 0)},
                     {"stdout", utf8_text(run.out)},
                     {"stderr", utf8_text(run.err)}};
  if (run.truncated) structured["truncated"] = true;
  if (!run.images.empty()) structured["images"] = run.images.size();
  if (done.contains("reason") && done["reason"].is_string()) structured["reason"] = done["reason"];
  if (!run.denials.empty()) structured["denials"] = run.denials;

  std::string text = structured["stdout"].get<std::string>();
  if (!run.err.empty()) {
    if (!text.empty() && text.back() != '\n') text += "\n";
    text += structured["stderr"].get<std::string>();
  }
  if (run.truncated) text += "\n[output beyond 1 MiB per stream left out]";
  if (status != "ok") {
    if (!text.empty() && text.back() != '\n') text += "\n";
    text += "[" + status + ", exit code " + std::to_string(done.value("exit_code", -1)) +
            (structured.contains("reason") ? ": " + structured["reason"].get<std::string>() : "") + "]";
  }
  for (const auto& denial : run.denials) {
    if (!text.empty() && text.back() != '\n') text += "\n";
    text += "[sandbox] " + denial;
  }
  if (text.empty() && run.images.empty()) text = "(no output)";
  json content = json::array();
  if (!text.empty()) content.push_back({{"type", "text"}, {"text", text}});
  for (const auto& image : run.images) content.push_back(image);
  json result = {{"content", std::move(content)}, {"structuredContent", std::move(structured)}};
  if (status != "ok") result["isError"] = true;
  return result;
}

json error_result(const std::string& text) {
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"isError", true}};
}

json structured_result(json structured, std::string text) {
  if (text.empty()) text = structured.dump(-1, ' ', false, json::error_handler_t::replace);
  return {{"content", json::array({{{"type", "text"}, {"text", std::move(text)}}})},
          {"structuredContent", std::move(structured)}};
}

std::string describe_event(const json& event) {
  const std::string kind = str(event, "event");
  if (kind == "denied") {
    std::string text = "system call " + str(event, "syscall") + " refused with " + str(event, "errno") +
                       " by seccomp (deny set `" + str(event, "set") + "`)";
    if (event.contains("not_allowable")) text += "; no policy can allow it: " + str(event, "not_allowable");
    return text;
  }
  if (kind == "net.denied") {
    std::string layer = str(event, "protocol") == "dns" ? "the sandbox's DNS stub" : "the network relay";
    const std::string protocol = str(event, "protocol");
    if (protocol == "connect" || protocol == "udp" || protocol == "loopback" || protocol == "unix")
      layer = "the connect broker";
    std::string text = "network: " + str(event, "host") + (event.value("port", 0) ? ":" + str(event, "port") : "") +
                       " refused by " + layer + " (rule: " + str(event, "rule") + ")";
    if (!str(event, "reason").empty()) text += ": " + str(event, "reason");
    return text;
  }
  if (kind == "limit") return "limit: " + str(event, "reason") + " (" + str(event, "kind") + ")";
  if (kind == "protected_changed") {
    std::string paths;
    for (const auto& p : event.value("paths", json::array())) paths += (paths.empty() ? "" : ", ") + p.get<std::string>();
    return "protected paths changed (reported to the host's user): " + paths;
  }
  if (kind == "repo_neutralised") {
    return "git repository neutralised: " + str(event, "path") + ": " + str(event, "found") + "; " +
           str(event, "action");
  }
  return "";
}

std::string describe_fs_error(const json& error, const SandboxSpec& spec, bool write) {
  const std::string path = str(error, "path");
  std::string text;
  if (error.contains("errno")) {
    text = str(error, "call") + " " + path + ": " + str(error, "errno") + " (" + str(error, "message") + ")";
  } else {
    text = path + ": " + str(error, "message");
    return text;
  }
  const auto verdict = policy::path_verdict(spec, path, write ? policy::PathAccess::write : policy::PathAccess::read);
  if (verdict.denied) {
    text += ". " + policy::describe(verdict) + "; layer: " + layer_of(verdict.decision);
  } else {
    text += ". The sandbox's policy allows this path";
    if (verdict.decision == policy::PathVerdict::Decision::scratch) text += " (" + layer_of(verdict.decision) + ")";
    text += ": the error is the file's own (it does not exist, or its permissions refuse it)";
  }
  return text;
}

std::string sandbox_path(const std::string& path, const SandboxSpec& spec) {
  if (path.empty()) return spec.cwd;
  return lexical_normal(path[0] == '/' ? path : spec.cwd + "/" + path);
}

}  // namespace oishell::mcp
