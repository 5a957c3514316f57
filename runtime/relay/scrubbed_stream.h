#pragma once
// What the terminator sends the sandbox, scrubbed of secrets (secret_scrubber.h) in the content alone (issue 33,
// finding 2). A chunked body's framing (chunk-size lines, the CRLF after each chunk's data) sits between pieces of
// one payload: scrubbing the bytes as they come on the wire let an echoed secret that straddles a chunk boundary
// through, split by a size line, and the client's de-chunking joined it again. Here the content (heads, payloads,
// trailers, the relay's own answers) is scrubbed as one stream, with a tail that could begin a secret carried across
// reads and chunk boundaries alike, while each framing piece is scrubbed on its own and keeps its place. Asterisks
// are as long as what they cover, so the framing stays right and the bytes out are the bytes in when nothing was
// found (a chunked body stays the same valid chunked body).
//
// Memory: what is held is the scrubber's held-back tail (SecretScrubber::max_held()) with the framing among it,
// plus what was added since the last release().
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/relay/secret_scrubber.h"

namespace oishell::relay {

class ScrubbedStream {
 public:
  // `scrubber` outlives the stream.
  explicit ScrubbedStream(const SecretScrubber& scrubber) : scrubber_(scrubber) {}

  void content(std::string_view bytes) { content_.append(bytes); }
  // A whole framing piece: it is scrubbed by itself (no occurrence is joined across it) and sent between the
  // content before and after it.
  void framing(std::string_view bytes);

  // Scrubs what was added and appends what may go now to `out`: everything when `final` (nothing more follows the
  // content held), else all but a content tail that could begin a secret (and the framing after it). The names of
  // the credentials found are appended to `found`.
  void release(std::string& out, bool final, std::vector<std::string>* found);

  size_t held() const;  // bytes added and not yet released
  bool empty() const { return content_.empty() && framing_.empty(); }

 private:
  const SecretScrubber& scrubber_;
  std::string content_;  // not yet released
  std::vector<std::pair<size_t, std::string>> framing_;  // each piece goes before content_[first]
};

}  // namespace oishell::relay
