// Open Interpreter's session habits, end to end against the scripted model: --loop, `i <words>`, --conversations
// over OI's own folder, multi-line input.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/user/line_editor.h"
#include "agent/core/message_templates.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent::test {
namespace {

using nlohmann::json;

constexpr const char* kSessionModelKey = "sk-oishell-session-SECRET-77aa01";

class OiSession : public ::testing::Test {
 protected:
  RunOptions options(ScriptedServer& server, std::vector<std::string> extra, std::string stdin_data = "") {
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", server.base(), "--plain"};
    o.args.insert(o.args.end(), extra.begin(), extra.end());
    o.env = {{"OPENAI_API_KEY", kSessionModelKey}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    o.stdin_data = std::move(stdin_data);
    return o;
  }
  std::string shown(ScriptedServer& s, size_t i) {
    auto reqs = s.requests();
    if (i >= reqs.size()) return "<no request " + std::to_string(i) + ">";
    return conversation_text(reqs[i]["body"]);
  }
  TempDir workspace_, home_;
};

TEST_F(OiSession, LoopSendsTheModelOnUntilItSaysABreaker) {
  ScriptedServer server(json::array({say("I made a start."), tool("shell", "echo step-two"),
                                     say("Both steps are finished. The task is done."), say("never asked")}));
  RunResult r = run_interpreter(options(server, {"--loop", "do two steps"}));
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  auto reqs = server.requests();
  ASSERT_EQ(3u, reqs.size()) << r.out;  // the breaker ended it: the fourth answer was never asked for
  EXPECT_NE(std::string::npos, shown(server, 1).find("The task is done.")) << "the loop message names the breaker";
  EXPECT_NE(std::string::npos, shown(server, 2).find("step-two"));
  EXPECT_NE(std::string::npos, r.out.find("The task is done."));
}

TEST_F(OiSession, WithoutLoopOneAnswerEndsTheTurn) {
  ScriptedServer server(json::array({say("I made a start."), say("never asked")}));
  RunResult r = run_interpreter(options(server, {"do two steps"}));
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_EQ(1u, server.requests().size());
}

TEST_F(OiSession, LoopMessageAndBreakersFromAProfile) {
  std::string profile = workspace_.path() + "/loop.yaml";
  std::ofstream(profile) << "loop: true\nloop_message: 'Carry on, please.'\nloop_breakers: ['ALL DONE']\n";
  ScriptedServer server(json::array({say("Working."), say("Still working."), say("ALL DONE"), say("never")}));
  RunResult r = run_interpreter(options(server, {"--profile", profile, "go"}));
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(3u, server.requests().size()) << r.out << r.err;
  EXPECT_NE(std::string::npos, shown(server, 2).find("Carry on, please."));
  EXPECT_EQ(std::string::npos, shown(server, 2).find("The task is done.")) << "the default message is replaced";
}

TEST_F(OiSession, LoopIsBoundedByMaxTurns) {
  ScriptedServer server(json::array({say("a"), say("b"), say("c"), say("d")}));
  RunResult r = run_interpreter(options(server, {"--loop", "--max_turns", "2", "go"}));
  EXPECT_EQ(3, r.exit_code) << r.out << r.err;
  EXPECT_EQ(2u, server.requests().size());
}

// `i <words>` (the program named i, the words first): the words are the first message of an interactive chat.
TEST_F(OiSession, IWordsStartAChatThatGoesOn) {
  std::string i_link = home_.path() + "/i";
  ASSERT_EQ(0, ::symlink(INTERPRETER_BIN, i_link.c_str()));
  std::ofstream(workspace_.path() + "/notes.txt") << "x";
  ScriptedServer server(json::array({say("Listed."), say("Second answer.")}));
  RunOptions o;
  o.program = i_link;
  o.args = {"list", "my", "files"};
  // `i` takes no flags (as in OI): the model comes from the default profile.
  o.env = {{"OPENAI_API_KEY", kSessionModelKey}};
  o.cwd = workspace_.path();
  o.home = home_.path();
  std::string profiles = home_.path() + "/.config/open-interpreter/profiles";
  std::filesystem::create_directories(profiles);
  std::ofstream(profiles + "/default.yaml") << "llm:\n  model: scripted-model\n  api_base: " << server.base()
                                            << "\n";
  o.stdin_data = "and now the second message\n";
  RunResult r = run_interpreter(o);
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(2u, server.requests().size()) << r.out << r.err;
  std::string first = shown(server, 0);
  EXPECT_NE(std::string::npos, first.find("I list my files")) << first;
  EXPECT_NE(std::string::npos, first.find("notes.txt")) << "the working directory's names are given";
  EXPECT_NE(std::string::npos, shown(server, 1).find("and now the second message"));
}

TEST_F(OiSession, ConversationsListsOpenInterpreterFolderToo) {
  std::string oi_dir = home_.path() + "/.config/open-interpreter/conversations";
  std::filesystem::create_directories(oi_dir);
  json oi_conversation = json::array(
      {{{"role", "user"}, {"type", "message"}, {"content", "remember the colour teal"}},
       {{"role", "assistant"}, {"type", "message"}, {"content", "Noted: teal."}},
       {{"role", "assistant"}, {"type", "confirmation"}, {"format", "execution"}, {"content", {{"x", 1}}}}});
  std::ofstream(oi_dir + "/remember_the_colour__November_30_2026_10-00-00.json") << oi_conversation.dump();
  ScriptedServer server(json::array({say("The colour was teal.")}));
  RunResult r = run_interpreter(options(server, {"--conversations"}, "1\nwhich colour?\n"));
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  EXPECT_NE(std::string::npos, r.out.find("remember the colour... (November 30 2026 10-00-00)  [Open Interpreter]"))
      << r.out;
  EXPECT_NE(std::string::npos, r.out.find("1 message(s) of a kind this agent does not keep")) << r.out;
  ASSERT_EQ(1u, server.requests().size()) << r.out << r.err;
  std::string seen = shown(server, 0);
  EXPECT_NE(std::string::npos, seen.find("remember the colour teal"));
  EXPECT_NE(std::string::npos, seen.find("Noted: teal."));
  EXPECT_NE(std::string::npos, seen.find("which colour?"));
  // OI's file is left as it was; the resumed conversation is saved as one of ours.
  EXPECT_EQ(oi_conversation.dump(), read_text(oi_dir + "/remember_the_colour__November_30_2026_10-00-00.json"));
  EXPECT_NE(std::string::npos, saved_conversation(home_.path()).dump().find("which colour?"));
}

TEST_F(OiSession, TripleQuotesMakeOneMultiLineMessage) {
  ScriptedServer server(json::array({say("Got both lines."), say("Got the fenced one.")}));
  RunResult r = run_interpreter(options(server, {"--multi_line"},
                                        "\"\"\"\nfirst line\nsecond line\n\"\"\"\n```\nfenced a\nfenced b\n```\n"));
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(2u, server.requests().size()) << r.out << r.err;
  auto last_user = [&](size_t i) {
    json messages = server.requests()[i]["body"]["messages"];
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
      if ((*it)["role"] == "user") return (*it)["content"].dump();
    }
    return std::string();
  };
  EXPECT_EQ(json("first line\nsecond line").dump(), last_user(0));
  EXPECT_EQ(json("fenced a\nfenced b").dump(), last_user(1));
}


// At a terminal: the line editor's history (Up recalls, across sessions, kept 0600) and in-line editing.
TEST_F(OiSession, PromptHistoryAndEditingAtATerminal) {
  // Types steps[i] when the prompt shows for the (i+1)th time (the editor turns bracketed paste on as it starts).
  auto run_at_terminal = [&](ScriptedServer& server, std::vector<std::string> steps) {
    RunOptions o;
    o.args = {"--model", "scripted-model", "--api_base", server.base()};
    o.env = {{"OPENAI_API_KEY", kSessionModelKey}, {"TERM", "xterm"}};
    o.cwd = workspace_.path();
    o.home = home_.path();
    size_t next = 0;
    RunResult r = run_in_terminal(o, [&](int terminal, const std::string& out) {
      size_t prompts = 0;
      for (size_t at = out.find("\x1b[?2004h"); at != std::string::npos; at = out.find("\x1b[?2004h", at + 1)) {
        ++prompts;
      }
      if (next < steps.size() && prompts > next) {
        [[maybe_unused]] ssize_t n = ::write(terminal, steps[next].data(), steps[next].size());
        ++next;
      }
    });
    EXPECT_FALSE(r.timed_out) << json(r.out).dump();
    EXPECT_EQ(steps.size(), next) << json(r.out).dump();
    return r;
  };
  auto last_user = [](ScriptedServer& server, size_t i) {
    auto reqs = server.requests();
    if (i >= reqs.size()) return std::string("<no request>");
    json messages = reqs[i]["body"]["messages"];
    for (auto it = messages.rbegin(); it != messages.rend(); ++it) {
      if ((*it)["role"] == "user") return (*it)["content"].get<std::string>();
    }
    return std::string();
  };
  {
    ScriptedServer server(json::array({say("Answer one."), say("Answer two."), say("Answer three.")}));
    RunResult r = run_at_terminal(server, {"first question\r",
                                           "\x1b[A\r",               // Up, Enter: sent again
                                           "helo\x1b[Dl\x1b[F!\r",  // Left, insert, End, append
                                           "\x04"});                 // Ctrl-D: the end
    EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
    EXPECT_EQ("first question", last_user(server, 0));
    EXPECT_EQ("first question", last_user(server, 1));
    EXPECT_EQ("hello!", last_user(server, 2));
  }
  std::string history = home_.path() + "/.local/state/oishell/interpreter_history";
  struct stat st {};
  ASSERT_EQ(0, ::stat(history.c_str(), &st));
  EXPECT_EQ(0600u, st.st_mode & 0777);
  EXPECT_EQ("first question\nhello!\n", read_text(history));  // the repeat is kept once
  {
    // A later session: Up twice reaches the older entry.
    ScriptedServer server(json::array({say("Answer four.")}));
    RunResult r = run_at_terminal(server, {"\x1b[A\x1b[A\r", "\x04"});
    EXPECT_EQ(0, r.exit_code) << json(r.out).dump();
    EXPECT_EQ("first question", last_user(server, 0));
  }
}



// Under a policy that shows the whole home directory, the agent's own files (profiles with keys, saved keys,
// conversations, the prompt history) stay hidden; the rest of home is readable.
TEST_F(OiSession, TheAgentsOwnFilesAreHiddenWhateverThePolicy) {
  const std::string config = home_.path() + "/.config/open-interpreter";
  std::filesystem::create_directories(config + "/profiles");
  std::filesystem::create_directories(config + "/keys");
  std::filesystem::create_directories(home_.path() + "/.local/share/open-interpreter/conversations");
  std::ofstream(config + "/profiles/work.yaml") << "llm:\n  api_key: sk-in-a-profile-0042\n";
  std::ofstream(config + "/keys/openai") << "sk-saved-key-0042\n";
  std::ofstream(home_.path() + "/.local/share/open-interpreter/conversations/old.json") << "[]";
  std::ofstream(home_.path() + "/visible.txt") << "home-is-visible\n";
  std::string policy = workspace_.path() + "/show-home.yaml";
  std::ofstream(policy) << "version: 1\nfilesystem:\n  workspace: .\n  read_only: [" << home_.path() << "]\n";
  const std::string h = home_.path();  // inside, HOME is the sandbox's own: the host's path is used
  ScriptedServer server(json::array(
      {tool("shell", "cat " + h + "/visible.txt; cat " + h + "/.config/open-interpreter/profiles/work.yaml; cat " + h +
                         "/.config/open-interpreter/keys/openai; ls " + h +
                         "/.local/share/open-interpreter/conversations; echo listed"),
       say("Done.")}));
  RunResult r = run_interpreter(options(server, {"--policy", policy, "look around"}));
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(2u, server.requests().size()) << r.out << r.err;
  std::string seen = last_tool_output(server.requests()[1]["body"]);
  EXPECT_NE(std::string::npos, seen.find("home-is-visible")) << seen;  // the policy's read-only home works
  EXPECT_NE(std::string::npos, seen.find("listed")) << seen;
  EXPECT_EQ(std::string::npos, seen.find("sk-in-a-profile-0042")) << seen;
  EXPECT_EQ(std::string::npos, seen.find("sk-saved-key-0042")) << seen;
  EXPECT_EQ(std::string::npos, seen.find("old.json")) << seen;
  EXPECT_NE(std::string::npos, seen.find("work.yaml: No such file or directory")) << seen;
}


TEST(MessageTemplates, AppliedToWhatTheModelIsSentAsOpenInterpreterDoes) {
  AgentConfig c;
  c.supports_functions = false;
  c.user_message_template = "<<{content}>>";
  c.code_output_template = "Output: {content} -- next?";
  c.empty_code_output_template = "Nothing printed.";
  std::vector<Message> in = {Message::user("first"), Message::code("python", "print(1)"), Message::console("1"),
                             Message::code("python", "pass"), Message::console(""), Message::user("second")};
  auto out = apply_message_templates(c, in);
  EXPECT_EQ("first", out[0].content);  // only the last user message
  EXPECT_EQ("<<second>>", out[5].content);
  EXPECT_EQ(Message::user("Output: 1 -- next?"), out[2]);
  EXPECT_EQ(Message::user("Nothing printed."), out[4]);
  c.always_apply_user_message_template = true;
  c.code_output_sender = "assistant";
  out = apply_message_templates(c, in);
  EXPECT_EQ("<<first>>", out[0].content);
  EXPECT_EQ(Message::assistant("Output: 1 -- next?"), out[2]);
  // With tool calls, a block's output answers its call in the API's own form.
  c.supports_functions = true;
  in[2].call_id = "call_1";
  out = apply_message_templates(c, in);
  EXPECT_EQ(in[2], out[2]);
  EXPECT_EQ(in, apply_message_templates(AgentConfig{}, in));  // nothing set: nothing changed
}

TEST_F(OiSession, TemplatesFromAProfileReachTheModel) {
  std::string profile = workspace_.path() + "/templates.yaml";
  std::ofstream(profile) << "llm:\n  supports_functions: false\nuser_message_template: 'TASK: {content}'\n"
                            "code_output_template: 'RAN, GOT: {content}'\n";
  ScriptedServer server(json::array({say("```python\nprint(40 + 2)\n```"), say("It is 42.")}));
  RunResult r = run_interpreter(options(server, {"--profile", profile, "add"}));
  EXPECT_EQ(0, r.exit_code) << r.out << r.err;
  ASSERT_EQ(2u, server.requests().size()) << r.out << r.err;
  EXPECT_NE(std::string::npos, shown(server, 0).find("TASK: add")) << shown(server, 0);
  EXPECT_NE(std::string::npos, shown(server, 1).find("RAN, GOT: 42")) << shown(server, 1);
  // What is saved is what was said, not the templates.
  EXPECT_EQ(std::string::npos, saved_conversation(home_.path()).dump().find("TASK:"));
}

TEST(LineHistory, MultiLineEntriesRoundTripAndSpaceLinesStayOut) {
  TempDir dir;
  std::string path = dir.path() + "/state/history";
  {
    LineHistory h(path);
    h.add("two\nlines with a \\ backslash");
    h.add(" secret typed with a leading space");
    h.add("plain");
    h.add("plain");
    EXPECT_EQ(2u, h.entries().size());
  }
  LineHistory again(path);
  again.load();
  ASSERT_EQ(2u, again.entries().size());
  EXPECT_EQ("two\nlines with a \\ backslash", again.entries()[0]);
  EXPECT_EQ("plain", again.entries()[1]);
  EXPECT_EQ(std::string::npos, read_text(path).find("secret"));
}

}  // namespace
}  // namespace oishell::agent::test
