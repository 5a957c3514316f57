#include "agent/config/harness.h"

#include <algorithm>

#include "agent/core/json_util.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

json object(json properties, std::vector<std::string> required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
}
json str(const char* description) { return {{"type", "string"}, {"description", description}}; }
json num(const char* description) { return {{"type", "number"}, {"description", description}}; }

HarnessTool builtin(const char* name, const char* function, const char* description, json parameters) {
  HarnessTool t;
  t.name = name;
  t.description = description;
  t.parameters = std::move(parameters);
  t.run = HarnessTool::Run::builtin;
  t.function = function;
  return t;
}

HarnessTool shell_tool(const char* name, const char* description, json parameters, HarnessTool::Run run,
                       const char* argument) {
  HarnessTool t;
  t.name = name;
  t.description = description;
  t.parameters = std::move(parameters);
  t.run = run;
  t.argument = argument;
  return t;
}

constexpr const char* kSandboxNote =
    "Everything runs inside a sandbox on the user's machine: the project directory is yours to change; what the "
    "sandbox's policy forbids fails with a clear error (do not try to get around it).";

Harness claude_code() {
  Harness h;
  h.name = "claude-code";
  h.prompt = std::string(
      "You are an interactive coding agent that helps the user with software engineering tasks in their project, "
      "with Claude Code's tools. Be concise and direct. Read a file before you change it. Edit replaces an exact "
      "string that must occur exactly once in the file (give more context to make it unique, or set replace_all); "
      "MultiEdit applies several such edits to one file at once, all or none. Write creates or overwrites a whole "
      "file. Bash runs a command in a persistent shell (the working directory and variables carry over). Use Glob, "
      "Grep and LS to find your way, and TodoWrite to plan and track a task of several steps. Verify your work by "
      "running the project's tests when it has them. ") + kSandboxNote;
  json edits = {{"type", "array"},
                {"items", object({{"old_string", str("the exact text to replace")},
                                  {"new_string", str("the text to put instead")},
                                  {"replace_all", {{"type", "boolean"}}}},
                                 {"old_string", "new_string"})}};
  json todos = {{"type", "array"},
                {"items", object({{"content", str("the task")},
                                  {"status", {{"type", "string"}, {"enum", {"pending", "in_progress", "completed"}}}},
                                  {"activeForm", str("the task as it is being done")},
                                  {"id", str("an identifier")}},
                                 {"content", "status"})}};
  h.tools = {
      shell_tool("Bash", "Runs a bash command in a persistent shell session and returns its output.",
                 object({{"command", str("the command to run")},
                         {"timeout", num("milliseconds (the sandbox's wall time applies)")},
                         {"description", str("what the command does, in a few words")}},
                        {"command"}),
                 HarnessTool::Run::shell, "command"),
      builtin("Read", "claude_code.read", "Reads a file, with line numbers (cat -n); offset and limit select lines.",
              object({{"file_path", str("the file's path")},
                      {"offset", num("the first line to read (1 is the first)")},
                      {"limit", num("how many lines to read")}},
                     {"file_path"})),
      builtin("Write", "claude_code.write", "Writes a file (created, or overwritten as a whole).",
              object({{"file_path", str("the file's path")}, {"content", str("the whole content")}},
                     {"file_path", "content"})),
      builtin("Edit", "claude_code.edit",
              "Replaces old_string with new_string in a file. old_string must occur exactly once unless replace_all.",
              object({{"file_path", str("the file's path")},
                      {"old_string", str("the exact text to replace")},
                      {"new_string", str("the text to put instead")},
                      {"replace_all", {{"type", "boolean"}, {"description", "replace every occurrence"}}}},
                     {"file_path", "old_string", "new_string"})),
      builtin("MultiEdit", "claude_code.multi_edit", "Several Edits of one file, applied in order, all or none.",
              object({{"file_path", str("the file's path")}, {"edits", edits}}, {"file_path", "edits"})),
      builtin("Glob", "claude_code.glob", "Finds files by glob pattern (\"**/*.py\"), newest first.",
              object({{"pattern", str("the glob pattern")}, {"path", str("the directory to search")}}, {"pattern"})),
      builtin("Grep", "claude_code.grep", "Searches file contents with a regular expression.",
              object({{"pattern", str("the regular expression")},
                      {"path", str("a file or directory")},
                      {"glob", str("only files matching this glob")},
                      {"output_mode",
                       {{"type", "string"}, {"enum", {"content", "files_with_matches", "count"}}}},
                      {"-i", {{"type", "boolean"}, {"description", "ignore case"}}},
                      {"-n", {{"type", "boolean"}, {"description", "line numbers (content mode)"}}},
                      {"head_limit", num("at most this many results")}},
                     {"pattern"})),
      builtin("LS", "claude_code.ls", "Lists a directory.",
              object({{"path", str("the directory")}, {"ignore", {{"type", "array"}, {"items", {{"type", "string"}}}}}},
                     {"path"})),
      builtin("TodoWrite", "claude_code.todo_write", "Replaces the task list (plan and track multi-step work).",
              object({{"todos", todos}}, {"todos"})),
  };
  return h;
}

