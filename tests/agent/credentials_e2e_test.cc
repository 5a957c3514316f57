// Issue 16, the agent's part, end to end: a profile whose `policy:` declares a credential for a host. The real
// sandbox starts with it; the model is told the host and the credential's name and variable, `%policy` shows the
// same, and neither they nor the code's output ever carry the secret (the sandbox holds a placeholder).
#include <dirent.h>

#include <gtest/gtest.h>

#include <fstream>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

constexpr const char* kCredentialsModelKey = "sk-oishell-creds-MODELKEY-3141";
constexpr const char* kSecret = "ghp_e2e-credential-SECRET-2718";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t entries(const std::string& dir) {
  size_t n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) n += std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..";
    ::closedir(d);
  }
  return n;
}

TEST(CredentialsE2e, AProfileDeclaresACredentialTheModelAndPolicyNameItNeverTheSecret) {
  TempDir workspace, home, tmp;
  const std::string profile = home.path() + "/github.yaml";
  std::ofstream(profile) << "llm:\n  model: scripted-model\npolicy:\n  network:\n    allow:\n"
                            "      - host: api.github.com\n        ports: [443]\n        tls: terminate\n"
                            "        methods: [GET, HEAD]\n        paths: [\"/repos/**\", /user]\n"
                            "        credentials:\n"
                            "          - {name: github, env: GITHUB_TOKEN, scheme: Bearer, from_env: OISHELL_E2E_GH}\n";
  ScriptedServer server(json::array({tool("shell", "echo \"token=$GITHUB_TOKEN\"; env | grep -c OISHELL_E2E_GH"),
                                     say("Used the token.")}));
  RunOptions o;
  o.args = {"--profile", profile, "--api_base", server.base(), "--plain"};
  o.env = {{"OPENAI_API_KEY", kCredentialsModelKey}, {"OISHELL_E2E_GH", kSecret}, {"TMPDIR", tmp.path()}};
  o.cwd = workspace.path();
  o.home = home.path();
  o.stdin_data = "%policy\nlist my repositories\n";
  RunResult r = run_interpreter(o);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;

  // %policy: the host, what it may be sent, the credential by name and variable.
  EXPECT_TRUE(has(r.out, "openshell sandbox, the policy in profile " + profile)) << r.out;
  EXPECT_TRUE(has(r.out, "api.github.com:443 (TLS terminated; GET, HEAD on /repos/**, /user; credential `github` in "
                         "$GITHUB_TOKEN"))
      << r.out;
  // The system prompt says the same, and what the variable holds.
  ASSERT_EQ(2u, server.requests().size()) << r.out << r.err;
  std::string prompt = conversation_text(server.requests()[0]["body"]);
  EXPECT_TRUE(has(prompt, "credential `github` in $GITHUB_TOKEN")) << prompt;
  EXPECT_TRUE(has(prompt, "as `Authorization: Bearer $GITHUB_TOKEN`")) << prompt;
  EXPECT_TRUE(has(prompt, "holds a placeholder")) << prompt;
  // Inside, the variable holds the placeholder; oishell's variable with the secret is not there at all.
  std::string seen = last_tool_output(server.requests()[1]["body"]);
  EXPECT_TRUE(has(seen, "token=oishell-cred-github-")) << seen;
  EXPECT_TRUE(has(seen, "\n0")) << seen;  // grep -c OISHELL_E2E_GH
  // Nowhere the secret: not the prompt, not the model's requests at all, not the terminal.
  for (const auto& request : server.requests()) EXPECT_FALSE(has(request.dump(), kSecret));
  EXPECT_FALSE(has(r.out, kSecret)) << r.out;
  EXPECT_FALSE(has(r.err, kSecret)) << r.err;
  // The private policy file went with the session.
  EXPECT_EQ(0u, entries(tmp.path())) << "left in " << tmp.path();
}

// A profile that writes the secret itself is refused before anything starts, without repeating it.
TEST(CredentialsE2e, AProfileWithTheSecretInItIsRefused) {
  TempDir workspace, home, tmp;
  const std::string profile = home.path() + "/bad.yaml";
  std::ofstream(profile) << "llm:\n  model: scripted-model\npolicy:\n  network:\n    allow:\n"
                            "      - host: api.github.com\n        tls: terminate\n        credentials:\n"
                            "          - {name: github, env: GITHUB_TOKEN, token: " << kSecret << "}\n";
  ScriptedServer server(json::array({say("never asked")}));
  RunOptions o;
  o.args = {"--profile", profile, "--api_base", server.base(), "--plain", "hello"};
  o.env = {{"OPENAI_API_KEY", kCredentialsModelKey}, {"TMPDIR", tmp.path()}};
  o.cwd = workspace.path();
  o.home = home.path();
  RunResult r = run_interpreter(o);
  EXPECT_NE(0, r.exit_code);
  std::string all = r.out + r.err;
  EXPECT_TRUE(has(all, profile + ":9:")) << all;
  EXPECT_TRUE(has(all, "a profile never holds a secret")) << all;
  EXPECT_FALSE(has(all, kSecret)) << all;
  EXPECT_EQ(0u, server.requests().size());
  EXPECT_EQ(0u, entries(tmp.path()));
}

// oishell refuses the policy the profile's mapping became: its complaint names the private file's line, and the
// file's text follows (the file itself is gone when the session ends).
TEST(CredentialsE2e, AnInvalidPolicyInTheProfileIsShownAsTheSandboxGotIt) {
  TempDir workspace, home, tmp;
  const std::string profile = home.path() + "/bad.yaml";
  std::ofstream(profile) << "llm:\n  model: scripted-model\npolicy:\n  network:\n    allow:\n"
                            "      - host: api.github.com\n        methods: [GET]\n";
  ScriptedServer server(json::array({say("never asked")}));
  RunOptions o;
  o.args = {"--profile", profile, "--api_base", server.base(), "--plain"};
  o.env = {{"OPENAI_API_KEY", kCredentialsModelKey}, {"TMPDIR", tmp.path()}};
  o.cwd = workspace.path();
  o.home = home.path();
  o.stdin_data = "%policy\n";
  RunResult r = run_interpreter(o);
  std::string all = r.out + r.err;
  EXPECT_TRUE(has(all, "profile-policy.yaml:4:16: network.allow[0].methods: `methods` needs `tls: terminate`")) << all;
  EXPECT_TRUE(has(all, "profile-policy.yaml, the policy in profile " + profile + " as given to the sandbox:")) << all;
  EXPECT_TRUE(has(all, "   4        methods: [GET]\n")) << all;
  EXPECT_FALSE(has(all, tmp.path())) << all;  // the private path, which no longer exists, is not named
  EXPECT_EQ(0u, entries(tmp.path()));
}

}  // namespace
}  // namespace oishell::agent::test
