#pragma once
// Guarantees, not features: what a compiled policy promises the host, and, for each promise, the layers that hold
// it on a given machine. A layer needs a kernel feature (Landlock's ABI, seccomp filters); the namespaces and the
// mount tree are always there (no sandbox starts without them). `landlock: required` means every guarantee is held
// by at least one layer: the sandbox refuses only when one would be held by none, and says which, the kernel
// feature that would hold it, and the options (refusal()). Pure: the machine's facts come in as LayerFacts.
#include <optional>
#include <string>
#include <vector>

#include "policy/sandbox_spec.h"

namespace oishell {

// The newest Landlock ABI this oishell knows (7: restrict_self log flags; 6 is the last that adds rights).
inline constexpr int kLandlockAbiKnown = 7;

struct LayerFacts {
  int landlock_abi = 0;                 // the ABI in use: min(kernel, cap)
  int landlock_kernel_abi = 0;          // what the kernel offers
  std::optional<int> landlock_cap;      // OISHELL_LANDLOCK_ABI, when set
  bool seccomp_filter = true;
};

struct Layer {
  std::string name;    // "mount namespace", "Landlock ABI 4 (TCP ports)", "seccomp", ...
  std::string how;     // one clause: how this layer holds the guarantee
};

struct MissingLayer {
  std::string name;    // "Landlock TCP port rules"
  std::string needs;   // "Landlock ABI 4 (Linux 6.7)"
};

struct GuaranteeState {
  std::string id;         // "fs.write", "net.exit", ...
  std::string statement;  // the promise, one sentence
  std::vector<Layer> held_by;          // on this machine
  std::vector<MissingLayer> missing;   // layers this oishell would add on a newer or differently set-up kernel
  // What the policy itself gave up of it, one clause each ("process.allow_syscalls takes socket out of the sockets
  // set"): a guarantee waived is lost whatever its layers, and is not a refusal of `landlock: required` (no kernel
  // would hold it; the policy asked).
  std::vector<std::string> waived_by;
  bool held() const { return !held_by.empty() && waived_by.empty(); }
};

// Every guarantee of `spec`, with its layers on a machine with `facts`. Its seccomp layers are read from the sets
// the program holds (policy/seccomp_sets: sets_in_effect, what the compiler loads), never from the set names alone.
std::vector<GuaranteeState> assess_guarantees(const SandboxSpec& spec, const LayerFacts& facts);

// With spec.landlock.required: the refusal when a guarantee is held by no layer (naming it, the feature that would
// hold it, and the options); "" when every guarantee is held.
std::string refusal(const std::vector<GuaranteeState>& guarantees);

// One line per guarantee held by fewer layers than this oishell can use ("net.exit: held by the network namespace;
// not by Landlock TCP port rules (needs Landlock ABI 4)"); empty when every layer is in use.
std::vector<std::string> fewer_layers(const std::vector<GuaranteeState>& guarantees);

// "ABI 3 (the kernel's)" or "ABI 3 (capped by OISHELL_LANDLOCK_ABI=3; the kernel has 7)" or "none (...)".
std::string describe_landlock(const LayerFacts& facts);

}  // namespace oishell
