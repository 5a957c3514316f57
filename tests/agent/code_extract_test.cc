#include "agent/core/code_extract.h"

#include <gtest/gtest.h>

namespace oishell::agent {
namespace {

const std::vector<std::string> kLangs = {"python", "shell", "javascript"};

LlmResponse text(std::string t) {
  LlmResponse r;
  r.text = std::move(t);
  r.complete = true;
  return r;
}

LlmResponse tool(std::string name, std::string args, std::string pre = "") {
  LlmResponse r;
  r.text = std::move(pre);
  r.tool_calls.push_back({"call_1", std::move(name), std::move(args)});
  r.complete = true;
  return r;
}

std::vector<const AnswerPart*> code_parts(const Extraction& e) {
  std::vector<const AnswerPart*> out;
  for (const auto& p : e.parts) {
    if (p.message.type == "code") out.push_back(&p);
  }
  return out;
}

TEST(CodeExtract, ToolCall) {
  auto e = extract_answer(tool("execute", R"J({"language": "python", "code": "print(1)"})J", "Plan: print."), kLangs);
  ASSERT_EQ(2u, e.parts.size());
  EXPECT_EQ("Plan: print.", e.parts[0].message.content);
  EXPECT_EQ("python", e.parts[1].message.format);
  EXPECT_EQ("print(1)", e.parts[1].message.content);
  EXPECT_EQ("call_1", e.parts[1].message.call_id);
  EXPECT_TRUE(e.parts[1].problem.empty());
}

TEST(CodeExtract, OpenInterpretersOtherLanguagesHaveTheirAliases) {
  EXPECT_EQ("ruby", canonical_language("rb"));
  EXPECT_EQ("r", canonical_language("R"));
  EXPECT_EQ("r", canonical_language("Rscript"));
  EXPECT_EQ("java", canonical_language("jshell"));
  EXPECT_EQ("html", canonical_language("HTM"));
  auto e = extract_answer(text("```R\nx <- 1\n```"), {"python", "r"});
  ASSERT_EQ(1u, code_parts(e).size());
  EXPECT_EQ("r", code_parts(e)[0]->message.format);
  EXPECT_TRUE(code_parts(e)[0]->problem.empty()) << code_parts(e)[0]->problem;
}

TEST(CodeExtract, FencedBlockWithoutTagIsPython) {
  auto e = extract_answer(text("Let me look.\n```\nimport os\nprint(os.getcwd())\n```\nDone."), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_EQ("python", code[0]->message.format);
  EXPECT_EQ("import os\nprint(os.getcwd())", code[0]->message.content);
  EXPECT_EQ("Let me look.", e.parts.front().message.content);
  EXPECT_EQ("Done.", e.parts.back().message.content);
}

TEST(CodeExtract, ShellAliasesAndDisplayOnlyBlocks) {
  auto e = extract_answer(text("```bash\nls\n```\n```text\nnot code\n```"), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_EQ("shell", code[0]->message.format);
  EXPECT_NE(std::string::npos, e.parts.back().message.content.find("not code"));
}

TEST(CodeExtract, ToolCallPrintedAsJsonText) {
  auto e = extract_answer(text(R"J({"language": "python", "code": "x = 2\nprint(x)"})J"), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_EQ("x = 2\nprint(x)", code[0]->message.content);
  EXPECT_FALSE(e.repairs.empty());
  // Also the {"name": "execute", "arguments": "..."} shape, inside a ```json fence.
  e = extract_answer(
      text("```json\n{\"name\": \"execute\", \"arguments\": \"{\\\"language\\\": \\\"shell\\\", \\\"code\\\": \\\"ls\\\"}\"}\n```"),
      kLangs);
  code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_EQ("shell", code[0]->message.format);
  EXPECT_EQ("ls", code[0]->message.content);
}

TEST(CodeExtract, FunctionsExecuteWrittenAsText) {
  auto e = extract_answer(text(R"J(functions.execute({"language": "python", "code": "print(3)"}))J"), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_EQ("print(3)", code[0]->message.content);
  e = extract_answer(text("functions.execute(language=\"shell\", code='''echo hi\nls''')"), kLangs);
  code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_EQ("shell", code[0]->message.format);
  EXPECT_EQ("echo hi\nls", code[0]->message.content);
}

TEST(CodeExtract, FunctionsExecuteBesideAnythingElseIsProse) {
  // Repaired only when it is the whole answer: beside prose (shown as prose) it does not run.
  auto e = extract_answer(text(R"J(I will run it: functions.execute({"language": "python", "code": "print(3)"}))J"), kLangs);
  EXPECT_TRUE(code_parts(e).empty());
  // Two calls in one text: neither is the whole answer.
  e = extract_answer(text("functions.execute(language=\"shell\", code=\"ls\")\nfunctions.execute(language=\"shell\", "
                          "code=\"rm x\")"),
                     kLangs);
  EXPECT_TRUE(code_parts(e).empty());
  // A repeated argument is refused and said.
  e = extract_answer(text("functions.execute(code=\"ls\", code=\"rm x\")"), kLangs);
  ASSERT_EQ(1u, code_parts(e).size());
  EXPECT_NE(std::string::npos, code_parts(e)[0]->problem.find("the argument `code` appears twice"));
}

TEST(CodeExtract, AWrappedCallIsReadButNotOneWithTwoWrappersOrAStrayCode) {
  // {"name": "execute", "arguments": {...}} inside the arguments: still repaired.
  auto e = extract_answer(tool("execute", R"J({"name": "execute", "arguments": {"language": "shell", "code": "ls"}})J"), kLangs);
  ASSERT_EQ(1u, code_parts(e).size());
  EXPECT_EQ("ls", code_parts(e)[0]->message.content);
  EXPECT_TRUE(code_parts(e)[0]->problem.empty());
  e = extract_answer(tool("execute", R"J({"arguments": {"code": "ls"}, "input": {"code": "rm x"}})J"), kLangs);
  EXPECT_NE(std::string::npos, code_parts(e)[0]->problem.find("it has both `arguments` and `input`"));
  e = extract_answer(tool("execute", R"J({"code": "ls", "options": [{"command": "rm x"}]})J"), kLangs);
  EXPECT_NE(std::string::npos, code_parts(e)[0]->problem.find("its `options` holds another `command`"));
  // The {"function": {"name", "arguments"}} shape (two wrappers deep) is read; a third wrapper is refused.
  e = extract_answer(tool("execute", R"J({"function": {"name": "execute", "arguments": "{\"code\": \"ls\"}"}})J"), kLangs);
  EXPECT_EQ("ls", code_parts(e)[0]->message.content);
  EXPECT_TRUE(code_parts(e)[0]->problem.empty()) << code_parts(e)[0]->problem;
  e = extract_answer(tool("execute", R"J({"input": {"function": {"arguments": {"code": "ls"}}}})J"), kLangs);
  EXPECT_NE(std::string::npos, code_parts(e)[0]->problem.find("more than twice"));
  // A value nested past the search's depth is refused, not searched (nor a crash: the depth is the model's).
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  e = extract_answer(tool("execute", "{\"code\": \"ls\", \"x\": " + deep + "}"), kLangs);
  EXPECT_NE(std::string::npos, code_parts(e)[0]->problem.find("its `x` holds values nested more than 32 levels deep"))
      << code_parts(e)[0]->problem;
  // Other keys that hold no code are no problem.
  e = extract_answer(tool("execute", R"J({"language": "shell", "code": "ls", "timeout": 5, "why": {"goal": "list"}})J"), kLangs);
  EXPECT_TRUE(code_parts(e)[0]->problem.empty()) << code_parts(e)[0]->problem;
}

TEST(CodeExtract, StrayBacktickAndFenceInsideToolCode) {
  auto e = extract_answer(tool("execute", R"J({"language": "python", "code": "`print(4)"})J"), kLangs);
  EXPECT_EQ("print(4)", code_parts(e)[0]->message.content);
  e = extract_answer(tool("execute", R"J({"language": "python", "code": "```python\nprint(5)\n```"})J"), kLangs);
  EXPECT_EQ("print(5)", code_parts(e)[0]->message.content);
}

TEST(CodeExtract, EmptyBlockIsNotRunAndTheModelIsTold) {
  auto e = extract_answer(tool("execute", R"J({"language": "python", "code": "   "})J"), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_NE(std::string::npos, code[0]->problem.find("empty"));
  e = extract_answer(text("```python\n```"), kLangs);
  ASSERT_EQ(1u, code_parts(e).size());
  EXPECT_FALSE(code_parts(e)[0]->problem.empty());
}

TEST(CodeExtract, UnknownLanguageIsToldBackWithTheList) {
  auto e = extract_answer(tool("execute", R"J({"language": "cobol", "code": "DISPLAY 'HI'."})J"), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_NE(std::string::npos, code[0]->problem.find("Unknown language `cobol`"));
  EXPECT_NE(std::string::npos, code[0]->problem.find("python, shell, javascript"));
  // The runnable neighbour: a known language has no problem.
  EXPECT_TRUE(code_parts(extract_answer(text("```js\nconsole.log(1)\n```"), kLangs))[0]->problem.empty());
}

TEST(CodeExtract, AKnownLanguageNotInstalledIsSaidSo) {
  // ruby is not among kLangs: as on a machine without it (tools/dev run installs no language but python3).
  auto e = extract_answer(tool("execute", R"J({"language": "rb", "code": "puts 1"})J"), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_EQ("`ruby` is not installed on this machine (its interpreter is not on the sandbox's PATH): nothing was run. "
            "The languages available are: python, shell, javascript.",
            code[0]->problem);
}

TEST(CodeExtract, BrokenJsonArgumentsRepaired) {
  // Raw newline inside the string and the closing brace missing.
  auto e = extract_answer(tool("execute", "{\"language\": \"python\", \"code\": \"a = 1\nprint(a)"), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_EQ("a = 1\nprint(a)", code[0]->message.content);
  EXPECT_TRUE(code[0]->problem.empty());
}

TEST(CodeExtract, ToolNamedPythonWithRawCode) {
  auto e = extract_answer(tool("python", "print('raw')"), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_EQ("python", code[0]->message.format);
  EXPECT_EQ("print('raw')", code[0]->message.content);
}

TEST(CodeExtract, UnreadableToolCallIsToldBack) {
  auto e = extract_answer(tool("execute", "{\"language\": \"python\"}"), kLangs);
  auto code = code_parts(e);
  ASSERT_EQ(1u, code.size());
  EXPECT_FALSE(code[0]->problem.empty());
}

TEST(CodeExtract, PlainProseHasNoCode) {
  auto e = extract_answer(text("All done: the file has 3 lines."), kLangs);
  EXPECT_TRUE(code_parts(e).empty());
  ASSERT_EQ(1u, e.parts.size());
}

}  // namespace
}  // namespace oishell::agent
