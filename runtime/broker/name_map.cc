#include "runtime/broker/name_map.h"

#include <algorithm>

namespace oishell::broker {
namespace {

constexpr uint32_t kV4Base = 0xC6120000;  // 198.18.0.0
constexpr uint32_t kV4Mask = 0xFFFE0000;  // /15
constexpr uint8_t kV6Prefix[8] = {0xfd, 0x6f, 0x69, 0x73, 0x68, 0x65, 0x6c, 0x6c};  // fd6f:6973:6865:6c6c::/64

uint32_t v4_value(const uint8_t* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

void put_v4(uint32_t value, uint8_t* out) {
  out[0] = static_cast<uint8_t>(value >> 24);
  out[1] = static_cast<uint8_t>(value >> 16);
  out[2] = static_cast<uint8_t>(value >> 8);
  out[3] = static_cast<uint8_t>(value);
}

bool is_v4_mapped(const IpAddress& a) {
  return a.family == IpAddress::Family::v6 && std::all_of(a.bytes.begin(), a.bytes.begin() + 10, [](uint8_t b) { return b == 0; }) &&
         a.bytes[10] == 0xff && a.bytes[11] == 0xff;
}

bool has_v6_prefix(const IpAddress& a) {
  return a.family == IpAddress::Family::v6 && std::equal(std::begin(kV6Prefix), std::end(kV6Prefix), a.bytes.begin());
}

}  // namespace

NameMap::NameMap(uint32_t capacity) : capacity_(std::min(capacity, kPoolSize)) {}

std::optional<IpAddress> NameMap::address_for(const std::string& normalised_name, IpAddress::Family family) {
  uint32_t index = 0;
  {
    std::lock_guard lock(mu_);
    auto it = index_.find(normalised_name);
    if (it != index_.end()) {
      index = it->second;
    } else {
      if (names_.size() >= capacity_) return std::nullopt;
      index = static_cast<uint32_t>(names_.size());
      names_.push_back(normalised_name);
      index_.emplace(normalised_name, index);
    }
  }
  IpAddress out;
  out.family = family;
  const uint32_t v4 = kV4Base + 1 + index;
  if (family == IpAddress::Family::v4) {
    put_v4(v4, out.bytes.data());
  } else {
    std::copy(std::begin(kV6Prefix), std::end(kV6Prefix), out.bytes.begin());
    put_v4(v4, out.bytes.data() + 12);
  }
  return out;
}

std::optional<uint32_t> NameMap::index_of(const IpAddress& address) {
  uint32_t v4 = 0;
  if (address.family == IpAddress::Family::v4) {
    v4 = v4_value(address.bytes.data());
  } else if (is_v4_mapped(address) ||
             (has_v6_prefix(address) && std::all_of(address.bytes.begin() + 8, address.bytes.begin() + 12,
                                                    [](uint8_t b) { return b == 0; }))) {
    v4 = v4_value(address.bytes.data() + 12);
  } else {
    return std::nullopt;
  }
  if (v4 <= kV4Base || v4 - kV4Base - 1 >= kPoolSize) return std::nullopt;
  return v4 - kV4Base - 1;
}

std::optional<std::string> NameMap::name_of(const IpAddress& address) const {
  auto index = index_of(address);
  if (!index) return std::nullopt;
  std::lock_guard lock(mu_);
  if (*index >= names_.size()) return std::nullopt;
  return names_[*index];
}

bool NameMap::is_synthetic(const IpAddress& address) {
  if (address.family == IpAddress::Family::v4 || is_v4_mapped(address)) {
    const uint8_t* b = address.bytes.data() + (address.family == IpAddress::Family::v4 ? 0 : 12);
    return (v4_value(b) & kV4Mask) == kV4Base;
  }
  return has_v6_prefix(address);
}

size_t NameMap::size() const {
  std::lock_guard lock(mu_);
  return names_.size();
}

}  // namespace oishell::broker
