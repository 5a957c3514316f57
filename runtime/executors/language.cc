#include "runtime/executors/language.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace oishell::executors {

const std::vector<Language>& all_languages() {
  static const std::vector<Language> table = {
      {"python", {"py", "python3"}, "python3", {"-u", "{driver}"}, "runtime/executors/drivers/python_driver.py",
       "python variables, imports and definitions", true},
      {"shell", {"bash", "sh", "zsh"}, "bash", {"--noprofile", "--norc", "{driver}"},
       "runtime/executors/drivers/shell_driver.bash",
       "shell variables, functions, options and the working directory", true},
      {"javascript", {"js", "node", "nodejs"}, "node", {"--expose-internals", "{driver}"},
       "runtime/executors/drivers/node_driver.js",
       "javascript globals and definitions", false},
      {.name = "ruby",
       .aliases = {"rb"},
       .program = "ruby",
       .args = {"{driver}"},
       .driver = "runtime/executors/drivers/ruby_driver.rb",
       .lost = "ruby variables, methods, classes and required libraries",
       .accepts_stdin = true},
      {.name = "r",
       .aliases = {"rscript"},
       .program = "Rscript",
       .args = {"--vanilla", "{driver}"},
       .driver = "runtime/executors/drivers/r_driver.R",
       .lost = "R variables, functions and attached packages",
       .accepts_stdin = false,
       .control = ControlChannel::pipes},
      // jshell's own front end runs snippets in a second JVM that it reaches over a loopback TCP socket, which
      // the sandbox does not let it bind; the driver runs them in its own JVM through the jdk.jshell API
      // (java_driver.java, compiled by java's source launcher at start). `jshell` on the PATH shows a JDK.
      {.name = "java",
       .aliases = {"jshell"},
       .program = "java",
       // UTF-8 output whatever the locale (python's C-locale coercion; JDK 17 reads sun.*, 19 and later *.encoding).
       .args = {"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData", "-Dsun.stdout.encoding=UTF-8",
                "-Dsun.stderr.encoding=UTF-8", "-Dstdout.encoding=UTF-8", "-Dstderr.encoding=UTF-8", "{driver}"},
       .driver = "runtime/executors/drivers/java_driver.java",
       .lost = "java variables, methods, classes and imports",
       .accepts_stdin = false,
       .control = ControlChannel::pipes,
       .start_timeout = std::chrono::milliseconds(120'000),
       .also_requires = {"jshell"}},
      // Not a language that runs: a block is a page, saved into the workspace by a driver inside the sandbox.
      {.name = "html",
       .aliases = {"htm"},
       .program = "bash",
       .args = {"--noprofile", "--norc", "{driver}"},
       .driver = "runtime/executors/drivers/html_driver.bash",
       .lost = "nothing (the pages saved stay in the workspace)",
       .accepts_stdin = false},
  };
  return table;
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// `prefix` contains `path` as a whole component ("/usr" contains "/usr/bin" but not "/usrx").
bool contains(const std::string& prefix, const std::string& path) {
  if (prefix == "/") return true;
  return path.compare(0, prefix.size(), prefix) == 0 && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

static std::optional<std::string> host_path_of_depth(const std::string& inside, const std::vector<MountStep>& mounts,
                                                     int depth);

const Language* find_language(std::string_view name_or_alias) {
  const std::string key = lower(name_or_alias);
  for (const auto& language : all_languages()) {
    if (language.name == key) return &language;
    for (const auto& alias : language.aliases) {
      if (alias == key) return &language;
    }
  }
  return nullptr;
}

std::string sandbox_path_variable(const SandboxSpec& spec) {
  for (const auto& [key, value] : spec.env) {
    if (key == "PATH") return value;
  }
  return "/usr/local/bin:/usr/bin:/bin";
}

std::optional<std::string> host_path_of(const std::string& inside, const std::vector<MountStep>& mounts) {
  return host_path_of_depth(inside, mounts, 0);
}

static std::optional<std::string> host_path_of_depth(const std::string& inside, const std::vector<MountStep>& mounts,
                                                     int depth) {
  if (depth > 8) return std::nullopt;  // a loop of symlink steps
  const MountStep* best = nullptr;
  for (const auto& step : mounts) {
    if (step.kind == MountStep::Kind::protect) continue;  // read-only over itself: visibility unchanged
    if (!contains(step.target, inside)) continue;
    if (best && step.target.size() < best->target.size()) continue;
    best = &step;
  }
  if (!best) return std::nullopt;
  switch (best->kind) {
    case MountStep::Kind::bind_ro:
    case MountStep::Kind::bind_rw: {
      std::string rest = inside.substr(best->target == "/" ? 0 : best->target.size());
      return best->source + rest;
    }
    case MountStep::Kind::symlink: {  // /bin -> usr/bin: follow the link inside, then map again
      std::string rest = inside.substr(best->target.size());
      std::string parent = best->target.substr(0, best->target.rfind('/'));
      std::string link = best->source.empty() || best->source[0] == '/' ? best->source : parent + "/" + best->source;
      return host_path_of_depth(link + rest, mounts, depth + 1);
    }
    case MountStep::Kind::protect:  // skipped above
    case MountStep::Kind::tmpfs:
    case MountStep::Kind::proc:
    case MountStep::Kind::dev:
    case MountStep::Kind::hide:
    case MountStep::Kind::file:
      return std::nullopt;
  }
  return std::nullopt;
}

std::string find_program(const std::string& program, const SandboxSpec& spec, bool confined) {
  std::vector<std::string> candidates;
  if (program.find('/') != std::string::npos) {
    candidates.push_back(program);
  } else {
    const std::string path = sandbox_path_variable(spec);
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      std::string dir = path.substr(start, end - start);
      if (!dir.empty() && dir[0] == '/') candidates.push_back(dir + "/" + program);
      start = end + 1;
    }
  }
  for (const auto& inside : candidates) {
    if (!confined) {
      if (is_executable_file(inside)) return inside;
      continue;
    }
    auto host = host_path_of(inside, spec.mounts);
    if (host && is_executable_file(*host)) return inside;
  }
  return {};
}

}  // namespace oishell::executors
