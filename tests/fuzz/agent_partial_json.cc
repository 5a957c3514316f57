// The agent's readers of a model's tool-call arguments (agent/core/partial_json.h): a string field of JSON cut anywhere
// (shown while it streams), the lenient parse and the repairing parse of the finished arguments, which never both
// refuses and reads.
#include <cstdint>
#include <string_view>

#include "agent/core/partial_json.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::agent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const char* key : {"code", "language", ""}) {
    auto whole = partial_json_string(text, key);
    // Streaming: every prefix of the text gives a prefix of what the whole gives (or nothing yet).
    if (whole && text.size() < 512) {
      for (size_t cut = 0; cut < text.size(); ++cut) {
        auto part = partial_json_string(text.substr(0, cut), key);
        if (part) FUZZ_CHECK(whole->starts_with(*part));
      }
    }
  }
  (void)lenient_json_parse(text);
  const CallArguments args = parse_call_arguments(text);
  // Refused (a problem) or read (a value), never both; neither is text that is not JSON (the code itself).
  FUZZ_CHECK(!(args.value.has_value() && !args.problem.empty()));
  return 0;
}