Harness swe_agent() {
  Harness h;
  h.name = "swe-agent";
  h.prompt = std::string(
      "You are an autonomous programmer working in a repository, as SWE-agent. Solve the task by exploring the "
      "code, reproducing the problem, editing the files and checking the fix. Tools: `bash` runs a command (the "
      "shell persists between calls; commands must not need interaction); `str_replace_editor` views files and "
      "directories (`view`, with `view_range` [start, end]), creates files (`create` with `file_text`), replaces an "
      "exact, unique string (`str_replace` with `old_str` and `new_str`), inserts after a line (`insert` with "
      "`insert_line` and `new_str`) and undoes its last edit of a file (`undo_edit`). When the task is solved, call "
      "`submit`. ") + kSandboxNote;
  h.tools = {
      shell_tool("bash", "Runs a bash command (the shell persists between calls).",
                 object({{"command", str("the command")}}, {"command"}), HarnessTool::Run::shell, "command"),
      builtin("str_replace_editor", "swe_agent.str_replace_editor",
              "Views, creates and edits files: view, create, str_replace, insert, undo_edit.",
              object({{"command",
                       {{"type", "string"}, {"enum", {"view", "create", "str_replace", "insert", "undo_edit"}}}},
                      {"path", str("the file or directory")},
                      {"file_text", str("create: the content")},
                      {"old_str", str("str_replace: the exact text to replace (it must occur once)")},
                      {"new_str", str("str_replace, insert: the new text")},
                      {"insert_line", {{"type", "integer"}, {"description", "insert: after this line (0: at the top)"}}},
                      {"view_range", {{"type", "array"}, {"items", {{"type", "integer"}}}}}},
                     {"command", "path"})),
      builtin("submit", "swe_agent.submit", "Submits the work: shows the changes (git diff) and ends the task.",
              object(json::object(), {})),
  };
  return h;
}

Harness codex() {
  Harness h;
  h.name = "codex";
  h.prompt = std::string(
      "You are a coding agent in the user's repository, working as Codex does. Run commands with `shell`, whose "
      "`command` is an argv array (e.g. [\"bash\", \"-lc\", \"ls -la\"]), optionally in `workdir`. Edit files with "
      "`apply_patch`, whose `input` is a patch in this format:\n"
      "*** Begin Patch\n*** Update File: path/to/file.py\n@@ def some_function\n-old line\n+new line\n"
      "*** Add File: new.txt\n+its content\n*** Delete File: old.txt\n*** End Patch\n"
      "(context lines start with a space; @@ lines name where a hunk is). Keep a short plan with `update_plan`. "
      "Check your changes by running the tests. ") + kSandboxNote;
  h.tools = {
      shell_tool("shell", "Runs a command (an argv array) and returns its output.",
                 object({{"command", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                         {"workdir", str("the directory to run it in")},
                         {"timeout_ms", num("milliseconds (the sandbox's wall time applies)")}},
                        {"command"}),
                 HarnessTool::Run::argv, "command"),
      builtin("apply_patch", "codex.apply_patch", "Applies a patch (*** Begin Patch ... *** End Patch) to files.",
              object({{"input", str("the whole patch")}}, {"input"})),
      builtin("update_plan", "codex.update_plan", "Records the plan: steps with pending, in_progress or completed.",
              object({{"explanation", str("why the plan changed")},
                      {"plan", {{"type", "array"},
                                {"items", object({{"step", str("the step")},
                                                  {"status", {{"type", "string"},
                                                              {"enum", {"pending", "in_progress", "completed"}}}}},
                                                 {"step", "status"})}}}},
                     {"plan"})),
  };
  return h;
}

bool has_type(const json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "array") return value.is_array();
  if (type == "object") return value.is_object();
  return true;  // a type this check does not know: the implementation decides
}

std::string as_python_call(const std::string& prefix, const json& arguments) {
  return prefix + "__import__('json').loads(" + json(dump_json(arguments)).dump() + ")";
}

}  // namespace

const HarnessTool* Harness::find(std::string_view tool) const {
  for (const auto& t : tools) {
    if (t.name == tool) return &t;
  }
  return nullptr;
}

