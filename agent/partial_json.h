#pragma once
// Reading what models write as JSON, which is often incomplete (a tool call still streaming) or slightly broken
// (raw newlines inside strings, a missing closing brace).
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace oishell::agent {

// The value of string field `key` of a JSON object whose text may be cut anywhere: decoded as far as it goes.
// {"language": "python", "code": "print(1)\nx  ->  "print(1)\nx" for key "code". nullopt before the value starts.
std::optional<std::string> partial_json_string(std::string_view text, std::string_view key);

// Parses `text` as JSON, repairing the common breakage: raw control characters inside strings, a cut-off tail
// (closing the open string, arrays and objects), trailing prose after the object. nullopt when even that fails.
std::optional<nlohmann::json> lenient_json_parse(std::string_view text);

}  // namespace oishell::agent
