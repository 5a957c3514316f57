#pragma once
// A byte format for messages between two copies of this binary (the supervisor and sandbox init): fixed-width
// little-endian integers and length-prefixed byte strings, nothing else. No field names, no escaping, no text to
// parse: init reads its policy and commands in a few hundred instructions of cold code instead of a JSON parser's
// thousands. The reader never reads past the end and says where the bytes ran short.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oishell::wire {

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u16(uint16_t v) { fixed(v, 2); }
  void u32(uint32_t v) { fixed(v, 4); }
  void u64(uint64_t v) { fixed(v, 8); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void bytes(std::string_view s);
  void strings(const std::vector<std::string>& list);
  std::string take() { return std::move(out_); }

 private:
  void fixed(uint64_t v, int width);
  std::string out_;
};

// Each read returns false once the bytes run short (and every later read fails too); done() is true when every
// byte was read and none ran short. A caller checks done() once at the end.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool u8(uint8_t* v);
  bool u16(uint16_t* v);
  bool u32(uint32_t* v);
  bool u64(uint64_t* v);
  bool boolean(bool* v);
  bool bytes(std::string* s);
  bool strings(std::vector<std::string>* list);
  bool done() const { return ok_ && in_.empty(); }
  bool ok() const { return ok_; }
  size_t offset() const { return consumed_; }

 private:
  bool fixed(uint64_t* v, int width);
  std::string_view in_;
  size_t consumed_ = 0;
  bool ok_ = true;
};

}  // namespace oishell::wire