std::optional<Harness> builtin_harness(std::string_view name) {
  if (name == "claude-code") return claude_code();
  if (name == "swe-agent") return swe_agent();
  if (name == "codex") return codex();
  return std::nullopt;
}

std::vector<std::string> builtin_harness_names() { return {"claude-code", "swe-agent", "codex"}; }

std::string harness_arguments_problem(const HarnessTool& tool, const json& arguments) {
  if (!arguments.is_object()) return "the arguments must be a JSON object";
  const json& schema = tool.parameters;
  if (auto required = schema.find("required"); required != schema.end() && required->is_array()) {
    for (const auto& r : *required) {
      if (r.is_string() && !arguments.contains(r.get<std::string>())) {
        return "`" + r.get<std::string>() + "` is required";
      }
    }
  }
  if (auto properties = schema.find("properties"); properties != schema.end() && properties->is_object()) {
    for (const auto& [key, value] : arguments.items()) {
      auto declared = properties->find(key);
      if (declared == properties->end() || !declared->is_object() || value.is_null()) continue;
      if (auto type = declared->find("type"); type != declared->end() && type->is_string() &&
                                               !has_type(value, type->get<std::string>())) {
        return "`" + key + "` must be of type " + type->get<std::string>();
      }
      if (auto allowed = declared->find("enum"); allowed != declared->end() && allowed->is_array() &&
                                                  std::find(allowed->begin(), allowed->end(), value) == allowed->end()) {
        return "`" + key + "` must be one of " + dump_json(*allowed);
      }
    }
  }
  if (tool.run == HarnessTool::Run::argv) {
    const json& argv = arguments[tool.argument];
    if (argv.empty()) return "`" + tool.argument + "` must not be empty";
    for (const auto& word : argv) {
      if (!word.is_string()) return "`" + tool.argument + "` must be an array of strings";
    }
  }
  return "";
}

std::string shell_quote(std::string_view word) {
  if (!word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("@%_+=:,./-").find(c) != std::string_view::npos;
      })) {
    return std::string(word);
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

HarnessBlock harness_block(const Harness& harness, const HarnessTool& tool, const json& arguments) {
  switch (tool.run) {
    case HarnessTool::Run::shell:
      return {"shell", arguments[tool.argument].get<std::string>()};
    case HarnessTool::Run::argv: {
      const json& argv = arguments[tool.argument];
      // Codex models call apply_patch through the shell as often as through its own tool (as Codex allows).
      if (argv.size() == 2 && argv[0] == "apply_patch" && harness.find("apply_patch")) {
        return {"python", as_python_call("__oishell_tool__('codex.apply_patch', ", json{{"input", argv[1]}}) + ")\n"};
      }
      std::string command;
      for (const auto& word : argv) command += (command.empty() ? "" : " ") + shell_quote(word.get<std::string>());
      if (auto dir = arguments.find("workdir"); dir != arguments.end() && dir->is_string() && !dir->empty()) {
        command = "(cd " + shell_quote(dir->get<std::string>()) + " && " + command + ")";
      }
      return {"shell", command};
    }
    case HarnessTool::Run::builtin:
      return {"python", as_python_call("__oishell_tool__(" + json(tool.function).dump() + ", ", arguments) + ")\n"};
    case HarnessTool::Run::python:
      return {"python", as_python_call("args = ", arguments) + "\n" + tool.code};
  }
  return {"python", ""};
}

std::string describe_harness_call(const HarnessTool& tool, const json& arguments) {
  if (!arguments.is_object()) return tool.name + " (unreadable arguments)";
  if (tool.run == HarnessTool::Run::shell && arguments.contains(tool.argument) &&
      arguments[tool.argument].is_string()) {
    return arguments[tool.argument].get<std::string>();
  }
  if (tool.run == HarnessTool::Run::argv && arguments.contains(tool.argument) && arguments[tool.argument].is_array()) {
    std::string command;
    for (const auto& word : arguments[tool.argument]) {
      command += (command.empty() ? "" : " ") + (word.is_string() ? shell_quote(word.get<std::string>()) : word.dump());
    }
    return command;
  }
  for (const char* key : {"file_path", "path", "pattern"}) {
    if (arguments.contains(key) && arguments[key].is_string()) {
      std::string what = arguments.contains("command") && arguments["command"].is_string()
                             ? arguments["command"].get<std::string>() + " "
                             : "";
      return tool.name + " " + what + arguments[key].get<std::string>();
    }
  }
  std::string text = dump_json(arguments);
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return tool.name + " " + text;
}

}  // namespace oishell::agent
