#include "agent/llm/provider.h"

#include <cstdlib>

#include "agent/llm/key_store.h"

namespace oishell::agent {
namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::string_view provider_name(Provider p) {
  switch (p) {
    case Provider::openai: return "openai";
    case Provider::anthropic: return "anthropic";
    case Provider::ollama: return "ollama";
    case Provider::azure: return "azure";
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

namespace {

// Each provider once: what its prefix selects, where its API is, where its base and key are read from. The bases
// are those of the public services; tests point every row at a loopback stand-in through --api_base or the row's
// base variable.
const std::vector<ProviderRow> kProviders = {
    {"openai/", true, Provider::openai, "OpenAI", "https://api.openai.com/v1", {"OPENAI_API_BASE", "OPENAI_BASE_URL"},
     {"OPENAI_API_KEY"}, true},
    {"anthropic/", true, Provider::anthropic, "Anthropic", "https://api.anthropic.com/v1",
     {"ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"}, {"ANTHROPIC_API_KEY"}, false},
    {"claude", false, Provider::anthropic, "Anthropic", "https://api.anthropic.com/v1",
     {"ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"}, {"ANTHROPIC_API_KEY"}, false},
    // (stream_options needs api-version 2024-09-01-preview or later: asked for only when a budget needs it.)
    {"azure/", true, Provider::azure, "Azure OpenAI", "", {"AZURE_API_BASE", "AZURE_OPENAI_ENDPOINT"},
     {"AZURE_API_KEY", "AZURE_OPENAI_API_KEY"}, false},
    {"groq/", true, Provider::openai, "Groq", "https://api.groq.com/openai/v1", {"GROQ_API_BASE"}, {"GROQ_API_KEY"},
     true},
    {"gemini/", true, Provider::openai, "Google Gemini", "https://generativelanguage.googleapis.com/v1beta/openai",
     {"GEMINI_API_BASE"}, {"GEMINI_API_KEY", "GOOGLE_API_KEY"}, false},
    {"openrouter/", true, Provider::openai, "OpenRouter", "https://openrouter.ai/api/v1", {"OPENROUTER_API_BASE"},
     {"OPENROUTER_API_KEY", "OR_API_KEY"}, true},
    {"deepseek/", true, Provider::openai, "DeepSeek", "https://api.deepseek.com/v1", {"DEEPSEEK_API_BASE"},
     {"DEEPSEEK_API_KEY"}, true},
    {"mistral/", true, Provider::openai, "Mistral AI", "https://api.mistral.ai/v1", {"MISTRAL_API_BASE"},
     {"MISTRAL_API_KEY"}, false},
    {"together_ai/", true, Provider::openai, "Together AI", "https://api.together.xyz/v1",
     {"TOGETHERAI_API_BASE", "TOGETHER_API_BASE"}, {"TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_API_KEY"},
     true},
    {"fireworks_ai/", true, Provider::openai, "Fireworks AI", "https://api.fireworks.ai/inference/v1",
     {"FIREWORKS_AI_API_BASE", "FIREWORKS_API_BASE"},
     {"FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY", "FIREWORKSAI_API_KEY"}, true},
    {"perplexity/", true, Provider::openai, "Perplexity", "https://api.perplexity.ai", {"PERPLEXITY_API_BASE"},
     {"PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"}, false},
    {"xai/", true, Provider::openai, "xAI", "https://api.x.ai/v1", {"XAI_API_BASE"}, {"XAI_API_KEY"}, true},
    {"ollama_chat/", true, Provider::ollama, "Ollama", "http://localhost:11434/v1", {"OLLAMA_API_BASE"},
     {"OLLAMA_API_KEY"}, true},
    {"ollama/", true, Provider::ollama, "Ollama", "http://localhost:11434/v1", {"OLLAMA_API_BASE"},
     {"OLLAMA_API_KEY"}, true},
};

// A plain model name ("gpt-4o", or anything with an --api_base): OpenAI's row, the name sent as it is.
const ProviderRow& openai_row() { return kProviders.front(); }

std::string row_key(const ProviderRow& row) {
  std::string k(row.prefix);
  if (!k.empty() && k.back() == '/') k.pop_back();
  return k;
}

// Ollama's own variable holds the server's address without /v1 (http://host:11434): its OpenAI API is below.
std::string ollama_base(std::string base) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  size_t scheme = base.find("://");
  size_t path = base.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (path == std::string::npos) base += "/v1";
  return base;
}

}  // namespace

const std::vector<ProviderRow>& provider_table() { return kProviders; }

std::string known_prefixes() {
  std::string out;
  for (const auto& row : kProviders) {
    if (!row.strip) continue;
    out += (out.empty() ? "" : ", ") + std::string(row.prefix);
  }
  return out;
}

std::string chat_completions_url(const LlmSettings& s) {
  if (s.provider != Provider::azure) return join_endpoint(s.api_base, "/chat/completions");
  std::string base = s.api_base;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() >= 7 && base.compare(base.size() - 7, 7, "/openai") == 0) base.resize(base.size() - 7);
  std::string version = s.api_version.empty() ? std::string(kAzureDefaultApiVersion) : s.api_version;
  return base + "/openai/deployments/" + s.model + "/chat/completions?api-version=" + version;
}

Status resolve_provider(const ModelChoice& choice, const EnvLookup& env, LlmSettings* out, const KeyStore* saved) {
  const std::string& m = choice.model;
  const ProviderRow* row = nullptr;
  std::string model = m;
  if (!choice.provider.empty()) {
    for (const auto& r : kProviders) {
      if (r.strip && row_key(r) == choice.provider) {
        row = &r;
        break;
      }
    }
    if (!row) {
      return Status::error("unknown provider `" + choice.provider + "` (expected one of: " + known_prefixes() +
                           " without the slash)");
    }
    if (starts_with(model, row->prefix)) model = model.substr(row->prefix.size());
  } else {
    for (const auto& r : kProviders) {
      if (starts_with(m, r.prefix)) {
        row = &r;
        if (r.strip) model = m.substr(r.prefix.size());
        break;
      }
    }
    if (!row) {
      if (m.find('/') != std::string::npos && choice.api_base.empty()) {
        return Status::error("model `" + m + "`: `" + m.substr(0, m.find('/')) +
                             "/` is not a provider prefix this interpreter knows (known: " + known_prefixes() +
                             "). To send `" + m + "` to an OpenAI-compatible server, give its --api_base.");
      }
      row = &openai_row();
    }
  }
  if (model.empty()) return Status::error("no model given (use --model NAME or llm.model in a profile)");

  out->provider = row->api;
  out->model = model;
  out->service = row_key(*row);
  // With an --api_base of the user's, a plain name goes to some OpenAI-compatible server, not to OpenAI.
  out->service_name = (row == &openai_row() && !choice.api_base.empty()) ? "" : std::string(row->name);
  out->api_base.clear();
  if (!choice.api_base.empty()) {
    out->api_base = choice.api_base;
  } else {
    for (std::string_view var : row->base_variables) {
      if (auto v = env(std::string(var))) {
        out->api_base = row->api == Provider::ollama ? ollama_base(*v) : *v;
        break;
      }
    }
    if (out->api_base.empty()) out->api_base = std::string(row->base);
  }
  // Usage in the stream is asked of the provider's own service; a server elsewhere (a proxy, a local server) gets
  // only the standard request unless a budget needs the usage (agent/config/model_setup.cc).
  out->stream_usage = row->stream_usage && out->api_base == row->base;
  if (out->api_base.empty()) {
    return Status::error(std::string(row->name) + " has no public address: give your resource's endpoint in " +
                         std::string(row->base_variables.front()) +
                         " or --api_base (https://<resource>.openai.azure.com)");
  }
  out->api_version.clear();
  if (row->api == Provider::azure) {
    if (!choice.api_version.empty()) out->api_version = choice.api_version;
    else if (auto v = env("AZURE_API_VERSION")) out->api_version = *v;
    else out->api_version = std::string(kAzureDefaultApiVersion);
  }

  out->key_variable = std::string(row->key_variables.front());
  out->api_key.clear();
  out->key_source.clear();
  if (!choice.api_key.empty()) {
    out->api_key = choice.api_key;
    out->key_source = choice.api_key_origin;
    return Status::ok();
  }
  for (std::string_view var : row->key_variables) {
    if (auto v = env(std::string(var))) {
      out->api_key = *v;
      out->key_source = std::string(var);
      return Status::ok();
    }
  }
  if (saved) {
    if (auto v = saved->get(out->key_variable)) {
      out->api_key = *v;
      out->key_source = "the key saved in " + saved->path(out->key_variable);
    }
  }
  return Status::ok();
}

int default_context_window(Provider provider, const std::string& model) {
  if (provider == Provider::anthropic) return 200000;
  // Gateways name models vendor/model (OpenRouter, Together): the family is after the last slash.
  std::string m = model.substr(model.rfind('/') == std::string::npos ? 0 : model.rfind('/') + 1);
  if (starts_with(m, "claude")) return 200000;
  if (starts_with(m, "gemini")) return 1000000;
  if (starts_with(m, "gpt-4o") || starts_with(m, "gpt-4.1") || starts_with(m, "gpt-4-turbo") ||
      starts_with(m, "o1") || starts_with(m, "o3") || starts_with(m, "o4") || starts_with(m, "gpt-5") ||
      starts_with(m, "grok") || starts_with(m, "mistral-large") || starts_with(m, "llama-3.1") ||
      starts_with(m, "llama-3.3") || starts_with(m, "Llama-3.3") || starts_with(m, "Meta-Llama-3.1")) {
    return 128000;
  }
  if (starts_with(m, "deepseek")) return 64000;
  if (starts_with(m, "gpt-3.5")) return 16000;
  return 8000;
}

}  // namespace oishell::agent
