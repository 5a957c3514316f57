#include "agent/config/profile_actions.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "agent/host/atomic_file.h"
#include "agent/config/paths.h"
#include "agent/config/profile_builtin.h"
#include "agent/host/subprocess.h"
#include "base/terminal_text.h"

namespace oishell::agent {
namespace {

Status make_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::from_errno(ec.value(), "mkdir(\"" + dir + "\")");
  return Status::ok();
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string profile_name_of(const std::string& name) {
  for (const char* ext : {".yaml", ".yml", ".py"}) {
    if (name.ends_with(ext)) return name.substr(0, name.size() - std::string_view(ext).size());
  }
  return name;
}

// Prints the folder (creating it) and opens it in the desktop's file manager when someone is there to see it.
int show_folder(const std::string& dir, const EnvLookup& env, std::FILE* out, std::FILE* err) {
  if (Status s = make_dir(dir); !s.is_ok()) {
    std::fprintf(err, "interpreter: %s\n", escape_for_terminal(s.message()).c_str());
    return 1;
  }
  std::fprintf(out, "%s\n", dir.c_str());
  std::fflush(out);
  auto set = [&env](const char* name) {
    auto v = env(name);
    return v && !v->empty();
  };
  if ((set("DISPLAY") || set("WAYLAND_DISPLAY")) && ::isatty(::fileno(out)) == 1) {
    (void)run_capture({"xdg-open", dir}, 5000);
  }
  return 0;
}

}  // namespace

Result<std::vector<std::string>> reset_profiles(const std::string& name, const EnvLookup& env) {
  std::string only = profile_name_of(name);
  if (!only.empty() && !builtin_profile(only)) {
    std::string names;
    for (const auto& n : builtin_profile_names()) names += (names.empty() ? "" : ", ") + std::string(n);
    return Status::error("--reset_profile: `" + name + "` is not a built-in profile (they are: " + names + ")");
  }
  std::string dir = profiles_dir(env);
  OI_TRY(make_dir(dir));
  std::vector<std::string> lines;
  for (std::string_view n : builtin_profile_names()) {
    if (!only.empty() && n != only) continue;
    std::string_view text = *builtin_profile(n);
    std::string file = dir + "/" + std::string(n) + ".yaml";
    std::string kept;
    if (exists(file)) {
      auto current = read_file(file, 1 << 20);
      if (current && *current == text) {
        lines.push_back(file + " is already the built-in profile");
        continue;
      }
      if (::rename(file.c_str(), (file + ".bak").c_str()) != 0) {
        return Status::from_errno(errno, "rename(\"" + file + "\", \"" + file + ".bak\")");
      }
      kept = " (the previous one is kept as " + file + ".bak)";
    }
    OI_TRY(write_file_atomic(file, std::string(text), 0644));
    lines.push_back(file + " has been reset" + kept);
  }
  return lines;
}

Status ensure_default_profile(const EnvLookup& env, bool* written) {
  *written = false;
  std::string dir = profiles_dir(env);
  std::string file = dir + "/default.yaml";
  if (exists(file)) return Status::ok();
  OI_TRY(make_dir(dir));
  OI_TRY(write_file_atomic(file, std::string(*builtin_profile("default")), 0644));
  *written = true;
  return Status::ok();
}

std::optional<int> run_profile_actions(const CliOptions& cli, const EnvLookup& env, std::FILE* out, std::FILE* err) {
  if (cli.reset_profile) {
    auto lines = reset_profiles(*cli.reset_profile, env);
    if (!lines) {
      std::fprintf(err, "interpreter: %s\n", escape_for_terminal(lines.status().message()).c_str());
      return 2;
    }
    for (const auto& l : *lines) std::fprintf(out, "%s\n", escape_for_terminal(l).c_str());
    return 0;
  }
  if (cli.profiles) return show_folder(profiles_dir(env), env, out, err);
  if (cli.local_models) return show_folder(models_dir(env), env, out, err);
  return std::nullopt;
}

}  // namespace oishell::agent
