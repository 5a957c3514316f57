#include "agent/llm/provider.h"

#include <cstdlib>

namespace oishell::agent {
namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

std::string strip_prefix(const std::string& s, std::string_view prefix) {
  return starts_with(s, prefix) ? s.substr(prefix.size()) : s;
}

}  // namespace

std::string_view provider_name(Provider p) {
  switch (p) {
    case Provider::openai: return "openai";
    case Provider::anthropic: return "anthropic";
    case Provider::ollama: return "ollama";
  }
  return "openai";
}

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
}

std::string join_endpoint(const std::string& base, const std::string& path) {
  std::string b = base;
  while (!b.empty() && b.back() == '/') b.pop_back();
  if (b.size() >= path.size() && b.compare(b.size() - path.size(), path.size(), path) == 0) return b;
  return b + path;
}

Status resolve_provider(const ModelChoice& choice, const EnvLookup& env, LlmSettings* out) {
  const std::string& m = choice.model;
  Provider provider = Provider::openai;
  if (!choice.provider.empty()) {
    if (choice.provider == "openai") provider = Provider::openai;
    else if (choice.provider == "anthropic") provider = Provider::anthropic;
    else if (choice.provider == "ollama") provider = Provider::ollama;
    else return Status::error("unknown provider `" + choice.provider + "` (expected openai, anthropic or ollama)");
  } else if (starts_with(m, "anthropic/") || starts_with(m, "claude")) {
    provider = Provider::anthropic;
  } else if (starts_with(m, "ollama/") || starts_with(m, "ollama_chat/")) {
    provider = Provider::ollama;
  }
  std::string model = m;
  for (std::string_view prefix : {"anthropic/", "ollama_chat/", "ollama/", "openai/"}) model = strip_prefix(model, prefix);
  if (model.empty()) return Status::error("no model given (use --model NAME or llm.model in a profile)");

  out->provider = provider;
  out->model = model;
  switch (provider) {
    case Provider::openai:
      out->key_variable = "OPENAI_API_KEY";
      out->api_base = choice.api_base.empty() ? "https://api.openai.com/v1" : choice.api_base;
      break;
    case Provider::anthropic:
      out->key_variable = "ANTHROPIC_API_KEY";
      out->api_base = choice.api_base.empty() ? "https://api.anthropic.com/v1" : choice.api_base;
      break;
    case Provider::ollama:
      out->key_variable = "OLLAMA_API_KEY";
      out->api_base = choice.api_base.empty() ? "http://localhost:11434/v1" : choice.api_base;
      break;
  }
  if (!choice.api_key.empty()) {
    out->api_key = choice.api_key;
    out->key_source = choice.api_key_origin;
  } else if (auto v = env(out->key_variable)) {
    out->api_key = *v;
    out->key_source = out->key_variable;
  } else {
    out->api_key.clear();
    out->key_source.clear();
  }
  return Status::ok();
}

int default_context_window(Provider provider, const std::string& model) {
  if (provider == Provider::anthropic) return 200000;
  if (starts_with(model, "gpt-4o") || starts_with(model, "gpt-4.1") || starts_with(model, "gpt-4-turbo") ||
      starts_with(model, "o1") || starts_with(model, "o3") || starts_with(model, "o4") || starts_with(model, "gpt-5")) {
    return 128000;
  }
  if (starts_with(model, "gpt-3.5")) return 16000;
  return 8000;
}

}  // namespace oishell::agent
