#include "runtime/mcp/tools.h"

#include <algorithm>

namespace oishell::mcp {
namespace {

using nlohmann::json;

json object_schema(json properties, json required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}

// What a run_code or run_command call returns: its status, exit code, output and the sandbox's denials.
json run_output_schema() {
  return object_schema(
      {{"status",
        {{"type", "string"},
         {"enum", {"ok", "error", "interrupted", "killed", "timeout"}},
         {"description", "ok; error (an exception, a non-zero status); interrupted; killed (the process died: a "
                         "signal, a limit); timeout (wall time)"}}},
       {"exit_code", {{"type", "integer"}}},
       {"duration_ms", {{"type", "integer"}}},
       {"stdout", {{"type", "string"}}},
       {"stderr", {{"type", "string"}}},
       {"truncated", {{"type", "boolean"}, {"description", "output beyond 1 MiB per stream was left out"}}},
       {"images", {{"type", "integer"}, {"description", "images returned as image content"}}},
       {"reason", {{"type", "string"}}},
       {"denials",
        {{"type", "array"},
         {"items", {{"type", "string"}}},
         {"description", "what the sandbox refused while the call ran, each with its rule and layer"}}}},
      {"status", "exit_code", "duration_ms", "stdout", "stderr"});
}

json tool(const char* name, const char* title, std::string description, json input, json output, json annotations) {
  annotations["title"] = title;
  json t = {{"name", name},
            {"title", title},
            {"description", std::move(description)},
            {"inputSchema", std::move(input)},
            {"annotations", std::move(annotations)}};
  if (!output.is_null()) t["outputSchema"] = std::move(output);
  return t;
}

const json kPath = {{"type", "string"},
                    {"description", "a path as the sandbox sees it; relative paths start at the workspace"}};

}  // namespace

json tool_list(const std::vector<std::string>& languages, const std::string& network_questions) {
  json language = {{"type", "string"}, {"description", "the language (aliases: py, sh, bash, js, node, rb, ...)"}};
  std::string names;
  for (const auto& l : languages) names += (names.empty() ? "" : ", ") + l;
  const json timeout = {{"type", "number"},
                        {"exclusiveMinimum", 0},
                        {"description", "seconds; the policy's wall time still bounds the call"}};
  const json run_annotations = {{"readOnlyHint", false}, {"destructiveHint", true}, {"idempotentHint", false},
                                {"openWorldHint", true}};
  const json read_annotations = {{"readOnlyHint", true}, {"openWorldHint", false}};
  const json write_annotations = {{"readOnlyHint", false}, {"destructiveHint", true}, {"idempotentHint", true},
                                  {"openWorldHint", false}};
  json tools = json::array();
  tools.push_back(tool(
      "run_code", "Run code in the sandbox",
      "Runs code in a persistent executor inside the oishell sandbox (languages here: " + names +
          "). State persists between calls of the same language: variables, imports and definitions stay until "
          "`reset`. Output streams as progress notifications; python figures (matplotlib) come back as images. The "
          "last expression's value is shown, as in a REPL. Files, network and processes are confined by the "
          "sandbox's policy (the `policy` tool says what it allows); " + network_questions,
      object_schema({{"language", language},
                     {"code", {{"type", "string"}, {"description", "the code to run"}}},
                     {"timeout", timeout}},
                    {"language", "code"}),
      run_output_schema(), run_annotations));
  tools.push_back(tool(
      "run_command", "Run a command in the sandbox",
      "Runs one command inside the sandbox, in a process of its own (no executor state): `argv` as given, or "
      "`command` through bash -c. Returns its status, stdout and stderr.",
      object_schema({{"argv",
                      {{"type", "array"},
                       {"items", {{"type", "string"}}},
                       {"minItems", 1},
                       {"description", "the program and its arguments; the program is looked up on the sandbox's PATH"}}},
                     {"command", {{"type", "string"}, {"description", "a shell command line (bash -c)"}}},
                     {"cwd", kPath},
                     {"stdin", {{"type", "string"}, {"description", "the command's whole standard input"}}},
                     {"timeout", timeout}},
                    json::array()),
      run_output_schema(), run_annotations));
  tools.push_back(tool(
      "read_file", "Read a file in the sandbox",
      "Reads a file as the sandbox sees it (what the sandbox cannot read, this cannot either). Text comes back as "
      "text; other bytes as base64. At most 8 MiB per call: use offset and length for more.",
      object_schema({{"path", kPath},
                     {"offset", {{"type", "integer"}, {"minimum", 0}, {"description", "byte offset"}}},
                     {"length", {{"type", "integer"}, {"minimum", 1}, {"description", "bytes (default and most: 8 MiB)"}}}},
                    {"path"}),
      object_schema({{"path", {{"type", "string"}}},
                     {"size", {{"type", "integer"}}},
                     {"offset", {{"type", "integer"}}},
                     {"length", {{"type", "integer"}}},
                     {"encoding", {{"type", "string"}, {"enum", {"utf-8", "base64"}}}},
                     {"content", {{"type", "string"}}},
                     {"truncated", {{"type", "boolean"}}}},
                    {"path", "size", "encoding", "content", "truncated"}),
      read_annotations));
  tools.push_back(tool(
      "write_file", "Write a file in the sandbox",
      "Creates or replaces a file (or appends to it) as the sandbox may: a path the policy keeps read-only or "
      "hidden is refused, with the rule that refused it.",
      object_schema({{"path", kPath},
                     {"content", {{"type", "string"}}},
                     {"append", {{"type", "boolean"}, {"description", "add to the end instead of replacing"}}}},
                    {"path", "content"}),
      object_schema({{"path", {{"type", "string"}}}, {"bytes", {{"type", "integer"}}}, {"created", {{"type", "boolean"}}}},
                    {"path", "bytes", "created"}),
      write_annotations));
  tools.push_back(tool(
      "edit_file", "Edit a file in the sandbox",
      "Replaces an exact piece of text in a file: `old_text` must occur exactly once (give enough context), or "
      "set `replace_all`.",
      object_schema({{"path", kPath},
                     {"old_text", {{"type", "string"}, {"minLength", 1}}},
                     {"new_text", {{"type", "string"}}},
                     {"replace_all", {{"type", "boolean"}}}},
                    {"path", "old_text", "new_text"}),
      object_schema({{"path", {{"type", "string"}}}, {"replacements", {{"type", "integer"}}}}, {"path", "replacements"}),
      write_annotations));
  tools.push_back(tool(
      "list_files", "List files in the sandbox",
      "Lists a directory as the sandbox sees it (default: the workspace), down to `depth` levels (1-8).",
      object_schema({{"path", kPath}, {"depth", {{"type", "integer"}, {"minimum", 1}, {"maximum", 8}}}}, json::array()),
      object_schema({{"path", {{"type", "string"}}},
                     {"entries",
                      {{"type", "array"},
                       {"items",
                        object_schema({{"path", {{"type", "string"}}},
                                       {"type", {{"type", "string"}}},
                                       {"size", {{"type", "integer"}}},
                                       {"error", {{"type", "string"}}}},
                                      {"path", "type"})}}},
                     {"truncated", {{"type", "boolean"}}}},
                    {"path", "entries", "truncated"}),
      read_annotations));
  tools.push_back(tool(
      "interrupt", "Interrupt running code",
      "Interrupts what runs now (SIGINT; killed after 2 s): every run_code and run_command call in progress, or "
      "only those of `language`. Executor state is kept when the code stops on SIGINT.",
      object_schema({{"language", language}}, json::array()),
      object_schema({{"interrupted", {{"type", "integer"}}}}, {"interrupted"}),
      {{"readOnlyHint", false}, {"destructiveHint", false}, {"idempotentHint", true}, {"openWorldHint", false}}));
  tools.push_back(tool(
      "policy", "What the sandbox allows",
      "Says in words what the sandbox lets code do: files, network, processes, limits, and how network questions "
      "are answered here.",
      object_schema(json::object(), json::array()),
      object_schema({{"text", {{"type", "string"}}},
                     {"network_questions", {{"type", "string"}, {"enum", {"elicitation", "denied", "none"}}}},
                     {"summary", {{"type", "object"}}}},
                    {"text", "network_questions", "summary"}),
      {{"readOnlyHint", true}, {"openWorldHint", false}}));
  tools.push_back(tool(
      "reset", "Reset executors",
      "Restarts the executor of `language` (or every executor used so far): its state (variables, imports) is lost.",
      object_schema({{"language", language}}, json::array()),
      object_schema({{"reset", {{"type", "array"}, {"items", {{"type", "string"}}}}}}, {"reset"}),
      {{"readOnlyHint", false}, {"destructiveHint", true}, {"idempotentHint", true}, {"openWorldHint", false}}));
  return tools;
}

std::string check_arguments(const std::string& tool, const json& a, const std::vector<std::string>& languages) {
  (void)languages;
  auto need_string = [&](const char* key, bool required) -> std::string {
    if (!a.contains(key)) return required ? std::string("missing `") + key + "`" : "";
    return a[key].is_string() ? "" : std::string("`") + key + "` must be a string";
  };
  auto need = [&](const char* key, bool ok) -> std::string {
    return !a.contains(key) || ok ? "" : std::string("`") + key + "` has the wrong type";
  };
  auto first = [](std::initializer_list<std::string> problems) {
    for (const auto& p : problems) {
      if (!p.empty()) return p;
    }
    return std::string();
  };
  auto positive_number = [&](const char* key) {
    return need(key, a.contains(key) && a[key].is_number() && a[key].get<double>() > 0);
  };
  if (tool == "run_code") {
    return first({need_string("language", true), need_string("code", true), positive_number("timeout")});
  }
  if (tool == "run_command") {
    std::string argv;
    if (a.contains("argv")) {
      const json& v = a["argv"];
      if (!v.is_array() || v.empty() || !std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_string(); }))
        argv = "`argv` must be a non-empty array of strings";
    }
    std::string which;
    if (a.contains("argv") == a.contains("command")) which = "give either `argv` or `command`";
    return first({which, argv, need_string("command", false), need_string("cwd", false), need_string("stdin", false),
                  positive_number("timeout")});
  }
  auto non_negative = [&](const char* key, int64_t min) {
    return need(key, a.contains(key) && a[key].is_number_integer() && a[key].get<int64_t>() >= min);
  };
  if (tool == "read_file") return first({need_string("path", true), non_negative("offset", 0), non_negative("length", 1)});
  if (tool == "write_file") {
    return first({need_string("path", true), need_string("content", true),
                  need("append", a.contains("append") && a["append"].is_boolean())});
  }
  if (tool == "edit_file") {
    std::string empty = a.contains("old_text") && a["old_text"].is_string() && a["old_text"].get<std::string>().empty()
                            ? "`old_text` must not be empty"
                            : "";
    return first({need_string("path", true), need_string("old_text", true), need_string("new_text", true), empty,
                  need("replace_all", a.contains("replace_all") && a["replace_all"].is_boolean())});
  }
  if (tool == "list_files") {
    return first({need_string("path", false),
                  need("depth", a.contains("depth") && a["depth"].is_number_integer() && a["depth"].get<int64_t>() >= 1 &&
                                    a["depth"].get<int64_t>() <= 8)});
  }
  if (tool == "interrupt" || tool == "reset") return need_string("language", false);
  return "";
}

}  // namespace oishell::mcp
