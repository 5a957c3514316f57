#pragma once
// The policy model: what a policy file says, typed, before it is compiled against a host (policy/compile.h).
// Every field remembers where it was written so errors and `explain` can point at the line. A field that a file
// does not set stays unset, so that `extends` can merge files (policy/load.h): scalars override, lists append,
// and `hide` / `network.deny` always win at compile time.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "policy/net_rules.h"
#include "policy/sandbox_spec.h"

namespace oishell::policy {

inline constexpr int kPolicyVersion = 1;

// Where something was written: file, 1-based line and column (0 when not from a file).
struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;
};

// A scalar that may be unset (inherited from the profile it extends, else the built-in default).
template <typename T>
struct Field {
  std::optional<T> value;
  SourcePos pos;
  bool is_set() const { return value.has_value(); }
  void set(T v, SourcePos p) {
    value = std::move(v);
    pos = std::move(p);
  }
  const T& get_or(const T& fallback) const { return value ? *value : fallback; }
};

// A path as written ("~/.ssh", "$WORKSPACE/build", ".git/hooks"); expanded by policy/paths.h at compile time.
struct PathItem {
  std::string text;
  SourcePos pos;
  bool operator==(const PathItem& o) const { return text == o.text; }
};

struct HostItem {
  HostRule rule;
  SourcePos pos;
};

struct CidrItem {
  Cidr cidr;
  std::string text;
  SourcePos pos;
};

struct FilesystemPolicy {
  Field<std::string> workspace;          // relative to the current directory, or absolute / ~ / $HOME
  Field<bool> workspace_read_only;
  std::vector<PathItem> read_only;
  std::vector<PathItem> read_write;
  std::vector<PathItem> hide;
  std::vector<PathItem> protect;         // relative to the workspace
  Field<HomeMode> home;
  Field<GitMode> git;                    // what the workspace's git metadata allows inside
  Field<bool> allow_home_workspace;      // a workspace or read_write path may contain the home directory
};

struct NetworkPolicy {
  Field<NetMode> mode;
  Field<bool> allow_all;
  std::vector<HostItem> allow;
  std::vector<HostItem> deny;
  std::vector<CidrItem> allow_private;
  std::map<std::string, std::pair<std::string, SourcePos>> hosts;  // normalised name -> IP literal
  Field<OnUnlisted> on_unlisted;
  // `network.unix`: host paths of pathname sockets that may be connected to (any network mode).
  std::vector<PathItem> unix_sockets;
};

struct ProcessPolicy {
  Field<SeccompLevel> seccomp;
  std::vector<std::pair<std::string, SourcePos>> allow_syscalls;
  Field<bool> nested_namespaces;
  Field<bool> own_proc_required;  // process.own_proc: required | best_effort
};

struct LimitsPolicy {
  Field<uint64_t> memory_bytes;
  Field<uint64_t> pids;
  Field<uint64_t> cpu_time_seconds;
  Field<uint64_t> wall_time_ms;
  Field<uint64_t> file_size_bytes;
  Field<uint64_t> open_files;
};

struct EnvPolicy {
  std::vector<std::pair<std::string, SourcePos>> pass;
  std::vector<std::pair<std::string, std::string>> set;  // in order; a later set of the same name replaces
};

struct Policy {
  int version = kPolicyVersion;
  std::string description;
  std::string extends;               // as written in the top file ("" = none)
  std::vector<std::string> chain;    // every file merged, base first ("profile default (/.../default.yaml)")
  FilesystemPolicy filesystem;
  Field<bool> landlock_required;
  NetworkPolicy network;
  ProcessPolicy process;
  LimitsPolicy limits;
  EnvPolicy env;
};

// One validation error: "file:line:column: key.path: message (hint)".
struct Diagnostic {
  SourcePos pos;
  std::string key_path;  // "filesystem.read_only[2]"
  std::string message;
  std::string hint;      // may be empty
  std::string format() const;
};

// Joins the diagnostics one per line.
std::string format_diagnostics(const std::vector<Diagnostic>& diagnostics);

// The closest of `candidates` to `word` when it is plausibly a typo, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace oishell::policy
