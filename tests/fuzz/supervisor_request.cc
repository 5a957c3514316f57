// The supervisor protocol's requests (runtime/executors/protocol.h parse_request; docs/protocol.md): the JSON lines
// a client of `oishell supervise` writes (the agent, an editor plug-in, another framework).
#include <cstdint>
#include <string_view>
#include <variant>

#include "runtime/executors/protocol.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::executors;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    auto request = parse_request(line);
    if (!request) {
      (void)to_line(error_event(request.status().message()));
    } else if (const auto* exec = std::get_if<ExecRequest>(&*request)) {
      (void)to_line(done_event(exec->id, "ok", 0, 1));
      (void)id_value(exec->id);
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return 0;
}
