// What the user approves is what runs (issue 34, "Code shown is not the code that runs"): the real loop, its
// streaming display and the terminal renderer, with a model that streams scripted answers, a keyboard that reads
// the screen at each question, and a sandbox stand-in that records what it was asked to run. For each forged form
// (a second `code` nested, repeated or spelled with escapes; a `functions.execute(...)` in the prose beside a
// block; a fence indented with a tab; two calls in one answer) either the call is refused and the model told why,
// or the block on the screen right above the question is exactly the code that then runs.
#include <stdio.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <deque>

#include "agent/acp/acp_display.h"
#include "agent/acp/rpc_channel.h"
#include "agent/core/loop.h"
#include "agent/core/partial_json.h"
#include "agent/terminal/terminal_display.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

// Streams each scripted answer in small pieces, as an API does; then "Done." once the script ends.
class ScriptedLlm final : public LlmClient {
 public:
  explicit ScriptedLlm(std::deque<LlmResponse> script) : LlmClient(settings()), script_(std::move(script)) {}
  Result<LlmResponse> complete(const std::string&, const std::vector<Message>&, StreamSink& sink) override {
    LlmResponse r;
    r.complete = true;
    if (script_.empty()) {
      r.text = "Done.";
    } else {
      r = std::move(script_.front());
      script_.pop_front();
      r.complete = true;
    }
    for (size_t i = 0; i < r.text.size(); i += kPiece) sink.on_text(std::string_view(r.text).substr(i, kPiece));
    for (size_t c = 0; c < r.tool_calls.size(); ++c) {
      ToolCall so_far{r.tool_calls[c].id, r.tool_calls[c].name, ""};
      const std::string& args = r.tool_calls[c].arguments;
      for (size_t i = 0; i < args.size(); i += kPiece) {
        so_far.arguments += args.substr(i, kPiece);
        sink.on_tool_call(c, so_far);
      }
    }
    return r;
  }

 private:
  static constexpr size_t kPiece = 5;
  static LlmSettings settings() {
    LlmSettings s;
    s.model = "scripted";
    return s;
  }
  std::deque<LlmResponse> script_;
};

class RecordingExecutor final : public Executor {
 public:
  Status start() override { return Status::ok(); }
  Result<ExecResult> exec(const std::string& language, const std::string& code, ExecObserver&) override {
    ran.push_back({language, code});
    return ExecResult{};
  }
  Status reset(const std::string&) override { return Status::ok(); }
  std::vector<std::string> languages() const override { return {"python", "shell"}; }
  std::string policy_summary() const override { return ""; }
  std::string description() const override { return "recording stand-in"; }
  void shutdown() override {}
  std::vector<std::pair<std::string, std::string>> ran;  // language, code
};

// Answers "y" to every question and keeps what the screen showed when it was asked.
class ScreenReadingInput final : public UserInput {
 public:
  explicit ScreenReadingInput(std::function<std::string()> screen) : screen_(std::move(screen)) {}
  std::optional<std::string> read_message(const std::string&, bool*) override { return std::nullopt; }
  std::optional<std::string> ask(const std::string& question, bool*) override {
    screens.push_back(screen_() + question);
    return "y";
  }
  bool can_ask() const override { return true; }
  std::vector<std::string> screens;

 private:
  std::function<std::string()> screen_;
};

// The last code block on a plain screen (```lang / code / ```) before its end: {language, code}.
std::pair<std::string, std::string> last_block(const std::string& screen) {
  size_t close = screen.rfind("\n```\n");
  if (close == std::string::npos) return {};
  size_t open = screen.rfind("```", close);  // the opening fence (the closing one starts after `close`)
  if (open == std::string::npos) return {};
  size_t line_end = screen.find('\n', open);
  return {screen.substr(open + 3, line_end - open - 3), screen.substr(line_end + 1, close - line_end - 1)};
}

class CodeShown : public ::testing::Test {
 protected:
  // Runs one user message against the scripted answers; the terminal is plain (no colours): code blocks are ```.
  void respond(std::deque<LlmResponse> script) {
    screen_ = open_memstream(&screen_buf_, &screen_len_);
    ASSERT_NE(nullptr, screen_);
    display_ = std::make_unique<TerminalDisplay>(screen_, /*colour=*/false, /*spinner=*/false,
                                                 /*interactive=*/true, /*verbose=*/false);
    input_ = std::make_unique<ScreenReadingInput>([this] {
      std::fflush(screen_);
      return std::string(screen_buf_, screen_len_);
    });
    AgentParts parts;
    parts.config.auto_run = false;
    parts.llm = std::make_unique<ScriptedLlm>(std::move(script));
    parts.executor = &executor_;
    parts.display = display_.get();
    parts.input = input_.get();
    agent_ = std::make_unique<Agent>(std::move(parts));
    agent_->respond("go");
    std::fflush(screen_);
  }
  ~CodeShown() override {
    agent_.reset();
    display_.reset();
    if (screen_) std::fclose(screen_);
    std::free(screen_buf_);
  }
  std::string screen() const { return std::string(screen_buf_, screen_len_); }
  // What the model was told about its call (the tool result), "" when nothing.
  std::string told() const {
    std::string out;
    for (const Message& m : agent_->messages()) {
      if (m.role == "computer" && m.type == "console") out += m.content + "\n";
    }
    return out;
  }
  // Each question's block is the code that ran after it, in order.
  void expect_each_question_shows_what_ran() {
    ASSERT_EQ(input_->screens.size(), executor_.ran.size()) << screen();
    for (size_t i = 0; i < executor_.ran.size(); ++i) {
      auto [language, code] = last_block(input_->screens[i]);
      EXPECT_EQ(executor_.ran[i].first, language) << input_->screens[i];
      EXPECT_EQ(executor_.ran[i].second, code) << input_->screens[i];
    }
  }

