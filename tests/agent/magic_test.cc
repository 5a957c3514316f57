// Open Interpreter's % commands on an Agent with stand-ins for the sandbox, the screen and the keyboard:
// %jupyter (a valid nbformat 4 notebook), %markdown, %save_message (adds .json), the switches (%auto_run, %verbose,
// %debug: on without an argument, as in OI), %help.
#include "agent/user/magic.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "agent/core/loop.h"
#include "agent/user/magic_export.h"
#include "tests/agent/e2e_util.h"

namespace oishell::agent {
namespace {

using nlohmann::json;

class FakeExecutor final : public Executor {
 public:
  Status start() override { return Status::ok(); }
  Result<ExecResult> exec(const std::string&, const std::string&, ExecObserver&) override {
    ExecResult r;
    r.denials = next_denials;
    return r;
  }
  Result<json> change_policy(const json& request, ExecObserver&) override {
    policy_requests.push_back(request);
    return policy_answer;
  }
  std::vector<json> next_denials;  // what the next block reports
  std::vector<json> policy_requests;  // %policy allow|deny|learn
  json policy_answer;
  Status reset(const std::string&) override { return Status::ok(); }
  std::vector<std::string> languages() const override { return {"python", "shell"}; }
  std::string policy_summary() const override { return ""; }
  std::string description() const override { return "fake sandbox"; }
  void shutdown() override {}
};

class FakeDisplay final : public Display {
 public:
  void user_message(const std::string&) override {}
  void waiting(bool) override {}
  void message_delta(std::string_view) override {}
  void code_begin(const std::string&) override {}
  void code_delta(std::string_view) override {}
  void code_end() override {}
  void answer_end() override {}
  void console_begin() override {}
  void console_output(std::string_view, std::string_view) override {}
  void active_line(int) override {}
  void image(const std::string&, const std::string&) override {}
  void console_end(const json&) override {}
  void confirmation(const std::string&, const std::string&) override {}
  void notice(NoticeLevel, const std::string& text) override { notices += text + "\n"; }
  void host_changes(const std::vector<HostChange>&) override {}
  void host_changes_summary(const std::vector<HostChange>&) override {}
  void before_question() override {}
  bool interactive() const override { return false; }
  void flush() override {}
  std::string notices;
};

class NoInput final : public UserInput {
 public:
  std::optional<std::string> read_message(const std::string&, bool*) override { return std::nullopt; }
  std::optional<std::string> ask(const std::string& question, bool*) override {
    asked += question;
    if (answer.empty()) return std::nullopt;
    return answer;
  }
  bool can_ask() const override { return !answer.empty(); }
  std::string answer;  // empty: no terminal to ask on
  std::string asked;
};

// A conversation with every kind of message: the user's, the assistant's, code with output, an image.
std::vector<Message> sample_conversation() {
  return {Message::user("Count the files\nin the workspace."),
          Message::assistant("I'll list them."),
          Message::code("python", "import os\nprint(len(os.listdir('.')))", "call_1"),
          Message::console("3\n", "call_1"),
          {"computer", "image", "base64.png", "iVBORw0KGgo=", "call_1"},
          Message::code("shell", "ls ```", "call_2"),
          Message::console("a b c\n", "call_2"),
          Message::assistant("There are **3** files.")};
}

class Magic : public ::testing::Test {
 protected:
  Magic() {
    AgentConfig config;
    config.auto_run = false;
    AgentParts parts;
    parts.config = config;
    parts.executor = &executor_;
    parts.display = &display_;
    parts.input = &input_;
    agent_ = std::make_unique<Agent>(std::move(parts));
    old_cwd_ = std::filesystem::current_path();
    std::filesystem::current_path(cwd_.path());  // the commands write into the working directory
  }
  ~Magic() override { std::filesystem::current_path(old_cwd_); }
  std::string run(const std::string& line) {
    display_.notices.clear();
    handle_magic(*agent_, line);
    return display_.notices;
  }
  std::vector<std::string> files() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(cwd_.path())) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

