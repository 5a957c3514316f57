// Which model a session talks to: a public service is never called without a key (nothing leaves the machine).
#include "agent/config/model_setup.h"

#include <gtest/gtest.h>

#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

using test::env_of;

class NobodyAtTheTerminal final : public UserInput {
 public:
  std::optional<std::string> read_message(const std::string&, bool*) override { return std::nullopt; }
  std::optional<std::string> ask(const std::string&, bool*) override { return std::nullopt; }
  bool can_ask() const override { return false; }
};

TEST(ModelSetup, APublicServiceWithoutAKeyIsAnErrorBeforeAnyRequest) {
  test::TempDir keys_dir;
  KeyStore keys(keys_dir.path());
  auto display = make_display({false, true, false, false});
  NobodyAtTheTerminal input;
  for (const std::string model : {"gpt-4o-mini", "groq/llama-3.1-70b-versatile", "claude-sonnet-4-5"}) {
    AgentConfig c;
    c.model.model = model;
    auto chosen = choose_model(c, env_of({}), *display, input, keys);
    ASSERT_FALSE(chosen) << model;
    EXPECT_NE(std::string::npos, chosen.status().message().find("no API key")) << chosen.status().message();
  }
  // The neighbours: with the key, or with a server of the user's (which may need none), the model is chosen.
  AgentConfig c;
  c.model.model = "gpt-4o-mini";
  auto with_key = choose_model(c, env_of({{"OPENAI_API_KEY", "sk-x"}}), *display, input, keys);
  ASSERT_TRUE(with_key && *with_key) << with_key.status().message();
  EXPECT_EQ("sk-x", (*with_key)->api_key);
  auto own_server = choose_model(c, env_of({{"OPENAI_API_BASE", "http://127.0.0.1:9/v1"}}), *display, input, keys);
  ASSERT_TRUE(own_server && *own_server) << own_server.status().message();
  c.model.model = "ollama/llama3";
  auto local = choose_model(c, env_of({}), *display, input, keys);
  ASSERT_TRUE(local && *local) << local.status().message();
}

}  // namespace
}  // namespace oishell::agent
