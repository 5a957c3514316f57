// Mount plan: system dirs read-only, /proc, /dev, /tmp, home, workspace and extras, ordered parents first; then
// hide steps (hide wins over every bind), then protect steps; Landlock rules mirror the plan. See mount_plan.h.
#include "policy/mount_plan.h"

#include <algorithm>

#include "policy/compiler.h"

namespace oishell::policy {
namespace {

size_t depth(const std::string& path) {
  return path == "/" ? 0 : static_cast<size_t>(std::count(path.begin(), path.end(), '/'));
}

bool is_bind(MountStep::Kind k) { return k == MountStep::Kind::bind_ro || k == MountStep::Kind::bind_rw; }

struct Planned {
  MountStep step;
  FsAccess access = FsAccess::read;
  bool landlock = true;
};

// The deepest step of `plan` whose target is `path` or an ancestor of it.
const Planned* nearest_mount(const std::vector<Planned>& plan, const std::string& path) {
  const Planned* best = nullptr;
  for (const auto& p : plan) {
    if (p.step.kind == MountStep::Kind::symlink) continue;
    if (path_within(path, p.step.target) && (!best || depth(p.step.target) >= depth(best->step.target))) best = &p;
  }
  return best;
}

Planned make(MountStep::Kind kind, std::string source, std::string target, FsAccess access, bool optional = false) {
  Planned p;
  p.step.kind = kind;
  p.step.source = std::move(source);
  p.step.target = std::move(target);
  p.step.optional = optional;
  p.access = access;
  return p;
}

}  // namespace

const std::vector<std::string>& system_dirs() {
  static const std::vector<std::string> kDirs = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
                                                 "/etc"};
  return kDirs;
}

