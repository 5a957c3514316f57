// The kubeconfig reader of oishell-kube / `interpreter --kube` (agent/kubernetes/kube_config.h): a kubeconfig is
// the user's file, but often copied from elsewhere. Read for its current context and for a named one.
#include <cstdint>
#include <string>

#include "agent/kubernetes/kube_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const char* context : {"", "dev"}) {
    auto target = oishell::agent::kube_target_from_config(text, "/nonexistent-fuzz-dir", context);
    if (target) FUZZ_CHECK(!target->server.empty());
  }
  return 0;
}
