// DNS wire format: see dns_message.h. Every read goes through Cursor, which checks the bound first.
#include "runtime/broker/dns_message.h"

#include <charconv>

namespace oishell::broker::dns {
namespace {

constexpr size_t kMaxNameWire = 255;
constexpr uint16_t kFlagQr = 0x8000;
constexpr uint16_t kFlagTc = 0x0200;
constexpr uint16_t kFlagRd = 0x0100;
constexpr uint16_t kFlagRa = 0x0080;
constexpr uint16_t kFlagCd = 0x0010;

class Cursor {
 public:
  explicit Cursor(std::span<const uint8_t> data) : data_(data) {}
  bool u8(uint8_t* out) {
    if (pos_ + 1 > data_.size()) return false;
    *out = data_[pos_++];
    return true;
  }
  bool u16(uint16_t* out) {
    if (pos_ + 2 > data_.size()) return false;
    *out = static_cast<uint16_t>((data_[pos_] << 8) | data_[pos_ + 1]);
    pos_ += 2;
    return true;
  }
  bool u32(uint32_t* out) {
    uint16_t hi = 0, lo = 0;
    if (pos_ + 4 > data_.size()) return false;
    (void)u16(&hi);
    (void)u16(&lo);
    *out = (uint32_t{hi} << 16) | lo;
    return true;
  }
  bool skip(size_t n) {
    if (n > data_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  const uint8_t* here() const { return data_.data() + pos_; }
  size_t pos() const { return pos_; }
  bool done() const { return pos_ == data_.size(); }

 private:
  std::span<const uint8_t> data_;
  size_t pos_ = 0;
};

// The question's name: labels only (no compression pointer), each 1..63 printable non-dot bytes, <= 255 bytes.
bool read_question_name(Cursor& c, std::string* text) {
  size_t wire = 0;
  while (true) {
    uint8_t len = 0;
    if (!c.u8(&len)) return false;
    ++wire;
    if (len == 0) break;
    if (len > 63) return false;  // a compression pointer (0xc0) or the reserved label types
    wire += len;
    if (wire + 1 > kMaxNameWire) return false;
    const uint8_t* label = c.here();
    if (!c.skip(len)) return false;
    if (!text->empty()) text->push_back('.');
    for (size_t i = 0; i < len; ++i) {
      uint8_t ch = label[i];
      if (ch <= 0x20 || ch >= 0x7f || ch == '.') return false;
      text->push_back(static_cast<char>(ch));
    }
  }
  return true;
}

// Any name in the other sections: labels or a final compression pointer (not followed: nothing reads it).
bool skip_name(Cursor& c, bool* is_root) {
  size_t wire = 0;
  *is_root = true;
  while (true) {
    uint8_t len = 0;
    if (!c.u8(&len)) return false;
    if ((len & 0xc0) == 0xc0) {
      *is_root = false;
      uint8_t low = 0;
      return c.u8(&low);
    }
    if (len > 63) return false;
    if (len == 0) return true;
    *is_root = false;
    wire += 1 + len;
    if (wire + 1 > kMaxNameWire || !c.skip(len)) return false;
  }
}

void put16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, static_cast<uint16_t>(v >> 16));
  put16(out, static_cast<uint16_t>(v));
}

char hex_digit(unsigned v) { return static_cast<char>(v < 10 ? '0' + v : 'a' + v - 10); }

}  // namespace

Parsed parse_query(std::span<const uint8_t> message) {
  Parsed parsed;
  Cursor c(message);
  uint16_t id = 0, flags = 0, qdcount = 0, ancount = 0, nscount = 0, arcount = 0;
  if (!c.u16(&id) || !c.u16(&flags) || !c.u16(&qdcount) || !c.u16(&ancount) || !c.u16(&nscount) ||
      !c.u16(&arcount)) {
    return parsed;  // ignore: not even a header
  }
  if (flags & kFlagQr) return parsed;  // a response: never answered (no loops between resolvers)
  Query& q = parsed.query;
  q.id = id;
  q.opcode = static_cast<uint8_t>((flags >> 11) & 0xf);
  q.recursion_desired = flags & kFlagRd;
  q.checking_disabled = flags & kFlagCd;
  if (q.opcode != 0) {
    parsed.outcome = ParseOutcome::not_implemented;
    return parsed;
  }
  parsed.outcome = ParseOutcome::format_error;
  if (qdcount != 1) return parsed;
  const size_t question_start = c.pos();
  std::string name;
  if (!read_question_name(c, &name) || !c.u16(&q.type) || !c.u16(&q.klass)) return parsed;
  const size_t question_end = c.pos();
  bool seen_opt = false;
  const uint32_t records = uint32_t{ancount} + nscount + arcount;
  for (uint32_t i = 0; i < records; ++i) {
    bool root = false;
    uint16_t type = 0, klass = 0, rdlength = 0;
    uint32_t ttl = 0;
    if (!skip_name(c, &root) || !c.u16(&type) || !c.u16(&klass) || !c.u32(&ttl) || !c.u16(&rdlength) ||
        !c.skip(rdlength)) {
      return parsed;
    }
    if (type != rrtype::opt) continue;
    // OPT: only in the additional section, once, owned by the root (RFC 6891 6.1.1).
    if (i < uint32_t{ancount} + nscount || seen_opt || !root) return parsed;
    seen_opt = true;
    q.edns = true;
    q.udp_payload = klass < kClassicUdpSize ? kClassicUdpSize : klass;
    q.edns_version = static_cast<uint8_t>(ttl >> 16);
  }
  if (!c.done()) return parsed;
  q.name = std::move(name);
  q.question.assign(message.begin() + static_cast<std::ptrdiff_t>(question_start),
                    message.begin() + static_cast<std::ptrdiff_t>(question_end));
  parsed.outcome = ParseOutcome::query;
  return parsed;
}

Record address_record(const IpAddress& address, uint32_t ttl) {
  Record r;
  r.ttl = ttl;
  if (address.family == IpAddress::Family::v4) {
    r.type = rrtype::a;
    r.rdata.assign(address.bytes.begin(), address.bytes.begin() + 4);
  } else {
    r.type = rrtype::aaaa;
    r.rdata.assign(address.bytes.begin(), address.bytes.end());
  }
  return r;
}

Record ptr_record(std::string_view name, uint32_t ttl) {
  Record r;
  r.type = rrtype::ptr;
  r.ttl = ttl;
  size_t start = 0;
  while (start < name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) dot = name.size();
    size_t len = std::min<size_t>(dot - start, 63);
    r.rdata.push_back(static_cast<uint8_t>(len));
    r.rdata.insert(r.rdata.end(), name.begin() + static_cast<std::ptrdiff_t>(start),
                   name.begin() + static_cast<std::ptrdiff_t>(start + len));
    start = dot + 1;
  }
  r.rdata.push_back(0);
  return r;
}

