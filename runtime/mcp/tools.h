#pragma once
// The tools `oishell mcp` offers (tools/list): names, descriptions, JSON Schemas of their input and of their
// structured output, and hints for the client. Pure data; the server (runtime/mcp/server.h) runs them.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace oishell::mcp {

// The tools/list entries, in a fixed order. `languages`: the executors present in this sandbox (run_code's enum);
// `network_questions`: how a destination the policy does not list is decided, said in run_code's description.
nlohmann::json tool_list(const std::vector<std::string>& languages, const std::string& network_questions);

// The tool's input checked against what its schema says (required keys, types, enums, bounds); "" when it
// conforms, else what is wrong, for an isError result the model can act on.
std::string check_arguments(const std::string& tool, const nlohmann::json& arguments,
                            const std::vector<std::string>& languages);

}  // namespace oishell::mcp
