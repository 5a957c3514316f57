#pragma once
// JSON text that never throws: model output and program output are not always valid UTF-8.
#include <string>

#include <nlohmann/json.hpp>

namespace oishell::agent {

inline std::string dump_json(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace oishell::agent
