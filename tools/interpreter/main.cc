// interpreter: the Open Interpreter-compatible agent. --version answers before anything else is set up (no
// curl, no supervisor, no parsing library), so it starts in a few milliseconds.
#include <cstdio>
#include <cstring>

#include "agent/session.h"
#include "oishell/build_config.h"
#include "tools/interpreter/cli.h"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--version")) {
      std::printf("interpreter %s (oishell; Open Interpreter-compatible)\n", oishell::build::kVersion);
      return 0;
    }
    if (!std::strcmp(argv[i], "--")) break;
  }
  std::string help;
  auto options = oishell::interpreter::parse_cli(argc, argv, &help);
  if (!options) {
    std::fprintf(stderr, "interpreter: %s\nRun `interpreter --help` for the flags.\n",
                 options.status().message().c_str());
    return 2;
  }
  if (!help.empty()) {
    std::fputs(help.c_str(), stdout);
    return 0;
  }
  return oishell::agent::run_session(*options);
}
