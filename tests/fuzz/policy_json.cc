// The policy loader on a JSON policy (`--policy x.json`): the same loader, fed JSON (which YAML reads), so the
// corpus and dictionary steer towards JSON's syntax (escapes, flow collections, numbers).
#include "tests/fuzz/policy_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::load_and_compile_policy(data, size, "fuzz.json");
  return 0;
}
