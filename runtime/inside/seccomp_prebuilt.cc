#include "runtime/inside/seccomp_prebuilt.h"

#include <string>

namespace oishell {
namespace {

struct Prebuilt {
  SeccompLevel level;
  bool nested_namespaces;
  std::vector<std::string> deny_sets;
  std::vector<sock_filter> instructions;
};

const std::vector<Prebuilt>& table() {
  static const std::vector<Prebuilt> kTable = {
#include "seccomp_programs.inc"
  };
  return kTable;
}

}  // namespace

const std::vector<sock_filter>* prebuilt_seccomp_program(const SeccompSpec& spec) {
  if (!spec.allow_syscalls.empty() || spec.observe_paths) return nullptr;
  for (const Prebuilt& p : table()) {
    if (p.level == spec.level && p.nested_namespaces == spec.nested_namespaces && p.deny_sets == spec.deny_sets) {
      return &p.instructions;
    }
  }
  return nullptr;
}

std::vector<SeccompSpec> prebuilt_seccomp_specs() {
  std::vector<SeccompSpec> specs;
  for (const Prebuilt& p : table()) {
    SeccompSpec spec;
    spec.level = p.level;
    spec.nested_namespaces = p.nested_namespaces;
    spec.deny_sets = p.deny_sets;
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace oishell