size_t max_response_size(const Query& query, bool tcp) {
  if (tcp) return kMaxTcpMessage;
  if (!query.edns) return kClassicUdpSize;
  return query.udp_payload < kEdnsUdpSize ? query.udp_payload : kEdnsUdpSize;
}

std::vector<uint8_t> build_response(const Query& query, Rcode rcode, const std::vector<Record>& answers,
                                    size_t max_size) {
  auto code = static_cast<uint16_t>(rcode);
  if (code > 15 && !query.edns) code = static_cast<uint16_t>(Rcode::servfail);
  const bool with_question = !query.question.empty();
  const bool with_opt = query.edns;
  auto build = [&](bool truncated) {
    std::vector<uint8_t> out;
    out.reserve(kHeaderSize + query.question.size() + 64);
    put16(out, query.id);
    uint16_t flags = kFlagQr | static_cast<uint16_t>(query.opcode << 11) | kFlagRa | (code & 0xf);
    if (query.recursion_desired) flags |= kFlagRd;
    if (query.checking_disabled) flags |= kFlagCd;
    if (truncated) flags |= kFlagTc;
    put16(out, flags);
    put16(out, with_question ? 1 : 0);
    put16(out, truncated || !with_question ? 0 : static_cast<uint16_t>(answers.size()));
    put16(out, 0);
    put16(out, with_opt ? 1 : 0);
    out.insert(out.end(), query.question.begin(), query.question.end());
    if (!truncated && with_question) {
      for (const Record& r : answers) {
        put16(out, 0xc000 | kHeaderSize);  // the question's name
        put16(out, r.type);
        put16(out, kClassIn);
        put32(out, r.ttl);
        put16(out, static_cast<uint16_t>(r.rdata.size()));
        out.insert(out.end(), r.rdata.begin(), r.rdata.end());
      }
    }
    if (with_opt) {
      out.push_back(0);  // the root
      put16(out, rrtype::opt);
      put16(out, kEdnsUdpSize);
      put32(out, static_cast<uint32_t>(code >> 4) << 24);  // extended rcode, version 0, no flags
      put16(out, 0);
    }
    return out;
  };
  std::vector<uint8_t> full = build(false);
  if (full.size() <= max_size || answers.empty()) return full;
  return build(true);
}

