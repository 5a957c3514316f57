// Build step: compiles the seccomp programs of the built-in levels (policy::seccomp_spec()) with libseccomp and
// writes them as C++ initialisers for runtime/inside/seccomp_prebuilt.cc.
//
//   oishell_seccomp_precompile OUTPUT.inc
#include <seccomp.h>

#include <cstdio>
#include <string>

#include "policy/compiler.h"
#include "runtime/inside/seccomp_compile.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.inc\n", argv[0]);
    return 2;
  }
  // The programs use user notification; the build machine's kernel need not offer it (at run time, a kernel
  // without it gets a program compiled then, without notification).
  if (seccomp_api_set(5) != 0) {
    std::fprintf(stderr, "seccomp_precompile: libseccomp cannot use API level 5 (user notification)\n");
    return 1;
  }
  std::string out = "// Generated at build time by tools/seccomp_precompile/main.cc; not to be edited.\n";
  for (auto level : {oishell::SeccompLevel::default_level, oishell::SeccompLevel::strict}) {
    for (bool nested : {false, true}) {
      oishell::SeccompSpec spec = oishell::policy::seccomp_spec(level, nested);
      auto program = oishell::seccomp_compile_with_libseccomp(spec, /*notify=*/true);
      if (!program.is_ok()) {
        std::fprintf(stderr, "seccomp_precompile: %s\n", program.status().message().c_str());
        return 1;
      }
      // The size, for readers of the generated file (the kernel takes at most BPF_MAXINSNS = 4096).
      out += "// " + std::to_string(program->instructions.size()) + " instructions\n";
      out += std::string("{oishell::SeccompLevel::") +
             (level == oishell::SeccompLevel::strict ? "strict" : "default_level") + ", " +
             (nested ? "true" : "false") + ",\n {";
      for (const auto& name : spec.deny_sets) out += "\"" + name + "\", ";
      out += "},\n {";
      char buf[64];
      for (const sock_filter& f : program->instructions) {
        std::snprintf(buf, sizeof buf, "{0x%04x, %u, %u, 0x%08x}, ", f.code, f.jt, f.jf, f.k);
        out += buf;
      }
      out += "}},\n";
    }
  }
  std::FILE* file = std::fopen(argv[1], "w");
  if (!file || std::fputs(out.c_str(), file) < 0 || std::fclose(file) != 0) {
    std::perror(argv[1]);
    return 1;
  }
  return 0;
}