  FakeExecutor executor_;
  FakeDisplay display_;
  NoInput input_;
  std::unique_ptr<Agent> agent_;
  test::TempDir cwd_;
  std::filesystem::path old_cwd_;
};

TEST_F(Magic, SwitchesTurnOnWithoutAnArgumentAsInOpenInterpreter) {
  ASSERT_FALSE(agent_->config().auto_run);
  EXPECT_NE(std::string::npos, run("%auto_run").find("auto_run is on"));
  EXPECT_TRUE(agent_->config().auto_run);
  run("%auto_run");  // not a toggle: still on
  EXPECT_TRUE(agent_->config().auto_run);
  run("%auto_run false");
  EXPECT_FALSE(agent_->config().auto_run);
  run("%auto_run true");
  EXPECT_TRUE(agent_->config().auto_run);
  run("%auto_run off");
  EXPECT_FALSE(agent_->config().auto_run);
  EXPECT_NE(std::string::npos, run("%auto_run maybe").find("not on, off, true or false"));
  EXPECT_FALSE(agent_->config().auto_run);

  run("%verbose");
  EXPECT_TRUE(agent_->config().verbose);
  run("%verbose");
  EXPECT_TRUE(agent_->config().verbose);
  run("%verbose false");
  EXPECT_FALSE(agent_->config().verbose);

  run("%debug");
  EXPECT_TRUE(agent_->config().debug);
  EXPECT_TRUE(agent_->config().verbose);
  run("%debug false");
  EXPECT_FALSE(agent_->config().debug);
  EXPECT_FALSE(agent_->config().verbose);
}

TEST_F(Magic, SaveMessageAddsJsonWhenMissingAndLoadMessageToo) {
  agent_->messages() = sample_conversation();
  run("%save_message chat");
  EXPECT_EQ((std::vector<std::string>{"chat.json"}), files());
  run("%save_message other.json");
  run("%save_message");
  EXPECT_EQ((std::vector<std::string>{"chat.json", "messages.json", "other.json"}), files());
  json saved = json::parse(test::read_text(cwd_.path() + "/chat.json"));
  ASSERT_EQ(8u, saved.size());
  EXPECT_EQ("Count the files\nin the workspace.", saved[0]["content"]);
  agent_->messages().clear();
  EXPECT_NE(std::string::npos, run("%load_message chat").find("Loaded 8 messages"));
  EXPECT_EQ(sample_conversation(), agent_->messages());
}

TEST_F(Magic, JupyterWritesAValidNotebookWithTheRightCells) {
  EXPECT_NE(std::string::npos, run("%jupyter").find("No messages"));
  EXPECT_TRUE(files().empty());
  agent_->messages() = sample_conversation();
  std::string said = run("%jupyter");
  auto names = files();
  ASSERT_EQ(1u, names.size());
  EXPECT_TRUE(names[0].starts_with("open-interpreter-") && names[0].ends_with(".ipynb")) << names[0];
  EXPECT_NE(std::string::npos, said.find(names[0])) << said;
  json nb = json::parse(test::read_text(cwd_.path() + "/" + names[0]));
  // nbformat 4.5's schema (nbformat.v4.5.schema.json): the keys it requires, and no others where it allows none.
  EXPECT_EQ(4, nb["nbformat"]);
  EXPECT_EQ(5, nb["nbformat_minor"]);
  ASSERT_TRUE(nb["metadata"].is_object());
  ASSERT_TRUE(nb["cells"].is_array());
  std::set<std::string> ids;
  for (const auto& cell : nb["cells"]) {
    ASSERT_TRUE(cell["metadata"].is_object());
    ASSERT_TRUE(cell["source"].is_string());
    ASSERT_TRUE(cell["id"].is_string());
    std::string id = cell["id"];
    EXPECT_TRUE(ids.insert(id).second);  // unique, as 4.5 requires
    EXPECT_TRUE(!id.empty() && id.size() <= 64 && id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                        "0123456789-_") == std::string::npos) << id;
    std::set<std::string> keys;
    for (const auto& [k, v] : cell.items()) keys.insert(k);
    const std::set<std::string> code_keys = {"id", "cell_type", "metadata", "source", "outputs", "execution_count"};
    const std::set<std::string> markdown_keys = {"id", "cell_type", "metadata", "source"};
    EXPECT_EQ(cell["cell_type"] == "code" ? code_keys : markdown_keys, keys);
    if (cell["cell_type"] == "code") {
      ASSERT_TRUE(cell["outputs"].is_array());
      ASSERT_TRUE(cell.contains("execution_count"));
    } else {
      EXPECT_EQ("markdown", cell["cell_type"]);
      EXPECT_FALSE(cell.contains("outputs"));
    }
  }
  const json& cells = nb["cells"];
  ASSERT_EQ(5u, cells.size());
  EXPECT_EQ("> Count the files\n> in the workspace.", cells[0]["source"]);  // the user's message, quoted
  EXPECT_EQ("markdown", cells[1]["cell_type"]);
  EXPECT_EQ("I'll list them.", cells[1]["source"]);
  EXPECT_EQ("code", cells[2]["cell_type"]);
  EXPECT_EQ("import os\nprint(len(os.listdir('.')))", cells[2]["source"]);
  EXPECT_EQ("python", cells[2]["metadata"]["language"]);
  ASSERT_EQ(2u, cells[2]["outputs"].size());
  EXPECT_EQ((json{{"output_type", "stream"}, {"name", "stdout"}, {"text", "3\n"}}), cells[2]["outputs"][0]);
  EXPECT_EQ("display_data", cells[2]["outputs"][1]["output_type"]);
  EXPECT_EQ("iVBORw0KGgo=", cells[2]["outputs"][1]["data"]["image/png"]);
  EXPECT_EQ("shell", cells[3]["metadata"]["language"]);
  EXPECT_EQ("a b c\n", cells[3]["outputs"][0]["text"]);
  EXPECT_EQ("There are **3** files.", cells[4]["source"]);
  // A name given is used as it is.
  run("%jupyter mine.ipynb");
  EXPECT_EQ(nb, json::parse(test::read_text(cwd_.path() + "/mine.ipynb")));
}

