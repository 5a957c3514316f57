// Filesystem observations to read_only / read_write entries against the base's mount plan: see learn_entries.h.
// A path is covered by the deepest mount step whose target is it or an ancestor (a later step wins at the same
// depth), unless the base hides it. A tmpfs step is the sandbox's own scratch: writes there need nothing, but host
// files read there are not seen without a grant, and a grant made for reads turns that spot read-only again.
#include <algorithm>

#include "policy/compiler.h"
#include "policy/learn_entries.h"
#include "policy/mount_plan.h"
#include "policy/path_verdict.h"
#include "policy/paths.h"

namespace oishell::policy {
namespace {

enum class Cover { none, read_write, scratch, read_only, protect, sandbox_own, hidden };

std::string parent_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool well_formed(const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  return path.find("/../") == std::string::npos && !path.ends_with("/..");
}

const char* verb_of(LearnedPath::Mode mode) {
  switch (mode) {
    case LearnedPath::Mode::read: return "read";
    case LearnedPath::Mode::exec: return "ran";
    case LearnedPath::Mode::write: return "wrote";
  }
  return "used";
}

class PathLearner {
 public:
  PathLearner(const SandboxSpec& base, const BaseFacts& facts, const HostFs& host)
      : base_(base), facts_(facts), host_(host) {}

  PathEntries learn(const std::vector<LearnedPath>& paths);

 private:
  struct Use {
    const LearnedPath* seen;
    std::string path;  // normalised
    std::string want;  // the path a grant must cover: `path`, or for a write its nearest existing directory
  };

  Cover cover(const std::string& path) const;
  // Why a directory is too wide to grant even read-only (`/`, a shared root, a system root, the home or an
  // ancestor of it); "" when it is not.
  std::string too_wide_to_read(const std::string& dir) const;
  // Where a write to `path` is granted (itself, or its nearest existing directory, resolved); nullopt after
  // reporting why it cannot be.
  std::optional<std::string> write_target(const Use& use);
  // The target of the deepest tmpfs step of the base over `path`, or "".
  std::string scratch_of(const std::string& path) const;
  void refuse(const Use& use, const std::string& reason);
  bool under(const std::set<std::string>& grants, const std::string& path, const std::string& except = "") const;

