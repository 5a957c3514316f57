#pragma once
// What keeps a secret the relay put in a request from coming back into the sandbox in a response (issue 16): an
// upstream that echoes the request (a debugging endpoint, an error page quoting the Authorization header) would
// otherwise hand the sandbox the very value the placeholder stands for. The terminator passes every byte of content
// it sends the sandbox through this scrubber (scrubbed_stream.h keeps a chunked body's framing out of it), which
// overwrites each occurrence with asterisks of the same length: the response's framing (Content-Length, chunk
// sizes) stays right, and the sandbox learns that something was withheld, not what.
//
// An occurrence is the secret, or an encoded form the relay inserted (a Basic credential's base64), written
//   - as it is, or with any of its bytes escaped once (encoded_match.h: percent-encoding, JSON `\/` and `\u00XX`,
//     HTML references), as an echo inside JSON, a URL or a page writes it (issue 33, finding 2);
//   - inside base64 (standard or URL-safe alphabet, each of the three alignments): an echo that base64-encodes the
//     header line (`Authorization: Bearer X`) or the whole request. The characters that hold any bit of the secret
//     are overwritten, the one at either end that mixes in a neighbour's bits included (matched as any base64
//     character). Base64 forms are looked for only for secrets of 6 bytes or more (a shorter one's few characters
//     would match ordinary base64 data).
// Not found: two layers of encoding (a percent-encoded JSON escape), base64 broken by line wraps, compression (the
// terminator asks for identity encoding on requests that carry a credential and refuses a compressed answer).
//
// Streaming: a secret may arrive split across reads, so a tail of what is not yet final that could be the start of
// an occurrence is held back until more bytes come or the stream is final; any other tail goes at once, so that a
// response streamed in pieces (server-sent events) is not delayed. What is held is at most the longest needle's
// longest spelling (kMaxEscapeBytes a byte).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace oishell::relay {

class SecretScrubber {
 public:
  // `value` belongs to credential `name`; empty values and repeats are ignored.
  void add(const std::string& name, const std::string& value);
  bool empty() const { return needles_.empty(); }

  // `buffer`'s first `released` bytes were scrubbed and may have been sent. Scrubs the rest in place and returns how
  // many of buffer's bytes are now released: all when `final` (nothing more follows them), else all but a tail that
  // could begin an occurrence. The names of the credentials found are appended to `found` (once per occurrence).
  size_t scrub(std::string& buffer, size_t released, bool final, std::vector<std::string>* found) const;

  // The most a call with `final` false can hold back (for memory bounds and tests).
  size_t max_held() const;

 private:
  struct Needle {
    std::string name, value;
    bool any_first = false, any_last = false;  // encoded_match.h: a base64 form's partial end characters
  };
  void add_needle(const std::string& name, std::string value, bool any_first, bool any_last);
  std::vector<std::string> values_;  // as added, for repeats
  std::vector<Needle> needles_;      // longest first: where two start at one place, the longer is overwritten
  // The scanner's filter, rebuilt by add_needle: the needles (indices into needles_, longest first) whose first
  // byte is a given byte, those whose first byte is any base64 character, and the second bytes of the latter.
  std::vector<size_t> by_first_[256];
  std::vector<size_t> any_first_;
  // Per byte value, which of these it is, and per pair of bytes whether a needle could start with them (the
  // scanner skips every other position with one look-up: a secret's echo is rare, the bytes streamed are many).
  enum : unsigned char { kEscape = 1, kLiteralFirst = 2, kBase64First = 4, kAnySecond = 8 };
  unsigned char class_[256] = {};
  uint64_t pairs_[256 * 256 / 64] = {};
};

}  // namespace oishell::relay
