// What `oishell mcp` answers (runtime/mcp/results.h, tools.h, server.h's version negotiation): run results with
// their status, output bounds and images; refusals named with the rule and the layer from a compiled policy; the
// tools' schemas and argument checks.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "policy/compile.h"
#include "runtime/mcp/results.h"
#include "runtime/mcp/server.h"
#include "runtime/mcp/tools.h"
#include "tests/mcp/scratch_dir.h"

namespace oishell::mcp {
namespace {

using nlohmann::json;

TEST(McpVersions, TheAskedVersionWhenServedElseTheNewest) {
  EXPECT_EQ("2025-11-25", negotiate_protocol_version("2025-11-25"));
  EXPECT_EQ("2025-06-18", negotiate_protocol_version("2025-06-18"));
  EXPECT_EQ("2024-11-05", negotiate_protocol_version("2024-11-05"));
  EXPECT_EQ("2025-11-25", negotiate_protocol_version("2099-01-01"));
  EXPECT_EQ("2025-11-25", negotiate_protocol_version(""));
}

TEST(McpTools, EveryToolHasSchemasWhoseRequiredKeysExist) {
  json tools = tool_list({"python", "shell"}, "denied.");
  ASSERT_EQ(9u, tools.size());
  for (const auto& t : tools) {
    for (const char* schema : {"inputSchema", "outputSchema"}) {
      ASSERT_TRUE(t.contains(schema)) << t.value("name", "") << " " << schema;
      EXPECT_EQ("object", t[schema].value("type", ""));
      for (const auto& key : t[schema].value("required", json::array()))
        EXPECT_TRUE(t[schema]["properties"].contains(key.get<std::string>())) << t.value("name", "") << " " << key;
    }
  }
  EXPECT_NE(std::string::npos, tools[0].value("description", "").find("python, shell"));
}

TEST(McpTools, ArgumentsAreCheckedAgainstTheSchemas) {
  EXPECT_EQ("", check_arguments("run_code", {{"language", "py"}, {"code", "1"}}, {}));
  EXPECT_EQ("missing `code`", check_arguments("run_code", {{"language", "py"}}, {}));
  EXPECT_EQ("`timeout` has the wrong type", check_arguments("run_code", {{"language", "py"}, {"code", ""}, {"timeout", 0}}, {}));
  EXPECT_EQ("give either `argv` or `command`", check_arguments("run_command", json::object(), {}));
  EXPECT_EQ("give either `argv` or `command`", check_arguments("run_command", {{"argv", {"a"}}, {"command", "b"}}, {}));
  EXPECT_EQ("`argv` must be a non-empty array of strings", check_arguments("run_command", {{"argv", json::array()}}, {}));
  EXPECT_EQ("", check_arguments("run_command", {{"argv", {"ls", "-l"}}, {"cwd", "/tmp"}}, {}));
  EXPECT_EQ("`old_text` must not be empty",
            check_arguments("edit_file", {{"path", "a"}, {"old_text", ""}, {"new_text", "b"}}, {}));
  EXPECT_EQ("`depth` has the wrong type", check_arguments("list_files", {{"depth", 9}}, {}));
  EXPECT_EQ("`length` has the wrong type", check_arguments("read_file", {{"path", "a"}, {"length", 0}}, {}));
}

TEST(McpResults, ARunResultCarriesStatusOutputImagesAndDenials) {
  RunOutput run;
  append_output(run, "stdout", "42\n");
  json ok = run_result(run, {{"status", "ok"}, {"exit_code", 0}, {"duration_ms", 3}});
  EXPECT_FALSE(ok.contains("isError"));
  EXPECT_EQ("42\n", ok["content"][0].value("text", ""));
  EXPECT_EQ("ok", ok["structuredContent"].value("status", ""));

  RunOutput failed;
  append_output(failed, "stderr", "boom\n");
  failed.images.push_back({{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}});
  failed.denials.push_back("network: x:80 refused by the network relay (rule: on_unlisted: deny)");
  json error = run_result(failed, {{"status", "timeout"}, {"exit_code", 137}, {"duration_ms", 5}, {"reason", "wall"}});
  EXPECT_TRUE(error.value("isError", false));
  const std::string text = error["content"][0].value("text", "");
  EXPECT_NE(std::string::npos, text.find("boom\n[timeout, exit code 137: wall]")) << text;
  EXPECT_NE(std::string::npos, text.find("[sandbox] network: x:80")) << text;
  EXPECT_EQ("image", error["content"][1].value("type", ""));
  EXPECT_EQ(1, error["structuredContent"].value("images", 0));

  RunOutput nothing;
  EXPECT_EQ("(no output)", run_result(nothing, {{"status", "ok"}})["content"][0].value("text", ""));
}

TEST(McpResults, OutputIsBoundedAndInvalidUtf8Replaced) {
  RunOutput run;
  append_output(run, "stdout", std::string(kMaxResultStream - 1, 'a'));
  append_output(run, "stdout", "bc");
  EXPECT_TRUE(run.truncated);
  EXPECT_EQ(kMaxResultStream, run.out.size());
  RunOutput bad;
  append_output(bad, "stdout", "a\xff" "b");
  json r = run_result(bad, {{"status", "ok"}});
  EXPECT_EQ("a\xEF\xBF\xBD" "b", r["structuredContent"].value("stdout", ""));
}

TEST(McpResults, RuntimeEventsAreSentencesNamingTheRule) {
  EXPECT_EQ("system call ptrace refused with EPERM by seccomp (deny set `tracing`)",
            describe_event({{"event", "denied"}, {"syscall", "ptrace"}, {"set", "tracing"}, {"errno", "EPERM"}}));
  EXPECT_EQ("network: example.org:443 refused by the network relay (rule: on_unlisted: deny)",
            describe_event({{"event", "net.denied"}, {"protocol", "http-connect"}, {"host", "example.org"},
                            {"port", 443}, {"rule", "on_unlisted: deny"}}));
  EXPECT_EQ("", describe_event({{"event", "net.allowed"}}));
}

class McpRefusals : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_ + "/secret") << "s";
    PolicySource source{"", "default"};
    PolicyOverrides overrides;
    overrides.workspace = dir_;
    overrides.hide = {dir_ + "/secret"};
    CompileContext context = CompileContext::from_process();
    context.cwd = dir_;
    auto spec = compile_policy(source, overrides, context);
    ASSERT_TRUE(spec.is_ok()) << spec.status().message();
    spec_ = std::move(spec.value());
  }
  test::ScratchDir scratch_;
  const std::string dir_ = scratch_.path();
  SandboxSpec spec_;
};

