// Python profiles: read in the sandbox (the real `oishell run`), never on the host; their settings checked like a
// YAML profile's; refused with the equivalent YAML when the sandbox cannot start.
#include "agent/config/profile_python.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include "agent/host/atomic_file.h"
#include "agent/config/config.h"
#include "agent/config/profile.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

using test::read_text;
using test::TempDir;

// Sets OISHELL_BIN for the test's duration (the profile reader finds `oishell` through it, as users may).
class ScopedOishellBin {
 public:
  explicit ScopedOishellBin(const std::string& path) {
    if (const char* old = std::getenv("OISHELL_BIN")) old_ = old;
    ::setenv("OISHELL_BIN", path.c_str(), 1);
  }
  ~ScopedOishellBin() {
    if (old_) ::setenv("OISHELL_BIN", old_->c_str(), 1);
    else ::unsetenv("OISHELL_BIN");
  }

 private:
  std::optional<std::string> old_;
};

class PythonProfileInSandbox : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    TempDir workspace, home;
    test::RunOptions o;
    o.program = test::oishell_bin();
    o.args = {"run", "--net", "none", "--", "/bin/true"};
    o.cwd = workspace.path();
    o.home = home.path();
    o.timeout_ms = 20000;
    auto r = test::run_interpreter(o);
    sandbox_works_ = r.exit_code == 0;
    if (!sandbox_works_) probe_error_ = "exit " + std::to_string(r.exit_code) + ": " + r.err;
  }
  void SetUp() override {
    ASSERT_TRUE(sandbox_works_) << "`oishell run` cannot build a sandbox here (" << probe_error_
                                << "): Python profiles cannot be read";
  }
  static bool sandbox_works_;
  static std::string probe_error_;
};
bool PythonProfileInSandbox::sandbox_works_ = false;
std::string PythonProfileInSandbox::probe_error_;

TEST_F(PythonProfileInSandbox, SettingsAreReadAndAppliedLikeAYamlProfiles) {
  ScopedOishellBin bin(test::oishell_bin());
  auto p = load_profile_file(test::profile_fixture("oi_style.py"));
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ("ollama/codestral", *p->model);
  EXPECT_EQ(7000, *p->context_window);
  EXPECT_EQ(1000, *p->max_tokens);
  EXPECT_FALSE(*p->supports_functions);
  EXPECT_FALSE(*p->auto_run);
  EXPECT_EQ(1234, *p->max_output);
  EXPECT_EQ((std::vector<std::string>{"Done.", "Impossible."}), *p->loop_breakers);
  EXPECT_EQ("You write code.\nKeep it short.", *p->system_message);
  ASSERT_TRUE(p->custom_instructions);
  EXPECT_EQ(0u, p->custom_instructions->rfind("Today is 20", 0)) << *p->custom_instructions;  // ran, f-string and all
  EXPECT_TRUE(p->custom_instructions->ends_with(". Be brief.")) << *p->custom_instructions;
  // computer.import_computer_api, computer.skills.path, and the calls: notes.
  ASSERT_EQ(3u, p->notes.size());
  EXPECT_NE(std::string::npos, p->notes[2].find("interpreter.llm.load(), interpreter.display_message()"))
      << p->notes[2];
  auto c = merge_config(CliOptions{}, &*p);
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->auto_run);
  EXPECT_EQ(1234, c->max_output);
}

TEST_F(PythonProfileInSandbox, KeysAreCheckedAsInYaml) {
  ScopedOishellBin bin(test::oishell_bin());
  TempDir dir;
  std::string file = dir.path() + "/typo.py";
  ASSERT_TRUE(write_file_atomic(file, "interpreter.llm.modle = 'x'\n", 0644).is_ok());
  auto p = load_profile_file(file);
  ASSERT_FALSE(p);
  EXPECT_NE(std::string::npos, p.status().message().find("unknown key `llm.modle`; did you mean `llm.model`?"))
      << p.status().message();
  ASSERT_TRUE(write_file_atomic(file, "interpreter.auto_run = True\nraise RuntimeError('boom')\n", 0644).is_ok());
  p = load_profile_file(file);
  ASSERT_FALSE(p);
  EXPECT_NE(std::string::npos, p.status().message().find("line 2: RuntimeError: boom")) << p.status().message();
}

