// `oishell validate FILE... [--json]`: check policy files (and what they extend). Exit 0 when every file is valid,
// 1 with every error ("file:line:column: key.path: message (hint)") otherwise. Run by root, a valid policy that
// compiles here also gets the notes a root caller needs (read-only paths whose root-only files stay unreadable).
#include <unistd.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "policy/compiler.h"
#include "policy/mount_plan.h"
#include "tools/oishell/command.h"
#include "tools/oishell/policy_cli.h"

namespace oishell::cli {
namespace {

constexpr char kUsage[] =
    "usage: oishell validate FILE... [--profile NAME]... [--json]\n"
    "Checks policy files strictly (unknown keys, types, paths, domain patterns, CIDRs, sizes, durations, extends).\n"
    "Exit 0 when all are valid, 1 when one is not, 2 on a usage error. --json prints a machine-readable report.\n";

// What the parser reads and `oishell completion` offers.
const std::vector<completion::Option>& options() {
  static const std::vector<completion::Option> options =
      policy_verb_options({{{"--json"}, completion::Value::none, "", "print a machine-readable report", {}}});
  return options;
}

// For a root caller: what a valid policy means here that a file cannot show (policy/mount_plan.h). None when the
// caller is not root or the policy does not compile here (validate is about the file; `explain` says why).
std::vector<std::string> root_caller_notes(const policy::Policy& policy) {
  if (::geteuid() != 0) return {};
  auto spec = policy::compile(policy, CompileContext::from_process());
  if (!spec) return {};
  std::string unmapped = policy::describe_unmapped_read_only(*spec);
  if (unmapped.empty()) return {};
  return {std::move(unmapped)};
}

int run_validate(int argc, char** argv) {
  std::vector<std::string> seen;
  bool help = false;
  auto args = parse_policy_args(argc, argv, options(), seen, kUsage, &help);
  if (!args) return help ? kExitOk : kExitUsage;
  if (args->empty()) {
    std::fprintf(stderr, "oishell validate: no policy file given\n%s", kUsage);
    return kExitUsage;
  }
  bool json_out = !seen.empty();
  bool all_valid = true;
  nlohmann::ordered_json report;
  report["files"] = nlohmann::ordered_json::array();
  for (const auto& arg : *args) {
    policy::LoadResult loaded = policy::load_policy(arg.source);
    all_valid = all_valid && loaded.ok();
    const std::vector<std::string> notes = loaded.ok() ? root_caller_notes(loaded.policy) : std::vector<std::string>{};
    if (json_out) {
      nlohmann::ordered_json entry;
      entry["file"] = arg.label();
      entry["valid"] = loaded.ok();
      entry["errors"] = nlohmann::ordered_json::array();
      for (const auto& d : loaded.errors) {
        entry["errors"].push_back({{"file", d.pos.file},
                                   {"line", d.pos.line},
                                   {"column", d.pos.column},
                                   {"key", d.key_path},
                                   {"message", d.message},
                                   {"hint", d.hint},
                                   {"text", d.format()}});
      }
      entry["notes"] = notes;
      report["files"].push_back(std::move(entry));
    } else if (loaded.ok()) {
      std::printf("%s: valid\n", arg.label().c_str());
      for (const std::string& note : notes) std::fprintf(stderr, "%s: note: %s\n", arg.label().c_str(), note.c_str());
    } else {
      std::fprintf(stderr, "%s\n", policy::format_diagnostics(loaded.errors).c_str());
    }
  }
  if (json_out) {
    report["valid"] = all_valid;
    std::printf("%s\n", report.dump(2).c_str());
  }
  return all_valid ? kExitOk : kExitFailure;
}

const Registration kRegistration{{"validate", "check policy files; every error with file:line:column", &run_validate,
                                   &options, {completion::Value::file, "policy file", {}, true}}};

}  // namespace
}  // namespace oishell::cli
