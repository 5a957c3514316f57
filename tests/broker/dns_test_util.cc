#include "dns_test_util.h"

#include <arpa/inet.h>

namespace oishell::broker::testing {
namespace {

void put16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

struct Reader {
  const std::vector<uint8_t>& m;
  size_t pos = 0;
  bool ok = true;
  uint16_t u16() {
    if (pos + 2 > m.size()) {
      ok = false;
      return 0;
    }
    uint16_t v = static_cast<uint16_t>((m[pos] << 8) | m[pos + 1]);
    pos += 2;
    return v;
  }
  uint32_t u32() {
    uint32_t hi = u16();
    return (hi << 16) | u16();
  }
  // A name at `at` (following pointers, at most 20), dotted; moves pos past it when `advance`.
  std::string name(size_t at, bool advance) {
    std::string out;
    size_t p = at;
    bool jumped = false;
    for (int hops = 0; hops < 20 && ok; ) {
      if (p >= m.size()) break;
      uint8_t len = m[p];
      if ((len & 0xc0) == 0xc0) {
        if (p + 1 >= m.size()) break;
        if (!jumped && advance) pos = p + 2;
        jumped = true;
        p = static_cast<size_t>(((len & 0x3f) << 8) | m[p + 1]);
        ++hops;
        continue;
      }
      if (len == 0) {
        if (!jumped && advance) pos = p + 1;
        return out;
      }
      if (p + 1 + len > m.size()) break;
      if (!out.empty()) out += '.';
      out.append(reinterpret_cast<const char*>(&m[p + 1]), len);
      p += 1 + len;
    }
    ok = false;
    return out;
  }
};

}  // namespace

std::vector<uint8_t> encode_name(const std::string& name) {
  std::vector<uint8_t> out;
  size_t start = 0;
  while (start < name.size()) {
    size_t dot = name.find('.', start);
    if (dot == std::string::npos) dot = name.size();
    out.push_back(static_cast<uint8_t>(dot - start));
    out.insert(out.end(), name.begin() + static_cast<long>(start), name.begin() + static_cast<long>(dot));
    start = dot + 1;
  }
  out.push_back(0);
  return out;
}

std::vector<uint8_t> make_query(const QuerySpec& spec) {
  std::vector<uint8_t> out;
  put16(out, spec.id);
  put16(out, static_cast<uint16_t>((spec.opcode << 11) | (spec.rd ? 0x0100 : 0)));
  put16(out, 1);
  put16(out, 0);
  put16(out, 0);
  put16(out, spec.edns ? 1 : 0);
  auto name = encode_name(spec.name);
  out.insert(out.end(), name.begin(), name.end());
  put16(out, spec.type);
  put16(out, spec.klass);
  if (spec.edns) {
    out.push_back(0);
    put16(out, 41);
    put16(out, spec.edns_size);
    put16(out, spec.edns_version);  // extended rcode 0, version
    put16(out, 0);                  // flags
    put16(out, 0);                  // rdlength
  }
  return out;
}

std::string Response::address() const {
  if (answers.size() != 1) return "";
  char text[INET6_ADDRSTRLEN] = {};
  const auto& r = answers[0].rdata;
  if (answers[0].type == 1 && r.size() == 4) return inet_ntop(AF_INET, r.data(), text, sizeof text);
  if (answers[0].type == 28 && r.size() == 16) return inet_ntop(AF_INET6, r.data(), text, sizeof text);
  return "";
}

std::optional<Response> parse_response(const std::vector<uint8_t>& message) {
  Reader r{message};
  Response out;
  out.id = r.u16();
  out.flags = r.u16();
  out.qdcount = r.u16();
  uint16_t ancount = r.u16(), nscount = r.u16(), arcount = r.u16();
  if (!r.ok) return std::nullopt;
  out.rcode = out.flags & 0xf;
  size_t qstart = r.pos;
  for (int i = 0; i < out.qdcount; ++i) {
    r.name(r.pos, true);
    r.u16();
    r.u16();
  }
  if (!r.ok) return std::nullopt;
  out.question.assign(message.begin() + static_cast<long>(qstart), message.begin() + static_cast<long>(r.pos));
  for (int i = 0; i < ancount + nscount + arcount; ++i) {
    r.name(r.pos, true);
    Answer a;
    a.type = r.u16();
    uint16_t klass = r.u16();
    a.ttl = r.u32();
    uint16_t len = r.u16();
    if (!r.ok || r.pos + len > message.size()) return std::nullopt;
    size_t rdata_at = r.pos;
    a.rdata.assign(message.begin() + static_cast<long>(r.pos), message.begin() + static_cast<long>(r.pos + len));
    r.pos += len;
    if (a.type == 41) {
      out.has_opt = true;
      out.opt_udp_size = klass;
      out.rcode |= static_cast<int>((a.ttl >> 24) << 4);
      continue;
    }
    if (a.type == 12) a.ptr_name = r.name(rdata_at, false);
    if (i < ancount) out.answers.push_back(std::move(a));
  }
  if (!r.ok || r.pos != message.size()) return std::nullopt;
  return out;
}

}  // namespace oishell::broker::testing
