// "Allow always" that lasts (issue 38, agent/sandbox/policy_keep.h), end to end with the real interpreter and sandbox: the
// network question answered `a` at a terminal, then the diff shown and `y` typed, leaves the rule in the workspace
// policy `.oishell/policy.yaml`; the next session (no terminal, so an unlisted destination would be refused) uses
// it; and a workspace policy changed behind the agent's back (as code in the sandbox could) is not used. Plus the
// pure part: where a rule is written, and the layouts edited in place.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/sandbox/policy_keep.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

const char* kFetch =
    "import urllib.request, urllib.error\n"
    "try:\n"
    "    urllib.request.urlopen('http://kept.oishell-test.invalid/', timeout=20)\n"
    "except urllib.error.HTTPError as e:\n"
    "    print('status', e.code)\n"
    "except Exception as e:\n"
    "    print('failed', type(e).__name__)\n";

class PolicyKeep : public ::testing::Test {
 protected:
  RunOptions options(ScriptedServer& server) {
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", server.base(), "fetch it"};
    o.env = {{"OPENAI_API_KEY", "sk-keep"}, {"TERM", "xterm"}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    return o;
  }
  std::string workspace_policy() const { return workspace_.path() + "/.oishell/policy.yaml"; }
  TempDir workspace_, home_;
};

TEST_F(PolicyKeep, AllowAlwaysLeavesARuleTheNextSessionUsesAndATamperedOneIsNotUsed) {
  {
    ScriptedServer server(json::array({tool("python", kFetch), say("Fetched.")}));
    bool asked = false, confirmed = false;
    RunResult r = run_in_terminal(options(server), [&](int terminal, const std::string& out) {
      if (!asked && out.find("code wants to reach kept.oishell-test.invalid:80") != std::string::npos) {
        asked = true;
        [[maybe_unused]] ssize_t n = ::write(terminal, "a\n", 2);
      } else if (asked && !confirmed && out.find("Write it? [y/N]") != std::string::npos) {
        confirmed = true;
        [[maybe_unused]] ssize_t n = ::write(terminal, "y\n", 2);
      }
    });
    ASSERT_FALSE(r.timed_out) << json(r.out).dump();
    EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
    ASSERT_TRUE(confirmed) << json(r.out).dump();
    // The diff was shown before the question.
    EXPECT_NE(std::string::npos, r.out.find("+    - kept.oishell-test.invalid:80")) << json(r.out).dump();
  }
  std::string text = read_text(workspace_policy());
  EXPECT_NE(std::string::npos, text.find("extends: default\n")) << text;
  EXPECT_NE(std::string::npos, text.find("network:\n  allow:\n    - kept.oishell-test.invalid:80\n")) << text;

  // The next session, without a terminal: the rule allows the name (the relay tries it: it does not resolve, 502,
  // or 504 when no resolver answers); without the rule it would be refused (403, nobody to ask).
  {
    ScriptedServer server(json::array({tool("python", kFetch), say("Done.")}));
    RunResult r = run_interpreter(options(server));
    EXPECT_EQ(0, r.exit_code) << r.out << r.err;
    EXPECT_NE(std::string::npos, (r.out + r.err).find(".oishell/policy.yaml (this workspace's")) << r.out << r.err;
    std::string fed = last_tool_output(server.requests().at(1)["body"]);
    EXPECT_NE(std::string::npos, fed.find("status 50")) << fed;
    EXPECT_EQ(std::string::npos, fed.find("status 403")) << fed;
  }

  // Changed behind the agent's back (code in the sandbox can write the workspace): not used, and said why; the
  // destination is refused again.
  std::ofstream(workspace_policy(), std::ios::app) << "    - planted.oishell-test.invalid:80\n";
  {
    ScriptedServer server(json::array({tool("python", kFetch), say("Done.")}));
    RunResult r = run_interpreter(options(server));
    EXPECT_EQ(0, r.exit_code) << r.out << r.err;
    EXPECT_NE(std::string::npos, (r.out + r.err).find("is not what interpreter wrote there")) << r.out << r.err;
    std::string fed = last_tool_output(server.requests().at(1)["body"]);
    EXPECT_NE(std::string::npos, fed.find("status 403")) << fed;
  }
}

class PolicyKeepPlan : public ::testing::Test {
 protected:
  KeepContext context(const std::string& policy) {
    KeepContext c;
    c.session_policy = policy;
    c.workspace = workspace_.path();
    c.config_dir = home_.path() + "/.config/oishell";
    c.state_dir = home_.path() + "/.local/state/oishell";
    return c;
  }
  std::string write(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
  }
  TempDir workspace_, home_, elsewhere_;
};

TEST_F(PolicyKeepPlan, AProfileGetsAWorkspacePolicyThatExtendsIt) {
  auto plan = plan_keep(context("strict"), "api.example:443");
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_TRUE(plan->workspace_policy);
  EXPECT_FALSE(plan->before.has_value());
  EXPECT_NE(std::string::npos, plan->after.find("extends: strict\nnetwork:\n  allow:\n    - api.example:443\n"));
  ASSERT_TRUE(carry_out(context("strict"), *plan).is_ok());
  auto trusted = trusted_workspace_policy(context(""));
  ASSERT_TRUE(trusted.is_ok()) << trusted.status().message();
  ASSERT_TRUE(trusted->has_value());
  // A second rule goes into the same list; the same rule again changes nothing.
  auto second = plan_keep(context(**trusted), "b.example:80");
  ASSERT_TRUE(second.is_ok()) << second.status().message();
  EXPECT_NE(std::string::npos, second->after.find("    - api.example:443\n    - b.example:80\n")) << second->after;
  auto again = plan_keep(context(**trusted), "api.example:443");
  ASSERT_TRUE(again.is_ok());
  EXPECT_TRUE(again->unchanged());
}

TEST_F(PolicyKeepPlan, AFileOutsideTheWorkspaceAndConfigIsNeverWritten) {
  std::string outside = write(elsewhere_.path() + "/team.yaml", "version: 1\nnetwork:\n  allow: []\n");
  auto plan = plan_keep(context(outside), "api.example:443");
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  EXPECT_EQ(workspace_.path() + "/.oishell/policy.yaml", plan->path);  // the workspace policy, extending it
  EXPECT_NE(std::string::npos, plan->after.find("extends: " + outside + "\n")) << plan->after;
  // The neighbour: a file in the config directory is edited in place, its `allow: []` made a list.
  std::string config = write(home_.path() + "/.config/oishell/mine.yaml",
                             "version: 1\n# mine\nnetwork:\n  mode: proxy\n  allow: []\n  on_unlisted: ask\n");
  auto in_place = plan_keep(context(config), "api.example:443");
  ASSERT_TRUE(in_place.is_ok()) << in_place.status().message();
  EXPECT_EQ(config, in_place->path);
  EXPECT_EQ("version: 1\n# mine\nnetwork:\n  mode: proxy\n  allow:\n    - api.example:443\n  on_unlisted: ask\n",
            in_place->after);
  // A flow-style list it does not edit: refused, with the YAML to add by hand.
  std::string flow = write(home_.path() + "/.config/oishell/flow.yaml", "version: 1\nnetwork:\n  allow: [a.example]\n");
  auto refused = plan_keep(context(flow), "api.example:443");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(std::string::npos, refused.status().message().find("add it yourself")) << refused.status().message();
}

}  // namespace
}  // namespace oishell::agent::test
