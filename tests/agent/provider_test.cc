// The provider table: `provider/model` names, their API bases, key variables and wire formats; Azure's URL shape;
// saved keys; prices and the vision guess. No server: resolve_provider() and the request builders only.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/llm/cost.h"
#include "agent/llm/key_store.h"
#include "agent/llm/models.h"
#include "agent/llm/openai_client.h"
#include "agent/llm/provider.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

using test::env_of;

struct Row {
  const char* name;
  Provider api;
  const char* model;         // sent to the API
  const char* base;          // the public default
  const char* key_variable;  // named in messages
};

TEST(ProviderTable, EachPrefixPicksItsServiceAndStripsThePrefix) {
  const Row rows[] = {
      {"openai/gpt-4o-mini", Provider::openai, "gpt-4o-mini", "https://api.openai.com/v1", "OPENAI_API_KEY"},
      {"gpt-4o", Provider::openai, "gpt-4o", "https://api.openai.com/v1", "OPENAI_API_KEY"},
      {"anthropic/claude-3-5-haiku-latest", Provider::anthropic, "claude-3-5-haiku-latest",
       "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"},
      {"claude-sonnet-4-5", Provider::anthropic, "claude-sonnet-4-5", "https://api.anthropic.com/v1",
       "ANTHROPIC_API_KEY"},
      {"groq/llama-3.1-8b-instant", Provider::openai, "llama-3.1-8b-instant", "https://api.groq.com/openai/v1",
       "GROQ_API_KEY"},
      {"gemini/gemini-2.0-flash", Provider::openai, "gemini-2.0-flash",
       "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"},
      {"openrouter/anthropic/claude-3.5-sonnet", Provider::openai, "anthropic/claude-3.5-sonnet",
       "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"},
      {"deepseek/deepseek-chat", Provider::openai, "deepseek-chat", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"},
      {"mistral/mistral-small-latest", Provider::openai, "mistral-small-latest", "https://api.mistral.ai/v1",
       "MISTRAL_API_KEY"},
      {"together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo", Provider::openai,
       "meta-llama/Llama-3.3-70B-Instruct-Turbo", "https://api.together.xyz/v1", "TOGETHERAI_API_KEY"},
      {"fireworks_ai/accounts/fireworks/models/llama-v3p1-8b-instruct", Provider::openai,
       "accounts/fireworks/models/llama-v3p1-8b-instruct", "https://api.fireworks.ai/inference/v1",
       "FIREWORKS_AI_API_KEY"},
      {"perplexity/sonar", Provider::openai, "sonar", "https://api.perplexity.ai", "PERPLEXITYAI_API_KEY"},
      {"xai/grok-2", Provider::openai, "grok-2", "https://api.x.ai/v1", "XAI_API_KEY"},
      {"ollama/llama3.1", Provider::ollama, "llama3.1", "http://localhost:11434/v1", "OLLAMA_API_KEY"},
      {"ollama_chat/qwen2.5", Provider::ollama, "qwen2.5", "http://localhost:11434/v1", "OLLAMA_API_KEY"},
  };
  for (const Row& row : rows) {
    LlmSettings s;
    ASSERT_TRUE(resolve_provider({row.name}, env_of({}), &s).is_ok()) << row.name;
    EXPECT_EQ(row.api, s.provider) << row.name;
    EXPECT_EQ(row.model, s.model) << row.name;
    EXPECT_EQ(row.base, s.api_base) << row.name;
    EXPECT_EQ(row.key_variable, s.key_variable) << row.name;
    EXPECT_TRUE(s.api_key.empty()) << row.name;
  }
}

TEST(ProviderTable, BaseAndKeyFromTheProvidersOwnVariables) {
  LlmSettings s;
  auto env = env_of({{"GROQ_API_BASE", "http://127.0.0.1:9/v1"}, {"GROQ_API_KEY", "gk"}, {"OPENAI_API_KEY", "ok"}});
  ASSERT_TRUE(resolve_provider({"groq/llama3-8b-8192"}, env, &s).is_ok());
  EXPECT_EQ("http://127.0.0.1:9/v1", s.api_base);
  EXPECT_EQ("gk", s.api_key);  // Groq's key, never OpenAI's
  EXPECT_EQ("GROQ_API_KEY", s.key_source);
  // A later key variable of the row is read when the first is unset; --api_base and --api_key win.
  ASSERT_TRUE(resolve_provider({"together_ai/m"}, env_of({{"TOGETHER_API_KEY", "tk"}}), &s).is_ok());
  EXPECT_EQ("tk", s.api_key);
  ASSERT_TRUE(resolve_provider({"groq/m", "", "http://127.0.0.1:7/v1", "cli-key"}, env, &s).is_ok());
  EXPECT_EQ("http://127.0.0.1:7/v1", s.api_base);
  EXPECT_EQ("cli-key", s.api_key);
  // Usage in the stream is asked of the provider's own service only (a proxy or local server may refuse the field).
  ASSERT_TRUE(resolve_provider({"gpt-4o"}, env_of({}), &s).is_ok());
  EXPECT_TRUE(s.stream_usage);
  ASSERT_TRUE(resolve_provider({"gpt-4o"}, env_of({{"OPENAI_API_BASE", "http://127.0.0.1:9/v1"}}), &s).is_ok());
  EXPECT_FALSE(s.stream_usage);
  ASSERT_TRUE(resolve_provider({"mistral/m"}, env_of({}), &s).is_ok());
  EXPECT_FALSE(s.stream_usage);  // Mistral refuses unknown fields
  // Ollama's own variable holds the server, without /v1.
  ASSERT_TRUE(resolve_provider({"ollama/x"}, env_of({{"OLLAMA_API_BASE", "http://127.0.0.1:11434"}}), &s).is_ok());
  EXPECT_EQ("http://127.0.0.1:11434/v1", s.api_base);
}

TEST(ProviderTable, UnknownPrefixIsAnErrorUnlessAnApiBaseIsGiven) {
  LlmSettings s;
  Status st = resolve_provider({"acme/model-7"}, env_of({}), &s);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(std::string::npos, st.message().find("groq/")) << st.message();
  EXPECT_NE(std::string::npos, st.message().find("--api_base")) << st.message();
  ASSERT_TRUE(resolve_provider({"meta-llama/Llama-3.1-8B", "", "http://127.0.0.1:8000/v1"}, env_of({}), &s).is_ok());
  EXPECT_EQ(Provider::openai, s.provider);
  EXPECT_EQ("meta-llama/Llama-3.1-8B", s.model);  // sent whole, as vLLM names it
  EXPECT_FALSE(resolve_provider({"x", "acme"}, env_of({}), &s).is_ok());
  ASSERT_TRUE(resolve_provider({"llama-3.1-8b-instant", "groq"}, env_of({}), &s).is_ok());  // --provider groq
  EXPECT_EQ("https://api.groq.com/openai/v1", s.api_base);
}

TEST(ProviderTable, AzureUrlShapeVersionAndKeyHeader) {
  LlmSettings s;
  Status st = resolve_provider({"azure/my-gpt4o"}, env_of({{"AZURE_API_KEY", "az"}}), &s);
  ASSERT_FALSE(st.is_ok());  // no public base: the resource's endpoint must be given
  EXPECT_NE(std::string::npos, st.message().find("AZURE_API_BASE")) << st.message();
  auto env = env_of({{"AZURE_API_KEY", "az"}, {"AZURE_API_BASE", "https://res.openai.azure.com/"},
                     {"AZURE_API_VERSION", "2024-06-01"}});
  ASSERT_TRUE(resolve_provider({"azure/my-gpt4o"}, env, &s).is_ok());
  EXPECT_EQ(Provider::azure, s.provider);
  EXPECT_EQ("https://res.openai.azure.com/openai/deployments/my-gpt4o/chat/completions?api-version=2024-06-01",
            chat_completions_url(s));
  ModelChoice c{"azure/my-gpt4o"};
  c.api_version = "2025-01-01-preview";  // --api_version wins over AZURE_API_VERSION
  ASSERT_TRUE(resolve_provider(c, env, &s).is_ok());
  EXPECT_NE(std::string::npos, chat_completions_url(s).find("api-version=2025-01-01-preview"));
  ASSERT_TRUE(resolve_provider({"azure/d"}, env_of({{"AZURE_API_BASE", "https://r.openai.azure.com"}}), &s).is_ok());
  EXPECT_NE(std::string::npos, chat_completions_url(s).find(std::string("api-version=") +
                                                               std::string(kAzureDefaultApiVersion)));
}

TEST(ProviderTable, ContextWindowsOfModelFamiliesBehindAnyPrefix) {
  EXPECT_EQ(128000, default_context_window(Provider::openai, "gpt-4o"));
  EXPECT_EQ(200000, default_context_window(Provider::openai, "anthropic/claude-3.5-sonnet"));  // OpenRouter
  EXPECT_EQ(1000000, default_context_window(Provider::openai, "gemini-2.0-flash"));
  EXPECT_EQ(128000, default_context_window(Provider::openai, "meta-llama/Llama-3.3-70B-Instruct-Turbo"));
  EXPECT_EQ(8000, default_context_window(Provider::openai, "scripted-model"));
}

TEST(KeyStoreTest, SavedKeyIsUsedOnlyWhenPrivate) {
  test::TempDir dir;
  KeyStore keys(dir.path() + "/keys");
  ASSERT_TRUE(keys.save("OPENAI_API_KEY", "sk-saved").is_ok());
  struct stat st {};
  ASSERT_EQ(0, ::stat(keys.path("OPENAI_API_KEY").c_str(), &st));
  EXPECT_EQ(0600u, st.st_mode & 0777);
  ASSERT_EQ(0, ::stat(keys.dir().c_str(), &st));
  EXPECT_EQ(0700u, st.st_mode & 0777);
  LlmSettings s;
  ASSERT_TRUE(resolve_provider({"gpt-4o"}, env_of({}), &s, &keys).is_ok());
  EXPECT_EQ("sk-saved", s.api_key);
  ASSERT_TRUE(resolve_provider({"gpt-4o"}, env_of({{"OPENAI_API_KEY", "env"}}), &s, &keys).is_ok());
  EXPECT_EQ("env", s.api_key);  // the variable wins
  // Readable by others: not used (as ssh treats a private key).
  ASSERT_EQ(0, ::chmod(keys.path("OPENAI_API_KEY").c_str(), 0644));
  std::string problem;
  EXPECT_EQ(std::nullopt, keys.get("OPENAI_API_KEY", &problem));
  EXPECT_NE(std::string::npos, problem.find("0600")) << problem;
  EXPECT_TRUE(keys.all().empty());
}

TEST(Pricing, WellKnownModelsAndSnapshots) {
  auto p = known_price(Provider::openai, "gpt-4o-2024-08-06");
  ASSERT_TRUE(p);
  EXPECT_DOUBLE_EQ(2.5, p->input);
  EXPECT_DOUBLE_EQ(10, p->output);
  EXPECT_DOUBLE_EQ(0.15, known_price(Provider::openai, "gpt-4o-mini")->input);
  EXPECT_DOUBLE_EQ(30, known_price(Provider::openai, "gpt-4")->input);
  EXPECT_DOUBLE_EQ(2, known_price(Provider::openai, "gpt-4.1")->input);
  EXPECT_DOUBLE_EQ(15, known_price(Provider::anthropic, "claude-sonnet-4-5-20250929")->output);
  EXPECT_DOUBLE_EQ(3, known_price(Provider::openai, "anthropic/claude-3.5-sonnet")->input);  // OpenRouter's name
  EXPECT_DOUBLE_EQ(0, known_price(Provider::ollama, "llama3.1")->input);                   // local: free
  EXPECT_EQ(std::nullopt, known_price(Provider::openai, "scripted-model"));
  EXPECT_EQ(std::nullopt, known_price(Provider::openai, "gpt-4.5-preview"));  // not gpt-4's price
  EXPECT_NEAR(0.0125, cost_of({1000, 1000}, *p), 1e-12);
  ASSERT_TRUE(parse_price("1.5,2"));
  EXPECT_DOUBLE_EQ(2, parse_price("1.5,2")->output);
  EXPECT_FALSE(parse_price("cheap"));
  EXPECT_FALSE(parse_price("-1,2"));
}

TEST(Budget, RefusedWhenSpentOrWhenTheNextInputAloneGoesOver) {
  CostMeter meter(TokenPrice{2.5, 10});
  EXPECT_EQ(std::nullopt, budget_refusal(meter, 0.01, 1000));
  meter.add(TokenUsage{1000, 1000}, TokenUsage{1, 1});  // $0.0125, as reported
  EXPECT_EQ(0, meter.estimated_calls());
  auto why = budget_refusal(meter, 0.01, 10);
  ASSERT_TRUE(why);
  EXPECT_NE(std::string::npos, why->find("Budget reached")) << *why;
  CostMeter fresh(TokenPrice{2.5, 10});
  EXPECT_TRUE(budget_refusal(fresh, 0.01, 5000));  // 5000 input tokens: $0.0125 > $0.01
  fresh.add(std::nullopt, TokenUsage{400, 100});  // no usage reported: the estimate counts
  EXPECT_EQ(1, fresh.estimated_calls());
  EXPECT_NEAR(0.002, fresh.spent(), 1e-12);
}

TEST(Vision, GuessedFromTheModelName) {
  for (const char* m : {"gpt-4o", "gpt-4o-mini", "gpt-4.1", "claude-3-5-sonnet-20241022", "claude-sonnet-4-5",
                        "gemini-2.0-flash", "llava:13b", "llama3.2-vision", "o3"}) {
    EXPECT_TRUE(guess_supports_vision(m)) << m;
  }
  for (const char* m : {"gpt-3.5-turbo", "gpt-4", "claude-2.1", "llama3.1", "deepseek-chat", "o3-mini", "local"}) {
    EXPECT_FALSE(guess_supports_vision(m)) << m;
  }
}

TEST(WireFormatUsage, UsageChunksAndStreamOptions) {
  LlmSettings s;
  s.model = "gpt-4o";
  s.stream_usage = true;
  OpenAiClient client(s);
  auto body = client.request_body("sys", {Message::user("hi")});
  EXPECT_EQ(true, body["stream_options"]["include_usage"]);
  s.stream_usage = false;
  EXPECT_FALSE(OpenAiClient(s).request_body("sys", {}).contains("stream_options"));
  class Null final : public StreamSink {
    void on_text(std::string_view) override {}
    void on_tool_call(size_t, const ToolCall&) override {}
    void on_retry(const std::string&, long) override {}
  } sink;
  LlmResponse r;
  ASSERT_TRUE(apply_openai_chunk(R"J({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3}})J", &r, sink)
                  .is_ok());
  ASSERT_TRUE(r.usage);
  EXPECT_EQ(12, r.usage->input);
  EXPECT_EQ(3, r.usage->output);
}

}  // namespace
}  // namespace oishell::agent
