// The relay's chunked-body scanner (runtime/relay/http_parser.h ChunkedScanner), fed as the terminator feeds it
// (https_terminator.cc split_chunked: data in runs, framing one byte at a time) and in arbitrary pieces: both ways
// must agree on where the body ends and whether it is malformed.
#include <cstdint>
#include <string_view>

#include "runtime/relay/http_parser.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::relay;

namespace {

struct Outcome {
  bool ok = true;
  bool done = false;
  size_t used = 0;
};

// Feeds `body` in pieces whose lengths come from `sizes` (cycled; 0 means "the rest").
Outcome feed_in_pieces(std::string_view body, std::string_view sizes) {
  ChunkedScanner scanner;
  Outcome out;
  size_t i = 0;
  while (out.used < body.size() && !scanner.done()) {
    size_t n = sizes.empty() ? body.size() : static_cast<uint8_t>(sizes[i++ % sizes.size()]);
    if (n == 0) n = body.size();
    const std::string_view piece = body.substr(out.used, n);
    auto fed = scanner.feed(piece);
    if (!fed) {
      out.ok = false;
      return out;
    }
    FUZZ_CHECK(*fed <= piece.size());
    out.used += *fed;
    if (*fed < piece.size()) FUZZ_CHECK(scanner.done());
  }
  out.done = scanner.done();
  return out;
}

Outcome feed_like_terminator(std::string_view body) {
  using Part = ChunkedScanner::Part;
  ChunkedScanner scanner;
  Outcome out;
  while (out.used < body.size() && !scanner.done()) {
    const Part part = scanner.part();
    const size_t n =
        part == Part::data ? static_cast<size_t>(std::min<uint64_t>(scanner.data_left(), body.size() - out.used)) : 1;
    FUZZ_CHECK(n > 0);
    auto fed = scanner.feed(body.substr(out.used, n));
    if (!fed) {
      out.ok = false;
      return out;
    }
    FUZZ_CHECK(*fed == n);
    out.used += n;
  }
  out.done = scanner.done();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const std::string_view sizes = input.prefixed();
  const std::string_view body = input.rest();
  const Outcome whole = feed_in_pieces(body, {});
  const Outcome pieces = feed_in_pieces(body, sizes);
  const Outcome bytewise = feed_like_terminator(body);
  FUZZ_CHECK(whole.ok == pieces.ok && whole.ok == bytewise.ok);
  if (whole.ok) {
    FUZZ_CHECK(whole.done == pieces.done && whole.done == bytewise.done);
    FUZZ_CHECK(whole.used == pieces.used && whole.used == bytewise.used);
  }
  return 0;
}
