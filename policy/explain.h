#pragma once
// `oishell explain` and `oishell diff`: what a compiled policy lets the sandbox do, in plain sentences, and what
// one policy allows that another does not. Pure functions of the model and the compiled spec.
#include <string>
#include <vector>

#include "policy/guarantees.h"
#include "policy/policy.h"
#include "policy/sandbox_spec.h"

namespace oishell::policy {

// Sections "Files", "Network", "Processes", "Limits", "Environment"; one sentence per line. With `layers` (this
// machine's, runtime/outside/layer_facts.h), a "Guarantees" section says which layers hold each guarantee here.
std::string explain(const Policy& policy, const SandboxSpec& spec, const LayerFacts* layers = nullptr);

struct SpecDiff {
  std::vector<std::string> only_b;  // what B allows that A does not
  std::vector<std::string> only_a;  // what A allows that B does not
  bool same() const { return only_a.empty() && only_b.empty(); }
};

// Both specs compiled against the same host.
SpecDiff diff_specs(const SandboxSpec& a, const SandboxSpec& b);
// The network part of diff_specs alone (rules, allow_all, on_unlisted, private ranges, pins, unix sockets).
SpecDiff diff_network(const NetworkSpec& a, const NetworkSpec& b);

}  // namespace oishell::policy
