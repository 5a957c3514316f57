#include "tests/agent/e2e_util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace oishell::agent::test {

std::function<std::optional<std::string>(const std::string&)> env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

std::string profile_fixture(const std::string& name) {
  std::string dir = SCRIPTED_SERVER;  // tests/agent/scripted_server.py
  return dir.substr(0, dir.rfind('/')) + "/profiles/" + name;
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/oishell-agent-test-XXXXXX";
  char* p = ::mkdtemp(tmpl);
  path_ = p ? p : "/tmp";
  ::chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
  std::error_code ec;
  if (path_ != "/tmp") std::filesystem::remove_all(path_, ec);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

PortReporter start_port_reporter(const std::vector<std::string>& argv) {
  PortReporter r;
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return r;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  r.pid = ::fork();
  if (r.pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  r.stdin_fd = in[1];
  char buf[32] = {};
  for (size_t got = 0; got < sizeof buf - 1; ++got) {
    if (::read(out[0], buf + got, 1) <= 0 || buf[got] == '\n') break;
  }
  ::close(out[0]);
  r.port = std::atoi(buf);
  return r;
}

ScriptedServer::ScriptedServer(const nlohmann::json& script) {
  std::string script_path = dir_.path() + "/script.json";
  std::ofstream(script_path) << script.dump();
  std::string log_path = dir_.path() + "/log.jsonl";
  std::ofstream(log_path).close();
  PortReporter server = start_port_reporter({"/usr/bin/python3", SCRIPTED_SERVER, script_path, log_path});
  pid_ = server.pid;
  stdin_fd_ = server.stdin_fd;
  port_ = server.port;
}

ScriptedServer::~ScriptedServer() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::vector<nlohmann::json> ScriptedServer::requests() const {
  std::vector<nlohmann::json> out;
  std::ifstream f(dir_.path() + "/log.jsonl");
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

namespace {

// argv and the environment of a run: a minimal environment (PATH, HOME, XDG dirs, ...) plus options.env.
struct Command {
  std::vector<std::string> args, env_strings;
  std::vector<char*> argv, envp;
};

void build_command(const RunOptions& o, Command* c) {
  c->args = {o.program.empty() ? std::string(INTERPRETER_BIN) : o.program};
  c->args.insert(c->args.end(), o.args.begin(), o.args.end());
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"},
      {"HOME", o.home},
      {"XDG_DATA_HOME", o.home + "/.local/share"},
      {"XDG_CONFIG_HOME", o.home + "/.config"},
      {"LANG", "C.UTF-8"},
      {"TERM", "dumb"},
  };
  // Which `oishell` the interpreter starts: by default the one beside it; OISHELL_BIN overrides (as for users).
  if (const char* bin = std::getenv("OISHELL_BIN"); bin && *bin) env["OISHELL_BIN"] = bin;
  for (const auto& [k, v] : o.env) env[k] = v;
  for (const auto& [k, v] : env) c->env_strings.push_back(k + "=" + v);
  for (auto& a : c->args) c->argv.push_back(a.data());
  c->argv.push_back(nullptr);
  for (auto& e : c->env_strings) c->envp.push_back(e.data());
  c->envp.push_back(nullptr);
}

}  // namespace

RunResult run_in_terminal(const RunOptions& o,
                          const std::function<void(int terminal_fd, const std::string& out)>& on_output) {
  RunResult r;
  Command c;
  build_command(o, &c);
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return r;
  std::string slave = ::ptsname(master);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    int fd = ::open(slave.c_str(), O_RDWR);  // the first terminal a session leader opens becomes its own
    if (fd < 0) ::_exit(125);
    ::dup2(fd, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    if (fd > 2) ::close(fd);
    if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) ::_exit(126);
    ::execve(c.argv[0], c.argv.data(), c.envp.data());
    ::_exit(127);
  }
  if (!o.stdin_data.empty()) {
    [[maybe_unused]] ssize_t n = ::write(master, o.stdin_data.data(), o.stdin_data.size());
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.timeout_ms);
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd fds[1] = {{master, POLLIN, 0}};
    ::poll(fds, 1, static_cast<int>(std::min<long>(left.count(), 200)));
    if (!fds[0].revents) continue;
    char buf[65536];
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO: every process holding the terminal has gone
    r.out.append(buf, static_cast<size_t>(n));
    if (on_output) on_output(master, r.out);
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

RunResult run_interpreter(const RunOptions& o) {
  RunResult r;
  Command c;
  build_command(o, &c);
  std::vector<char*>& argv = c.argv;
  std::vector<char*>& envp = c.envp;

  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return r;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();  // no controlling terminal: nobody to ask
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) ::_exit(126);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  // stdin: write everything, then EOF.
  size_t off = 0;
  ::fcntl(in[1], F_SETFL, O_NONBLOCK);
  bool in_open = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.timeout_ms);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    if (in_open && off >= o.stdin_data.size()) {
      ::close(in[1]);
      in_open = false;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd fds[3] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? err[0] : -1, POLLIN, 0},
                     {in_open ? in[1] : -1, POLLOUT, 0}};
    ::poll(fds, 3, static_cast<int>(std::min<long>(left.count(), 200)));
    char buf[65536];
    if (fds[0].revents) {
      ssize_t n = ::read(out[0], buf, sizeof buf);
      if (n > 0) {
        r.out.append(buf, static_cast<size_t>(n));
        if (o.on_output) o.on_output(pid, r.out);
      } else {
        out_open = false;
      }
    }
    if (fds[1].revents) {
      ssize_t n = ::read(err[0], buf, sizeof buf);
      if (n > 0) r.err.append(buf, static_cast<size_t>(n));
      else err_open = false;
    }
    if (in_open && fds[2].revents) {
      ssize_t n = ::write(in[1], o.stdin_data.data() + off, o.stdin_data.size() - off);
      if (n > 0) off += static_cast<size_t>(n);
      else if (n < 0 && errno != EAGAIN) {
        ::close(in[1]);
        in_open = false;
      }
    }
  }
  if (in_open) ::close(in[1]);
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string oishell_bin() {
  if (const char* bin = std::getenv("OISHELL_BIN"); bin && *bin) return bin;
  std::string interpreter = INTERPRETER_BIN;
  return interpreter.substr(0, interpreter.rfind('/')) + "/../oishell";
}

