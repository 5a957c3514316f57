// Wire formats and provider selection, without a server.
#include <gtest/gtest.h>

#include "agent/llm/anthropic_client.h"
#include "agent/llm/convert.h"
#include "agent/llm/openai_client.h"
#include "agent/llm/provider.h"
#include "agent/core/code_fence.h"
#include "agent/core/partial_json.h"
#include "agent/core/stream_splitter.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

using test::env_of;

using nlohmann::json;

TEST(Provider, ChosenFromTheModelName) {
  LlmSettings s;
  ASSERT_TRUE(resolve_provider({"claude-sonnet-4-5"}, env_of({{"ANTHROPIC_API_KEY", "ak"}}), &s).is_ok());
  EXPECT_EQ(Provider::anthropic, s.provider);
  EXPECT_EQ("ak", s.api_key);
  EXPECT_EQ("ANTHROPIC_API_KEY", s.key_source);
  ASSERT_TRUE(resolve_provider({"anthropic/claude-x", "", "http://127.0.0.1:5"}, env_of({}), &s).is_ok());
  EXPECT_EQ(Provider::anthropic, s.provider);
  EXPECT_EQ("claude-x", s.model);
  EXPECT_EQ("http://127.0.0.1:5", s.api_base);
  ASSERT_TRUE(resolve_provider({"ollama/llama3.1"}, env_of({}), &s).is_ok());
  EXPECT_EQ(Provider::ollama, s.provider);
  EXPECT_EQ("llama3.1", s.model);
  EXPECT_EQ("http://localhost:11434/v1", s.api_base);
  ASSERT_TRUE(resolve_provider({"gpt-4o"}, env_of({{"OPENAI_API_KEY", "ok"}}), &s).is_ok());
  EXPECT_EQ(Provider::openai, s.provider);
  EXPECT_EQ("ok", s.api_key);
  ASSERT_TRUE(resolve_provider({"claude-like", "openai"}, env_of({}), &s).is_ok());
  EXPECT_EQ(Provider::openai, s.provider);  // --provider wins
  EXPECT_FALSE(resolve_provider({"x", "acme"}, env_of({}), &s).is_ok());
}

TEST(Provider, EndpointJoin) {
  EXPECT_EQ("http://h/v1/chat/completions", join_endpoint("http://h/v1/", "/chat/completions"));
  EXPECT_EQ("http://h/v1/chat/completions", join_endpoint("http://h/v1/chat/completions", "/chat/completions"));
}

TEST(Convert, OpenAiToolCallsPairedWithOutputs) {
  std::vector<Message> m = {Message::user("go"), Message::assistant("plan"), Message::code("python", "1", "c1"),
                            Message::console("out", "c1"), Message::code("shell", "ls"),  // no answer
                            Message::user("next")};
  json j = to_openai_messages("sys", m, true);
  ASSERT_EQ(7u, j.size()) << j.dump(1);
  EXPECT_EQ("system", j[0]["role"]);
  EXPECT_EQ("plan", j[2]["content"]);
  EXPECT_EQ("c1", j[2]["tool_calls"][0]["id"]);
  EXPECT_EQ("tool", j[3]["role"]);
  EXPECT_EQ("out", j[3]["content"]);
  std::string generated = j[4]["tool_calls"][0]["id"];
  EXPECT_EQ("tool", j[5]["role"]);
  EXPECT_EQ(generated, j[5]["tool_call_id"]);  // synthesised answer for the unanswered call
  EXPECT_EQ("next", j[6]["content"]);
  // Without tools, code is a fenced block and output a user message.
  j = to_openai_messages("sys", m, false);
  EXPECT_NE(std::string::npos, j[2]["content"].get<std::string>().find("```python\n1\n```"));
  EXPECT_EQ("user", j[3]["role"]);
}

TEST(Convert, AnthropicAlternatesAndPairs) {
  std::vector<Message> m = {Message::user("go"), Message::code("python", "1", "t1"), Message::console("out", "t1"),
                            Message::assistant("done")};
  json j = to_anthropic_messages(m, true);
  ASSERT_EQ(4u, j.size()) << j.dump(1);
  EXPECT_EQ("user", j[0]["role"]);
  EXPECT_EQ("tool_use", j[1]["content"][0]["type"]);
  EXPECT_EQ("tool_result", j[2]["content"][0]["type"]);
  EXPECT_EQ("t1", j[2]["content"][0]["tool_use_id"]);
  EXPECT_EQ("assistant", j[3]["role"]);
  // A history that starts with the assistant (after trimming) still starts with a user turn.
  j = to_anthropic_messages({Message::assistant("hi")}, true);
  EXPECT_EQ("user", j[0]["role"]);
}

