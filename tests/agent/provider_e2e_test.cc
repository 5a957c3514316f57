// End to end: `provider/model` names route the real `interpreter` to each provider's API, here a loopback stand-in
// (scripted_server.py on 127.0.0.1) named by the provider's own base variable, and the request carries the model
// name without its prefix, that provider's key in that provider's header, at that provider's path. No public
// service is ever contacted: every run overrides the base.
#include <gtest/gtest.h>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

constexpr const char* kOpenAiKey = "sk-openai-NOT-FOR-OTHERS-93ab";

struct Route {
  std::string model;         // as the user names it
  std::string base_variable; // pointed at the stand-in
  std::string base_suffix;   // what the stand-in's base ends with ("/v1", or "" for Azure's and Ollama's variable)
  std::string key_variable;
  std::string sent_model;    // in the request body
  std::string path;          // of the request
  std::string key_header;    // the header carrying the key
  bool anthropic = false;
};

class ProviderRouting : public ::testing::Test {
 protected:
  // Runs a one-shot prompt against a fresh stand-in; returns its one request (null when none arrived).
  json route(const Route& r, std::vector<std::string> extra = {}, std::map<std::string, std::string> env = {},
             RunResult* result = nullptr) {
    json answer = {{"text", "routed"}};
    if (r.anthropic) answer["format"] = "anthropic";
    ScriptedServer server(json::array({answer}));
    std::string base = "http://127.0.0.1:" + std::to_string(server.port()) + r.base_suffix;
    RunOptions o;
    o.args = {"--model", r.model, "--sandbox", "none", "--plain"};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    o.args.push_back("say something");
    o.env = {{r.base_variable, base}, {r.key_variable, "key-for-" + r.key_variable}, {"OPENAI_API_KEY", kOpenAiKey}};
    if (r.key_variable == "OPENAI_API_KEY") o.env[r.key_variable] = "key-for-OPENAI_API_KEY";
    for (const auto& [k, v] : env) o.env[k] = v;
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.timeout_ms = 30000;
    RunResult run = run_interpreter(o);
    EXPECT_FALSE(run.timed_out);
    if (result) *result = run;
    auto reqs = server.requests();
    EXPECT_EQ(1u, reqs.size()) << r.model << "\n" << run.out << run.err;
    return reqs.empty() ? json() : reqs[0];
  }

  TempDir workspace_, home_;
};

