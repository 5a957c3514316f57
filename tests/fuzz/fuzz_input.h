#pragma once
// What the fuzz targets share: the input as a string_view and a small reader that takes parameters (a byte, a
// length-prefixed string) off its front, so one input can choose split points and options as well as bytes.
// Used by libFuzzer (clang) and by the replay (gcc), so no <fuzzer/FuzzedDataProvider.h>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace oishell::fuzz {

class Input {
 public:
  Input(const uint8_t* data, size_t size) : rest_(reinterpret_cast<const char*>(data), size) {}
  // The next byte (0 when none is left).
  uint8_t byte() {
    if (rest_.empty()) return 0;
    const auto b = static_cast<uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }
  // A string of byte() bytes (fewer when the input ends).
  std::string_view prefixed() { return take(byte()); }
  std::string_view take(size_t n) {
    const std::string_view out = rest_.substr(0, n);
    rest_.remove_prefix(out.size());
    return out;
  }
  std::string_view rest() const { return rest_; }
  bool empty() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// An invariant of the code under test broke: report it and abort, so that libFuzzer saves the input and the replay
// test fails.
[[noreturn]] inline void broken(const char* what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

}  // namespace oishell::fuzz

#define FUZZ_CHECK(cond) \
  do {                   \
    if (!(cond)) ::oishell::fuzz::broken(#cond); \
  } while (0)
