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
// Only a key of the top-level object counts, compared after unescaping (as a JSON parser reads it), and only its
// first appearance: what the display shows while a call streams. A call whose keys repeat is refused when it is
// complete (parse_call_arguments), so this never has to guess which of two values runs.
std::optional<std::string> partial_json_string(std::string_view text, std::string_view key);

// Parses `text` as JSON, repairing the common breakage: raw control characters inside strings, a cut-off tail
// (closing the open string, arrays and objects), trailing prose after the object. nullopt when even that fails.
std::optional<nlohmann::json> lenient_json_parse(std::string_view text);

// The arguments of a tool call: JSON that may be broken as above (except prose before it: the text must start with
// `{` or `[` after white space), read once for both what is shown and what runs. Refused (`problem` set, no value)
// when readers could disagree about what it says: a key repeated within one object (a parser keeps the last, a
// reader of the text sees the first), a key written with escape sequences ("\u0063ode"), text after the value.
// Neither value nor problem: the text is not JSON (a tool whose arguments are the code itself).
struct CallArguments {
  std::optional<nlohmann::json> value;
  std::string problem;
  bool repaired = false;  // the JSON was broken and repaired
};
CallArguments parse_call_arguments(std::string_view text);

}  // namespace oishell::agent
