// oci_seccomp_exec: runs a command under an OCI seccomp profile (the JSON a container runtime takes, e.g.
// deploy/kubernetes/seccomp/oishell.json), as a container without capabilities on x86-64 would get it: entries that
// need a capability are left out, those that apply only without one are kept, entries for other architectures are
// left out, and names this kernel's architecture does not have are skipped. The tests run oishell under it to show
// that the shipped profile lets oishell build its sandbox and that the runtimes' default does not.
//
//   oci_seccomp_exec PROFILE.json [--drop COMMENT_PREFIX]... [--add PROFILE.json]... -- COMMAND [ARGS...]
// --drop leaves out the entries whose comment starts with the prefix; --add adds another file's entries (with
// "oishell:" dropped and tests/deploy/runtime_default_clone.json added, the runtime's default comes back).
#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "oci_seccomp_exec: %s\n", what.c_str());
  std::exit(2);
}

bool contains(const json& list, const char* value) {
  if (!list.is_array()) return false;
  for (const auto& v : list) {
    if (v.is_string() && v.get<std::string>() == value) return true;
  }
  return false;
}

uint32_t action_of(const json& entry, const std::string& name, int default_errno) {
  if (name == "SCMP_ACT_ALLOW") return SCMP_ACT_ALLOW;
  if (name == "SCMP_ACT_ERRNO") return SCMP_ACT_ERRNO(entry.value("errnoRet", default_errno));
  if (name == "SCMP_ACT_KILL" || name == "SCMP_ACT_KILL_THREAD") return SCMP_ACT_KILL;
  if (name == "SCMP_ACT_KILL_PROCESS") return SCMP_ACT_KILL_PROCESS;
  if (name == "SCMP_ACT_LOG") return SCMP_ACT_LOG;
  fail("unsupported action " + name);
}

scmp_compare op_of(const std::string& op) {
  if (op == "SCMP_CMP_NE") return SCMP_CMP_NE;
  if (op == "SCMP_CMP_EQ") return SCMP_CMP_EQ;
  if (op == "SCMP_CMP_LT") return SCMP_CMP_LT;
  if (op == "SCMP_CMP_LE") return SCMP_CMP_LE;
  if (op == "SCMP_CMP_GT") return SCMP_CMP_GT;
  if (op == "SCMP_CMP_GE") return SCMP_CMP_GE;
  if (op == "SCMP_CMP_MASKED_EQ") return SCMP_CMP_MASKED_EQ;
  fail("unsupported comparison " + op);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) fail("usage: oci_seccomp_exec PROFILE.json [--drop PREFIX]... -- COMMAND [ARGS...]");
  std::vector<std::string> drops, adds;
  int i = 2;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--drop") == 0 && i + 1 < argc) drops.push_back(argv[++i]);
    else if (std::strcmp(argv[i], "--add") == 0 && i + 1 < argc) adds.push_back(argv[++i]);
    else fail(std::string("unknown option ") + argv[i]);
  }
  if (i + 1 >= argc) fail("no command after --");
  std::ifstream in(argv[1]);
  json profile = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!profile.is_object()) fail(std::string("cannot read ") + argv[1]);
  for (const auto& file : adds) {
    std::ifstream more_in(file);
    json more = json::parse(more_in, nullptr, /*allow_exceptions=*/false);
    if (!more.is_object() || !more["syscalls"].is_array()) fail("cannot read " + file);
    for (auto& entry : more["syscalls"]) profile["syscalls"].push_back(entry);
  }
  const int default_errno = profile.value("defaultErrnoRet", EPERM);
  scmp_filter_ctx ctx = seccomp_init(action_of(profile, profile.value("defaultAction", ""), default_errno));
  if (!ctx) fail("seccomp_init");
  for (const auto& entry : profile["syscalls"]) {
    const std::string comment = entry.value("comment", "");
    bool dropped = false;
    for (const auto& p : drops) dropped = dropped || comment.rfind(p, 0) == 0;
    if (dropped) continue;
    const json includes = entry.value("includes", json::object());
    const json excludes = entry.value("excludes", json::object());
    if (includes.contains("caps") && !includes["caps"].empty()) continue;  // the container has no capabilities
    if (includes.contains("arches") && !includes["arches"].empty() && !contains(includes["arches"], "amd64")) continue;
    if (contains(excludes.value("arches", json::array()), "amd64")) continue;
    const uint32_t action = action_of(entry, entry.value("action", ""), default_errno);
    std::vector<scmp_arg_cmp> args;
    for (const auto& a : entry.value("args", json::array())) {
      args.push_back({a.value("index", 0u), op_of(a.value("op", "")), a.value("value", uint64_t{0}),
                      a.value("valueTwo", uint64_t{0})});
    }
    for (const auto& name : entry["names"]) {
      int nr = seccomp_syscall_resolve_name(name.get<std::string>().c_str());
      if (nr == __NR_SCMP_ERROR) continue;  // not a call of this architecture (chown32, ...)
      int rc = seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(args.size()), args.data());
      if (rc != 0 && rc != -EEXIST) fail("seccomp_rule_add " + name.get<std::string>() + ": " + std::strerror(-rc));
    }
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(std::string("PR_SET_NO_NEW_PRIVS: ") + std::strerror(errno));
  if (int rc = seccomp_load(ctx); rc != 0) fail(std::string("seccomp_load: ") + std::strerror(-rc));
  seccomp_release(ctx);
  ::execvp(argv[i + 1], argv + i + 1);
  fail(std::string("exec ") + argv[i + 1] + ": " + std::strerror(errno));
}
