#include "agent/llm/local.h"

#include <nlohmann/json.hpp>

#include "agent/llm/http.h"

namespace oishell::agent {

std::optional<LocalServer> find_local_server(const std::string& host) {
  const struct {
    const char* name;
    int port;
  } kCandidates[] = {{"Ollama", 11434}, {"LM Studio", 1234}, {"llama.cpp", 8080}, {"vLLM", 8000}};
  for (const auto& c : kCandidates) {
    std::string base = "http://" + host + ":" + std::to_string(c.port) + "/v1";
    ClientRequest req;
    req.url = base + "/models";
    req.connect_timeout_ms = 300;
    req.total_timeout_ms = 1500;
    std::string body;
    ClientResponse resp = http_perform(req, [&body](std::string_view b) {
      if (body.size() < (1 << 20)) body.append(b);
    });
    if (resp.status != 200) continue;
    LocalServer found{c.name, base, ""};
    auto j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("data") && j["data"].is_array() && !j["data"].empty()) {
      const auto& first = j["data"][0];
      if (first.is_object() && first.contains("id") && first["id"].is_string()) found.model = first["id"].get<std::string>();
    }
    return found;
  }
  return std::nullopt;
}

}  // namespace oishell::agent