Status plan_filesystem(const FsPlanInput& in, SandboxSpec& spec, std::vector<Diagnostic>& errors) {
  const HostFs& host = *in.host;
  const std::string& workspace = in.vars.workspace;
  std::vector<Planned> plan;
  size_t errors_before = errors.size();

  // System directories; a symlink that stays within them (merged /usr) is recreated as the same symlink.
  for (const auto& dir : system_dirs()) {
    HostFs::Kind kind = host.kind(dir);
    if (kind == HostFs::Kind::missing) continue;
    auto real = host.real_path(dir);
    if (!real) continue;  // a dangling link: nothing to show
    if (kind == HostFs::Kind::symlink) {
      auto within = std::any_of(system_dirs().begin(), system_dirs().end(), [&](const std::string& d) {
        return host.kind(d) == HostFs::Kind::directory && path_within(*real, d);
      });
      if (within) {
        Planned link = make(MountStep::Kind::symlink, host.read_link(dir).value_or(*real), dir, FsAccess::read);
        link.landlock = false;
        plan.push_back(link);
        continue;
      }
    }
    if (host.kind(*real) != HostFs::Kind::directory) continue;
    plan.push_back(make(MountStep::Kind::bind_ro, *real, dir, FsAccess::read_exec, true));
  }
  plan.push_back(make(MountStep::Kind::proc, "", "/proc", FsAccess::read));
  plan.push_back(make(MountStep::Kind::dev, "", "/dev", FsAccess::dev));
  plan.push_back(make(MountStep::Kind::tmpfs, "", "/tmp", FsAccess::write));
  if (in.home == HomeMode::tmpfs) plan.push_back(make(MountStep::Kind::tmpfs, "", in.home_path, FsAccess::write));
  plan.push_back(in.workspace_read_only
                     ? make(MountStep::Kind::bind_ro, workspace, workspace, FsAccess::read_exec)
                     : make(MountStep::Kind::bind_rw, workspace, workspace, FsAccess::write));

  auto resolve_extra = [&](const PathItem& item, const std::string& key) -> std::optional<std::string> {
    auto expanded = expand_path(item.text, PathRole::absolute, in.vars);
    if (!expanded) {
      errors.push_back(Diagnostic{item.pos, key, expanded.status().message(), ""});
      return std::nullopt;
    }
    auto real = host.real_path(*expanded);
    if (!real) {
      errors.push_back(Diagnostic{item.pos, key, *expanded + " does not exist on this host",
                                  "create it, or remove the entry"});
      return std::nullopt;
    }
    if (*real == "/") {
      errors.push_back(Diagnostic{item.pos, key, item.text + " resolves to `/`", "list the directories needed"});
      return std::nullopt;
    }
    return real;
  };
  for (const auto& item : in.fs->read_only) {
    if (auto real = resolve_extra(item, "filesystem.read_only")) {
      plan.push_back(make(MountStep::Kind::bind_ro, *real, *real, FsAccess::read_exec));
    }
  }
  for (const auto& item : in.fs->read_write) {
    if (auto real = resolve_extra(item, "filesystem.read_write")) {
      plan.push_back(make(MountStep::Kind::bind_rw, *real, *real, FsAccess::write));
    }
  }

  // Hidden paths, lexical and resolved (a symlinked ~/.ssh hides its target too).
  std::vector<std::pair<std::string, const PathItem*>> hidden;
  for (const auto& item : in.fs->hide) {
    auto expanded = expand_path(item.text, PathRole::absolute, in.vars);
    if (!expanded) {
      errors.push_back(Diagnostic{item.pos, "filesystem.hide", expanded.status().message(), ""});
      continue;
    }
    hidden.emplace_back(*expanded, &item);
    if (auto real = host.real_path(*expanded); real && *real != *expanded) hidden.emplace_back(*real, &item);
  }
  auto hidden_by = [&](const std::string& path) -> const PathItem* {
    for (const auto& [h, item] : hidden) {
      if (path_within(path, h)) return item;
    }
    return nullptr;
  };

  // Hide wins: the workspace may not be inside a hidden path; other binds under one are dropped.
  if (const PathItem* item = hidden_by(workspace)) {
    errors.push_back(Diagnostic{item->pos, "filesystem.hide",
                                "the workspace " + workspace + " is inside hidden path " + item->text,
                                "choose another workspace, or a profile that does not hide it"});
  }
  if (errors.size() != errors_before) return Status::error("filesystem");
  std::erase_if(plan, [&](const Planned& p) { return is_bind(p.step.kind) && p.step.target != workspace &&
                                                     hidden_by(p.step.target) != nullptr; });

  // One step per target (the later, more specific request wins), then parents before children.
  std::vector<Planned> unique;
  for (size_t i = 0; i < plan.size(); ++i) {
    bool replaced = std::any_of(plan.begin() + static_cast<long>(i) + 1, plan.end(),
                                [&](const Planned& later) { return later.step.target == plan[i].step.target; });
    if (!replaced) unique.push_back(plan[i]);
  }
  std::stable_sort(unique.begin(), unique.end(),
                   [](const Planned& a, const Planned& b) { return depth(a.step.target) < depth(b.step.target); });

  // Hide steps where a bind would show host contents; a hidden path under a hidden path needs no step.
  std::vector<std::string> hide_targets;
  for (const auto& [h, item] : hidden) {
    if (host.kind(h) == HostFs::Kind::missing) continue;
    const Planned* parent = nearest_mount(unique, h);
    if (!parent || !is_bind(parent->step.kind)) continue;
    hide_targets.push_back(h);
  }
  std::sort(hide_targets.begin(), hide_targets.end());
  hide_targets.erase(std::unique(hide_targets.begin(), hide_targets.end()), hide_targets.end());
  std::vector<Planned> hides;
  for (const auto& h : hide_targets) {
    bool covered = std::any_of(hide_targets.begin(), hide_targets.end(),
                               [&](const std::string& other) { return other != h && path_within(h, other); });
    if (covered) continue;
    Planned p = make(MountStep::Kind::hide, "", h, FsAccess::read);
    p.landlock = false;
    hides.push_back(p);
  }

  // Protect: every entry inside a writable bind and not hidden is watched (spec.protected_paths, existing or not,
  // lexically and where it really leads); the entries that exist now also get a read-only protect step.
  std::vector<Planned> protects;
  auto writable = [&](const std::string& path) {
    const Planned* parent = nearest_mount(unique, path);
    return parent && parent->step.kind == MountStep::Kind::bind_rw && !hidden_by(path);
  };
  auto watch = [&](const std::string& path) {
    if (writable(path) && std::find(spec.protected_paths.begin(), spec.protected_paths.end(), path) ==
                              spec.protected_paths.end()) {
      spec.protected_paths.push_back(path);
    }
  };
  for (const auto& item : in.fs->protect) {
    auto expanded = expand_path(item.text, PathRole::workspace_relative, in.vars);
    if (!expanded) {
      errors.push_back(Diagnostic{item.pos, "filesystem.protect", expanded.status().message(), ""});
      continue;
    }
    if (hidden_by(*expanded)) continue;
    watch(*expanded);
    if (host.kind(*expanded) == HostFs::Kind::missing) {
      // Where it would appear: the real location of its deepest existing ancestor, plus the rest.
      std::string ancestor = *expanded;
      std::string rest;
      while (ancestor != "/" && host.kind(ancestor) == HostFs::Kind::missing) {
        size_t slash = ancestor.rfind('/');
        rest = ancestor.substr(slash) + rest;
        ancestor = slash == 0 ? "/" : ancestor.substr(0, slash);
      }
      if (auto real = host.real_path(ancestor)) watch((*real == "/" ? "" : *real) + rest);
      continue;
    }
    auto real = host.real_path(*expanded);
    if (!real || !writable(*real)) continue;
    watch(*real);
    if (std::any_of(protects.begin(), protects.end(), [&](const Planned& p) { return p.step.target == *real; })) {
      continue;
    }
    Planned p = make(MountStep::Kind::protect, *real, *real, FsAccess::read);
    p.landlock = false;
    protects.push_back(p);
  }
  if (errors.size() != errors_before) return Status::error("filesystem");

  for (const auto* list : {&unique, &hides, &protects}) {
    for (const auto& p : *list) {
      spec.mounts.push_back(p.step);
      if (p.landlock) spec.landlock.paths.push_back(LandlockPathRule{p.step.target, p.access});
    }
  }
  return Status::ok();
}

}  // namespace oishell::policy
