// The relay's secret scrubber (runtime/relay/secret_scrubber.h, scrubbed_stream.h) on a response the upstream
// controls: up to three secrets, then a body streamed in pieces, plain or chunked (the terminator's split of framing
// and content, https_terminator.cc split_chunked). What reaches the sandbox, de-chunked as its client would read it,
// must not hold any secret as it is (issue 33, finding 2), and scrubbing keeps the length of what it passes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/relay/http_parser.h"
#include "runtime/relay/scrubbed_stream.h"
#include "runtime/relay/secret_scrubber.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::relay;

namespace {

// The content of a chunked body that ChunkedScanner accepted (the client's view): the chunks' data, no framing.
std::string dechunk(std::string_view body) {
  std::string out;
  size_t at = 0;
  while (at < body.size()) {
    const size_t eol = body.find("\r\n", at);
    if (eol == std::string_view::npos) break;
    const std::string_view line = body.substr(at, eol - at);
    size_t n = 0, digits = 0;
    for (char c : line) {
      const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (v < 0) break;
      n = n * 16 + static_cast<size_t>(v);
      ++digits;
    }
    at = eol + 2;
    if (n == 0 || digits == 0) break;
    out.append(body.substr(at, n));
    at += n + 2;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  oishell::fuzz::Input input(data, size);
  const uint8_t options = input.byte();
  SecretScrubber scrubber;
  std::vector<std::string> secrets;
  for (int i = 0; i < 1 + options % 3; ++i) {
    std::string secret(input.take(input.byte() % 24));
    // A secret with '*' could be written by the scrubber itself; real credentials are tokens without one.
    if (secret.empty() || secret.find('*') != std::string::npos) continue;
    scrubber.add("credential" + std::to_string(i), secret);
    secrets.push_back(secret);
  }
  const bool chunked = options & 0x80;
  const std::string_view sizes = input.prefixed();
  const std::string_view body = input.rest();

  ScrubbedStream stream(scrubber);
  std::string sent;
  std::vector<std::string> found;
  ChunkedScanner chunks;
  std::string framing;
  size_t used = 0, piece_index = 0;
  bool malformed = false;
  while (used < body.size() && !malformed) {
    size_t n = sizes.empty() ? body.size() : static_cast<uint8_t>(sizes[piece_index++ % sizes.size()]);
    if (n == 0) n = body.size();
    const std::string_view read = body.substr(used, n);  // one read from upstream
    used += read.size();
    if (!chunked) {
      stream.content(read);
    } else {
      size_t at = 0;
      while (at < read.size() && !chunks.done()) {
        const auto part = chunks.part();
        const size_t take = part == ChunkedScanner::Part::data
                                ? static_cast<size_t>(std::min<uint64_t>(chunks.data_left(), read.size() - at))
                                : 1;
        const std::string_view bytes = read.substr(at, take);
        if (!chunks.feed(bytes)) {
          malformed = true;
          break;
        }
        if (part == ChunkedScanner::Part::framing) {
          framing.append(bytes);
        } else {
          stream.framing(framing);
          framing.clear();
          stream.content(bytes);
        }
        at += take;
      }
    }
    const size_t before = sent.size();
    stream.release(sent, false, &found);
    FUZZ_CHECK(stream.held() <= scrubber.max_held() + 8 * 1024);
    FUZZ_CHECK(sent.size() >= before);
  }
  stream.framing(framing);
  stream.release(sent, true, &found);
  FUZZ_CHECK(stream.held() == 0);
  const std::string seen = chunked ? dechunk(sent) : sent;
  if (!chunked) FUZZ_CHECK(sent.size() == body.size());
  for (const std::string& secret : secrets) {
    if (seen.find(secret) != std::string::npos) oishell::fuzz::broken("a secret reached the sandbox");
  }
  return 0;
}
