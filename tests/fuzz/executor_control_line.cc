// The control lines an executor's driver writes from inside the sandbox (runtime/executors/protocol.h
// parse_control_line: ready, active line, image, done), and its output streamed through Utf8Carry into JSON events.
// The driver runs the model's code, so both are untrusted.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "runtime/executors/protocol.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::executors;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const size_t piece = 1 + input.byte() % 8;
  const std::string_view text = input.rest();
  std::string_view lines = text;
  while (!lines.empty()) {
    const size_t end = lines.find('\n');
    auto message = parse_control_line(lines.substr(0, end));
    if (message) {
      if (const auto* image = std::get_if<ControlImage>(&*message)) {
        FUZZ_CHECK(image->base64.size() <= kMaxControlLine);
        FUZZ_CHECK(image->format == "png" || image->format == "jpeg");
      }
      (void)control_seq(*message);
    }
    if (end == std::string_view::npos) break;
    lines.remove_prefix(end + 1);
  }
  // Output in pieces: what Utf8Carry hands on, joined, is the input (it only holds back, never drops or adds).
  Utf8Carry carry;
  std::string joined;
  for (size_t at = 0; at < text.size(); at += piece) {
    std::string out = carry.take(text.substr(at, piece));
    (void)to_line(nlohmann::json{{"type", "output"}, {"data", out}});
    joined += out;
  }
  joined += carry.flush();
  FUZZ_CHECK(joined == text);
  return 0;
}
