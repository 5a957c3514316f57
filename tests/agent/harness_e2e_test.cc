// End to end, harness profiles (agent/config/harness.h): for each built-in harness a scripted model that speaks that
// harness's tool format fixes a bug in a small project and runs its test, and the result is checked on disk and in
// what the model was told; a harness of the profile's own (python and shell tools in YAML) too. The tools run in the
// sandbox (`oishell supervise`), as every block does.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

json call(const std::string& name, const json& arguments, const std::string& format = "openai") {
  return {{"format", format},
          {"tool_calls", json::array({{{"name", name}, {"arguments", arguments.dump()}}})}};
}

std::vector<std::string> tool_names(const json& body) {
  std::vector<std::string> names;
  for (const auto& t : body["tools"]) {
    names.push_back(t.contains("function") ? t["function"]["name"].get<std::string>() : t["name"].get<std::string>());
  }
  return names;
}

class HarnessE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(workspace_.path() + "/calc.py") << "def add(a, b):\n    return a - b\n";
    std::ofstream(workspace_.path() + "/test_calc.py")
        << "from calc import add\nassert add(2, 3) == 5, 'add(2, 3) != 5'\nprint('tests ok')\n";
  }
  RunResult run(ScriptedServer& server, const std::string& profile, const std::string& model) {
    RunOptions o;
    o.args = {"--profile", profile, "--model", model, "--api_base", server.base(), "--plain", "Fix the failing test."};
    o.env = {{"OPENAI_API_KEY", "sk-harness"}, {"ANTHROPIC_API_KEY", "ak-harness"}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.timeout_ms = 90000;
    RunResult r = run_interpreter(o);
    EXPECT_FALSE(r.timed_out) << r.out << r.err;
    return r;
  }
  std::string calc() { return read_text(workspace_.path() + "/calc.py"); }
  TempDir workspace_, home_;
};

TEST_F(HarnessE2E, ClaudeCodeReadsEditsAndRunsTheTests) {
  ScriptedServer server(json::array({
      call("Read", {{"file_path", "calc.py"}}, "anthropic"),
      call("Edit", {{"file_path", "calc.py"}, {"old_string", "a"}, {"new_string", "x"}}, "anthropic"),  // not unique
      call("Edit", {{"file_path", "calc.py"}, {"old_string", "return a - b"}, {"new_string", "return a + b"}},
           "anthropic"),
      call("Bash", {{"command", "python3 test_calc.py"}, {"description", "run the tests"}}, "anthropic"),
      call("TodoWrite", {{"todos", {{{"content", "fix add"}, {"status", "completed"}}}}}, "anthropic"),
      call("Write", json::object(), "anthropic"),  // arguments missing: refused before anything runs
      json{{"format", "anthropic"}, {"text", "Fixed: add adds."}},
  }));
  RunResult r = run(server, "claude-code", "claude-sonnet-4-5");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_EQ("def add(a, b):\n    return a + b\n", calc());
  auto requests = server.requests();
  ASSERT_EQ(7u, requests.size()) << r.out << r.err;
  EXPECT_EQ((std::vector<std::string>{"Bash", "Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS",
                                      "TodoWrite"}),
            tool_names(requests[0]["body"]));
  EXPECT_NE(std::string::npos, requests[0]["body"]["system"].get<std::string>().find("Claude Code's tools"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[1]["body"]).find("     2\t    return a - b"))
      << last_tool_output(requests[1]["body"]);
  EXPECT_NE(std::string::npos, last_tool_output(requests[2]["body"]).find("Found 3 matches of the string to replace"))
      << last_tool_output(requests[2]["body"]);
  EXPECT_NE(std::string::npos, last_tool_output(requests[3]["body"]).find("calc.py has been updated"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[4]["body"]).find("tests ok"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[5]["body"]).find("[x] fix add"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[6]["body"]).find("`file_path` is required"))
      << last_tool_output(requests[6]["body"]);
  // The conversation sent back keeps each call in the API's own form (tool_use with the harness's names).
  const json& assistant = requests[6]["body"]["messages"][1];
  EXPECT_EQ("tool_use", assistant["content"][0]["type"]);
  EXPECT_EQ("Read", assistant["content"][0]["name"]);
  EXPECT_EQ("calc.py", assistant["content"][0]["input"]["file_path"]);
  EXPECT_NE(std::string::npos, r.out.find("python3 test_calc.py")) << r.out;  // the user saw the command
}