  static LlmResponse call(std::string arguments, std::string text = "") {
    LlmResponse r;
    r.text = std::move(text);
    r.tool_calls.push_back({"call_1", "execute", std::move(arguments)});
    return r;
  }
  static LlmResponse says(std::string text) {
    LlmResponse r;
    r.text = std::move(text);
    return r;
  }

  RecordingExecutor executor_;
  FILE* screen_ = nullptr;
  char* screen_buf_ = nullptr;
  size_t screen_len_ = 0;
  std::unique_ptr<TerminalDisplay> display_;
  std::unique_ptr<ScreenReadingInput> input_;
  std::unique_ptr<Agent> agent_;
};

// Without the fix: the screen streamed print('hi') (the first "code" found by text search) and the user approved
// it, while the runner took the top-level value and ran print('evil').
TEST_F(CodeShown, ANestedCodeKeyIsRefusedAndTheModelToldWhy) {
  respond({call(R"J({"language": "python", "meta": {"code": "print('hi')"}, "code": "print('evil')"})J")});
  EXPECT_TRUE(executor_.ran.empty()) << screen();
  EXPECT_TRUE(input_->screens.empty()) << screen();  // no question about a call that could mean two things
  EXPECT_NE(std::string::npos, told().find("was refused")) << told();
  EXPECT_NE(std::string::npos, told().find("`meta` holds another `code`")) << told();
  EXPECT_NE(std::string::npos, screen().find("was refused")) << screen();  // and the user sees why
}

TEST_F(CodeShown, ARepeatedCodeKeyIsRefused) {
  respond({call(R"J({"language": "python", "code": "print('hi')", "code": "print('evil')"})J")});
  EXPECT_TRUE(executor_.ran.empty()) << screen();
  EXPECT_TRUE(input_->screens.empty()) << screen();
  EXPECT_NE(std::string::npos, told().find("the key `code` appears twice")) << told();
}

TEST_F(CodeShown, AnEscapedCodeKeyIsRefused) {
  // "\u0063ode" is "code" to a JSON parser, not to a text search: a repeat once unescaped.
  respond({call(R"J({"language": "python", "code": "print('hi')", "\u0063ode": "print('evil')"})J")});
  EXPECT_TRUE(executor_.ran.empty()) << screen();
  EXPECT_NE(std::string::npos, told().find("the key `code` appears twice")) << told();
}

TEST_F(CodeShown, AKeyWrittenWithEscapesIsRefusedEvenAlone) {
  // The screen showed no code at all (the text search found no "code") and the question came: y ran it unseen.
  respond({call(R"J({"language": "python", "\u0063ode": "print('unseen')"})J")});
  EXPECT_TRUE(executor_.ran.empty()) << screen();
  EXPECT_NE(std::string::npos, told().find("written with escape sequences")) << told();
}

TEST_F(CodeShown, AnOrdinaryToolCallRunsWhatItShowsAndShowsItOnce) {
  respond({call(R"J({"language": "python", "code": "print('hello world')"})J", "Printing.")});
  ASSERT_EQ(1u, executor_.ran.size()) << screen();
  EXPECT_EQ("print('hello world')", executor_.ran[0].second);
  expect_each_question_shows_what_ran();
  // The streamed block is right above the question and is the code: not drawn a second time.
  const std::string& at_question = input_->screens[0];
  EXPECT_EQ(at_question.find("print('hello world')"), at_question.rfind("print('hello world')")) << at_question;
}

// Without the fix: the block shown was print('shown'); the call in the prose below it ran instead.
TEST_F(CodeShown, FunctionsExecuteInTheProseDoesNotRunInsteadOfTheBlockShown) {
  respond({says("Here it is:\n```python\nprint('shown')\n```\n"
                "functions.execute(language=\"python\", code=\"print('evil')\")\n")});
  ASSERT_EQ(1u, executor_.ran.size()) << screen();
  EXPECT_EQ("print('shown')", executor_.ran[0].second);
  expect_each_question_shows_what_ran();
}

TEST_F(CodeShown, FunctionsExecuteAloneIsStillRepaired) {
  respond({says("functions.execute(language=\"shell\", code=\"echo hi\")")});
  ASSERT_EQ(1u, executor_.ran.size()) << screen();
  EXPECT_EQ("shell", executor_.ran[0].first);
  EXPECT_EQ("echo hi", executor_.ran[0].second);
  expect_each_question_shows_what_ran();
}

