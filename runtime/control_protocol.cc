#include "runtime/control_protocol.h"

#include "base/wire.h"

namespace oishell::control {
namespace {

constexpr uint8_t kKindCount = static_cast<uint8_t>(Kind::exited) + 1;

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::spec: return "spec";
    case Kind::joined: return "joined";
    case Kind::spawn: return "spawn";
    case Kind::signal: return "signal";
    case Kind::fail: return "fail";
    case Kind::listeners: return "listeners";
    case Kind::ready: return "ready";
    case Kind::spawned: return "spawned";
    case Kind::spawn_failed: return "spawn_failed";
    case Kind::exited: return "exited";
  }
  return "?";
}

}  // namespace

// kind, id, number, argv, env, strings, cwd, step, message, data: every field, always, in this order.
std::string encode(const ControlMessage& m) {
  wire::Writer w;
  w.u8(static_cast<uint8_t>(m.kind));
  w.u64(m.id);
  w.u32(static_cast<uint32_t>(m.number));
  w.strings(m.argv);
  w.strings(m.env);
  w.strings(m.strings);
  w.bytes(m.cwd);
  w.bytes(m.step);
  w.bytes(m.message);
  w.bytes(m.data);
  return w.take();
}

Result<ControlMessage> decode(const std::string& payload) {
  wire::Reader r(payload);
  ControlMessage m;
  uint8_t kind = 0;
  if (!r.u8(&kind)) return Status::error("control message: empty");
  if (kind >= kKindCount) return Status::error("control message: unknown type " + std::to_string(kind));
  m.kind = static_cast<Kind>(kind);
  uint32_t number = 0;
  r.u64(&m.id);
  r.u32(&number);
  m.number = static_cast<int>(number);
  r.strings(&m.argv);
  r.strings(&m.env);
  r.strings(&m.strings);
  r.bytes(&m.cwd);
  r.bytes(&m.step);
  r.bytes(&m.message);
  r.bytes(&m.data);
  if (!r.done()) {
    return Status::error(std::string("control message `") + kind_name(m.kind) + "`: malformed at byte " +
                         std::to_string(r.offset()) + " of " + std::to_string(payload.size()));
  }
  return m;
}

}  // namespace oishell::control
