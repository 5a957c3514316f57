#pragma once
// End-to-end helpers: the scripted model server (scripted_server.py on 127.0.0.1, port 0) and a runner for the
// real `interpreter` binary in a fresh workspace, HOME and XDG_DATA_HOME, without a controlling terminal (setsid),
// so nobody can answer questions and network asks are denied.
#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace oishell::agent::test {

// An environment lookup (the agent's EnvLookup) that sees exactly `vars`.
std::function<std::optional<std::string>(const std::string&)> env_of(std::map<std::string, std::string> vars);
// tests/agent/profiles/NAME: the profile files the tests load.
std::string profile_fixture(const std::string& name);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A helper server of the tests (scripted_server.py, kube_apiserver.py): started with `argv`, it prints the port it
// listens on and serves until its stdin closes. pid -1 when it could not be started.
struct PortReporter {
  pid_t pid = -1;
  int stdin_fd = -1;
  int port = 0;
};
PortReporter start_port_reporter(const std::vector<std::string>& argv);

class ScriptedServer {
 public:
  explicit ScriptedServer(const nlohmann::json& script);
  ~ScriptedServer();
  int port() const { return port_; }
  std::string base() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  // Every request so far: {"path", "headers", "body"}.
  std::vector<nlohmann::json> requests() const;

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int port_ = 0;
};

struct RunResult {
  int exit_code = -1;   // 128+N for a signal
  std::string out, err;
  bool timed_out = false;
};

struct RunOptions {
  std::string program;                     // empty: the interpreter under test
  std::vector<std::string> args;
  std::map<std::string, std::string> env;  // added to a minimal environment (PATH, HOME, XDG_DATA_HOME, ...)
  std::string stdin_data;
  std::string cwd;                         // the workspace
  std::string home;                        // HOME and XDG dirs live here
  int timeout_ms = 60000;
  // Called as stdout grows; may signal the process (pid given).
  std::function<void(pid_t, const std::string& out)> on_output;
};

RunResult run_interpreter(const RunOptions& options);
// The same on a new pseudo-terminal (stdin, stdout and stderr; its controlling terminal), as a user at a terminal
// runs it: `stdin_data` is typed at once, and `on_output(terminal_fd, out)` may type more (write to terminal_fd)
// as the screen grows. `out` is everything the terminal showed; `err` stays empty.
RunResult run_in_terminal(const RunOptions& options,
                          const std::function<void(int terminal_fd, const std::string& out)>& on_output);

// The oishell the interpreter under test starts: $OISHELL_BIN, else the one beside it in the build tree.
std::string oishell_bin();

// The text of every message of a chat-completions request body, joined (what the model was shown).
std::string conversation_text(const nlohmann::json& request_body);
// The content of the last tool result (OpenAI `tool` message or Anthropic `tool_result`) of a request body: what
// the model was told about the block it ran last.
std::string last_tool_output(const nlohmann::json& request_body);

// Scripted answers: a call of execute(language, code), with `text` before it; a plain text answer.
nlohmann::json tool(const std::string& language, const std::string& code, const std::string& text = "");
nlohmann::json say(const std::string& text);

// The messages of the one saved conversation under `home` (XDG_DATA_HOME=home/.local/share); empty when none.
nlohmann::json saved_conversation(const std::string& home);
std::string read_text(const std::string& path);

}  // namespace oishell::agent::test