std::optional<IpAddress> parse_reverse_name(std::string_view name) {
  IpAddress out;
  if (name.ends_with(".in-addr.arpa")) {
    std::string_view labels = name.substr(0, name.size() - 13);
    out.family = IpAddress::Family::v4;
    for (int i = 3; i >= 0; --i) {
      size_t dot = labels.find('.');
      std::string_view label = labels.substr(0, dot);
      if (i == 0 ? dot != std::string_view::npos : dot == std::string_view::npos) return std::nullopt;
      if (label.empty() || label.size() > 3 || (label.size() > 1 && label[0] == '0')) return std::nullopt;
      unsigned value = 0;
      auto [end, ec] = std::from_chars(label.data(), label.data() + label.size(), value);
      if (ec != std::errc() || end != label.data() + label.size() || value > 255) return std::nullopt;
      out.bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(value);
      labels = dot == std::string_view::npos ? std::string_view() : labels.substr(dot + 1);
    }
    return out;
  }
  if (name.ends_with(".ip6.arpa")) {
    std::string_view labels = name.substr(0, name.size() - 9);
    if (labels.size() != 63) return std::nullopt;  // 32 nibbles and 31 dots
    out.family = IpAddress::Family::v6;
    for (size_t n = 0; n < 32; ++n) {
      char ch = labels[n * 2];
      if (n < 31 && labels[n * 2 + 1] != '.') return std::nullopt;
      unsigned v = 0;
      if (ch >= '0' && ch <= '9') {
        v = static_cast<unsigned>(ch - '0');
      } else if (ch >= 'a' && ch <= 'f') {
        v = static_cast<unsigned>(ch - 'a' + 10);
      } else {
        return std::nullopt;
      }
      size_t nibble = 31 - n;  // the first label is the last nibble
      out.bytes[nibble / 2] |= static_cast<uint8_t>(nibble % 2 == 0 ? v << 4 : v);
    }
    return out;
  }
  return std::nullopt;
}

std::string reverse_name(const IpAddress& address) {
  std::string out;
  if (address.family == IpAddress::Family::v4) {
    for (int i = 3; i >= 0; --i) out += std::to_string(address.bytes[static_cast<size_t>(i)]) + ".";
    return out + "in-addr.arpa";
  }
  for (int i = 15; i >= 0; --i) {
    uint8_t b = address.bytes[static_cast<size_t>(i)];
    out += hex_digit(b & 0xf);
    out += '.';
    out += hex_digit(b >> 4);
    out += '.';
  }
  return out + "ip6.arpa";
}

}  // namespace oishell::broker::dns
