// The supervisor <-> sandbox init control protocol (runtime/control_protocol.h): init is inside the sandbox, so
// the supervisor decodes what a compromised init could send. Whatever decodes must encode back to a message that
// decodes to the same fields.
#include <cstdint>
#include <string>

#include "runtime/control_protocol.h"
#include "tests/fuzz/fuzz_input.h"

using oishell::control::ControlMessage;

namespace {

bool same(const ControlMessage& a, const ControlMessage& b) {
  return a.kind == b.kind && a.id == b.id && a.number == b.number && a.argv == b.argv && a.env == b.env &&
         a.strings == b.strings && a.cwd == b.cwd && a.step == b.step && a.message == b.message && a.data == b.data;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string payload(reinterpret_cast<const char*>(data), size);
  auto decoded = oishell::control::decode(payload);
  if (!decoded) return 0;
  const std::string again = oishell::control::encode(*decoded);
  auto redecoded = oishell::control::decode(again);
  FUZZ_CHECK(redecoded.is_ok());
  FUZZ_CHECK(same(*decoded, *redecoded));
  return 0;
}