  const SandboxSpec& base_;
  const BaseFacts& facts_;
  const HostFs& host_;
  std::map<std::string, std::pair<std::string, Tally>> refused_;  // line -> (path, who)
};

Cover PathLearner::cover(const std::string& path) const {
  for (const auto& h : facts_.hidden) {
    if (path_within(path, h)) return Cover::hidden;
  }
  const MountStep* best = deciding_step(base_, path);
  if (!best) return Cover::none;
  switch (best->kind) {
    case MountStep::Kind::bind_ro:
    case MountStep::Kind::file:
      return Cover::read_only;
    case MountStep::Kind::bind_rw:
      return Cover::read_write;
    case MountStep::Kind::tmpfs:
      return Cover::scratch;
    case MountStep::Kind::proc:
    case MountStep::Kind::dev:
      return Cover::sandbox_own;
    case MountStep::Kind::protect:
      return Cover::protect;
    case MountStep::Kind::hide:
      return Cover::hidden;
    case MountStep::Kind::symlink:
      return Cover::none;
  }
  return Cover::none;
}

std::string PathLearner::scratch_of(const std::string& path) const {
  std::string best;
  for (const auto& m : base_.mounts) {
    if (m.kind == MountStep::Kind::tmpfs && path_within(path, m.target) && m.target.size() >= best.size()) {
      best = m.target;
    }
  }
  return best;
}

std::string PathLearner::too_wide_to_read(const std::string& dir) const {
  if (dir == "/") return "it is the root directory";
  for (const char* shared : {"/var", "/home", "/tmp", "/var/tmp", "/mnt", "/media", "/srv", "/run", "/opt"}) {
    if (dir == shared) return std::string("it is ") + shared + ", which holds what is not yours to give away";
  }
  for (const auto& system : system_dirs()) {
    if (dir == system) return "it is the system directory " + system;
  }
  if (!facts_.real_home.empty() && path_within(facts_.real_home, dir)) {
    return facts_.real_home == dir ? "it is your home directory" : "it contains your home directory";
  }
  return "";
}

void PathLearner::refuse(const Use& use, const std::string& reason) {
  std::string line = use.path + " (" + reason + ")";
  auto& [path, tally] = refused_[line];
  path = use.path;
  tally.add(use.seen->program, verb_of(use.seen->mode), use.path, use.seen->count);
}

std::optional<std::string> PathLearner::write_target(const Use& use) {
  std::string dir = use.path;
  while (dir != "/" && host_.kind(dir) == HostFs::Kind::missing) dir = parent_of(dir);
  const bool itself = dir == use.path;
  if (!itself && host_.kind(dir) != HostFs::Kind::directory) {
    refuse(use, "not writable: its nearest existing ancestor " + dir + " is not a directory");
    return std::nullopt;
  }
  std::string real = host_.real_path(dir).value_or(dir);
  if (cover(real) == Cover::hidden) {
    refuse(use, "hidden by the base");
    return std::nullopt;
  }
  if (std::string why = writable_refusal(real, facts_.real_home, /*allow_home=*/false); !why.empty()) {
    refuse(use, itself ? "not writable: " + why : "not writable: its nearest existing directory " + real + ": " + why);
    return std::nullopt;
  }
  return real;
}

bool PathLearner::under(const std::set<std::string>& grants, const std::string& path,
                        const std::string& except) const {
  return std::any_of(grants.begin(), grants.end(),
                     [&](const std::string& g) { return g != except && path_within(path, g); });
}

PathEntries PathLearner::learn(const std::vector<LearnedPath>& paths) {
  std::vector<Use> reads, writes, scratch_writes;
  for (const auto& seen : paths) {
    Use use{&seen, seen.path, seen.path};
    if (!well_formed(seen.path)) {
      refuse(use, "not an absolute path");
      continue;
    }
    use.path = use.want = normalise_path(seen.path);
    const bool write = seen.mode == LearnedPath::Mode::write;
    const std::string scratch = scratch_of(use.path);
    switch (cover(use.path)) {
      case Cover::hidden:
        // A write in the scratch tmpfs where the base hides the host's copy (~/.cache under the tmpfs home) lands in
        // the scratch: the run needs nothing, and the host's copy stays out of reach.
        if (write && !scratch.empty()) break;
        refuse(use, "hidden by the base");
        break;
      case Cover::protect:
        if (write) refuse(use, "protected by the base");
        break;
      case Cover::read_write:
      case Cover::sandbox_own:
        break;
      case Cover::scratch:
        if (write) {
          // The program meant a host directory the scratch tmpfs shadows (an existing /tmp/project/out under the
          // sandbox's empty /tmp): that directory, as for any write. A new name at the top of the scratch: nothing.
          std::string dir = use.path;
          while (dir != "/" && host_.kind(dir) == HostFs::Kind::missing) dir = parent_of(dir);
          if (dir != scratch && path_within(dir, scratch)) {
            writes.push_back(use);
          } else {
            scratch_writes.push_back(use);
          }
          break;
        }
        [[fallthrough]];
      case Cover::none:
        if (write) {
          writes.push_back(use);
          break;
        }
        if (use.path == "/" || host_.kind(use.path) == HostFs::Kind::missing) break;  // nothing on the host to show
        if (std::any_of(base_.mounts.begin(), base_.mounts.end(), [&](const MountStep& m) {
              return m.kind == MountStep::Kind::tmpfs && m.target == use.path;
            })) {
          break;  // the scratch directory itself is what was listed
        }
        reads.push_back(use);
        break;
      case Cover::read_only:
        if (write) writes.push_back(use);
        break;
    }
  }

  // Reads: a directory once 3 or more distinct entries of it were read, unless that is too wide.
  std::map<std::string, std::set<std::string>> by_parent;
  for (const auto& r : reads) by_parent[parent_of(r.path)].insert(r.path);
  std::vector<Use> kept_reads;
  for (auto& r : reads) {
    if (host_.kind(r.path) == HostFs::Kind::directory) {
      if (std::string why = too_wide_to_read(r.path); !why.empty()) {
        refuse(r, "too wide to grant: " + why);
        continue;
      }
    }
    std::string parent = parent_of(r.path);
    if (by_parent[parent].size() >= 3 && host_.kind(parent) == HostFs::Kind::directory &&
        too_wide_to_read(parent).empty() && cover(parent) != Cover::hidden) {
      r.want = parent;
    }
    kept_reads.push_back(r);
  }
  std::set<std::string> read_grants;
  for (const auto& r : kept_reads) read_grants.insert(r.want);

  // Writes in the scratch tmpfs need nothing, unless a grant for reads binds the host (read-only) over that spot.
  for (const auto& w : scratch_writes) {
    if (under(read_grants, w.path)) writes.push_back(w);
  }
  std::vector<Use> kept_writes;
  for (auto w : writes) {
    if (auto target = write_target(w)) {
      w.want = *target;
      kept_writes.push_back(w);
    }
  }
  std::set<std::string> write_grants;
  for (const auto& w : kept_writes) write_grants.insert(w.want);

  // A grant inside another of its kind, or a read inside a write, is not repeated.
  std::set<std::string> rw, ro;
  for (const auto& g : write_grants) {
    if (!under(write_grants, g, g)) rw.insert(g);
  }
  for (const auto& g : read_grants) {
    if (!under(rw, g) && !under(read_grants, g, g)) ro.insert(g);
  }

  // Who used each grant: the deepest final grant that covers the use (a write only by a read_write one).
  std::map<std::string, Tally> ro_tally, rw_tally;
  auto deepest = [](const std::set<std::string>& grants, const std::string& path) -> std::string {
    std::string best;
    for (const auto& g : grants) {
      if (path_within(path, g) && (best.empty() || path_depth(g) > path_depth(best))) best = g;
    }
    return best;
  };
  for (const auto* uses : {&kept_reads, &kept_writes}) {
    for (const auto& u : *uses) {
      const bool write = uses == &kept_writes;
      std::string in_rw = deepest(rw, u.want);
      std::string in_ro = write ? "" : deepest(ro, u.want);
      bool to_ro = !in_ro.empty() && (in_rw.empty() || path_depth(in_ro) > path_depth(in_rw));
      Tally& tally = to_ro ? ro_tally[in_ro] : rw_tally[in_rw];
      tally.add(u.seen->program, verb_of(u.seen->mode), u.path, u.seen->count);
    }
  }

  PathEntries out;
  for (const auto& [grants, key, tallies] :
       {std::tuple{&ro, "read_only", &ro_tally}, std::tuple{&rw, "read_write", &rw_tally}}) {
    for (const auto& g : *grants) {
      LearnEntry e;
      e.section = "filesystem";
      e.key = key;
      e.value = yaml_scalar(g);
      e.plain = g;
      e.comment = (*tallies)[g].describe(g, "file");
      out.entries.push_back(std::move(e));
    }
  }
  for (const auto& [line, who] : refused_) out.not_granted.push_back(NotGranted{line, who.second.describe(who.first, "file")});
  return out;
}

}  // namespace

PathEntries learn_path_entries(const std::vector<LearnedPath>& paths, const SandboxSpec& base,
                               const BaseFacts& facts, const HostFs& host) {
  return PathLearner(base, facts, host).learn(paths);
}

}  // namespace oishell::policy