TEST_F(McpRefusals, AFileToolsFailureNamesTheRuleAndTheLayer) {
  const std::string hidden = describe_fs_error(
      {{"call", "open"}, {"path", dir_ + "/secret"}, {"errno", "ENOENT"}, {"message", "No such file or directory"}},
      spec_, false);
  EXPECT_NE(std::string::npos, hidden.find("open " + dir_ + "/secret: ENOENT")) << hidden;
  EXPECT_NE(std::string::npos, hidden.find("filesystem.hide")) << hidden;
  EXPECT_NE(std::string::npos, hidden.find("layer: the mount namespace")) << hidden;
  const std::string system = describe_fs_error(
      {{"call", "open"}, {"path", "/usr/x"}, {"errno", "EROFS"}, {"message", "Read-only file system"}}, spec_, true);
  EXPECT_NE(std::string::npos, system.find("read-only")) << system;
  EXPECT_NE(std::string::npos, system.find("layer: a read-only bind mount")) << system;
  // The neighbour: a workspace file the policy allows; its error is the file's own.
  const std::string own = describe_fs_error(
      {{"call", "open"}, {"path", dir_ + "/missing"}, {"errno", "ENOENT"}, {"message", "No such file or directory"}},
      spec_, true);
  EXPECT_NE(std::string::npos, own.find("policy allows this path")) << own;
}

TEST_F(McpRefusals, PathsAreTheSandboxsViewFromTheWorkspace) {
  EXPECT_EQ(spec_.cwd, sandbox_path("", spec_));
  EXPECT_EQ(spec_.cwd + "/a/b", sandbox_path("a/./b", spec_));
  EXPECT_EQ("/etc/passwd", sandbox_path("/etc/../etc//passwd", spec_));
  EXPECT_EQ("/", sandbox_path("/../..", spec_));
}

}  // namespace
}  // namespace oishell::mcp
