// write_learned_policy(): the network, system call and limit entries, and the sequence from observations to text.
// The filesystem entries are learn_paths.cc's, the text learn_text.cc's and learn_widen.cc's. See learn_writer.h.
#include "policy/learn_writer.h"

#include <algorithm>
#include <cstdio>

#include "policy/learn_entries.h"
#include "policy/paths.h"
#include "policy/units.h"

namespace oishell::policy {
namespace {

constexpr uint64_t kMinMemory = 64ull << 20;
constexpr uint64_t kMaxPids = 4'194'304;  // the policy's own bound on limits.pids

// 2x `peak`, rounded up to a power of two.
uint64_t headroom(uint64_t peak) {
  uint64_t want = peak > (1ull << 62) ? (1ull << 63) : 2 * peak;
  uint64_t out = 1;
  while (out < want && out < (1ull << 63)) out <<= 1;
  return out;
}

void learn_network(const std::vector<LearnedDestination>& seen, const NetworkSpec& base,
                   std::vector<LearnEntry>& entries, std::vector<NotGranted>& not_granted) {
  std::map<std::pair<std::string, HostRule::Protocol>, std::map<uint16_t, Tally>> wanted;
  std::map<std::string, Tally> refused;
  for (const auto& d : seen) {
    std::string where = d.host + ":" + std::to_string(d.port) + "/" + std::string(protocol_name(d.protocol));
    auto host = normalise_host(d.host);
    if (!host || d.port == 0) {
      refused[where + " (not a host name and port)"].add(d.program, "connected", where, d.count);
      continue;
    }
    if (base.mode == NetMode::none) {
      refused[where + " (the base has no network)"].add(d.program, "connected", where, d.count);
      continue;
    }
    NetDecision decision = decide(base, *host, d.port, d.protocol);
    if (decision.verdict == NetDecision::Verdict::allow) continue;
    if (decision.verdict == NetDecision::Verdict::deny && decision.rule.starts_with("deny ")) {
      refused[where + " (denied by the base: " + decision.rule + ")"].add(d.program, "connected", where, d.count);
      continue;
    }
    wanted[{*host, d.protocol}][d.port].add(d.program, "connected", std::to_string(d.port), d.count);
  }
  for (const auto& [key, by_port] : wanted) {
    const auto& [host, protocol] = key;
    LearnEntry e;
    e.section = "network";
    e.key = "allow";
    e.plain = host;
    e.protocol = std::string(protocol_name(protocol));
    for (const auto& [port, tally] : by_port) e.ports.push_back(port);
    e.port_tallies = by_port;
    set_network_rule_text(e);
    entries.push_back(std::move(e));
  }
  for (const auto& [line, tally] : refused) not_granted.push_back(NotGranted{line, tally.describe("", "port")});
}

void learn_syscalls(const std::vector<LearnedSyscall>& seen, const SeccompSpec& base,
                    std::vector<LearnEntry>& entries) {
  std::map<std::string, Tally> wanted;
  for (const auto& s : seen) {
    if (std::find(base.allow_syscalls.begin(), base.allow_syscalls.end(), s.name) != base.allow_syscalls.end()) {
      continue;
    }
    wanted[s.name].add(s.program, "called", s.name, s.count);
  }
  for (const auto& [name, tally] : wanted) {
    LearnEntry e;
    e.section = "process";
    e.key = "allow_syscalls";
    e.value = yaml_scalar(name);
    e.plain = name;
    e.comment = tally.describe(name, "");
    entries.push_back(std::move(e));
  }
}

std::string mebibytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

void learn_limits(const LearnRun& run, const LimitsSpec& base, std::vector<LearnEntry>& entries) {
  auto scalar = [&](const std::string& key, const std::string& value, const std::string& comment) {
    LearnEntry e;
    e.section = "limits";
    e.key = key;
    e.value = value;
    e.plain = value;
    e.comment = comment;
    e.scalar = true;
    entries.push_back(std::move(e));
  };
  if (run.peak_memory_bytes) {
    uint64_t memory = std::max(kMinMemory, headroom(*run.peak_memory_bytes));
    if (base.memory_bytes != memory) {
      std::string text = format_size(memory);
      std::erase(text, ' ');  // "256 MiB" -> "256MiB", as the profiles write it
      scalar("memory", text, "peak " + mebibytes(*run.peak_memory_bytes) +
                                 ", doubled and rounded up to a power of two (at least 64MiB)");
    }
  }
  if (run.peak_processes) {
    uint64_t pids = std::min(kMaxPids, headroom(*run.peak_processes));
    if (base.pids != pids) {
      scalar("pids", std::to_string(pids),
             "peak " + std::to_string(*run.peak_processes) + ", doubled and rounded up to a power of two");
    }
  }
}

}  // namespace

BaseFacts base_facts(const Policy& base, const CompileContext& context, const SandboxSpec& spec) {
  const CachedHostFs host(context.fs ? *context.fs : HostFs::real());
  BaseFacts facts;
  if (!context.home.empty() && context.home[0] == '/' && context.home.find("/..") == std::string::npos) {
    if (auto real = host.real_path(normalise_path(context.home)); real && host.kind(*real) == HostFs::Kind::directory) {
      facts.real_home = *real;
    }
  }
  PathVars vars{context.cwd, spec.workspace, context.home, context.tmpdir};
  for (const auto& item : base.filesystem.hide) {
    auto expanded = expand_path(item.text, PathRole::absolute, vars);
    if (!expanded) continue;  // compile refused it already
    facts.hidden.push_back(*expanded);
    if (auto real = host.real_path(*expanded); real && *real != *expanded) facts.hidden.push_back(*real);
  }
  return facts;
}

Result<LearnResult> write_learned_policy(const LearnRun& run, const SandboxSpec& base, const BaseFacts& facts,
                                         const HostFs& host, const std::optional<std::string>& existing) {
  PathEntries paths = learn_path_entries(run.paths, base, facts, host);
  std::vector<LearnEntry> entries = std::move(paths.entries);
  std::vector<NotGranted> not_granted = std::move(paths.not_granted);
  learn_network(run.destinations, base.network, entries, not_granted);
  learn_syscalls(run.syscalls, base.seccomp, entries);
  learn_limits(run, base.limits, entries);

  LearnResult out;
  if (existing) {
    auto widened = widen_policy_text(*existing, entries, not_granted);
    if (!widened) return widened.status();
    out.text = std::move(*widened);
  } else {
    out.text = render_policy(run, entries, not_granted);
  }
  if (!out.text.empty() && out.text.back() != '\n') out.text += '\n';  // a file ends with its last line
  for (const auto& n : not_granted) out.wanted_not_granted.push_back(n.line);
  for (const auto& e : entries) {
    if (e.section == "filesystem" && e.key == "read_only") out.read_only_paths.push_back(e.plain);
    if (e.section == "filesystem" && e.key == "read_write") out.read_write_paths.push_back(e.plain);
    out.added.push_back(e.section + "." + e.key + ": " + e.value + (e.comment.empty() ? "" : "   # " + e.comment));
  }
  return out;
}

}  // namespace oishell::policy
