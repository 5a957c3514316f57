// The agent's code-fence readers on a model's streamed text (agent/core/code_fence.h, agent/core/stream_splitter.h): the
// text split into prose and code blocks as it streams in pieces: the same prose and code whatever the split, and
// every code_begin has its code_end.
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/core/code_extract.h"
#include "agent/core/code_fence.h"
#include "agent/core/stream_splitter.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::agent;

namespace {

// The events as one string; adjacent text (or code) pieces joined, so that two splits of one stream compare equal.
std::string split(std::string_view text, size_t piece) {
  std::string out;
  char last = 0;
  int open = 0;
  auto add = [&](char kind, std::string_view s) {
    if (kind != last) out += kind;
    last = kind;
    out.append(s);
  };
  StreamSplitter splitter({
      .text = [&](std::string_view s) { add('T', s); },
      .code_begin =
          [&](const std::string& language) {
            ++open;
            add('B', language);
            last = 0;
          },
      .code =
          [&](std::string_view s) {
            FUZZ_CHECK(open == 1);
            add('C', s);
          },
      .code_end =
          [&] {
            --open;
            FUZZ_CHECK(open == 0);
            add('E', {});
            last = 0;
          },
  });
  for (size_t at = 0; at < text.size(); at += piece) splitter.feed(text.substr(at, piece));
  splitter.finish();
  FUZZ_CHECK(open == 0);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const size_t piece = 1 + input.byte() % 16;
  const std::string_view text = input.rest();
  size_t line_start = 0;
  while (line_start <= text.size()) {
    size_t end = text.find('\n', line_start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(line_start, end - line_start);
    (void)opening_fence(line);
    (void)closing_fence(line);
    (void)could_be_fence(line);
    line_start = end + 1;
  }
  // The same stream in other pieces reads the same (a model server chooses how its deltas are cut).
  FUZZ_CHECK(split(text, text.size() + 1) == split(text, piece));
  std::string code(text);
  (void)strip_code_fences(&code);
  (void)canonical_language(text.substr(0, 32));
  return 0;
}