TEST_F(ProviderRouting, EachPrefixReachesItsProviderWithItsKeyHeaderAndModelName) {
  const Route routes[] = {
      {"openai/gpt-4o-mini", "OPENAI_API_BASE", "/v1", "OPENAI_API_KEY", "gpt-4o-mini", "/v1/chat/completions",
       "Authorization"},
      {"groq/llama-3.1-8b-instant", "GROQ_API_BASE", "/v1", "GROQ_API_KEY", "llama-3.1-8b-instant",
       "/v1/chat/completions", "Authorization"},
      {"gemini/gemini-2.0-flash", "GEMINI_API_BASE", "/v1", "GEMINI_API_KEY", "gemini-2.0-flash",
       "/v1/chat/completions", "Authorization"},
      {"openrouter/anthropic/claude-3.5-sonnet", "OPENROUTER_API_BASE", "/v1", "OPENROUTER_API_KEY",
       "anthropic/claude-3.5-sonnet", "/v1/chat/completions", "Authorization"},
      {"deepseek/deepseek-chat", "DEEPSEEK_API_BASE", "/v1", "DEEPSEEK_API_KEY", "deepseek-chat",
       "/v1/chat/completions", "Authorization"},
      {"mistral/mistral-small-latest", "MISTRAL_API_BASE", "/v1", "MISTRAL_API_KEY", "mistral-small-latest",
       "/v1/chat/completions", "Authorization"},
      {"together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", "TOGETHERAI_API_BASE", "/v1", "TOGETHER_API_KEY",
       "meta-llama/Llama-3.3-70B-Instruct-Turbo", "/v1/chat/completions", "Authorization"},
      {"fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct", "FIREWORKS_AI_API_BASE", "/v1",
       "FIREWORKS_AI_API_KEY", "accounts/fireworks/models/llama-v3p1-8b-instruct", "/v1/chat/completions",
       "Authorization"},
      {"perplexity/sonar", "PERPLEXITY_API_BASE", "", "PERPLEXITYAI_API_KEY", "sonar", "/chat/completions",
       "Authorization"},
      {"xai/grok-2", "XAI_API_BASE", "/v1", "XAI_API_KEY", "grok-2", "/v1/chat/completions", "Authorization"},
      {"ollama/llama3.1", "OLLAMA_API_BASE", "", "OLLAMA_API_KEY", "llama3.1", "/v1/chat/completions",
       "Authorization"},
      {"ollama_chat/qwen2.5", "OLLAMA_API_BASE", "", "OLLAMA_API_KEY", "qwen2.5", "/v1/chat/completions",
       "Authorization"},
      {"anthropic/claude-3-5-haiku-latest", "ANTHROPIC_API_BASE", "/v1", "ANTHROPIC_API_KEY",
       "claude-3-5-haiku-latest", "/v1/messages", "X-Api-Key", true},
  };
  for (const Route& r : routes) {
    SCOPED_TRACE(r.model);
    json req = route(r);
    if (req.is_null()) continue;
    EXPECT_EQ(r.path, req["path"]);
    EXPECT_EQ(r.sent_model, req["body"]["model"]);
    std::string expected = r.key_header == "Authorization" ? "Bearer key-for-" + r.key_variable
                                                           : "key-for-" + r.key_variable;
    // Header names as the client wrote them (HTTP header names are case-insensitive).
    std::string got;
    for (const auto& [name, value] : req["headers"].items()) {
      std::string lower = name, want = r.key_header;
      for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      for (auto& c : want) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == want) got = value;
      // OpenAI's key goes to OpenAI only.
      if (r.key_variable != "OPENAI_API_KEY") {
        EXPECT_EQ(std::string::npos, value.dump().find(kOpenAiKey)) << name;
      }
    }
    EXPECT_EQ(expected, got);
  }
}

TEST_F(ProviderRouting, AzureDeploymentUrlApiVersionAndApiKeyHeader) {
  Route azure{"azure/my-gpt4o", "AZURE_API_BASE", "", "AZURE_API_KEY", "my-gpt4o",
              "/openai/deployments/my-gpt4o/chat/completions?api-version=2024-06-01", "api-key"};
  json req = route(azure, {"--api_version", "2024-06-01"});
  ASSERT_FALSE(req.is_null());
  EXPECT_EQ(azure.path, req["path"]);
  EXPECT_EQ("key-for-AZURE_API_KEY", req["headers"]["api-key"]);
  EXPECT_FALSE(req["headers"].contains("Authorization"));
  // The version from AZURE_API_VERSION when --api_version is not given.
  req = route(azure, {}, {{"AZURE_API_VERSION", "2024-08-01-preview"}});
  ASSERT_FALSE(req.is_null());
  EXPECT_EQ("/openai/deployments/my-gpt4o/chat/completions?api-version=2024-08-01-preview", req["path"]);
}

TEST_F(ProviderRouting, UnknownPrefixIsRefusedUnlessAnApiBaseNamesTheServer) {
  RunOptions o;
  o.args = {"--model", "acme/model-7", "--sandbox", "none", "--plain", "hello"};
  o.cwd = workspace_.path();
  o.home = home_.path();
  RunResult r = run_interpreter(o);
  EXPECT_EQ(2, r.exit_code) << r.out << r.err;
  std::string all = r.out + r.err;
  EXPECT_NE(std::string::npos, all.find("acme/")) << all;
  EXPECT_NE(std::string::npos, all.find("groq/")) << all;  // the known prefixes are listed
  // With --api_base: an OpenAI-compatible server's model, the name sent whole.
  ScriptedServer server(json::array({{{"text", "ok"}}}));
  o.args = {"--model", "acme/model-7", "--api_base", server.base(), "--sandbox", "none", "--plain", "hello"};
  r = run_interpreter(o);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto reqs = server.requests();
  ASSERT_EQ(1u, reqs.size());
  EXPECT_EQ("acme/model-7", reqs[0]["body"]["model"]);
  EXPECT_EQ("/v1/chat/completions", reqs[0]["path"]);
}

}  // namespace
}  // namespace oishell::agent::test
