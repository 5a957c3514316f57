#include "runtime/relay/https_terminator_answers.h"

#include <nlohmann/json.hpp>

namespace oishell::relay {

std::string terminator_error_json(std::initializer_list<std::pair<std::string_view, std::string_view>> fields) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();  // keys in the order written
  for (const auto& [key, value] : fields) object[std::string(key)] = std::string(value);
  return object.dump();
}

std::string terminator_error_response(int code, std::string_view phrase, const std::string& text) {
  return "HTTP/1.1 " + std::to_string(code) + " " + std::string(phrase) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(text.size()) +
         "\r\nConnection: close\r\n\r\n" + text;
}

}  // namespace oishell::relay