TEST_F(HarnessE2E, SweAgentViewsReplacesTestsAndSubmits) {
  ScriptedServer server(json::array({
      call("str_replace_editor", {{"command", "view"}, {"path", "calc.py"}}),
      call("str_replace_editor",
           {{"command", "str_replace"}, {"path", "calc.py"}, {"old_str", "a - b"}, {"new_str", "a + b"}}),
      call("bash", {{"command", "python3 test_calc.py"}}),
      call("str_replace_editor", {{"command", "undo_edit"}, {"path", "calc.py"}}),
      call("str_replace_editor", {{"command", "insert"}, {"path", "calc.py"}, {"insert_line", 0},
                                  {"new_str", "# fixed"}}),
      call("submit", json::object()),
      json{{"text", "Submitted."}},
  }));
  RunResult r = run(server, "swe-agent", "gpt-4o");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  // undo_edit took the replacement back; the insertion stands.
  EXPECT_EQ("# fixed\ndef add(a, b):\n    return a - b\n", calc());
  auto requests = server.requests();
  ASSERT_EQ(7u, requests.size()) << r.out << r.err;
  EXPECT_EQ((std::vector<std::string>{"bash", "str_replace_editor", "submit"}), tool_names(requests[0]["body"]));
  EXPECT_NE(std::string::npos, last_tool_output(requests[1]["body"]).find("Here's the result of running `cat -n`"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[2]["body"]).find("has been edited"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[3]["body"]).find("tests ok"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[4]["body"]).find("undone successfully"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[6]["body"]).find("Submitted."));
}

TEST_F(HarnessE2E, CodexPatchesAndRunsArgvCommands) {
  const std::string patch =
      "*** Begin Patch\n*** Update File: calc.py\n@@ def add(a, b):\n-    return a - b\n+    return a + b\n"
      "*** End Patch";
  ScriptedServer server(json::array({
      call("shell", {{"command", {"bash", "-lc", "cat calc.py"}}}),
      call("apply_patch", {{"input", patch}}),
      call("shell", {{"command", {"python3", "test_calc.py"}}, {"workdir", "."}}),
      call("shell", {{"command", {"apply_patch", "*** Begin Patch\n*** Add File: notes.txt\n+it's fixed\n"
                                                 "*** End Patch"}}}),
      call("apply_patch", {{"input", "*** Begin Patch\n*** Update File: calc.py\n-no such line\n+x\n*** End Patch"}}),
      json{{"text", "Done."}},
  }));
  RunResult r = run(server, "codex", "gpt-5-codex");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_EQ("def add(a, b):\n    return a + b\n", calc());
  EXPECT_EQ("it's fixed\n", read_text(workspace_.path() + "/notes.txt"));
  auto requests = server.requests();
  ASSERT_EQ(6u, requests.size()) << r.out << r.err;
  EXPECT_EQ((std::vector<std::string>{"shell", "apply_patch", "update_plan"}), tool_names(requests[0]["body"]));
  EXPECT_NE(std::string::npos, last_tool_output(requests[1]["body"]).find("return a - b"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[2]["body"]).find("M calc.py"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[3]["body"]).find("tests ok"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[4]["body"]).find("A notes.txt"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[5]["body"]).find("hunk 1 does not match"))
      << last_tool_output(requests[5]["body"]);
  EXPECT_EQ("def add(a, b):\n    return a + b\n", calc());  // the failed patch changed nothing
}

TEST_F(HarnessE2E, AProfileDefinesItsOwnTools) {
  const std::string profile = home_.path() + "/mine.yaml";
  std::ofstream(profile) << "harness:\n"
                            "  name: mine\n"
                            "  prompt: You count words.\n"
                            "  execute: false\n"
                            "  tools:\n"
                            "    - name: word_count\n"
                            "      description: Counts the words of a file\n"
                            "      parameters: {type: object, properties: {path: {type: string}}, required: [path]}\n"
                            "      python: |\n"
                            "        print(len(open(args['path']).read().split()), 'words')\n"
                            "    - name: run\n"
                            "      description: Runs a shell command\n"
                            "      parameters: {type: object, properties: {cmd: {type: string}}}\n"
                            "      shell: cmd\n"
                            "version: 0.2.5\n";
  ScriptedServer server(json::array({
      call("word_count", {{"path", "calc.py"}}),
      call("word_count", json::object()),
      call("run", {{"cmd", "echo ran > out.txt"}}),
      call("execute", {{"language", "python"}, {"code", "print(1)"}}),  // not one of this harness's tools
      json{{"text", "Counted."}},
  }));
  RunResult r = run(server, profile, "gpt-4o");
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto requests = server.requests();
  ASSERT_EQ(5u, requests.size()) << r.out << r.err;
  EXPECT_EQ((std::vector<std::string>{"word_count", "run"}), tool_names(requests[0]["body"]));
  EXPECT_NE(std::string::npos, conversation_text(requests[0]["body"]).find("You count words."));
  EXPECT_NE(std::string::npos, last_tool_output(requests[1]["body"]).find("7 words"))
      << last_tool_output(requests[1]["body"]);
  EXPECT_NE(std::string::npos, last_tool_output(requests[2]["body"]).find("`path` is required"));
  EXPECT_EQ("ran\n", read_text(workspace_.path() + "/out.txt"));
  EXPECT_NE(std::string::npos, last_tool_output(requests[4]["body"]).find("There is no tool `execute` in this "
                                                                          "session; the tools are `word_count`, `run`"))
      << last_tool_output(requests[4]["body"]);
}

}  // namespace
}  // namespace oishell::agent::test
