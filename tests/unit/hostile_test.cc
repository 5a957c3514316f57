// Hostile policy files: each must end in a clear error, quickly, never a crash or a hang. The time bound is the
// test finishing (ctest's timeout), not a timing assertion.
#include <sys/stat.h>

#include <string>

#include <gtest/gtest.h>

#include "policy/load.h"
#include "policy/yaml_safe.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

TEST(Hostile, HugeFileIsRefusedBeforeParsing) {
  std::string huge = "version: 1\ndescription: \"" + std::string(2 << 20, 'a') + "\"\n";
  std::string e = errors_of(huge);
  EXPECT_NE(std::string::npos, e.find("file is larger than the limit of 1048576 bytes")) << e.substr(0, 200);
}

TEST(Hostile, HugeFileOnDiskIsNotReadWhole) {
  TempDir dir;
  std::string path = dir.write("big.yaml", std::string(8 << 20, '#'));
  auto r = policy::load_policy_file(path);
  ASSERT_EQ(1u, r.errors.size());
  EXPECT_NE(std::string::npos, r.errors[0].message.find("larger than the limit"));
}

TEST(Hostile, DeepNestingIsRefused) {
  std::string deep_flow = "version: 1\ndescription: " + std::string(100000, '[') + std::string(100000, ']') + "\n";
  std::string e = errors_of(deep_flow);
  EXPECT_NE(std::string::npos, e.find("nesting deeper than 32 levels")) << e.substr(0, 200);

  std::string deep_block = "version: 1\n";
  std::string indent;
  for (int i = 0; i < 200; ++i) {
    deep_block += indent + "k" + std::to_string(i) + ":\n";
    indent += " ";
  }
  e = errors_of(deep_block);
  EXPECT_NE(std::string::npos, e.find("nesting deeper than 32 levels")) << e.substr(0, 200);
}

TEST(Hostile, AliasBombIsRefused) {
  std::string bomb = R"(version: 1
a: &a ["x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
)";
  EXPECT_EQ("test.yaml:3:8: YAML aliases are not allowed in policies (write the value out instead of `*name`)",
            errors_of(bomb));
  // Even one alias, where it would be harmless, is refused: the rule is simple to state and to check.
  EXPECT_NE(std::string::npos, errors_of("version: 1\ndescription: &d x\nextends: *d\n").find("YAML aliases"));
}

TEST(Hostile, ManyNodesAreRefused) {
  std::string many = "version: 1\nenv:\n  pass: [";
  for (int i = 0; i < 60000; ++i) many += "A,";
  many += "A]\n";
  std::string e = errors_of(many);
  EXPECT_NE(std::string::npos, e.find("too many YAML nodes")) << e.substr(0, 200);
}

TEST(Hostile, ManyUnknownKeysGiveABoundedReport) {
  std::string many = "version: 1\n";
  for (int i = 0; i < 20000; ++i) many += "k" + std::to_string(i) + ": 1\n";
  auto r = load_text(many);
  ASSERT_EQ(101u, r.errors.size());
  EXPECT_EQ("test.yaml:102:1: too many errors; the rest of this file is not reported", r.errors.back().format());
}

TEST(Hostile, BinaryGarbageIsAnError) {
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245 + 12345;
    garbage += static_cast<char>((x >> 16) & 0xff);
  }
  auto r = load_text(garbage);
  EXPECT_FALSE(r.ok());
  std::string without_nul = garbage;
  for (auto& c : without_nul) c = c ? c : 'x';
  r = load_text(without_nul);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ("test.yaml: file contains NUL bytes; not a YAML or JSON text", errors_of(std::string("version: 1\0", 12)));
}

TEST(Hostile, MultipleDocumentsAreRefused) {
  EXPECT_NE(std::string::npos,
            errors_of("version: 1\n---\nversion: 1\nnetwork: {mode: proxy}\n").find("more than one YAML document"));
}

TEST(Hostile, LongScalarsAreTruncatedInMessages) {
  std::string e = errors_of("version: 1\nlandlock: " + std::string(5000, 'z') + "\n");
  EXPECT_LT(e.size(), 400u) << e.substr(0, 400);
}

TEST(Hostile, ExtendsCycleIsDetected) {
  TempDir dir;
  dir.write("a.yaml", "version: 1\nextends: b.yaml\n");
  dir.write("b.yaml", "version: 1\nextends: ./a.yaml\n");
  auto r = policy::load_policy_file(dir.path() + "/a.yaml");
  ASSERT_EQ(1u, r.errors.size()) << policy::format_diagnostics(r.errors);
  EXPECT_EQ(dir.path() + "/b.yaml", r.errors[0].pos.file);
  EXPECT_EQ(2, r.errors[0].pos.line);
  EXPECT_NE(std::string::npos, r.errors[0].message.find("extends cycle: ")) << r.errors[0].message;
  dir.write("self.yaml", "version: 1\nextends: self.yaml\n");
  r = policy::load_policy_file(dir.path() + "/self.yaml");
  ASSERT_EQ(1u, r.errors.size());
  EXPECT_NE(std::string::npos, r.errors[0].message.find("extends cycle"));
}

TEST(Hostile, ExtendsChainDepthIsBounded) {
  TempDir dir;
  for (int i = 0; i < 20; ++i) {
    dir.write("p" + std::to_string(i) + ".yaml", "version: 1\nextends: p" + std::to_string(i + 1) + ".yaml\n");
  }
  dir.write("p20.yaml", "version: 1\n");
  auto r = policy::load_policy_file(dir.path() + "/p0.yaml");
  ASSERT_EQ(1u, r.errors.size()) << policy::format_diagnostics(r.errors);
  EXPECT_NE(std::string::npos, r.errors[0].message.find("extends chain deeper than 8"));
}

TEST(Hostile, ExtendsOfAFifoOrDeviceDoesNotHang) {
  TempDir dir;
  std::string fifo = dir.path() + "/fifo.yaml";
  ASSERT_EQ(0, ::mkfifo(fifo.c_str(), 0600));
  std::string child = dir.write("child.yaml", "version: 1\nextends: fifo.yaml\n");
  auto r = policy::load_policy_file(child);
  ASSERT_EQ(1u, r.errors.size()) << policy::format_diagnostics(r.errors);
  EXPECT_EQ(fifo + ": not a regular file", r.errors[0].format());
  dir.write("zero.yaml", "version: 1\nextends: /dev/zero\n");
  r = policy::load_policy_file(dir.path() + "/zero.yaml");
  ASSERT_EQ(1u, r.errors.size()) << policy::format_diagnostics(r.errors);
  EXPECT_EQ("/dev/zero: not a regular file", r.errors[0].format());
}

TEST(Hostile, UnreadableFilesAreErrorsWithTheCall) {
  auto r = policy::load_policy_file("/nonexistent/policy.yaml");
  ASSERT_EQ(1u, r.errors.size());
  EXPECT_EQ("/nonexistent/policy.yaml: open(\"/nonexistent/policy.yaml\"): ENOENT (No such file or directory)",
            r.errors[0].format());
  TempDir dir;
  r = policy::load_policy_file(dir.path());
  ASSERT_EQ(1u, r.errors.size());
  EXPECT_NE(std::string::npos, r.errors[0].message.find("EISDIR")) << r.errors[0].message;
}

}  // namespace
}  // namespace oishell::testing
