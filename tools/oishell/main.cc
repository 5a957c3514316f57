// oishell: run commands confined by a policy, and author, check and explain policies.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "oishell/build_config.h"
#include "tools/oishell/command.h"

namespace oishell::cli {

static std::vector<Command>& table() {
  static std::vector<Command> commands;
  return commands;
}

Registration::Registration(Command command) { table().push_back(std::move(command)); }

const std::vector<Command>& commands() { return table(); }

const std::vector<completion::Option>& global_options() {
  static const std::vector<completion::Option> options = {
      {{"--help", "-h"}, completion::Value::none, "", "list the commands", {}},
      {{"--version"}, completion::Value::none, "", "print the version", {}},
  };
  return options;
}

}  // namespace oishell::cli

namespace {

void print_usage(FILE* out) {
  std::fprintf(out, "usage: oishell <command> [args...]\n\ncommands:\n");
  auto sorted = oishell::cli::commands();
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const auto& c : sorted) std::fprintf(out, "  %-10s %s\n", c.name.c_str(), c.summary.c_str());
  std::fprintf(out, "\n`oishell <command> --help` describes each command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  const auto* option = argc < 2 || argv[1][0] != '-'
                           ? nullptr
                           : oishell::completion::find_option(oishell::cli::global_options(), argv[1]);
  const std::string global = option ? option->names.front() : "";
  if (argc < 2 || global == "--help" || !std::strcmp(argv[1], "help")) {
    print_usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? oishell::cli::kExitUsage : oishell::cli::kExitOk;
  }
  if (global == "--version") {
    std::printf("oishell %s\n", oishell::build::kVersion);
    return 0;
  }
  for (const auto& c : oishell::cli::commands()) {
    if (c.name == argv[1]) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "oishell: unknown command `%s`\n\n", argv[1]);
  print_usage(stderr);
  return oishell::cli::kExitUsage;
}
