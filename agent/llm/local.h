#pragma once
// --local: find a model server on this machine. Tries Ollama (11434), LM Studio (1234), llama.cpp's server (8080)
// and a generic OpenAI-compatible server on 8000 (vLLM), asking each for /v1/models; the first that answers gives
// its API base and its first model.
#include <optional>
#include <string>

namespace oishell::agent {

struct LocalServer {
  std::string name;      // "Ollama", "LM Studio", "llama.cpp", "vLLM"
  std::string api_base;  // "http://localhost:11434/v1"
  std::string model;     // first model the server lists (may be empty)
};

std::optional<LocalServer> find_local_server(const std::string& host = "127.0.0.1");

}  // namespace oishell::agent