class Collect final : public StreamSink {
 public:
  void on_text(std::string_view d) override { text += d; }
  void on_tool_call(size_t, const ToolCall&) override { ++calls; }
  void on_retry(const std::string&, long) override {}
  std::string text;
  int calls = 0;
};

TEST(WireFormat, OpenAiChunks) {
  LlmResponse r;
  Collect c;
  ASSERT_TRUE(apply_openai_chunk(R"J({"choices":[{"delta":{"content":"Hel"}}]})J", &r, c).is_ok());
  ASSERT_TRUE(apply_openai_chunk(R"J({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"execute","arguments":"{\"a"}}]}}]})J", &r, c).is_ok());
  ASSERT_TRUE(apply_openai_chunk(R"J({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\":1}"}}]}}]})J", &r, c).is_ok());
  EXPECT_FALSE(r.complete);
  ASSERT_TRUE(apply_openai_chunk(R"J({"choices":[{"delta":{},"finish_reason":"tool_calls"}]})J", &r, c).is_ok());
  EXPECT_TRUE(r.complete);
  EXPECT_EQ("Hel", r.text);
  ASSERT_EQ(1u, r.tool_calls.size());
  EXPECT_EQ("{\"a\":1}", r.tool_calls[0].arguments);
  EXPECT_FALSE(apply_openai_chunk(R"J({"error":{"message":"boom"}})J", &r, c).is_ok());
  EXPECT_TRUE(apply_openai_chunk("not json", &r, c).is_ok());  // tolerated
}

TEST(WireFormat, AnthropicEvents) {
  LlmResponse r;
  Collect c;
  std::vector<int> map;
  ASSERT_TRUE(apply_anthropic_event("content_block_start", R"J({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})J", &r, &map, c).is_ok());
  ASSERT_TRUE(apply_anthropic_event("content_block_delta", R"J({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}})J", &r, &map, c).is_ok());
  ASSERT_TRUE(apply_anthropic_event("content_block_start", R"J({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"tu","name":"execute"}})J", &r, &map, c).is_ok());
  ASSERT_TRUE(apply_anthropic_event("content_block_delta", R"J({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}})J", &r, &map, c).is_ok());
  EXPECT_FALSE(r.complete);
  ASSERT_TRUE(apply_anthropic_event("message_stop", R"J({"type":"message_stop"})J", &r, &map, c).is_ok());
  EXPECT_TRUE(r.complete);
  EXPECT_EQ("Hi", r.text);
  ASSERT_EQ(1u, r.tool_calls.size());
  EXPECT_EQ("tu", r.tool_calls[0].id);
  EXPECT_EQ("{}", r.tool_calls[0].arguments);
  EXPECT_FALSE(apply_anthropic_event("error", R"J({"type":"error","error":{"message":"overloaded"}})J", &r, &map, c).is_ok());
}

