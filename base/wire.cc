#include "base/wire.h"

namespace oishell::wire {

void Writer::fixed(uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void Writer::bytes(std::string_view s) {
  u32(static_cast<uint32_t>(s.size()));
  out_.append(s);
}

void Writer::strings(const std::vector<std::string>& list) {
  u32(static_cast<uint32_t>(list.size()));
  for (const auto& s : list) bytes(s);
}

bool Reader::fixed(uint64_t* v, int width) {
  if (!ok_ || in_.size() < static_cast<size_t>(width)) return ok_ = false;
  uint64_t value = 0;
  for (int i = 0; i < width; ++i) value |= uint64_t{static_cast<unsigned char>(in_[i])} << (8 * i);
  in_.remove_prefix(width);
  consumed_ += width;
  *v = value;
  return true;
}

bool Reader::u8(uint8_t* v) {
  uint64_t x;
  if (!fixed(&x, 1)) return false;
  *v = static_cast<uint8_t>(x);
  return true;
}

bool Reader::u16(uint16_t* v) {
  uint64_t x;
  if (!fixed(&x, 2)) return false;
  *v = static_cast<uint16_t>(x);
  return true;
}

bool Reader::u32(uint32_t* v) {
  uint64_t x;
  if (!fixed(&x, 4)) return false;
  *v = static_cast<uint32_t>(x);
  return true;
}

bool Reader::u64(uint64_t* v) { return fixed(v, 8); }

bool Reader::boolean(bool* v) {
  uint8_t x;
  if (!u8(&x)) return false;
  if (x > 1) return ok_ = false;
  *v = x == 1;
  return true;
}

bool Reader::bytes(std::string* s) {
  uint32_t size;
  if (!u32(&size)) return false;
  if (in_.size() < size) return ok_ = false;
  s->assign(in_.data(), size);
  in_.remove_prefix(size);
  consumed_ += size;
  return true;
}

bool Reader::strings(std::vector<std::string>* list) {
  uint32_t count;
  if (!u32(&count)) return false;
  // Every string takes at least its 4-byte length: a count the remaining bytes cannot hold is malformed (and is
  // refused before anything is reserved for it).
  if (count > in_.size() / 4) return ok_ = false;
  list->clear();
  list->reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    std::string s;
    if (!bytes(&s)) return false;
    list->push_back(std::move(s));
  }
  return true;
}

}  // namespace oishell::wire
