// End to end: --max_budget stops a session before the call that the usage the API reported has paid for, a budget
// for a model whose price is unknown is refused at the start, and %tokens shows the conversation's tokens and what
// the session has cost.
#include <gtest/gtest.h>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

class BudgetE2E : public ::testing::Test {
 protected:
  RunResult run(ScriptedServer& server, const std::string& model, std::vector<std::string> extra,
                std::map<std::string, std::string> env = {}, std::string stdin_data = "") {
    RunOptions o;
    o.args = {"--model", model, "--api_base", server.base(), "--plain"};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    o.env = {{"OPENAI_API_KEY", "sk-budget"}, {"ANTHROPIC_API_KEY", "ak-budget"}};
    for (const auto& [k, v] : env) o.env[k] = v;
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.stdin_data = std::move(stdin_data);
    RunResult r = run_interpreter(o);
    EXPECT_FALSE(r.timed_out) << r.out << r.err;
    return r;
  }
  TempDir workspace_, home_;
};

json with_usage(json answer, long input, long output) {
  answer["usage"] = {{"input", input}, {"output", output}};
  return answer;
}

TEST_F(BudgetE2E, StopsBeforeTheNextCallOnceTheReportedUsageReachesIt) {
  // gpt-4o: $2.50 / $10 per million tokens; 1000 + 1000 tokens cost $0.0125, more than the $0.01 budget.
  ScriptedServer server(json::array({with_usage(tool("shell", "echo ran-once"), 1000, 1000), say("never asked")}));
  RunResult r = run(server, "gpt-4o", {"--max_budget", "0.01", "go"});
  EXPECT_EQ(4, r.exit_code) << r.out << r.err;
  ASSERT_EQ(1u, server.requests().size()) << r.out;
  EXPECT_EQ(true, server.requests()[0]["body"]["stream_options"]["include_usage"]);  // the usage was asked for
  EXPECT_NE(std::string::npos, r.out.find("ran-once")) << r.out;  // the block of the paid answer ran
  EXPECT_NE(std::string::npos, r.out.find("Budget reached")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("$0.0125")) << r.out;
}

TEST_F(BudgetE2E, UnderTheBudgetTheSessionGoesOn) {
  ScriptedServer server(
      json::array({with_usage(tool("shell", "echo one"), 1000, 100), with_usage(say("done"), 1200, 20)}));
  RunResult r = run(server, "gpt-4o", {"--max_budget", "0.05", "go"});
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_EQ(2u, server.requests().size());
}

TEST_F(BudgetE2E, UnknownPriceIsRefusedUnlessTheUserGivesOne) {
  json first = with_usage(tool("shell", "echo one"), 10, 10);
  first["format"] = "anthropic";
  json second = with_usage(say("no"), 10, 10);
  second["format"] = "anthropic";
  ScriptedServer server(json::array({first, second}));
  RunResult r = run(server, "claude-scripted", {"--max_budget", "0.01", "go"});
  EXPECT_EQ(2, r.exit_code) << r.out << r.err;
  EXPECT_EQ(0u, server.requests().size());
  EXPECT_NE(std::string::npos, (r.out + r.err).find("OISHELL_MODEL_PRICE")) << r.out << r.err;
  // $1 / $1000 per million input / output tokens: 10 + 10 tokens cost $0.01001, over the budget after the first answer
  // (Anthropic reports the usage in message_start and message_delta).
  r = run(server, "claude-scripted", {"--max_budget", "0.01", "go"}, {{"OISHELL_MODEL_PRICE", "1,1000"}});
  EXPECT_EQ(4, r.exit_code) << r.out << r.err;
  EXPECT_EQ(1u, server.requests().size());
  EXPECT_NE(std::string::npos, r.out.find("Budget reached: this session's model calls have cost $0.0100")) << r.out;
}

TEST_F(BudgetE2E, TokensShowsTheConversationThePromptAndTheCost) {
  ScriptedServer server(json::array({with_usage(say("an answer"), 1000, 1000)}));
  RunResult r = run(server, "gpt-4o", {"--max_budget", "1"}, {},
                    "first question\n%tokens and what would this prompt add\n");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_EQ(1u, server.requests().size());
  EXPECT_NE(std::string::npos, r.out.find("system prompt")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("this prompt")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("next request")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("this session    $0.0125")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("$0.9875 left")) << r.out;
}

}  // namespace
}  // namespace oishell::agent::test