TEST_F(PythonProfileInSandbox, TheProfileRunsConfinedNotOnTheHost) {
  ScopedOishellBin bin(test::oishell_bin());
  TempDir dir;
  std::string mark = dir.path() + "/written-by-the-profile";
  std::string file = dir.path() + "/escape.py";
  // A listener on the host's loopback: reachable from the host, not from the sandbox's own network namespace.
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(0, ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr));
  ASSERT_EQ(0, ::listen(listener, 4));
  ASSERT_EQ(0, ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len));
  std::string port = std::to_string(ntohs(addr.sin_port));
  std::string source =
      "import os, socket\n"
      "wrote = 'no'\n"
      "try:\n"
      "    open(" + std::string("'") + mark + "', 'w').write('x')\n"
      "    wrote = 'yes'\n"
      "except OSError:\n"
      "    pass\n"
      "try:\n"
      "    os.remove(__file__)\n"
      "except Exception:\n"
      "    pass\n"
      "net = 'no'\n"
      "try:\n"
      "    socket.create_connection(('127.0.0.1', " + port + "), timeout=2)\n"
      "    net = 'yes'\n"
      "except OSError:\n"
      "    pass\n"
      "interpreter.custom_instructions = 'wrote=' + wrote + ' net=' + net + ' key=' + "
      "os.environ.get('OPENAI_API_KEY', 'absent')\n";
  ASSERT_TRUE(write_file_atomic(file, source, 0644).is_ok());
  ::setenv("OPENAI_API_KEY", "sk-profile-test-secret", 1);
  auto p = load_profile_file(file);
  ::unsetenv("OPENAI_API_KEY");
  ::close(listener);
  ASSERT_TRUE(p) << p.status().message();
  // Without the sandbox: wrote=yes (the test's own directory, so the mark would exist), net=yes (the listener) and
  // the key would be there.
  EXPECT_EQ("wrote=no net=no key=absent", *p->custom_instructions);
  struct stat st {};
  EXPECT_EQ(-1, ::stat(mark.c_str(), &st));
  EXPECT_EQ(0, ::stat(file.c_str(), &st));  // the profile itself is untouched
}

TEST_F(PythonProfileInSandbox, TheInterpreterUsesAPythonProfile) {
  TempDir home, workspace;
  test::RunOptions o;
  o.args = {"-p", test::profile_fixture("oi_style.py"), "--plain", "--sandbox", "none"};
  o.cwd = workspace.path();
  o.home = home.path();
  o.env = {{"OISHELL_BIN", test::oishell_bin()}};
  o.stdin_data = "%info\n";
  o.timeout_ms = 30000;
  auto r = test::run_interpreter(o);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("max_output: 1234")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("auto_run: off")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("profile: " + test::profile_fixture("oi_style.py"))) << r.out;
}

TEST(PythonProfile, WithoutASandboxItIsRefusedWithTheYamlThatWouldDoTheSame) {
  ScopedOishellBin bin("/nonexistent/oishell");
  auto p = load_profile_file(test::profile_fixture("oi_style.py"));
  ASSERT_FALSE(p);
  const std::string& m = p.status().message();
  EXPECT_NE(std::string::npos, m.find("read only in the sandbox")) << m;
  auto yaml_at = m.find("llm.model: ollama/codestral");
  ASSERT_NE(std::string::npos, yaml_at) << m;
  // The YAML part loads through the same parser, to the same settings that could be read without running it.
  auto yaml = parse_profile(m.substr(yaml_at), "converted.yaml");
  ASSERT_TRUE(yaml) << yaml.status().message();
  EXPECT_EQ("ollama/codestral", *yaml->model);
  EXPECT_EQ(7000, *yaml->context_window);
  EXPECT_FALSE(*yaml->supports_functions);
  EXPECT_FALSE(*yaml->auto_run);
  EXPECT_EQ(1234, *yaml->max_output);
  EXPECT_EQ("You write code.\nKeep it short.", *yaml->system_message);
  EXPECT_FALSE(yaml->custom_instructions.has_value());  // an f-string: listed as not converted
  EXPECT_NE(std::string::npos, m.find("# not converted: line 25: interpreter.custom_instructions")) << m;
  EXPECT_NE(std::string::npos, m.find("# not converted: line 22: interpreter.loop_breakers")) << m;
  EXPECT_NE(std::string::npos, m.find("# not converted: line 26: interpreter.custom_instructions +=")) << m;
}

TEST(PythonProfile, TheRunnersReportIsReadStrictly) {
  auto p = profile_from_runner_output("noise\nOISHELL-PROFILE {\"settings\": {\"llm.model\": \"m\", \"auto_run\": "
                                      "true}, \"calls\": [\"llm.load\"], \"errors\": []}\n",
                                      "/p/x.py");
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_EQ("m", *p->model);
  EXPECT_TRUE(*p->auto_run);
  ASSERT_EQ(1u, p->notes.size());
  EXPECT_FALSE(profile_from_runner_output("no report at all\n", "/p/x.py"));
  EXPECT_FALSE(profile_from_runner_output("OISHELL-PROFILE {not json\n", "/p/x.py"));
  auto failed = profile_from_runner_output("OISHELL-PROFILE {\"settings\": {}, \"errors\": [\"line 3: NameError: x\"]}",
                                           "/p/x.py");
  ASSERT_FALSE(failed);
  EXPECT_EQ("/p/x.py: line 3: NameError: x", failed.status().message());
}

}  // namespace
}  // namespace oishell::agent
