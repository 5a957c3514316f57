#pragma once
// The facts of this machine that decide which layers hold each guarantee (policy/guarantees.h): the Landlock ABI
// (the kernel's, capped by OISHELL_LANDLOCK_ABI) and seccomp filters. Two cheap system calls; no cache.
#include "base/status.h"
#include "policy/guarantees.h"

namespace oishell {

// An error only when OISHELL_LANDLOCK_ABI is set to something else than 0..7.
Result<LayerFacts> layer_facts();

}  // namespace oishell
