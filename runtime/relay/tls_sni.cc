#include "runtime/relay/tls_sni.h"

#include <cstdint>

namespace oishell::relay {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool u8(uint32_t& v) { return take(1, v); }
  bool u16(uint32_t& v) { return take(2, v); }
  bool u24(uint32_t& v) { return take(3, v); }
  bool skip(size_t n) {
    if (data_.size() - pos_ < n) return false;
    pos_ += n;
    return true;
  }
  bool bytes(size_t n, std::string_view& out) {
    if (data_.size() - pos_ < n) return false;
    out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool empty() const { return pos_ == data_.size(); }

 private:
  bool take(size_t n, uint32_t& v) {
    if (data_.size() - pos_ < n) return false;
    v = 0;
    for (size_t i = 0; i < n; ++i) v = v << 8 | static_cast<uint8_t>(data_[pos_ + i]);
    pos_ += n;
    return true;
  }
  std::string_view data_;
  size_t pos_ = 0;
};

SniResult fail(std::string why) { return {SniStatus::malformed, {}, std::move(why)}; }

// Parses a complete ClientHello body (after the 4-byte handshake header).
SniResult parse_hello(std::string_view body) {
  Reader r(body);
  uint32_t len = 0;
  if (!r.skip(2 + 32)) return fail("ClientHello too short");                      // version, random
  if (!r.u8(len) || len > 32 || !r.skip(len)) return fail("bad session id");        // session id
  if (!r.u16(len) || len < 2 || len % 2 || !r.skip(len)) return fail("bad cipher suites");
  if (!r.u8(len) || len < 1 || !r.skip(len)) return fail("bad compression methods");
  if (r.empty()) return {SniStatus::no_sni, {}, {}};
  uint32_t ext_total = 0;
  std::string_view exts;
  if (!r.u16(ext_total) || !r.bytes(ext_total, exts) || !r.empty()) return fail("bad extensions block");
  Reader e(exts);
  bool seen = false;
  SniResult result{SniStatus::no_sni, {}, {}};
  while (!e.empty()) {
    uint32_t type = 0;
    std::string_view ext;
    if (!e.u16(type) || !e.u16(len) || !e.bytes(len, ext)) return fail("bad extension");
    if (type != 0) continue;
    if (seen) return fail("two server_name extensions");
    seen = true;
    Reader s(ext);
    uint32_t list_len = 0;
    std::string_view list;
    if (!s.u16(list_len) || !s.bytes(list_len, list) || !s.empty()) return fail("bad server_name list");
    Reader l(list);
    while (!l.empty()) {
      uint32_t name_type = 0;
      std::string_view name;
      if (!l.u8(name_type) || !l.u16(len) || !l.bytes(len, name)) return fail("bad server_name entry");
      if (name_type != 0) continue;
      if (result.status == SniStatus::found) return fail("two host names in server_name");
      result.status = SniStatus::found;
      result.name = std::string(name);
    }
  }
  return result;
}

}  // namespace

SniResult peek_client_hello_sni(std::string_view data, size_t max_hello) {
  if (data.empty()) return {};
  if (static_cast<uint8_t>(data[0]) != 0x16) return {SniStatus::not_tls, {}, {}};
  // Gather handshake bytes from consecutive handshake records until the whole ClientHello is there.
  std::string handshake;
  Reader r(data);
  while (true) {
    uint32_t type = 0, version = 0, len = 0;
    std::string_view fragment;
    if (!r.u8(type)) break;
    if (type != 0x16) return fail("ClientHello interleaved with another record type");
    if (!r.u16(version)) break;
    if ((version >> 8) != 3) return handshake.empty() ? SniResult{SniStatus::not_tls, {}, {}}
                                                      : fail("bad record version");
    if (!r.u16(len)) break;
    if (len == 0 || len > 16384 + 2048) return fail("bad record length");
    if (!r.bytes(len, fragment)) break;  // the record is not complete yet
    handshake.append(fragment);
    if (handshake.size() >= 4) {
      if (static_cast<uint8_t>(handshake[0]) != 1) return fail("first handshake message is not a ClientHello");
      size_t hello_len = static_cast<uint8_t>(handshake[1]) << 16 | static_cast<uint8_t>(handshake[2]) << 8 |
                         static_cast<uint8_t>(handshake[3]);
      if (hello_len > max_hello) return fail("ClientHello larger than the limit");
      if (handshake.size() >= 4 + hello_len) return parse_hello(std::string_view(handshake).substr(4, hello_len));
    }
    if (handshake.size() > max_hello + 4) return fail("ClientHello larger than the limit");
  }
  if (data.size() > max_hello + 1024) return fail("ClientHello larger than the limit");
  return {};
}

}  // namespace oishell::relay
