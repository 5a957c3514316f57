#include "runtime/control_protocol.h"

#include <nlohmann/json.hpp>

namespace oishell::control {
namespace {

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

std::string to_hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool from_hex(const std::string& hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  out->resize(hex.size() / 2);
  for (size_t i = 0; i < out->size(); ++i) {
    int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<char>(hi << 4 | lo);
  }
  return true;
}

}  // namespace

std::string encode(const ControlMessage& m) {
  nlohmann::json j = {{"t", kind_name(m.kind)}};
  if (m.id) j["id"] = m.id;
  if (m.number) j["n"] = m.number;
  if (!m.argv.empty()) j["argv"] = m.argv;
  if (!m.env.empty()) j["env"] = m.env;
  if (!m.strings.empty()) j["s"] = m.strings;
  if (!m.cwd.empty()) j["cwd"] = m.cwd;
  if (!m.step.empty()) j["step"] = m.step;
  if (!m.message.empty()) j["msg"] = m.message;
  if (!m.data.empty()) j["data"] = to_hex(m.data);
  // Invalid UTF-8 in argv/env is passed through byte for byte rather than rejected.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::ignore);
}

Result<ControlMessage> decode(const std::string& payload) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("t") || !j["t"].is_string()) {
    return Status::error("control message: not a JSON object with a type");
  }
  ControlMessage m;
  const std::string type = j["t"].get<std::string>();
  static constexpr Kind kKinds[] = {Kind::spec,  Kind::joined,  Kind::spawn,        Kind::signal,
                                    Kind::fail,  Kind::listeners, Kind::ready,     Kind::spawned,
                                    Kind::spawn_failed, Kind::exited};
  bool known = false;
  for (Kind k : kKinds) {
    if (type == kind_name(k)) {
      m.kind = k;
      known = true;
    }
  }
  if (!known) return Status::error("control message: unknown type `" + type + "`");
  auto strings = [&](const char* key, std::vector<std::string>* out) -> bool {
    if (!j.contains(key)) return true;
    if (!j[key].is_array()) return false;
    for (const auto& v : j[key]) {
      if (!v.is_string()) return false;
      out->push_back(v.get<std::string>());
    }
    return true;
  };
  auto string = [&](const char* key, std::string* out) -> bool {
    if (!j.contains(key)) return true;
    if (!j[key].is_string()) return false;
    *out = j[key].get<std::string>();
    return true;
  };
  bool ok = strings("argv", &m.argv) && strings("env", &m.env) && strings("s", &m.strings) &&
            string("cwd", &m.cwd) && string("step", &m.step) && string("msg", &m.message);
  std::string hex;
  ok = ok && string("data", &hex) && from_hex(hex, &m.data);
  if (j.contains("id")) {
    ok = ok && j["id"].is_number_unsigned();
    if (ok) m.id = j["id"].get<uint64_t>();
  }
  if (j.contains("n")) {
    ok = ok && j["n"].is_number_integer();
    if (ok) m.number = j["n"].get<int>();
  }
  if (!ok) return Status::error("control message `" + type + "`: malformed field");
  return m;
}

}  // namespace oishell::control
