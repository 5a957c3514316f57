#include "runtime/init_spec_codec.h"

#include <algorithm>

#include "base/wire.h"

namespace oishell {
namespace {

constexpr uint32_t kFormat = 5;  // bumped with any change below; both ends are the same binary

void write_ports(wire::Writer& w, const std::vector<uint16_t>& ports) {
  w.u32(static_cast<uint32_t>(ports.size()));
  for (uint16_t p : ports) w.u16(p);
}

bool read_ports(wire::Reader& r, std::vector<uint16_t>* ports) {
  uint32_t count = 0;
  if (!r.u32(&count) || count > 65536) return false;
  for (uint32_t i = 0; i < count; ++i) {
    uint16_t p = 0;
    if (!r.u16(&p)) return false;
    ports->push_back(p);
  }
  return true;
}

// An enum stored as one byte, accepted only up to its last value.
template <typename Enum>
bool read_enum(wire::Reader& r, Enum last, Enum* out) {
  uint8_t v = 0;
  if (!r.u8(&v) || v > static_cast<uint8_t>(last)) return false;
  *out = static_cast<Enum>(v);
  return true;
}

}  // namespace

std::string encode_init_spec(const SandboxSpec& spec) {
  wire::Writer w;
  w.u32(kFormat);
  w.u32(static_cast<uint32_t>(spec.mounts.size()));
  for (const MountStep& m : spec.mounts) {
    w.u8(static_cast<uint8_t>(m.kind));
    w.bytes(m.source);
    w.bytes(m.target);
    w.boolean(m.optional);
    w.boolean(m.system);
  }
  w.bytes(spec.hostname);
  const LandlockSpec& ll = spec.landlock;
  w.boolean(ll.required);
  w.u8(static_cast<uint8_t>(ll.abi_limit < 0 ? 0xff : ll.abi_limit));
  w.u32(static_cast<uint32_t>(ll.paths.size()));
  for (const LandlockPathRule& rule : ll.paths) {
    w.bytes(rule.path);
    w.u8(static_cast<uint8_t>(rule.access));
  }
  write_ports(w, ll.tcp_connect_ports);
  write_ports(w, ll.tcp_bind_ports);
  w.boolean(ll.scope_abstract_unix);
  w.boolean(ll.scope_signal);
  w.u8(static_cast<uint8_t>(spec.network.mode));
  w.u16(spec.network.http_proxy_port);
  w.u16(spec.network.socks_proxy_port);
  w.u16(spec.network.dns_port);
  const bool udp_rules = std::any_of(spec.network.allow.begin(), spec.network.allow.end(),
                                     [](const HostRule& r) { return r.protocol == HostRule::Protocol::udp; });
  w.boolean(udp_rules);
  w.u64(spec.limits.memory_bytes.value_or(0));  // sizes the scratch tmpfs (runtime/inside/mount_plan.cc)
  return w.take();
}

Result<SandboxSpec> decode_init_spec(std::string_view bytes) {
  wire::Reader r(bytes);
  SandboxSpec spec;
  auto malformed = [&] {
    return Status::error("`spec`: malformed at byte " + std::to_string(r.offset()) + " of " +
                         std::to_string(bytes.size()));
  };
  uint32_t format = 0;
  if (!r.u32(&format)) return malformed();
  if (format != kFormat) return Status::error("`spec`: format " + std::to_string(format) + ", expected " + std::to_string(kFormat));
  uint32_t count = 0;
  if (!r.u32(&count) || count > bytes.size() / 10) return malformed();  // a step takes at least 10 bytes
  spec.mounts.resize(count);
  for (MountStep& m : spec.mounts) {
    if (!read_enum(r, MountStep::Kind::file, &m.kind) || !r.bytes(&m.source) || !r.bytes(&m.target) ||
        !r.boolean(&m.optional) || !r.boolean(&m.system)) {
      return malformed();
    }
  }
  LandlockSpec& ll = spec.landlock;
  uint8_t abi_limit = 0;
  if (!r.bytes(&spec.hostname) || !r.boolean(&ll.required) || !r.u8(&abi_limit) || !r.u32(&count) ||
      count > bytes.size() / 5) {
    return malformed();
  }
  ll.abi_limit = abi_limit == 0xff ? -1 : abi_limit;
  ll.paths.resize(count);
  for (LandlockPathRule& rule : ll.paths) {
    if (!r.bytes(&rule.path) || !read_enum(r, FsAccess::dev, &rule.access)) return malformed();
  }
  if (!read_ports(r, &ll.tcp_connect_ports) || !read_ports(r, &ll.tcp_bind_ports) ||
      !r.boolean(&ll.scope_abstract_unix) || !r.boolean(&ll.scope_signal) ||
      !read_enum(r, NetMode::proxy, &spec.network.mode) || !r.u16(&spec.network.http_proxy_port) ||
      !r.u16(&spec.network.socks_proxy_port) || !r.u16(&spec.network.dns_port) ||
      !r.boolean(&spec.network.datagram_relay)) {
    return malformed();
  }
  uint64_t memory = 0;
  if (!r.u64(&memory) || !r.done()) return malformed();
  if (memory != 0) spec.limits.memory_bytes = memory;
  return spec;
}

}  // namespace oishell
