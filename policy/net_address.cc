// IpAddress and Cidr (declared in policy/net_rules.h): parsing, printing, containment and the classification of
// special-purpose ranges that the relay's private-address guard refuses. Pure functions; no DNS.
#include <arpa/inet.h>

#include <charconv>
#include <cstring>

#include "policy/net_address_class.h"
#include "policy/net_rules.h"

namespace oishell {
namespace {

IpAddress make_v4(const uint8_t* b) {
  IpAddress a;
  a.family = IpAddress::Family::v4;
  std::memcpy(a.bytes.data(), b, 4);
  return a;
}

bool bytes_zero(const IpAddress& a, int from, int to) {
  for (int i = from; i < to; ++i) {
    if (a.bytes[i] != 0) return false;
  }
  return true;
}

// True when the first `bits` bits of `a` equal those of `prefix` (same family assumed).
bool prefix_equal(const std::array<uint8_t, 16>& a, const std::array<uint8_t, 16>& prefix, int bits) {
  int full = bits / 8;
  if (std::memcmp(a.data(), prefix.data(), full) != 0) return false;
  int rest = bits % 8;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (a[full] & mask) == (prefix[full] & mask);
}

struct Range {
  std::array<uint8_t, 16> prefix;
  int bits;
  std::string_view what;
};

// Cloud metadata and platform endpoints, by address. Most lie in ranges refused anyway (link-local, CGNAT, IETF,
// unique local); they are named here so that a refusal says what the address is, and so that only an allow_private
// entry naming one exactly (/32, /128) exempts it, not a range that happens to cover it (100.64.0.0/10 for a VPN
// exempts Alibaba's endpoint otherwise). Azure's 168.63.129.16 is in a public range: refused only because it is
// listed here.
const Range kMetadataV4[] = {
    {{169, 254, 169, 254}, 32, "a cloud metadata endpoint (AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack, ...)"},
    {{169, 254, 170, 2}, 32, "a cloud metadata endpoint (AWS ECS task credentials)"},
    {{169, 254, 170, 23}, 32, "a cloud metadata endpoint (AWS EKS Pod Identity)"},
    {{169, 254, 0, 23}, 32, "a cloud metadata endpoint (Tencent Cloud)"},
    {{169, 254, 42, 42}, 32, "a cloud metadata endpoint (Scaleway)"},
    {{100, 100, 100, 200}, 32, "a cloud metadata endpoint (Alibaba Cloud)"},
    {{192, 0, 0, 192}, 32, "a cloud metadata endpoint (Oracle Cloud)"},
    {{168, 63, 129, 16}, 32, "a cloud platform endpoint (Azure WireServer: host agent, extensions, DNS)"},
};
const Range kMetadataV6[] = {
    {{0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}, 128, "a cloud metadata endpoint (AWS)"},
    {{0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x23}, 128,
     "a cloud metadata endpoint (AWS EKS Pod Identity)"},
    {{0xfd, 0x20, 0x00, 0xce, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}, 128, "a cloud metadata endpoint (GCP)"},
    {{0xfd, 0x00, 0xa9, 0xfe, 0xa9, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01}, 128,
     "a cloud metadata endpoint (Akamai/Linode)"},
};

std::string_view metadata_v4(const IpAddress& a) {
  for (const Range& r : kMetadataV4) {
    if (prefix_equal(a.bytes, r.prefix, r.bits)) return r.what;
  }
  return {};
}

std::string_view classify_v4(const IpAddress& a) {
  if (std::string_view metadata = metadata_v4(a); !metadata.empty()) return metadata;
  static const Range kRanges[] = {
      {{0}, 8, "unspecified (0.0.0.0/8)"},
      {{10}, 8, "private (RFC 1918)"},
      {{100, 64}, 10, "shared CGNAT (100.64.0.0/10)"},
      {{127}, 8, "loopback"},
      {{169, 254}, 16, "link-local"},
      {{172, 16}, 12, "private (RFC 1918)"},
      {{192, 0, 0}, 24, "IETF protocol assignment (192.0.0.0/24)"},
      {{192, 168}, 16, "private (RFC 1918)"},
      {{198, 18}, 15, "benchmarking (198.18.0.0/15)"},
      {{224}, 4, "multicast"},
      {{255, 255, 255, 255}, 32, "broadcast"},
      {{240}, 4, "reserved (240.0.0.0/4)"},
  };
  for (const Range& r : kRanges) {
    if (prefix_equal(a.bytes, r.prefix, r.bits)) return r.what;
  }
  return {};
}

// The IPv4 address embedded in an IPv6 form that can reach it: mapped ::ffff:0:0/96, compatible ::/96,
// SIIT ::ffff:0:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16.
std::optional<IpAddress> embedded_v4(const IpAddress& a) {
  const auto& b = a.bytes;
  if (bytes_zero(a, 0, 10) && b[10] == 0xff && b[11] == 0xff) return make_v4(&b[12]);
  if (bytes_zero(a, 0, 12)) return make_v4(&b[12]);  // compatible (:: and ::1 are classified before)
  if (bytes_zero(a, 0, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0) return make_v4(&b[12]);
  static const std::array<uint8_t, 16> kNat64{0x00, 0x64, 0xff, 0x9b};
  if (prefix_equal(b, kNat64, 96)) return make_v4(&b[12]);
  if (b[0] == 0x20 && b[1] == 0x02) return make_v4(&b[2]);
  return std::nullopt;
}

std::string_view metadata_v6(const IpAddress& a) {
  for (const Range& r : kMetadataV6) {
    if (prefix_equal(a.bytes, r.prefix, r.bits)) return r.what;
  }
  if (auto v4 = embedded_v4(a)) return metadata_v4(*v4);
  return {};
}

std::string_view classify_v6(const IpAddress& a) {
  if (std::string_view metadata = metadata_v6(a); !metadata.empty()) return metadata;
  if (bytes_zero(a, 0, 16)) return "unspecified (::)";
  if (bytes_zero(a, 0, 15) && a.bytes[15] == 1) return "loopback (::1)";
  static const Range kRanges[] = {
      {{0xfc}, 7, "unique local (fc00::/7)"},
      {{0xfe, 0x80}, 10, "link-local (fe80::/10)"},
      {{0xfe, 0xc0}, 10, "site-local (fec0::/10)"},
      {{0xff}, 8, "multicast (ff00::/8)"},
      {{0x01, 0x00}, 64, "discard-only (100::/64)"},
      {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, "local-use NAT64 (64:ff9b:1::/48)"},
  };
  for (const Range& r : kRanges) {
    if (prefix_equal(a.bytes, r.prefix, r.bits)) return r.what;
  }
  if (auto v4 = embedded_v4(a)) {
    std::string_view inner = classify_v4(*v4);
    if (!inner.empty()) return "IPv6 form of an IPv4 special address";
  }
  return {};
}

}  // namespace

std::string_view metadata_endpoint(const IpAddress& address) {
  return address.family == IpAddress::Family::v4 ? metadata_v4(address) : metadata_v6(address);
}

std::string_view special_address_class(const IpAddress& address) {
  return address.family == IpAddress::Family::v4 ? classify_v4(address) : classify_v6(address);
}

std::optional<IpAddress> parse_ipv4_dotted(std::string_view text) {
  if (text.empty() || text.size() > 15) return std::nullopt;
  char buf[16] = {};
  std::memcpy(buf, text.data(), text.size());
  uint8_t out[4];
  if (inet_pton(AF_INET, buf, out) != 1) return std::nullopt;
  return make_v4(out);
}

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  if (auto v4 = parse_ipv4_dotted(text)) return v4;
  // inet_pton(AF_INET6) rejects zone ids ("fe80::1%eth0") and brackets, as wanted.
  if (text.empty() || text.size() > 45 || text.find(':') == std::string_view::npos) return std::nullopt;
  char buf[46] = {};
  std::memcpy(buf, text.data(), text.size());
  IpAddress a;
  a.family = Family::v6;
  if (inet_pton(AF_INET6, buf, a.bytes.data()) != 1) return std::nullopt;
  return a;
}

std::string IpAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family == Family::v4) {
    inet_ntop(AF_INET, bytes.data(), buf, sizeof buf);
  } else {
    inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
  }
  return buf;
}

