// The pure parts: request parsing, UTF-8 carrying across reads, the language table and the mount-plan lookup.
#include <gtest/gtest.h>

#include <variant>

#include "runtime/executors/language.h"
#include "runtime/executors/protocol.h"

namespace oishell::executors {
namespace {

TEST(Protocol, ParsesExecWithOptionalStdin) {
  auto r = parse_request(R"({"op":"exec","id":"7","language":"py","code":"x=1","stdin":"in"})");
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const auto& exec = std::get<ExecRequest>(*r);
  EXPECT_EQ("7", exec.id);
  EXPECT_EQ("py", exec.language);
  EXPECT_EQ("x=1", exec.code);
  ASSERT_TRUE(exec.stdin_data.has_value());
  EXPECT_EQ("in", *exec.stdin_data);
  auto numeric = parse_request(R"({"op":"interrupt","id":3})");
  ASSERT_TRUE(numeric.is_ok());
  EXPECT_EQ("3", std::get<InterruptRequest>(*numeric).id);
}

TEST(Protocol, RejectsBadRequestsWithTheField) {
  EXPECT_EQ("request is not valid JSON", parse_request("{").status().message());
  EXPECT_EQ("exec: missing `code`", parse_request(R"({"op":"exec","id":"1","language":"py"})").status().message());
  EXPECT_EQ("exec: `code` must be a string",
            parse_request(R"({"op":"exec","id":"1","language":"py","code":5})").status().message());
  EXPECT_EQ("exec: `id` must not be empty",
            parse_request(R"({"op":"exec","id":"","language":"py","code":""})").status().message());
  EXPECT_NE(std::string::npos, parse_request(R"({"op":"answer","ask_id":1,"decision":"maybe"})")
                                   .status().message().find("allow_once"));
  EXPECT_NE(std::string::npos, parse_request(R"({"op":"launch"})").status().message().find("unknown op"));
  auto answer = parse_request(R"({"op":"answer","ask_id":4,"decision":"allow_always"})");
  ASSERT_TRUE(answer.is_ok());
  EXPECT_EQ(relay::AskAnswer::allow_always, std::get<AnswerRequest>(*answer).decision);
}

TEST(Utf8Carry, KeepsASplitCharacterWhole) {
  Utf8Carry carry;
  const std::string euro = "\xE2\x82\xAC";  // 3 bytes
  EXPECT_EQ("a", carry.take("a" + euro.substr(0, 2)));
  EXPECT_EQ(euro + "b", carry.take(euro.substr(2) + "b"));
  EXPECT_EQ("", carry.flush());
  EXPECT_EQ("", carry.take("\xF0\x9F"));  // the start of a 4-byte emoji
  EXPECT_EQ("\xF0\x9F", carry.flush());   // at the end of the stream, what is left is given as it is
  EXPECT_EQ("\xFF", carry.take("\xFF"));  // invalid bytes are not held back
}

TEST(Utf8Carry, LinesAreValidJsonEvenForInvalidBytes) {
  auto line = to_line({{"event", "output"}, {"data", std::string("ok\xFF")}});
  EXPECT_EQ('\n', line.back());
  EXPECT_NE(std::string::npos, line.find("ok\xEF\xBF\xBD"));  // U+FFFD
}

TEST(Languages, AliasesFindTheirLanguage) {
  EXPECT_EQ("python", find_language("Py")->name);
  EXPECT_EQ("shell", find_language("zsh")->name);
  EXPECT_EQ("shell", find_language("sh")->name);
  EXPECT_EQ("javascript", find_language("node")->name);
  EXPECT_EQ(nullptr, find_language("cobol"));
}

TEST(Languages, InsidePathsMapThroughTheMountPlan) {
  std::vector<MountStep> plan = {
      {MountStep::Kind::bind_ro, "/usr", "/usr", false},
      {MountStep::Kind::symlink, "usr/bin", "/bin", false},
      {MountStep::Kind::hide, "", "/usr/local", false},
      {MountStep::Kind::bind_rw, "/home/u/proj", "/work", false},
  };
  EXPECT_EQ("/usr/bin/python3", host_path_of("/usr/bin/python3", plan).value_or("-"));
  EXPECT_EQ("/usr/bin/bash", host_path_of("/bin/bash", plan).value_or("-"));
  EXPECT_EQ("/home/u/proj/a.py", host_path_of("/work/a.py", plan).value_or("-"));
  EXPECT_FALSE(host_path_of("/usr/local/bin/node", plan).has_value());  // hidden
  EXPECT_FALSE(host_path_of("/opt/x", plan).has_value());               // not bound at all
  EXPECT_FALSE(host_path_of("/usrx/bin", plan).has_value());            // a prefix, not a parent
}

TEST(Languages, ProgramsAreFoundOnTheSandboxPath) {
  SandboxSpec spec;
  spec.env = {{"PATH", "/usr/local/bin:/usr/bin"}};
  spec.mounts = {{MountStep::Kind::bind_ro, "/usr", "/usr", false}};
  EXPECT_EQ("/usr/bin/bash", find_program("bash", spec, /*confined=*/true));
  spec.mounts = {{MountStep::Kind::bind_ro, "/etc", "/etc", false}};
  EXPECT_EQ("", find_program("bash", spec, /*confined=*/true));  // /usr is not in this sandbox
  EXPECT_EQ("/usr/bin/bash", find_program("bash", spec, /*confined=*/false));
}

}  // namespace
}  // namespace oishell::executors