TEST_F(Magic, MarkdownWritesATranscript) {
  agent_->messages() = sample_conversation();
  run("%markdown chat.md");
  std::string md = test::read_text(cwd_.path() + "/chat.md");
  EXPECT_EQ(0u, md.find("## User\n\nCount the files\nin the workspace.\n\n## Assistant\n\nI'll list them.\n\n"
                        "```python\nimport os\nprint(len(os.listdir('.')))\n```\n\nOutput:\n\n```\n3\n```\n"))
      << md;
  EXPECT_NE(std::string::npos, md.find("````shell\nls ```\n````")) << md;  // a fence the code cannot close
  EXPECT_NE(std::string::npos, md.find("There are **3** files.\n")) << md;
  run("%markdown");  // no path, no saved conversation: a fresh name in the working directory
  bool found = false;
  for (const auto& f : files()) found |= f.starts_with("open-interpreter-") && f.ends_with(".md");
  EXPECT_TRUE(found);
}

TEST_F(Magic, HelpListsTheCommands) {
  std::string help = run("%help");
  for (const char* cmd : {"%jupyter", "%markdown [path]", "%debug", "%auto_run", "%verbose", "%save_message",
                          "%tokens", "%policy"}) {
    EXPECT_NE(std::string::npos, help.find(cmd)) << cmd;
  }
  EXPECT_NE(std::string::npos, help.find("on without an argument")) << help;
}

