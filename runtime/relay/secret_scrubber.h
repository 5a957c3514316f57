#pragma once
// What keeps a secret the relay put in a request from coming back into the sandbox in a response (issue 16): an
// upstream that echoes the request (a debugging endpoint, an error page quoting the Authorization header) would
// otherwise hand the sandbox the very value the placeholder stands for. The terminator passes every byte it sends
// the sandbox through this scrubber, which overwrites each occurrence of a known secret, or of an encoded form the
// relay inserted (a Basic credential's base64), with asterisks of the same length: the response's framing
// (Content-Length, chunk sizes) stays right, and the sandbox learns that something was withheld, not what.
//
// Streaming: a secret may arrive split across reads, so a tail of what is not yet final that is the start of a
// secret is held back until more bytes come or the stream is final; any other tail goes at once. Compressed bodies are not looked into; the
// terminator asks for identity encoding on requests that carry a credential and refuses a compressed answer.
#include <cstddef>
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
  // begins a secret. The names of the credentials found are appended to `found` (once per
  // occurrence).
  size_t scrub(std::string& buffer, size_t released, bool final, std::vector<std::string>* found) const;

 private:
  struct Needle {
    std::string name, value;
  };
  std::vector<Needle> needles_;
  size_t longest_ = 0;
};

}  // namespace oishell::relay
