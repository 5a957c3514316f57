// The seccomp programs the build precompiled (runtime/inside/seccomp_prebuilt.h) are the ones libseccomp compiles now, and
// the built-in profiles use them. A spec the build did not precompile (allow_syscalls) is compiled at run time.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "harness.h"
#include "policy/compile.h"
#include "policy/compiler.h"
#include "runtime/inside/seccomp.h"
#include "runtime/inside/seccomp_compile.h"
#include "runtime/inside/seccomp_prebuilt.h"

namespace oishell::test {
namespace {

std::string bytes_of(const std::vector<sock_filter>& program) {
  return std::string(reinterpret_cast<const char*>(program.data()), program.size() * sizeof(sock_filter));
}

TEST(SeccompPrebuilt, EachProgramIsWhatLibseccompCompilesNow) {
  const auto specs = prebuilt_seccomp_specs();
  ASSERT_EQ(specs.size(), 4u);  // default and strict, each with and without nested namespaces
  for (const SeccompSpec& spec : specs) {
    const std::vector<sock_filter>* prebuilt = prebuilt_seccomp_program(spec);
    ASSERT_NE(prebuilt, nullptr);
    auto live = seccomp_compile_with_libseccomp(spec, /*notify=*/true);
    ASSERT_TRUE(live.is_ok()) << live.status().message();
    EXPECT_EQ(bytes_of(*prebuilt), bytes_of(live->instructions))
        << "level " << static_cast<int>(spec.level) << ", nested " << spec.nested_namespaces;
    // Well under the kernel's limit (BPF_MAXINSNS, 4096): about 600 instructions with every set in.
    EXPECT_LT(prebuilt->size(), static_cast<size_t>(BPF_MAXINSNS / 4)) << "level " << static_cast<int>(spec.level);
  }
}

TEST(SeccompPrebuilt, BuiltInProfilesUseThemAndOtherSpecsCompileAtRunTime) {
  CompileContext context = CompileContext::from_process();
  TempDir project;  // a project directory of its own: a shared directory such as /tmp is no workspace
  context.cwd = project.path();
  for (const char* profile : {"default", "strict", "offline", "python-dev"}) {
    auto spec = compile_policy(PolicySource{"", profile}, PolicyOverrides{}, context);
    ASSERT_TRUE(spec.is_ok()) << profile << ": " << spec.status().message();
    EXPECT_NE(prebuilt_seccomp_program(spec->seccomp), nullptr) << profile;
  }
  // The neighbour: allowing one syscall back makes a spec the build did not see; it still compiles, at run time,
  // and differs from the level's prebuilt program.
  SeccompSpec allowed = policy::seccomp_spec(SeccompLevel::default_level, false);
  allowed.allow_syscalls = {"ptrace"};
  EXPECT_EQ(prebuilt_seccomp_program(allowed), nullptr);
  auto compiled = seccomp_compile(allowed);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
  const SeccompSpec level = policy::seccomp_spec(SeccompLevel::default_level, false);
  EXPECT_NE(bytes_of(compiled->instructions), bytes_of(*prebuilt_seccomp_program(level)));
}

}  // namespace
}  // namespace oishell::test