// %policy learn: a destination refused because no rule listed it becomes a rule of a live `policy` patch on a yes
// (the running sandbox takes it, no restart); one refused by a deny rule, and a denied system call, are listed as
// not proposed. No answer (no terminal, or "n"): nothing changes and the policy lines are shown to keep. A patch the
// sandbox refuses leaves the denials proposed.
TEST_F(Magic, PolicyLearnProposesWhatTheDenialsPointToAndAppliesItOnYes) {
  executor_.next_denials = {
      {{"event", "net.denied"}, {"protocol", "connect"}, {"host", "api.example"}, {"port", 443},
       {"reason", "denied by policy"}, {"rule", "on_unlisted: deny"}},
      {{"event", "net.denied"}, {"protocol", "udp"}, {"host", "ntp.example"}, {"port", 123},
       {"reason", "denied by policy"}, {"rule", "udp: no udp rule allows it"}},
      {{"event", "net.denied"}, {"protocol", "connect"}, {"host", "evil.example"}, {"port", 80},
       {"reason", "denied by policy"}, {"rule", "deny evil.example"}},
      {{"event", "net.denied"}, {"protocol", "dns"}, {"host", "svc.example"}, {"port", 0},
       {"reason", "denied by policy"}, {"rule", "on_unlisted: deny"}},
      {{"event", "denied"}, {"kind", "syscall"}, {"syscall", "ptrace"}, {"set", "tracing"}, {"errno", "EPERM"}}};
  bool stop = false;
  agent_->run_block("python", "import socket", "call_1", &stop);
  std::string shown = run("%policy learn");
  EXPECT_NE(std::string::npos, shown.find("allow api.example:443: refused 1 time, no rule listed it")) << shown;
  EXPECT_NE(std::string::npos, shown.find("allow ntp.example:123 (udp)")) << shown;
  EXPECT_NE(std::string::npos, shown.find("allow svc.example: refused 1 time at name lookup")) << shown;
  EXPECT_NE(std::string::npos, shown.find("evil.example:80 (deny evil.example: refused on purpose")) << shown;
  EXPECT_NE(std::string::npos, shown.find("system call ptrace (tracing; no flag adds it")) << shown;
  EXPECT_NE(std::string::npos, shown.find("Not applied.")) << shown;  // no terminal: nothing asked, nothing changed
  EXPECT_NE(std::string::npos, shown.find("    - {host: ntp.example, ports: [123], protocol: udp}")) << shown;
  EXPECT_TRUE(executor_.policy_requests.empty());

  input_.answer = "n";
  run("%policy learn");
  EXPECT_TRUE(executor_.policy_requests.empty());
  input_.answer = "y";
  executor_.policy_answer = {{"event", "policy.rejected"}, {"errors", {"network.allow[0]: refused"}}};
  shown = run("%policy learn");
  ASSERT_EQ(1u, executor_.policy_requests.size());
  EXPECT_NE(std::string::npos, shown.find("The policy was not changed (the one in force stays)")) << shown;
  EXPECT_NE(std::string::npos, run("%policy learn").find("allow api.example:443")) << "still proposed";
  executor_.policy_requests.clear();
  executor_.policy_answer = {{"event", "policy.changed"},
                             {"widened", {"network: allow api.example:443", "network: allow ntp.example:123 (udp)",
                                          "network: allow svc.example"}},
                             {"narrowed", json::array()}};
  shown = run("%policy learn");
  EXPECT_NE(std::string::npos, input_.asked.find("no restart, the executors keep their state")) << input_.asked;
  ASSERT_EQ(1u, executor_.policy_requests.size());
  EXPECT_EQ((json{{"allow", json::array({{{"host", "api.example"}, {"ports", {443}}},
                                         {{"host", "ntp.example"}, {"ports", {123}}, {"protocol", "udp"}},
                                         "svc.example"})}}),
            executor_.policy_requests[0]);
  EXPECT_NE(std::string::npos, shown.find("Applied to the running sandbox (no restart")) << shown;
  // Applied denials are not proposed again.
  EXPECT_NE(std::string::npos, run("%policy learn").find("No denial of this session points to a rule")) << shown;
}

// %policy allow|deny HOST[:PORT]: one rule, sent as a `policy` patch to the running sandbox (no restart), and its
// answer shown: what it widened or narrowed and the connections it closed, or why nothing changed.
TEST_F(Magic, PolicyAllowAndDenyChangeTheRunningSandbox) {
  executor_.policy_answer = {{"event", "policy.changed"}, {"widened", {"network: allow api.example:443"}},
                             {"narrowed", json::array()}, {"closed_connections", 0}};
  std::string shown = run("%policy allow api.example:443");
  ASSERT_EQ(1u, executor_.policy_requests.size());
  EXPECT_EQ((json{{"allow", {"api.example:443"}}}), executor_.policy_requests[0]);
  EXPECT_NE(std::string::npos, shown.find("Applied to the running sandbox (no restart")) << shown;
  EXPECT_NE(std::string::npos, shown.find("Now allowed:\n  network: allow api.example:443")) << shown;

  executor_.policy_answer = {{"event", "policy.changed"}, {"widened", json::array()},
                             {"narrowed", {"network: allow api.example:443"}}, {"closed_connections", 2}};
  shown = run("%policy deny api.example:443");
  EXPECT_EQ((json{{"deny", {"api.example:443"}}}), executor_.policy_requests.at(1));
  EXPECT_NE(std::string::npos, shown.find("No longer allowed:\n  network: allow api.example:443")) << shown;
  EXPECT_NE(std::string::npos, shown.find("2 open connection(s) to what is no longer allowed were closed")) << shown;

  executor_.policy_answer = {{"event", "policy.rejected"}, {"errors", {"policy patch:1:10: network.allow[0]: bad"}}};
  shown = run("%policy allow *");
  EXPECT_NE(std::string::npos, shown.find("The policy was not changed (the one in force stays):\n  policy patch:1:10"))
      << shown;
  // A malformed command sends nothing.
  shown = run("%policy allow");
  EXPECT_NE(std::string::npos, shown.find("usage: %policy allow HOST[:PORT]")) << shown;
  run("%policy allowx.example");
  EXPECT_EQ(3u, executor_.policy_requests.size());
}

}  // namespace
}  // namespace oishell::agent
