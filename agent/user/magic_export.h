#pragma once
// The conversation written out by %jupyter (a Jupyter notebook, nbformat 4.5: a markdown cell per message, the
// user's quoted, and a code cell per block with its output and images) and %markdown (a transcript). Pure.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/core/message.h"

namespace oishell::agent {

nlohmann::json notebook_from_messages(const std::vector<Message>& messages);
std::string markdown_from_messages(const std::vector<Message>& messages);

}  // namespace oishell::agent
