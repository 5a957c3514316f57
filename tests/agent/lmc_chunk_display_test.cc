// The one LMC display in its two dialects: the same calls, and each field of LmcDialect seen where the two streams
// part (--json's JSON lines and OI's server's chunks; display_test.cc and server_protocol_test.cc test each whole).
#include "agent/terminal/lmc_chunk_display.h"

#include <gtest/gtest.h>

#include <vector>

namespace oishell::agent {
namespace {

using nlohmann::json;

std::vector<json> shown(LmcDialect dialect, const std::function<void(LmcChunkDisplay&)>& calls) {
  std::vector<json> chunks;
  LmcChunkDisplay display(dialect, [&chunks](const json& chunk) { chunks.push_back(chunk); });
  calls(display);
  return chunks;
}

TEST(LmcChunkDisplay, TheUsersMessageIsEchoedOnlyInJsonLines) {
  auto echo = [](LmcChunkDisplay& d) { d.user_message("hi"); };
  EXPECT_EQ(json({{{"role", "user"}, {"type", "message"}, {"start", true}},
                  {{"role", "user"}, {"type", "message"}, {"content", "hi"}},
                  {{"role", "user"}, {"type", "message"}, {"end", true}}}),
            json(shown(LmcDialect::json_lines(), echo)));
  EXPECT_TRUE(shown(LmcDialect::oi_server(), echo).empty());
}

TEST(LmcChunkDisplay, TheModelsTextIsEscapedOnlyInJsonLines) {
  auto prose = [](LmcChunkDisplay& d) {
    d.message_delta("a\x1b[2Jb");
    d.answer_end();
  };
  EXPECT_EQ("a\\x1b[2Jb", shown(LmcDialect::json_lines(), prose)[1]["content"]);
  EXPECT_EQ("a\x1b[2Jb", shown(LmcDialect::oi_server(), prose)[1]["content"]);
}

TEST(LmcChunkDisplay, AnImageIsFramedOnlyForTheServer) {
  auto image = [](LmcChunkDisplay& d) { d.image("png", "AAAA"); };
  EXPECT_EQ(json({{{"role", "computer"}, {"type", "image"}, {"format", "base64.png"}, {"content", "AAAA"}}}),
            json(shown(LmcDialect::json_lines(), image)));
  EXPECT_EQ(json({{{"role", "computer"}, {"type", "image"}, {"format", "base64.png"}, {"start", true}},
                  {{"role", "computer"}, {"type", "image"}, {"format", "base64.png"}, {"content", "AAAA"}},
                  {{"role", "computer"}, {"type", "image"}, {"format", "base64.png"}, {"end", true}}}),
            json(shown(LmcDialect::oi_server(), image)));
}

TEST(LmcChunkDisplay, ConsoleFramesCarryFormatAndStreamOnlyInJsonLines) {
  auto run = [](LmcChunkDisplay& d) {
    d.console_begin();
    d.console_output("stderr", "oops\n");
    d.console_end({{"status", "error"}, {"exit_code", 1}});
  };
  EXPECT_EQ(json({{{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"start", true}},
                  {{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"stream", "stderr"},
                   {"content", "oops\n"}},
                  {{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"end", true},
                   {"status", "error"}, {"exit_code", 1}}}),
            json(shown(LmcDialect::json_lines(), run)));
  EXPECT_EQ(json({{{"role", "computer"}, {"type", "console"}, {"start", true}},
                  {{"role", "computer"}, {"type", "console"}, {"format", "output"}, {"content", "oops\n"}},
                  {{"role", "computer"}, {"type", "console"}, {"end", true}, {"status", "error"}, {"exit_code", 1}}}),
            json(shown(LmcDialect::oi_server(), run)));
}

// A retry's warning while the model's message streams: the server ends the message first (its clients render one
// message at a time), --json leaves it open; an error is OI's server error only for the server.
TEST(LmcChunkDisplay, ANoticeEndsAnOpenMessageAndAnErrorIsTheServersOnlyForTheServer) {
  auto notices = [](LmcChunkDisplay& d) {
    d.message_delta("Hi");
    d.notice(NoticeLevel::warning, "retrying");
    d.notice(NoticeLevel::error, "boom");
  };
  const json message_start = {{"role", "assistant"}, {"type", "message"}, {"start", true}};
  const json message_content = {{"role", "assistant"}, {"type", "message"}, {"content", "Hi"}};
  const json warning = {{"role", "system"}, {"type", "notice"}, {"format", "warning"}, {"content", "retrying"}};
  EXPECT_EQ(json({message_start, message_content, warning,
                  {{"role", "system"}, {"type", "notice"}, {"format", "error"}, {"content", "boom"}}}),
            json(shown(LmcDialect::json_lines(), notices)));
  EXPECT_EQ(json({message_start, message_content, {{"role", "assistant"}, {"type", "message"}, {"end", true}}, warning,
                  {{"role", "server"}, {"type", "error"}, {"content", "boom"}}}),
            json(shown(LmcDialect::oi_server(), notices)));
}

}  // namespace
}  // namespace oishell::agent
