// Harness profiles' pieces (agent/config/harness.h, agent/config/harness_yaml.h): the built-ins' tools, argument checks, what a
// call becomes in the sandbox (arguments as data; argv quoted for sh), and a profile's own harness in YAML with its
// errors.
#include <gtest/gtest.h>

#include "agent/config/harness.h"
#include "agent/config/harness_yaml.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

TEST(Harness, BuiltInsHaveTheirAgentsToolNames) {
  auto names = [](const Harness& h) {
    std::vector<std::string> out;
    for (const auto& t : h.tools) out.push_back(t.name);
    return out;
  };
  EXPECT_EQ((std::vector<std::string>{"Bash", "Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "LS", "TodoWrite"}),
            names(*builtin_harness("claude-code")));
  EXPECT_EQ((std::vector<std::string>{"bash", "str_replace_editor", "submit"}), names(*builtin_harness("swe-agent")));
  EXPECT_EQ((std::vector<std::string>{"shell", "apply_patch", "update_plan"}), names(*builtin_harness("codex")));
  for (const auto& name : builtin_harness_names()) {
    EXPECT_FALSE(builtin_harness(name)->execute_tool) << name;
    EXPECT_FALSE(builtin_harness(name)->prompt.empty()) << name;
  }
  EXPECT_FALSE(builtin_harness("cursor").has_value());
}

TEST(Harness, ArgumentsAreCheckedAgainstTheSchema) {
  Harness h = *builtin_harness("claude-code");
  const HarnessTool& edit = *h.find("Edit");
  EXPECT_EQ("", harness_arguments_problem(edit, {{"file_path", "a"}, {"old_string", "x"}, {"new_string", "y"}}));
  EXPECT_EQ("`new_string` is required", harness_arguments_problem(edit, {{"file_path", "a"}, {"old_string", "x"}}));
  EXPECT_EQ("`file_path` must be of type string",
            harness_arguments_problem(edit, {{"file_path", 1}, {"old_string", "x"}, {"new_string", "y"}}));
  EXPECT_EQ("`replace_all` must be of type boolean",
            harness_arguments_problem(edit, {{"file_path", "a"}, {"old_string", "x"}, {"new_string", "y"},
                                             {"replace_all", "yes"}}));
  EXPECT_EQ("the arguments must be a JSON object", harness_arguments_problem(edit, json::array()));
  Harness swe = *builtin_harness("swe-agent");
  const HarnessTool& editor = *swe.find("str_replace_editor");
  EXPECT_EQ("`command` must be one of [\"view\",\"create\",\"str_replace\",\"insert\",\"undo_edit\"]",
            harness_arguments_problem(editor, {{"command", "rm"}, {"path", "x"}}));
  Harness codex = *builtin_harness("codex");
  const HarnessTool& shell = *codex.find("shell");
  EXPECT_EQ("`command` must not be empty", harness_arguments_problem(shell, {{"command", json::array()}}));
  EXPECT_EQ("`command` must be an array of strings", harness_arguments_problem(shell, {{"command", {"ls", 1}}}));
}

TEST(Harness, ACallBecomesAShellCommandOrAPythonCallWithItsArgumentsAsData) {
  Harness codex = *builtin_harness("codex");
  const HarnessTool& shell = *codex.find("shell");
  HarnessBlock block = harness_block(codex, shell, {{"command", {"echo", "it's $HOME", "a;b", "plain-word"}}});
  EXPECT_EQ("shell", block.language);
  EXPECT_EQ("echo 'it'\\''s $HOME' 'a;b' plain-word", block.code);
  block = harness_block(codex, shell, {{"command", {"ls"}}, {"workdir", "sub dir"}});
  EXPECT_EQ("(cd 'sub dir' && ls)", block.code);
  block = harness_block(codex, shell, {{"command", {"apply_patch", "*** Begin Patch\n*** End Patch"}}});
  EXPECT_EQ("python", block.language);
  EXPECT_TRUE(block.code.starts_with("__oishell_tool__('codex.apply_patch', __import__('json').loads(\"")) << block.code;

  Harness claude = *builtin_harness("claude-code");
  block = harness_block(claude, *claude.find("Bash"), {{"command", "ls -la | wc -l"}});
  EXPECT_EQ("shell", block.language);
  EXPECT_EQ("ls -la | wc -l", block.code);
  block = harness_block(claude, *claude.find("Edit"), {{"file_path", "x\")\nimport os"}, {"old_string", "a"},
                                                         {"new_string", "b"}});
  EXPECT_EQ("python", block.language);
  EXPECT_EQ(1, std::count(block.code.begin(), block.code.end(), '\n')) << block.code;  // one line: data, escaped
  EXPECT_EQ("Edit x\")\nimport os", describe_harness_call(*claude.find("Edit"), {{"file_path", "x\")\nimport os"}}));
}

Result<Harness> parse(const std::string& yaml) { return parse_harness(YAML::Load(yaml)["harness"]); }

TEST(HarnessYaml, AProfileNamesABuiltInOrDefinesItsOwn) {
  auto named = parse("harness: swe-agent");
  ASSERT_TRUE(named) << named.status().message();
  EXPECT_EQ("swe-agent", named->name);
  auto unknown = parse("harness: cursor");
  ASSERT_FALSE(unknown);
  EXPECT_EQ("harness: `cursor` is not a built-in harness (claude-code, swe-agent, codex); a mapping defines one",
            unknown.status().message());

  auto own = parse("harness:\n  extends: claude-code\n  name: mine\n  tools:\n"
                   "    - name: Bash\n      description: my bash\n"
                   "      parameters: {type: object, properties: {cmd: {type: string}}}\n      shell: cmd\n"
                   "    - name: count\n      parameters: {type: object, properties: {n: {type: integer}}}\n"
                   "      python: print(args['n'] + 1)\n");
  ASSERT_TRUE(own) << own.status().message();
  EXPECT_EQ("mine", own->name);
  EXPECT_FALSE(own->execute_tool);  // as its base
  ASSERT_NE(nullptr, own->find("Bash"));
  EXPECT_EQ("my bash", own->find("Bash")->description);  // replaced, in place
  EXPECT_EQ("cmd", own->find("Bash")->argument);
  EXPECT_EQ(json({"cmd"}), own->find("Bash")->parameters["required"]);
  EXPECT_EQ("integer", own->find("count")->parameters["properties"]["n"]["type"]);
  EXPECT_EQ(10u, own->tools.size());
  EXPECT_EQ("args = __import__('json').loads(\"{\\\"n\\\":4}\")\nprint(args['n'] + 1)",
            harness_block(*own, *own->find("count"), {{"n", 4}}).code);
}

TEST(HarnessYaml, MistakesAreErrorsThatNameTheField) {
  auto error = [](const std::string& yaml) {
    auto h = parse(yaml);
    return h ? std::string("(accepted)") : h.status().message();
  };
  EXPECT_EQ("harness: unknown key `tool` (expected extends, name, prompt, execute, tools)",
            error("harness:\n  tool: []\n"));
  EXPECT_EQ("harness.tools[0]: give exactly one of shell, argv and python (how the tool runs)",
            error("harness:\n  tools:\n    - name: a\n"));
  EXPECT_EQ("harness.tools[0].shell: `cmd` must be a parameter of type string",
            error("harness:\n  tools:\n    - name: a\n      shell: cmd\n"));
  EXPECT_EQ("harness.tools[0].name: `execute` is the agent's own tool",
            error("harness:\n  tools:\n    - name: execute\n      python: pass\n"));
  EXPECT_EQ("harness.tools[0].name: a name of letters, digits, _ and - (at most 64)",
            error("harness:\n  tools:\n    - name: 'a b'\n      python: pass\n"));
  EXPECT_EQ("harness.tools[0]: unknown key `run` (expected name, description, parameters, and one of shell, argv, "
            "python)",
            error("harness:\n  tools:\n    - name: a\n      run: x\n"));
  EXPECT_EQ("harness: no tools and no execute: the model could do nothing", error("harness:\n  execute: false\n"));
  EXPECT_EQ("harness.extends: expected the name of a built-in harness", error("harness:\n  extends: cursor\n"));
}

}  // namespace
}  // namespace oishell::agent
