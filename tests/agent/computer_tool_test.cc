// The `computer` tool's pieces (agent/sandbox/computer_tool.h): the model's screen, action checks, the python an action
// becomes (the action is data, never source), the words the user sees, the tools each provider gets, and the wire
// form of a call and its screenshot.
#include <gtest/gtest.h>

#include <cstdio>

#include "agent/core/code_extract.h"
#include "agent/sandbox/computer_tool.h"
#include "agent/llm/convert.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

const ComputerScreen kXga{1024, 768};

TEST(ComputerTool, TheModelSeesTheDisplayOrAScaledDownCopy) {
  EXPECT_EQ((ComputerScreen{1024, 768}), model_screen(1024, 768));
  EXPECT_EQ((ComputerScreen{1280, 800}), model_screen(1280, 800));
  EXPECT_EQ((ComputerScreen{1280, 720}), model_screen(1920, 1080));
  EXPECT_EQ((ComputerScreen{1066, 800}), model_screen(2000, 1500));
  EXPECT_EQ((ComputerScreen{1280, 800}), *parse_screen_size("1280x800"));
  for (const char* bad : {"", "1280", "x800", "1280x", "0x800", "01280x800", "63x800", "8193x800", "12a0x800",
                          "1280x800x24", "-1x800"}) {
    EXPECT_FALSE(parse_screen_size(bad).has_value()) << bad;
  }
}

TEST(ComputerTool, ActionsAreCheckedBeforeAnythingRuns) {
  EXPECT_EQ("", computer_action_problem({{"action", "screenshot"}}, kXga));
  EXPECT_EQ("", computer_action_problem({{"action", "left_click"}, {"coordinate", {1023, 767}}}, kXga));
  EXPECT_EQ("", computer_action_problem({{"action", "left_click"}}, kXga));  // where the pointer is
  EXPECT_EQ("", computer_action_problem({{"action", "type"}, {"text", "héllo ✓"}}, kXga));
  EXPECT_EQ("", computer_action_problem({{"action", "scroll"}, {"coordinate", {5, 5}}, {"scroll_direction", "up"},
                                         {"scroll_amount", 3}}, kXga));
  EXPECT_EQ("", computer_action_problem({{"action", "left_click_drag"}, {"start_coordinate", {1, 1}},
                                         {"coordinate", {9, 9}}}, kXga));
  EXPECT_EQ("left_click: `coordinate` is off the screen (1024x768)",
            computer_action_problem({{"action", "left_click"}, {"coordinate", {1024, 10}}}, kXga));
  EXPECT_EQ("mouse_move: `coordinate` must be [x, y]",
            computer_action_problem({{"action", "mouse_move"}, {"coordinate", "10,10"}}, kXga));
  EXPECT_EQ("mouse_move: `coordinate` is required", computer_action_problem({{"action", "mouse_move"}}, kXga));
  EXPECT_EQ("type: `text` is required", computer_action_problem({{"action", "type"}}, kXga));
  EXPECT_EQ("key: `text` must be a string", computer_action_problem({{"action", "key"}, {"text", 5}}, kXga));
  EXPECT_EQ("type: `text` is longer than 10000 characters",
            computer_action_problem({{"action", "type"}, {"text", std::string(10001, 'a')}}, kXga));
  EXPECT_EQ("wait: `duration` must be a number of seconds, 0..100",
            computer_action_problem({{"action", "wait"}, {"duration", 1000}}, kXga));
  EXPECT_EQ("scroll: `scroll_direction` must be up, down, left or right",
            computer_action_problem({{"action", "scroll"}, {"scroll_direction", "sideways"}}, kXga));
  EXPECT_EQ("unknown computer action `format_disk`", computer_action_problem({{"action", "format_disk"}}, kXga));
  EXPECT_EQ("`action` is required (a string)", computer_action_problem(json::object(), kXga));
  EXPECT_EQ("the computer action must be a JSON object", computer_action_problem(json::array(), kXga));
}

TEST(ComputerTool, AnActionIsDataInThePythonBlockNeverSource) {
  json action = {{"action", "type"}, {"text", "'))\nimport os; os.system('x') #\"\\"}};
  std::string python = computer_action_python(action, kXga);
  EXPECT_TRUE(python.starts_with("computer._tool(__import__('json').loads(\"")) << python;
  EXPECT_TRUE(python.ends_with("), (1024, 768))\n")) << python;
  EXPECT_EQ(1u, std::count(python.begin(), python.end(), '\n'));  // one line: the text's newline is escaped
  // Run by python with a stand-in `computer`: the text arrives as it was, and nothing else runs.
  const std::string program =
      "class C:\n    def _tool(self, a, s): print(__import__('json').dumps(a['text']), s)\ncomputer = C()\n" + python;
  std::string command = "python3 -c '";
  for (char c : program) command += c == '\'' ? std::string("'\\''") : std::string(1, c);
  command += "'";
  FILE* p = ::popen(command.c_str(), "r");
  ASSERT_NE(nullptr, p);
  char buf[512] = {};
  size_t n = std::fread(buf, 1, sizeof buf - 1, p);
  EXPECT_EQ(0, ::pclose(p));
  EXPECT_EQ(json(action["text"]).dump() + " (1024, 768)\n", std::string(buf, n));
}