std::string conversation_text(const nlohmann::json& body) {
  std::string text;
  if (body.contains("system") && body["system"].is_string()) text += body["system"].get<std::string>() + "\n";
  if (!body.contains("messages")) return text;
  for (const auto& m : body["messages"]) {
    const auto& c = m["content"];
    if (c.is_string()) {
      text += c.get<std::string>() + "\n";
    } else if (c.is_array()) {
      for (const auto& block : c) {
        if (block.contains("text")) text += block["text"].get<std::string>() + "\n";
        if (block.contains("content") && block["content"].is_string()) text += block["content"].get<std::string>() + "\n";
        if (block.contains("input")) text += block["input"].dump() + "\n";
      }
    }
    if (m.contains("tool_calls")) text += m["tool_calls"].dump() + "\n";
  }
  return text;
}

std::string last_tool_output(const nlohmann::json& body) {
  const auto& msgs = body["messages"];
  for (size_t i = msgs.size(); i > 0; --i) {
    const auto& m = msgs[i - 1];
    if (m["role"] == "tool") return m["content"].get<std::string>();
    if (m["role"] == "user" && m["content"].is_array()) {
      for (const auto& b : m["content"]) {
        if (b["type"] == "tool_result") return b["content"].get<std::string>();
      }
    }
  }
  return "<no tool output>";
}

nlohmann::json tool(const std::string& language, const std::string& code, const std::string& text) {
  nlohmann::json arguments = {{"language", language}, {"code", code}};
  nlohmann::json call = {{"name", "execute"}, {"arguments", arguments.dump()}};
  nlohmann::json r = {{"tool_calls", nlohmann::json::array({call})}};
  if (!text.empty()) r["text"] = text;
  return r;
}

nlohmann::json say(const std::string& text) { return {{"text", text}}; }

nlohmann::json saved_conversation(const std::string& home) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(home + "/.local/share/open-interpreter/conversations", ec)) {
    return nlohmann::json::parse(read_text(e.path()), nullptr, false);
  }
  return nlohmann::json::array();
}

}  // namespace oishell::agent::test
