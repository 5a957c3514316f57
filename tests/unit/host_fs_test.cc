// The HostFs seam: the fake resolves like realpath(3); the real one drives a compile on this machine.
#include <unistd.h>

#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

TEST(FakeHostFs, ResolvesLikeRealpath) {
  FakeHostFs fs;
  fs.dir("/usr/lib").symlink("/lib", "usr/lib").symlink("/a/loop", "/a/loop").symlink("/x/abs", "/usr/lib");
  EXPECT_EQ("/usr/lib", fs.real_path("/lib"));
  EXPECT_EQ("/usr/lib", fs.real_path("/x/abs"));
  EXPECT_EQ(std::nullopt, fs.real_path("/lib/missing"));
  EXPECT_EQ(std::nullopt, fs.real_path("/a/loop"));  // a loop ends, it does not hang
  EXPECT_EQ(HostFs::Kind::symlink, fs.kind("/lib"));
  EXPECT_EQ(HostFs::Kind::directory, fs.kind("/usr"));
}

TEST(Compile, SystemSymlinkLeavingTheSystemDirsIsBoundAtItsTarget) {
  FakeHostFs fs;
  fs.dir("/usr/bin").dir("/etc").dir("/opt/lib64").symlink("/lib64", "/opt/lib64").symlink("/bin", "usr/bin");
  fs.dir("/home/user/project");
  CompileContext c = fake_context();
  c.fs = &fs;
  auto r = load_text("version: 1\n");
  ASSERT_TRUE(r.ok());
  auto spec = policy::compile(r.policy, c);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  auto find = [&](const std::string& target) -> const MountStep* {
    for (const auto& m : spec->mounts) {
      if (m.target == target) return &m;
    }
    return nullptr;
  };
  ASSERT_NE(nullptr, find("/bin"));
  EXPECT_EQ(MountStep::Kind::symlink, find("/bin")->kind);
  EXPECT_EQ("usr/bin", find("/bin")->source);
  ASSERT_NE(nullptr, find("/lib64"));
  EXPECT_EQ(MountStep::Kind::bind_ro, find("/lib64")->kind);  // its target is not otherwise visible
  EXPECT_EQ("/opt/lib64", find("/lib64")->source);
  EXPECT_EQ(nullptr, find("/sbin"));  // missing on this host: no step
}

TEST(Compile, OnThisMachine) {
  TempDir dir;
  CompileContext c = CompileContext::from_process();
  c.cwd = dir.path();
  auto spec = compile_policy(PolicySource{"", "default"}, PolicyOverrides{}, c);
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  char real[4096];
  ASSERT_NE(nullptr, ::realpath(dir.path().c_str(), real));
  EXPECT_EQ(real, spec->workspace);
  EXPECT_EQ(real, spec->cwd);
  ASSERT_FALSE(spec->mounts.empty());
  EXPECT_EQ("/usr", spec->mounts.front().target);
  EXPECT_EQ(MountStep::Kind::bind_ro, spec->mounts.front().kind);
  // Every bind source exists here, and every path is absolute and normalised.
  for (const auto& m : spec->mounts) {
    EXPECT_EQ('/', m.target[0]) << m.target;
    for (const char* bad : {"//", "/./", "/../"}) EXPECT_EQ(std::string::npos, m.target.find(bad)) << m.target;
    EXPECT_TRUE(m.target == "/" || m.target.back() != '/') << m.target;
    if (m.kind == MountStep::Kind::bind_ro || m.kind == MountStep::Kind::bind_rw) {
      EXPECT_EQ(0, ::access(m.source.c_str(), F_OK)) << m.source;
    }
  }
}

}  // namespace
}  // namespace oishell::testing