TEST(PartialJson, StringFieldAsFarAsItGoes) {
  EXPECT_EQ(std::nullopt, partial_json_string(R"J({"language": "py)J", "code"));
  EXPECT_EQ("", *partial_json_string(R"J({"language": "python", "code": ")J", "code"));
  EXPECT_EQ("print(1)\nx", *partial_json_string(R"J({"language": "python", "code": "print(1)\nx)J", "code"));
  EXPECT_EQ("a", *partial_json_string(R"J({"code": "a\)J", "code"));  // a cut escape is left out
  EXPECT_EQ("é", *partial_json_string(R"J({"code": "\u00e9"})J", "code"));
}

TEST(PartialJson, LenientParse) {
  EXPECT_EQ(json({{"a", "x\ny"}}), *lenient_json_parse("{\"a\": \"x\ny\"}"));
  EXPECT_EQ(json({{"a", {1, 2}}}), *lenient_json_parse("{\"a\": [1, 2"));
  EXPECT_EQ(json({{"a", 1}}), *lenient_json_parse("{\"a\": 1} trailing words"));
  EXPECT_FALSE(lenient_json_parse("no json here"));
}

TEST(PartialJson, CallArgumentsReadOnceAndRefusedWhenReadersCouldDisagree) {
  CallArguments a = parse_call_arguments(R"J({"language": "python", "code": "print(1)"})J");
  ASSERT_TRUE(a.value);
  EXPECT_TRUE(a.problem.empty());
  EXPECT_FALSE(a.repaired);
  EXPECT_EQ("print(1)", (*a.value)["code"]);
  a = parse_call_arguments("{\"code\": \"a = 1\nprint(a)");  // broken: raw newline, no closing brace
  ASSERT_TRUE(a.value);
  EXPECT_TRUE(a.repaired);
  EXPECT_EQ("a = 1\nprint(a)", (*a.value)["code"]);
  // Repeats at any depth, and after unescaping.
  EXPECT_EQ("the key `code` appears twice in one object of the arguments",
            parse_call_arguments(R"J({"code": "a", "code": "b"})J").problem);
  EXPECT_EQ("the key `x` appears twice in one object of the arguments",
            parse_call_arguments(R"J({"code": "a", "m": {"x": 1, "x": 2}})J").problem);
  EXPECT_EQ("the key `code` appears twice in one object of the arguments",
            parse_call_arguments(R"J({"code": "a", "\u0063ode": "b"})J").problem);
  EXPECT_EQ("the key `code` appears twice in one object of the arguments",  // broken and repeated
            parse_call_arguments("{\"code\": \"a\", \"code\": \"b\nc").problem);
  EXPECT_EQ("the key `code` is written with escape sequences; write each key plainly",
            parse_call_arguments(R"J({"\u0063ode": "b"})J").problem);
  EXPECT_EQ("more text follows the JSON object of the arguments",
            parse_call_arguments(R"J({"code": "a"} {"code": "b"})J").problem);
  // Escapes in values are fine; a stray closing brace after the object too; prose is not JSON (no value, no problem).
  a = parse_call_arguments(R"J({"code": "print(\"\u00e9\")"}})J");
  EXPECT_TRUE(a.value && a.problem.empty()) << a.problem;
  a = parse_call_arguments(R"J(x = {"code": "evil"})J");
  EXPECT_FALSE(a.value);
  EXPECT_TRUE(a.problem.empty());
}

TEST(CodeFence, OneRuleForTheScreenAndTheRunner) {
  EXPECT_EQ("python", opening_fence("```python"));
  EXPECT_EQ("python", opening_fence("   ```python {x}\r"));
  EXPECT_EQ("", opening_fence("```"));
  EXPECT_EQ(std::nullopt, opening_fence("\t```python"));  // a tab: an indented line, text
  EXPECT_EQ(std::nullopt, opening_fence("    ```python"));
  EXPECT_TRUE(closing_fence("```"));
  EXPECT_TRUE(closing_fence("  ``` \r"));
  EXPECT_FALSE(closing_fence("\t```"));
  EXPECT_FALSE(closing_fence("```python"));
  EXPECT_TRUE(could_be_fence("   ``"));
  EXPECT_FALSE(could_be_fence("\t"));
  EXPECT_FALSE(could_be_fence("    "));
}

TEST(StreamSplitter, ATabIndentedFenceIsProseAsForTheRunner) {
  std::string prose, code;
  int begins = 0;
  StreamSplitter s({[&](std::string_view t) { prose += t; }, [&](const std::string&) { ++begins; },
                    [&](std::string_view c) { code += c; }, [] {}});
  s.feed("Note:\n\t```shell\n\trm -rf ./*\n\t```\n");
  s.finish();
  EXPECT_EQ(0, begins);
  EXPECT_EQ("Note:\n\t```shell\n\trm -rf ./*\n\t```\n", prose);
  // Inside a block, a tab-indented fence is code, not its end (the runner reads it so too).
  prose.clear();
  StreamSplitter t({[&](std::string_view x) { prose += x; }, [&](const std::string&) { ++begins; },
                    [&](std::string_view c) { code += c; }, [] {}});
  t.feed("```shell\nls\n\t```\nrm x\n```\n");
  t.finish();
  EXPECT_EQ(1, begins);
  EXPECT_EQ("ls\n\t```\nrm x", code);
}

TEST(StreamSplitter, CodeBlocksSeparatedFromProseAtAnyChunking) {
  std::string answer = "Plan:\n```python\nx = 1\nprint(x)\n```\nDone `ok`.";
  for (size_t n = 1; n <= answer.size(); ++n) {
    std::string prose, code, lang;
    int begins = 0, ends = 0;
    StreamSplitter s({[&](std::string_view t) { prose += t; }, [&](const std::string& l) { lang = l; ++begins; },
                      [&](std::string_view c) { code += c; }, [&] { ++ends; }});
    for (size_t i = 0; i < answer.size(); i += n) s.feed(answer.substr(i, n));
    s.finish();
    EXPECT_EQ("Plan:\nDone `ok`.", prose) << "chunk " << n;
    EXPECT_EQ("x = 1\nprint(x)", code) << "chunk " << n;
    EXPECT_EQ("python", lang);
    EXPECT_EQ(1, begins);
    EXPECT_EQ(1, ends);
  }
}

}  // namespace
}  // namespace oishell::agent
