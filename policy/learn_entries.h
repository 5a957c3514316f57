#pragma once
// The steps of write_learned_policy() (policy/learn_writer.h): observations to entries (learn_paths.cc for the
// filesystem, learn_writer.cc for the rest), entries to text (learn_text.cc: a new file; learn_widen.cc: inserted
// into an existing one).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/learn_writer.h"

namespace oishell::policy {

// Who did something to an entry, per program: the distinct paths (or ports, names) by verb, and how often.
class Tally {
 public:
  void add(const std::string& program, const std::string& verb, const std::string& what, uint64_t count);
  // "python3: read 3 files (12 times); sh: ran (1 time)". `self`: the entry's own value, told as the bare verb.
  std::string describe(const std::string& self, const std::string& noun) const;
  bool empty() const { return programs_.empty(); }
  void merge(const Tally& other);

 private:
  struct Use {
    std::map<std::string, std::set<std::string>> whats;  // verb -> distinct paths
    uint64_t count = 0;
  };
  std::map<std::string, Use> programs_;
};

// One line of the output: `value` in list `section.key` (or the scalar `section.key: value` when `scalar`).
struct LearnEntry {
  std::string section;  // "filesystem", "network", "process", "limits"
  std::string key;      // "read_only", "allow", "allow_syscalls", "memory"
  std::string value;    // YAML text, already quoted where needed
  std::string comment;  // without the leading "# "
  bool scalar = false;
  // For widening: the plain value compared with existing items ("/srv/data"), and for network rules the host,
  // protocol and ports (only ports not already listed for that host are inserted).
  std::string plain;
  std::vector<uint16_t> ports;
  std::string protocol;
  std::map<uint16_t, Tally> port_tallies;  // who connected to each port (the comment of a network rule)
};

// What was wanted and is not granted: "PATH (REASON)" and who wanted it.
struct NotGranted {
  std::string line;
  std::string comment;
};

struct PathEntries {
  std::vector<LearnEntry> entries;  // filesystem.read_only, then filesystem.read_write, each sorted
  std::vector<NotGranted> not_granted;
};

// The filesystem grants `paths` need on top of `base` (learn_paths.cc).
PathEntries learn_path_entries(const std::vector<LearnedPath>& paths, const SandboxSpec& base,
                               const BaseFacts& facts, const HostFs& host);

// A value as a YAML plain scalar when that reads back as itself, else double-quoted.
std::string yaml_scalar(const std::string& text);
// Text made safe for a comment: control characters as \xNN (a newline would end the comment).
std::string comment_text(const std::string& text);
// A network rule's value and comment from its host, protocol, ports and port_tallies.
void set_network_rule_text(LearnEntry& entry);
// "    - VALUE   # COMMENT" (list item) or "  KEY: VALUE   # COMMENT" (scalar).
std::string entry_line(const LearnEntry& entry);
// The whole new file.
std::string render_policy(const LearnRun& run, const std::vector<LearnEntry>& entries,
                          const std::vector<NotGranted>& not_granted);
// The "# Wanted, not granted" comment block (empty when there is nothing in it).
std::string render_not_granted(const std::vector<NotGranted>& not_granted);

// `existing` with `entries` inserted (learn_widen.cc); entries already present are skipped and removed from
// `entries`, so that the caller reports only what was added. An error when `existing` is not in this layout.
Result<std::string> widen_policy_text(const std::string& existing, std::vector<LearnEntry>& entries,
                                      const std::vector<NotGranted>& not_granted);

}  // namespace oishell::policy
