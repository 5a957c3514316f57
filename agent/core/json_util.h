#pragma once
// JSON that never throws and never converts out of range: model output and program output are not always valid
// UTF-8, and a server's numbers are not always what its API promises.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace oishell::agent {

inline std::string dump_json(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The largest token count taken from a server: anything above is not a count (a long holds it on every target).
inline constexpr uint64_t kMaxTokenCount = uint64_t{1} << 40;

// `object[key]` as a whole number in [0, max]: nullopt when absent, not a number, negative, fractional or larger
// (a float such as 2.2e33 or an integer past uint64 is never converted: that conversion is undefined behaviour).
inline std::optional<uint64_t> json_count(const nlohmann::json& object, const char* key, uint64_t max) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const uint64_t value = it->get<uint64_t>();
    return value <= max ? std::optional<uint64_t>(value) : std::nullopt;
  }
  if (it->is_number_integer()) {
    const int64_t value = it->get<int64_t>();
    return value >= 0 && static_cast<uint64_t>(value) <= max ? std::optional<uint64_t>(value) : std::nullopt;
  }
  return std::nullopt;  // a float, even a whole one: no API sends a count or an index as one
}

}  // namespace oishell::agent