bool IpAddress::is_private_or_special() const { return !special_address_class(*this).empty(); }

std::optional<IpAddress> unmap_v4(const IpAddress& address) {
  if (address.family != IpAddress::Family::v6) return std::nullopt;
  const auto& b = address.bytes;
  if (bytes_zero(address, 0, 10) && b[10] == 0xff && b[11] == 0xff) return make_v4(&b[12]);
  return std::nullopt;
}

Result<Cidr> Cidr::parse(std::string_view text) {
  std::string_view whole = text;
  size_t slash = text.find('/');
  std::string_view ip_text = text.substr(0, slash);
  if (ip_text.size() >= 2 && ip_text.front() == '[' && ip_text.back() == ']') {
    ip_text = ip_text.substr(1, ip_text.size() - 2);
  }
  auto ip = IpAddress::parse(ip_text);
  if (!ip) return Status::error("`" + std::string(whole) + "` is not an IP address or CIDR");
  int max_len = ip->family == IpAddress::Family::v4 ? 32 : 128;
  Cidr cidr;
  cidr.base = *ip;
  cidr.prefix_len = max_len;
  if (slash != std::string_view::npos) {
    std::string_view len_text = text.substr(slash + 1);
    int len = -1;
    auto [end, ec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
    if (len_text.empty() || ec != std::errc() || end != len_text.data() + len_text.size() || len < 0 ||
        len > max_len) {
      return Status::error("`" + std::string(whole) + "`: prefix length must be 0.." + std::to_string(max_len));
    }
    cidr.prefix_len = len;
  }
  IpAddress masked = cidr.base;
  for (int bit = cidr.prefix_len; bit < max_len; ++bit) {
    masked.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
  }
  if (!(masked == cidr.base)) {
    return Status::error("`" + std::string(whole) + "` has host bits set (did you mean " + masked.to_string() + "/" +
                         std::to_string(cidr.prefix_len) + "?)");
  }
  return cidr;
}

bool Cidr::contains(const IpAddress& ip) const {
  IpAddress probe = ip;
  if (auto v4 = unmap_v4(ip)) probe = *v4;
  IpAddress net = base;
  int len = prefix_len;
  if (auto v4 = unmap_v4(base); v4 && len >= 96) {
    net = *v4;
    len -= 96;
  }
  if (probe.family != net.family) return false;
  return prefix_equal(probe.bytes, net.bytes, len);
}

std::string Cidr::to_string() const { return base.to_string() + "/" + std::to_string(prefix_len); }

}  // namespace oishell
