#include <map>
#include <string>

#include "probe.h"

namespace probe {

struct Entry {
  const char* usage;
  Action action;
};

static std::map<std::string, Entry>& table() {
  static std::map<std::string, Entry> t;
  return t;
}

Register::Register(const char* name, const char* usage, Action action) { table()[name] = {usage, action}; }

}  // namespace probe

int main(int argc, char** argv) {
  if (argc < 2 || !probe::table().count(argv[1])) {
    std::fprintf(stderr, "usage: oishell-probe <action> [args]\nactions:\n");
    for (const auto& [name, entry] : probe::table()) std::fprintf(stderr, "  %s %s\n", name.c_str(), entry.usage);
    return 2;
  }
  probe::Args args(argv + 2, argv + argc);
  return probe::table()[argv[1]].action(args);
}
