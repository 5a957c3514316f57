// The completion generator (tools/completion): the scripts it renders for a small program, run by the shells
// themselves. bash is always there; zsh and fish are checked when installed and the test says so when they are not.
// The scripts of the real programs against their parsers: completion_check.sh.
#include "tools/completion/completion.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/unit/test_util.h"

namespace oishell::completion {
namespace {

// A program with verbs, shaped like `oishell`, with text that needs quoting in every shell.
Program sample() {
  Program p;
  p.name = "demo";
  p.generator = "demo completion";
  p.aliases = {"dm"};
  p.options = {{{"--help", "-h"}, Value::none, "", "list the commands", {}}, {{"--version"}, Value::none, "", "", {}}};
  p.commands = {
      {"go",
       "run a command [confined]",
       {{{"--net"}, Value::choice, "MODE", "the network: none or proxy", {"none", "proxy"}},
        {{"--ro"}, Value::file, "PATH", "a path it's allowed to read \\ [read-only]", {}, true},
        {{"--env"}, Value::text, "K=V", "a variable: set inside", {}, true},
        {{"--quiet", "-q"}, Value::none, "", "say less", {}}},
       {Value::command, "command", {}, true}},
      {"shell", "print the script", {}, {Value::choice, "shell", {"bash", "zsh", "fish"}, false}},
  };
  return p;
}

// Runs `command` with /bin/sh; its standard output.
std::string run(const std::string& command) {
  std::string out;
  FILE* f = ::popen(command.c_str(), "r");
  if (!f) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  ::pclose(f);
  return out;
}

bool installed(const char* shell) { return run(std::string("command -v ") + shell + " >/dev/null && echo yes") == "yes\n"; }

// `text` in single quotes for /bin/sh.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// What the bash completion function _demo offers for `words` (the last one is the word being completed), as bash
// would split the command line (at `=` too).
std::string bash_offers(const std::string& script, const std::vector<std::string>& words) {
  std::string command = "bash -c 'source \"$0\"; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _demo; "
                        "for w in \"${COMPREPLY[@]}\"; do printf \"%s \" \"$w\"; done' " + quoted(script);
  for (const auto& w : words) command += " " + quoted(w);
  return run(command);
}

TEST(CompletionTest, NamesShellsAndFindsOptionsByAnyName) {
  EXPECT_EQ(Shell::bash, shell_named("bash"));
  EXPECT_EQ(Shell::fish, shell_named("fish"));
  EXPECT_FALSE(shell_named("ksh"));
  const Program program = sample();
  const auto& go = program.commands[0].options;
  ASSERT_NE(nullptr, find_option(go, "-q"));
  EXPECT_EQ("--quiet", find_option(go, "-q")->names.front());
  EXPECT_EQ(nullptr, find_option(go, "--nett"));
}

TEST(CompletionTest, BashOffersVerbsOptionsValuesAndTheCommand) {
  testing::TempDir dir;
  const std::string script = dir.write("demo.bash", render(sample(), Shell::bash));
  EXPECT_EQ("0\n", run("bash -n " + script + " && echo $?"));
  EXPECT_EQ("go ", bash_offers(script, {"demo", "g"}));
  EXPECT_EQ("--help -h --version ", bash_offers(script, {"demo", "-"}));
  EXPECT_EQ("--net --ro --env --quiet -q --help -h ", bash_offers(script, {"demo", "go", "-"}));
  EXPECT_EQ("none proxy ", bash_offers(script, {"demo", "go", "--net", ""}));
  // --net=p: bash splits the word at `=`
  EXPECT_EQ("proxy ", bash_offers(script, {"demo", "go", "--net", "=", "p"}));
  // a value with `=` in it (K=V) is one word of the command line, not the start of the command
  EXPECT_EQ("--quiet ", bash_offers(script, {"demo", "go", "--env", "A", "=", "1", "--qu"}));
  // after `--`, and at the first operand: a command name
  EXPECT_NE(std::string::npos, (" " + bash_offers(script, {"demo", "go", "--", "bas"})).find(" bash "));
  EXPECT_NE(std::string::npos, (" " + bash_offers(script, {"demo", "go", "bas"})).find(" bash "));
  EXPECT_EQ("fish ", bash_offers(script, {"demo", "shell", "f"}));
  EXPECT_EQ("", bash_offers(script, {"demo", "go", "--env", ""}));  // free text: nothing offered
  EXPECT_EQ("", bash_offers(script, {"demo", "nosuchverb", "-"}));
  EXPECT_EQ("complete -F _demo demo\ncomplete -F _demo dm\n",
            run("bash -c 'source \"$0\"; complete -p demo dm' " + script));
}

TEST(CompletionTest, ZshParsesTheFunctionAndDeclaresEveryName) {
  const std::string script = render(sample(), Shell::zsh);
  EXPECT_EQ(0u, script.find("#compdef demo dm\n"));
  EXPECT_NE(std::string::npos, script.find("'*--ro=[a path it'\\''s allowed to read \\\\ \\[read-only\\]]:path:_files'"))
      << script;
  if (!installed("zsh")) GTEST_SKIP() << "zsh is not installed: the zsh script is not parsed";
  testing::TempDir dir;
  EXPECT_EQ("0\n", run("zsh -n " + dir.write("_demo", script) + " && echo $?"));
}

TEST(CompletionTest, FishOffersOptionsWithTheirDescriptions) {
  const std::string script = render(sample(), Shell::fish);
  EXPECT_NE(std::string::npos, script.find("complete -c dm -w demo\n"));
  if (!installed("fish")) GTEST_SKIP() << "fish is not installed: the fish script is not run";
  testing::TempDir dir;
  const std::string file = dir.write("demo.fish", script);
  EXPECT_EQ("0\n", run("fish -n " + file + " && echo $?"));
  EXPECT_EQ("go\trun a command [confined]\n", run("fish -c 'source $argv[1]; complete -C \"demo g\"' " + file));
  EXPECT_EQ("--ro\ta path it's allowed to read \\ [read-only]\n",
            run("fish -c 'source $argv[1]; complete -C \"demo go --r\"' " + file));
  EXPECT_EQ("none\tthe network: none or proxy\nproxy\tthe network: none or proxy\n",
            run("fish -c 'source $argv[1]; complete -C \"demo go --net \"' " + file));
}

}  // namespace
}  // namespace oishell::completion
