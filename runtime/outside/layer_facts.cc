#include "runtime/outside/layer_facts.h"

#include <sys/prctl.h>

#include "runtime/inside/landlock.h"

namespace oishell {

Result<LayerFacts> layer_facts() {
  auto cap = landlock_abi_cap();
  if (!cap.is_ok()) return cap.status();
  LayerFacts facts;
  facts.landlock_kernel_abi = landlock_abi_version();
  facts.landlock_cap = *cap;
  facts.landlock_abi = landlock_abi_in_use(facts.landlock_kernel_abi, cap->value_or(-1));
  facts.seccomp_filter = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  return facts;
}

}  // namespace oishell