TEST(ComputerTool, TheUserSeesActionsInWords) {
  EXPECT_EQ("left_click (300, 120)", describe_computer_action({{"action", "left_click"}, {"coordinate", {300, 120}}}));
  EXPECT_EQ("type \"hi\\n\"", describe_computer_action({{"action", "type"}, {"text", "hi\n"}}));
  EXPECT_EQ("key ctrl+s", describe_computer_action({{"action", "key"}, {"text", "ctrl+s"}}));
  EXPECT_EQ("left_click_drag from (1, 2) to (3, 4)",
            describe_computer_action({{"action", "left_click_drag"}, {"start_coordinate", {1, 2}},
                                      {"coordinate", {3, 4}}}));
  EXPECT_EQ("scroll (5, 6) down", describe_computer_action({{"action", "scroll"}, {"coordinate", {5, 6}},
                                                            {"scroll_direction", "down"}}));
  EXPECT_EQ("(unreadable)", describe_computer_action(json("left_click")));
}

TEST(ComputerTool, ACallBecomesAComputerBlockOnlyWhenTheToolIsOn) {
  LlmResponse response;
  response.tool_calls.push_back({"toolu_1", "computer", R"({"action": "left_click", "coordinate": [10, 20]})"});
  auto on = extract_answer(response, {"python"}, kXga);
  ASSERT_EQ(1u, on.parts.size());
  EXPECT_EQ("computer", on.parts[0].message.format);
  EXPECT_EQ("toolu_1", on.parts[0].message.call_id);
  EXPECT_EQ("", on.parts[0].problem);
  EXPECT_EQ(json::parse(R"({"action": "left_click", "coordinate": [10, 20]})"),
            json::parse(on.parts[0].message.content));
  auto off = extract_answer(response, {"python"});
  ASSERT_EQ(1u, off.parts.size());
  EXPECT_NE(std::string::npos, off.parts[0].problem.find("not available in this session")) << off.parts[0].problem;
  response.tool_calls[0].arguments = R"({"action": "left_click", "coordinate": [10, 2000]})";
  auto off_screen = extract_answer(response, {"python"}, kXga);
  EXPECT_EQ("The computer action was not carried out: left_click: `coordinate` is off the screen (1024x768).",
            off_screen.parts[0].problem);
}

TEST(ComputerTool, TheScreenshotGoesInsideTheCallsResultForAnthropic) {
  Message shot{"computer", "image", "base64.png", "iVBORw0KGgo=", "toolu_1"};
  std::vector<Message> messages = {Message::user("look"),
                                   Message::code("computer", R"({"action":"screenshot"})", "toolu_1"),
                                   Message::console("", "toolu_1"), shot};
  json anthropic = to_anthropic_messages(messages, true, true);
  ASSERT_EQ(3u, anthropic.size()) << anthropic.dump();
  const json& use = anthropic[1]["content"][0];
  EXPECT_EQ("tool_use", use["type"]);
  EXPECT_EQ("computer", use["name"]);
  EXPECT_EQ(json({{"action", "screenshot"}}), use["input"]);
  const json& result = anthropic[2]["content"][0];
  EXPECT_EQ("tool_result", result["type"]);
  ASSERT_EQ(1u, result["content"].size()) << result.dump();
  EXPECT_EQ("image", result["content"][0]["type"]);
  EXPECT_EQ("iVBORw0KGgo=", result["content"][0]["source"]["data"]);

  json openai = to_openai_messages("system", messages, true, true);
  ASSERT_EQ(5u, openai.size()) << openai.dump();
  EXPECT_EQ("computer", openai[2]["tool_calls"][0]["function"]["name"]);
  EXPECT_EQ(R"({"action":"screenshot"})", openai[2]["tool_calls"][0]["function"]["arguments"]);
  EXPECT_EQ("tool", openai[3]["role"]);
  EXPECT_EQ("user", openai[4]["role"]);
  EXPECT_EQ("image_url", openai[4]["content"].back()["type"]);
}

}  // namespace
}  // namespace oishell::agent
