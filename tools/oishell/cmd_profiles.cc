// `oishell profiles`: the built-in profiles, one line each.
#include <cstdio>
#include <cstring>

#include "policy/load.h"
#include "tools/oishell/command.h"

namespace oishell::cli {
namespace {

int run_profiles(int argc, char** argv) {
  if (argc > 1 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    std::printf("usage: oishell profiles\nLists the built-in policy profiles (use with --profile NAME).\n");
    return kExitOk;
  }
  if (argc > 1) {
    std::fprintf(stderr, "oishell profiles: takes no arguments\n");
    return kExitUsage;
  }
  auto names = policy::builtin_profile_names();
  if (names.empty()) {
    std::fprintf(stderr, "oishell profiles: no profiles found in %s\n", policy::builtin_profile_path("x").c_str());
    return kExitFailure;
  }
  int status = kExitOk;
  for (const auto& name : names) {
    policy::LoadResult r = policy::load_profile(name);
    if (!r.ok()) {
      std::printf("%-12s INVALID: %s\n", name.c_str(), r.errors.front().format().c_str());
      status = kExitFailure;
      continue;
    }
    std::printf("%-12s %s\n", name.c_str(), r.policy.description.c_str());
  }
  return status;
}

const Registration kRegistration{{"profiles", "list the built-in policy profiles", &run_profiles}};

}  // namespace
}  // namespace oishell::cli