// Without the fix: shown as prose (the display's fence rule allowed spaces only), run as code (the runner's allowed
// any white space).
TEST_F(CodeShown, AFenceIndentedWithATabIsProseForTheScreenAndTheRunner) {
  respond({says("Note:\n\t```shell\n\trm -rf ./*\n\t```\nThat is all.")});
  EXPECT_TRUE(executor_.ran.empty()) << screen();
  EXPECT_TRUE(input_->screens.empty()) << screen();
  EXPECT_EQ(std::string::npos, screen().find("\n```shell\n")) << screen();  // not drawn as a block either
}

TEST_F(CodeShown, AFenceIndentedWithThreeSpacesIsABlockForBoth) {
  respond({says("Listing:\n   ```shell\nls\n   ```\n")});
  ASSERT_EQ(1u, executor_.ran.size()) << screen();
  EXPECT_EQ("ls", executor_.ran[0].second);
  expect_each_question_shows_what_ran();
}

TEST_F(CodeShown, AnOrdinaryFencedBlockRunsWhatItShows) {
  respond({says("Let me look.\n```python\nimport os\nprint(os.getcwd())\n```\n")});
  ASSERT_EQ(1u, executor_.ran.size()) << screen();
  expect_each_question_shows_what_ran();
}

// Without the fix: both blocks streamed, then the first question sat under the second block (print(2)) and its "y"
// ran print(1).
TEST_F(CodeShown, WithTwoCallsEachQuestionShowsItsOwnCode) {
  LlmResponse r = call(R"J({"language": "python", "code": "print(1)"})J");
  r.tool_calls.push_back({"call_2", "execute", R"J({"language": "shell", "code": "echo 2"})J"});
  respond({r});
  ASSERT_EQ(2u, executor_.ran.size()) << screen();
  EXPECT_EQ("print(1)", executor_.ran[0].second);
  EXPECT_EQ("echo 2", executor_.ran[1].second);
  expect_each_question_shows_what_ran();
}

TEST(CodeShownStreaming, TheStreamedCodeIsTheTopLevelValue) {
  // What the screen shows while a call streams is read as the parser reads it: the top-level key, unescaped.
  EXPECT_EQ("print('evil')",
            partial_json_string(R"J({"meta": {"code": "print('hi')"}, "code": "print('evil')"})J", "code"));
  EXPECT_EQ("x", partial_json_string(R"J({"note": "\"code\": \"y\"", "\u0063ode": "x"})J", "code"));
  EXPECT_EQ(std::nullopt, partial_json_string(R"J({"meta": {"code": "print('hi')"}, "co)J", "code"));
  // The neighbour: an ordinary call, complete or cut.
  EXPECT_EQ("print(1)", partial_json_string(R"J({"language": "python", "code": "print(1)"})J", "code"));
  EXPECT_EQ("pri", partial_json_string(R"J({"language": "python", "code": "pri)J", "code"));
}

// A character outside the BMP is escaped as a surrogate pair. Cut between its halves, the streamed code stops before
// it: shown as a lone surrogate, the screen (which adds what is new past what it showed) would keep bytes that are
// not in the code that runs (tests/fuzz/agent_partial_json found it).
TEST(CodeShownStreaming, ACutSurrogatePairIsHeldBackUntilItsLowHalf) {
  const std::string whole = R"J({"code": "x = '\ud83d\ude00'"})J";
  const auto complete = partial_json_string(whole, "code");
  ASSERT_TRUE(complete);
  EXPECT_EQ("x = '\xF0\x9F\x98\x80'", *complete);
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    const auto shown = partial_json_string(std::string_view(whole).substr(0, cut), "code");
    if (shown) {
      EXPECT_TRUE(complete->starts_with(*shown)) << "cut at " << cut;
    }
  }
  // The neighbour: a lone high surrogate that the text goes on past is shown (its three bytes, as decoded).
  EXPECT_TRUE(partial_json_string(R"J({"code": "a\ud83d b)J", "code")->starts_with("a\xED\xA0\xBD b"));
}

// The ACP permission request carries the code that runs as its content, on the card of that code.
TEST(CodeShownAcp, ThePermissionRequestNamesTheCardOfItsCodeAndCarriesIt) {
  int fds[2];
  ASSERT_EQ(0, ::pipe(fds));
  acp::RpcChannel channel(-1, fds[1]);
  acp::AcpDisplay display(channel, "/nonexistent");
  display.set_session("s");
  for (const char* code : {"print(1)", "print(2)"}) {
    display.code_begin("python");
    display.code_delta(code);
    display.code_end();
  }
  display.confirmation("python", "print(1)");
  auto request = display.take_confirmation();
  ASSERT_TRUE(request);
  EXPECT_EQ("block-1", (*request)["toolCallId"]) << request->dump();
  ASSERT_TRUE(request->contains("content")) << request->dump();
  EXPECT_NE(std::string::npos, (*request)["content"].dump().find("print(1)")) << request->dump();
  EXPECT_EQ(std::string::npos, (*request)["content"].dump().find("print(2)")) << request->dump();
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace oishell::agent
