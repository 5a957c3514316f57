#include "agent/config/profile_python.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "agent/host/atomic_file.h"
#include "agent/sandbox/executor_client.h"
#include "agent/host/subprocess.h"

namespace oishell::agent {
namespace {

constexpr const char* kMarker = "OISHELL-PROFILE ";
constexpr size_t kMaxOutput = 1 << 20;
constexpr size_t kMaxInput = 60 * 1024;  // below a pipe's 64 KiB
constexpr int kWaitMs = 20000;  // the sandbox's own wall-clock limit is 10 s

// The stub `interpreter`: assignments are recorded by their dotted name, reads of a name assigned before give its
// value, other reads give a nested stub (so `interpreter.computer.skills.path = x` records `computer.skills.path`),
// and calls (`interpreter.llm.load()`) are recorded by name. Modules the sandbox lacks import as inert stand-ins,
// so a profile that imports OI's optional dependencies still runs to the end. Output the profile prints is kept
// off stdout; the last line is the marker and the JSON.
constexpr const char* kRunner = R"PY(
import importlib.abc, importlib.machinery, io, json, sys, traceback, types
settings, calls, errors = {}, [], []
DEFAULTS = {"custom_instructions": "", "user_message_template": "{content}"}

class _Stub:
    def __init__(self, prefix):
        object.__setattr__(self, "_prefix", prefix)
    def __setattr__(self, name, value):
        settings[self._prefix + name] = value
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        key = self._prefix + name
        if key in settings:
            return settings[key]
        if key in DEFAULTS:
            return DEFAULTS[key]
        return _Stub(key + ".")
    def __call__(self, *args, **kwargs):
        calls.append(self._prefix[:-1])
        return _Stub(self._prefix)
    def __add__(self, other):
        raise ValueError("the profile reads interpreter." + self._prefix[:-1] + ", whose value is not known here")
    __radd__ = __add__
    def __bool__(self):
        return False
    def __iter__(self):
        return iter(())

class _Inert(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub("")

class _Fallback(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        return _Inert(spec.name)
    def exec_module(self, module):
        module.__path__ = []

interpreter = _Stub("")
module = types.ModuleType("interpreter")
module.__path__ = []
module.interpreter = interpreter
module.OpenInterpreter = lambda *args, **kwargs: interpreter
sys.modules["interpreter"] = module
sys.meta_path.append(_Fallback())

name = sys.argv[1]
source = sys.stdin.buffer.read().decode("utf-8")
real_stdout = sys.stdout
sys.stdout = io.StringIO()
try:
    code = compile(source, name, "exec")
    exec(code, {"__name__": "__main__", "interpreter": interpreter})
except SystemExit:
    pass
except BaseException as e:
    line = getattr(e, "lineno", None) if isinstance(e, SyntaxError) else None
    for frame in traceback.extract_tb(e.__traceback__):
        if frame.filename == name:
            line = frame.lineno
    errors.append(("line %d: " % line if line else "") + type(e).__name__ + ": " + str(e))
sys.stdout = real_stdout
out = {}
for key, value in settings.items():
    if isinstance(value, _Stub):
        out[key] = None  # set from another setting whose value is not known here: left unset
        continue
    try:
        json.dumps(value)
        out[key] = value
    except (TypeError, ValueError):
        errors.append("interpreter.%s: a %s cannot be read (only text, numbers, booleans, lists and mappings)"
                      % (key, type(value).__name__))
print("OISHELL-PROFILE " + json.dumps({"settings": out, "calls": calls, "errors": errors}))
)PY";

// A directory removed with everything in it.
class ScratchDir {
 public:
  // Empty, and open to every user: a root caller's sandbox does not id-map its read-only workspace (strict's), so
  // a 0700 directory of root's could not even be its working directory. Nothing is put in it: the profile goes in
  // on stdin, never as a file other users could read.
  ScratchDir() {
    char tmpl[] = "/tmp/oishell-pyprofile-XXXXXX";
    if (char* p = ::mkdtemp(tmpl)) path_ = p;
    if (!path_.empty() && ::chmod(path_.c_str(), 0755) != 0) path_.clear();
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Run {
  int exit_code = -1;
  std::string out, err;
};

// Whether a variable looks like a credential (OPENAI_API_KEY, GITHUB_TOKEN, ...). `oishell run` builds the
// sandbox's environment from its policy's pass-list anyway; these are not even given to it.
bool looks_secret(std::string_view name) {
  for (std::string_view word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"}) {
    if (name.find(word) != std::string_view::npos) return true;
  }
  return false;
}

// Runs argv with `input` on its stdin (at most kMaxInput bytes: a pipe holds them all, so writing never waits on
// the child), keeping at most kMaxOutput bytes of each stream; killed (its process group) after kWaitMs.
Result<Run> run_bounded(const std::vector<std::string>& argv, const std::string& input) {
  std::vector<std::string> env;
  for (char** p = environ; p && *p; ++p) {
    std::string_view kv(*p);
    if (!looks_secret(kv.substr(0, kv.find('=')))) env.emplace_back(kv);
  }
  auto child = spawn_piped(argv, env, /*new_process_group=*/true);
  if (!child) return child.status();
  (void)write_to_child(child->stdin_fd.get(), input);  // a child gone already (no sandbox): its output says why
  child->stdin_fd.reset();
  Run run;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
  bool open_out = true, open_err = true;
  while (open_out || open_err) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(-child->pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{open_out ? child->stdout_fd.get() : -1, POLLIN, 0},
                     {open_err ? child->stderr_fd.get() : -1, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    char buf[8192];
    for (int i = 0; i < 2; ++i) {
      if (!fds[i].revents) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      std::string& into = i == 0 ? run.out : run.err;
      if (n > 0) {
        if (into.size() < kMaxOutput) into.append(buf, std::min(static_cast<size_t>(n), kMaxOutput - into.size()));
      } else if (n == 0 || errno != EAGAIN) {
        (i == 0 ? open_out : open_err) = false;
      }
    }
  }
  int status = 0;
  while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

// A Python literal at text[*i]: a string (quotes, triple quotes, r prefix; common escapes), a number, True, False
// or None. Returns false for anything else (f-strings, expressions, names).
bool parse_literal(const std::string& text, size_t* i, YAML::Node* out, bool* is_none) {
  size_t p = *i;
  auto starts = [&](const char* s) { return text.compare(p, std::strlen(s), s) == 0; };
  *is_none = false;
  for (const char* word : {"True", "False", "None"}) {
    if (starts(word) && (p + std::strlen(word) == text.size() || !std::isalnum(static_cast<unsigned char>(
                                                                     text[p + std::strlen(word)])))) {
      if (word[0] == 'N') *is_none = true;
      else *out = YAML::Node(word[0] == 'T');
      *i = p + std::strlen(word);
      return true;
    }
  }
  bool raw = false;
  if (p < text.size() && (text[p] == 'r' || text[p] == 'R')) {
    raw = true;
    ++p;
  }
  if (p < text.size() && (text[p] == '"' || text[p] == '\'')) {
    char q = text[p];
    bool triple = text.compare(p, 3, std::string(3, q)) == 0;
    p += triple ? 3 : 1;
    std::string value;
    while (p < text.size()) {
      if (triple ? text.compare(p, 3, std::string(3, q)) == 0 : text[p] == q) {
        *out = YAML::Node(value);
        *i = p + (triple ? 3 : 1);
        return true;
      }
      if (!triple && text[p] == '\n') return false;
      if (text[p] == '\\' && p + 1 < text.size()) {
        char c = text[p + 1];
        if (raw) value += '\\', value += c;
        else if (c == 'n') value += '\n';
        else if (c == 't') value += '\t';
        else if (c == '\n') {}
        else if (c == '\\' || c == '\'' || c == '"') value += c;
        else value += '\\', value += c;
        p += 2;
        continue;
      }
      value += text[p++];
    }
    return false;
  }
  if (raw) return false;
  size_t start = p;
  if (p < text.size() && (text[p] == '-' || text[p] == '+')) ++p;
  size_t digits = p;
  while (p < text.size() && (std::isdigit(static_cast<unsigned char>(text[p])) || text[p] == '.' || text[p] == '_' ||
                             text[p] == 'e' || text[p] == 'E')) {
    ++p;
  }
  if (p == digits || !std::isdigit(static_cast<unsigned char>(text[digits]))) return false;
  std::string number = text.substr(start, p - start);
  std::erase(number, '_');
  *out = YAML::Node(number);
  *i = p;
  return true;
}

}  // namespace

const char* python_profile_runner() { return kRunner; }

Result<PythonProfileSettings> settings_from_runner_output(const std::string& output, const std::string& path) {
  size_t at = output.rfind(kMarker);
  if (at == std::string::npos || (at != 0 && output[at - 1] != '\n')) {
    return Status::error(path + ": the profile's settings could not be read (no report from the sandbox)");
  }
  std::string line = output.substr(at + std::strlen(kMarker));
  line = line.substr(0, line.find('\n'));
  nlohmann::json report = nlohmann::json::parse(line, nullptr, false);
  if (!report.is_object() || !report.contains("settings") || !report["settings"].is_object()) {
    return Status::error(path + ": the profile's settings could not be read (an unreadable report)");
  }
  std::string failures;
  if (report.contains("errors") && report["errors"].is_array()) {
    for (const auto& e : report["errors"]) {
      if (e.is_string()) failures += (failures.empty() ? "" : "\n") + path + ": " + e.get<std::string>();
    }
  }
  if (!failures.empty()) return Status::error(failures);
  PythonProfileSettings read;
  read.settings = report["settings"];
  std::string called;
  if (report.contains("calls") && report["calls"].is_array()) {
    for (const auto& c : report["calls"]) {
      std::string name = c.is_string() ? "interpreter." + c.get<std::string>() + "()" : "";
      if (!name.empty() && called.find(name) == std::string::npos) called += (called.empty() ? "" : ", ") + name;
    }
  }
  if (!called.empty()) read.notes.push_back(path + ": calls " + called + ": no effect here");
  return read;
}

std::string python_profile_as_yaml(const std::string& source) {
  YAML::Emitter yaml;
  yaml << YAML::BeginMap;
  std::vector<std::string> skipped;
  const std::string prefix = "interpreter.";
  for (size_t pos = 0; pos < source.size();) {
    size_t end = source.find('\n', pos);
    if (end == std::string::npos) end = source.size();
    size_t next = end + 1;
    std::string_view line(source.data() + pos, end - pos);
    size_t name_end = prefix.size();
    while (name_end < line.size() &&
           (std::isalnum(static_cast<unsigned char>(line[name_end])) || line[name_end] == '_' || line[name_end] == '.')) {
      ++name_end;
    }
    size_t eq = line.find_first_not_of(" \t", name_end);
    if (line.starts_with(prefix) && eq != std::string_view::npos && eq + 1 < line.size() && line[eq + 1] == '=' &&
        std::string_view("+-*/%|&").find(line[eq]) != std::string_view::npos) {
      size_t line_number = 1 + static_cast<size_t>(std::count(source.begin(), source.begin() + pos, '\n'));
      skipped.push_back("line " + std::to_string(line_number) + ": interpreter." +
                        std::string(line.substr(prefix.size(), name_end - prefix.size())) + " " +
                        std::string(line.substr(eq, 2)) + " ... (changes a value not known here)");
    } else if (line.starts_with(prefix) && eq != std::string_view::npos && line[eq] == '=' && line.substr(eq, 2) != "==") {
      std::string key(line.substr(prefix.size(), name_end - prefix.size()));
      size_t i = pos + eq + 1;
      while (i < source.size() && (source[i] == ' ' || source[i] == '\t')) ++i;
      YAML::Node value;
      bool is_none = false;
      bool ok = parse_literal(source, &i, &value, &is_none);
      if (ok && value.IsScalar() && source.compare(i, 8, ".strip()") == 0) {
        std::string v = value.Scalar();
        v.erase(0, v.find_first_not_of(" \t\n"));
        v.erase(v.find_last_not_of(" \t\n") + 1);
        value = YAML::Node(v);
        i += 8;
      }
      size_t rest = i;
      while (rest < source.size() && (source[rest] == ' ' || source[rest] == '\t')) ++rest;
      if (rest < source.size() && source[rest] == '#') rest = std::min(source.find('\n', rest), source.size());
      ok = ok && (rest >= source.size() || source[rest] == '\n');
      if (ok) {
        if (!is_none) {
          yaml << YAML::Key << key << YAML::Value;
          if (value.Scalar().find('\n') != std::string::npos) yaml << YAML::DoubleQuoted;
          yaml << value.Scalar();
        }
        next = rest + 1;
      } else {
        size_t line_number = 1 + static_cast<size_t>(std::count(source.begin(), source.begin() + pos, '\n'));
        skipped.push_back("line " + std::to_string(line_number) + ": interpreter." + key + " = ... (not a plain value)");
      }
    }
    pos = next;
  }
  yaml << YAML::EndMap;
  std::string out = yaml.c_str();
  if (out == "{}") out.clear();
  if (!out.empty()) out += "\n";
  for (const auto& s : skipped) out += "# not converted: " + s + "\n";
  return out;
}

Result<PythonProfileSettings> read_python_profile_settings(const std::string& path) {
  auto source = read_file(path, 1 << 20);
  if (!source) return source.status().with_context("reading profile");
  auto refuse = [&](const std::string& why) -> Status {
    std::string yaml = python_profile_as_yaml(*source);
    return Status::error(path + ": a Python profile is read only in the sandbox, and " + why +
                         ". The same settings as a YAML profile (save it as a .yaml file beside it):\n" +
                         (yaml.empty() ? "# (no plain assignments to interpreter.* found)\n" : yaml) +
                         "version: 0.2.5\n");
  };
  if (source->size() > kMaxInput) {
    return refuse("it is larger than " + std::to_string(kMaxInput / 1024) + " KiB, more than a profile holds");
  }
  ScratchDir dir;
  if (dir.path().empty()) return refuse("no scratch directory could be made (mkdtemp, chmod)");
  std::vector<std::string> argv = {find_oishell(), "run", "--profile", "strict", "--workspace", dir.path(),
                                   "--net", "none", "--timeout", "10s", "--memory", "256MiB", "--",
                                   "python3", "-I", "-c", kRunner, path};
  auto run = run_bounded(argv, *source);
  if (!run) return refuse("the sandbox could not start (" + run.status().message() + ")");
  if (run->out.find(kMarker) == std::string::npos) {
    std::string err = run->err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    if (auto nl = err.rfind('\n'); nl != std::string::npos) err = err.substr(nl + 1);
    return refuse("it did not run there (oishell run exited " + std::to_string(run->exit_code) +
                  (err.empty() ? "" : ": " + err) + ")");
  }
  return settings_from_runner_output(run->out, path);
}

}  // namespace oishell::agent
