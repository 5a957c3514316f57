// Mount plan: system dirs read-only, /proc, /dev, /tmp, home, workspace and extras, ordered parents first (an
// exposed home read-only before its writable entries); then hide steps (hide wins over every bind), then protect
// steps (git metadata, the policy's protect list); Landlock rules mirror the plan. See mount_plan.h.
#include "policy/mount_plan.h"

#include <algorithm>

#include "policy/compiler.h"
#include "policy/paths.h"

namespace oishell::policy {
namespace {

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
    if (path_within(path, p.step.target) && (!best || path_depth(p.step.target) >= path_depth(best->step.target))) best = &p;
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

// A read-only rebind of `path` over itself (inside a writable bind); no Landlock rule of its own.
Planned protect_step(const std::string& path) {
  Planned p = make(MountStep::Kind::protect, path, path, FsAccess::read);
  p.landlock = false;
  return p;
}

// Entries of the home directory that programs on the host run or trust without being asked: every dotfile and
// dot-directory (shell rc files, ~/.profile, ~/.local/bin, the python user site, ~/.config/autostart and systemd
// units, ~/.gitconfig, ~/.ssh, ...) and ~/bin (first on PATH in Debian's ~/.profile).
bool host_trusted_home_entry(const std::string& name) { return name.starts_with(".") || name == "bin"; }

// `gitdir: PATH` of a `.git` file or the path in a `commondir` file, resolved against `base`; nullopt when absent.
std::optional<std::string> git_pointer(const HostFs& host, const std::string& file, const std::string& base,
                                       bool gitdir_prefix) {
  auto text = host.read_file(file, 4096);
  if (!text) return std::nullopt;
  std::string value = *text;
  if (gitdir_prefix) {
    if (!value.starts_with("gitdir:")) return std::nullopt;
    value = value.substr(7);
  }
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r' || value.back() == ' ')) value.pop_back();
  while (!value.empty() && value.front() == ' ') value.erase(0, 1);
  if (value.empty()) return std::nullopt;
  return host.real_path(value[0] == '/' ? value : base + "/" + value);
}

}  // namespace

const std::vector<std::string>& git_obeyed_entries() {
  // config/config.worktree: what git runs (fsmonitor, hooksPath, pager, drivers, aliases, includes); hooks;
  // info (attributes naming drivers, excludes); commondir (config and hooks from elsewhere); worktrees and modules
  // (the git dirs of linked worktrees and submodules, with their own config and hooks); branches and remotes
  // (legacy remote definitions).
  static const std::vector<std::string> kEntries = {"config",    "config.worktree", "hooks",    "info",
                                                    "commondir", "worktrees",       "modules",  "branches",
                                                    "remotes"};
  return kEntries;
}

std::string writable_refusal(const std::string& dir, const std::string& real_home, bool allow_home) {
  if (dir == "/") return "it is the root directory";
  // The system and what runs it; /opt holds installed software the host runs.
  for (const char* system : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot", "/proc",
                             "/dev", "/sys", "/run", "/opt", "/snap", "/var/lib", "/var/log", "/var/cache",
                             "/var/spool", "/var/mail", "/var/backups"}) {
    if (path_within(dir, system)) return std::string("it is inside the system directory ") + system;
  }
  // Roots of directories shared with other users and programs.
  for (const char* shared : {"/var", "/home", "/tmp", "/var/tmp", "/mnt", "/media", "/srv"}) {
    if (dir == shared) return std::string("it is ") + shared + ", which holds what is not yours to give away";
  }
  if (!allow_home && !real_home.empty() && path_within(real_home, dir)) {
    return real_home == dir ? "it is your home directory" : "it contains your home directory " + real_home;
  }
  return "";
}

bool id_mapped_for_root_caller(const SandboxSpec& spec, size_t index) {
  auto writable_as_caller = [](const MountStep& step) { return step.kind == MountStep::Kind::bind_rw && !step.system; };
  const MountStep& step = spec.mounts.at(index);
  if (writable_as_caller(step)) return true;
  if (step.kind != MountStep::Kind::bind_ro || step.system) return false;
  // Sources are resolved host paths, opened without following links: beneath a writable bind's source on the host
  // is beneath it in that bind's tree (cloned and id-mapped with its submounts).
  return std::any_of(spec.mounts.begin(), spec.mounts.end(), [&](const MountStep& other) {
    return writable_as_caller(other) && path_within(step.source, other.source);
  });
}

std::vector<std::string> unmapped_read_only_targets(const SandboxSpec& spec) {
  std::vector<std::string> unmapped;
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    const MountStep& m = spec.mounts[i];
    if (m.kind == MountStep::Kind::bind_ro && !m.system && !id_mapped_for_root_caller(spec, i)) {
      unmapped.push_back(m.target);
    }
  }
  return unmapped;
}

std::string describe_unmapped_read_only(const SandboxSpec& spec) {
  const std::vector<std::string> unmapped = unmapped_read_only_targets(spec);
  if (unmapped.empty()) return "";
  std::string paths;
  for (const std::string& p : unmapped) paths += (paths.empty() ? "" : ", ") + p;
  return "Started by root, the sandbox is root inside but an unused id outside, and read-only paths are not "
         "id-mapped: in " + paths +
         ", as in the system directories, files that only root may read (0600 root files, /etc/ssl/private) stay "
         "unreadable; list a path under read_write to make root's files there the sandbox's own.";
}

MountStep resolv_conf_step(const NetworkSpec& network) {
  MountStep step;
  step.kind = MountStep::Kind::file;
  step.target = "/etc/resolv.conf";
  step.optional = true;
  // No `search` line (names are asked as given) and no `options` (the stub answers at once, small answers).
  step.source = "# oishell: the sandbox's DNS stub (answers by the policy; oishell's docs/network.md)\n";
  if (network.dns_port != 53) {
    step.source += "# it listens on port " + std::to_string(network.dns_port) + ", which this file cannot name\n";
  }
  step.source += "nameserver 127.0.0.1\n";
  return step;
}

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
    Planned bind = make(MountStep::Kind::bind_ro, *real, dir, FsAccess::read_exec, true);
    bind.step.system = true;
    plan.push_back(bind);
  }
  plan.push_back(make(MountStep::Kind::proc, "", "/proc", FsAccess::read));
  plan.push_back(make(MountStep::Kind::dev, "", "/dev", FsAccess::dev));
  plan.push_back(make(MountStep::Kind::tmpfs, "", "/tmp", FsAccess::write));
  // An exposed real home (below) is $HOME itself: no tmpfs over it.
  const bool home_in_workspace = !in.real_home.empty() && path_within(in.real_home, workspace);
  if (in.home == HomeMode::tmpfs && !(home_in_workspace && in.home_path == in.real_home)) {
    plan.push_back(make(MountStep::Kind::tmpfs, "", in.home_path, FsAccess::write));
  }
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
      if (std::string why = writable_refusal(*real, in.real_home, in.allow_home); !why.empty()) {
        errors.push_back(Diagnostic{item.pos, "filesystem.read_write", *real + " cannot be writable: " + why,
                                    path_within(in.real_home, *real) && !in.allow_home
                                        ? "name a directory inside it, or allow it with --allow-home-workspace "
                                          "(filesystem.allow_home_workspace: true; its dotfiles and ~/bin stay "
                                          "read-only)"
                                        : "name a project directory"});
        continue;
      }
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

  // The real home inside a writable bind (allowed above): read-only over itself, then its entries that the host
  // does not run or trust writable again, so that nothing can be created at its top level either.
  std::string home_exposed;
  for (const auto& p : plan) {
    if (p.step.kind == MountStep::Kind::bind_rw && !in.real_home.empty() && path_within(in.real_home, p.step.target) &&
        !hidden_by(in.real_home)) {
      home_exposed = in.real_home;
    }
  }
  if (!home_exposed.empty()) {
    plan.push_back(protect_step(home_exposed));
    for (const auto& name : host.list_dir(home_exposed)) {
      std::string entry = home_exposed + "/" + name;
      HostFs::Kind kind = host.kind(entry);
      if (host_trusted_home_entry(name) || hidden_by(entry) ||
          (kind != HostFs::Kind::directory && kind != HostFs::Kind::file)) {
        continue;
      }
      Planned rw = make(MountStep::Kind::bind_rw, entry, entry, FsAccess::write);
      rw.landlock = false;  // the enclosing bind's rule already allows writing
      plan.push_back(rw);
    }
  }
  spec.home_exposed = home_exposed;

  // One bind per target (the later, more specific request wins), then parents before children; a protect step
  // over a bind of the same target comes right after it.
  std::vector<Planned> unique;
  for (size_t i = 0; i < plan.size(); ++i) {
    bool replaced = std::any_of(plan.begin() + static_cast<long>(i) + 1, plan.end(), [&](const Planned& later) {
      return later.step.target == plan[i].step.target && (later.step.kind == MountStep::Kind::protect) ==
                                                             (plan[i].step.kind == MountStep::Kind::protect);
    });
    if (!replaced) unique.push_back(plan[i]);
  }
  std::stable_sort(unique.begin(), unique.end(), [](const Planned& a, const Planned& b) {
    if (path_depth(a.step.target) != path_depth(b.step.target)) return path_depth(a.step.target) < path_depth(b.step.target);
    return a.step.kind != MountStep::Kind::protect && b.step.kind == MountStep::Kind::protect;
  });

  // Hide steps where a bind would show host contents; a hidden path under a hidden path needs no step.
  std::vector<std::string> hide_targets;
  for (const auto& [h, item] : hidden) {
    if (host.kind(h) == HostFs::Kind::missing) continue;
    const Planned* parent = nearest_mount(unique, h);
    if (!parent || !(is_bind(parent->step.kind) || parent->step.kind == MountStep::Kind::protect)) continue;
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
  auto add_protect = [&](const std::string& path) {
    if (!writable(path)) return;
    if (std::none_of(protects.begin(), protects.end(), [&](const Planned& p) { return p.step.target == path; })) {
      protects.push_back(protect_step(path));
    }
  };

  // Git: the workspace's `.git` (a directory, a `gitdir:` file or a link) and the git directories it leads to
  // (the worktree's own and the common one), where they are writable: read-only whole, or in commit mode what
  // git executes or obeys. Repositories made or changed elsewhere are the repo guard's (runtime/outside/repo_guard.h).
  auto protect_git_dir = [&](const std::string& git_dir) {
    if (in.git == GitMode::read_only) {
      add_protect(git_dir);
    } else {
      // The git dir bound over itself (still writable) first: a mount point cannot be renamed away and replaced.
      if (writable(git_dir) &&
          std::none_of(protects.begin(), protects.end(), [&](const Planned& p) { return p.step.target == git_dir; })) {
        Planned pin = make(MountStep::Kind::bind_rw, git_dir, git_dir, FsAccess::write);
        pin.landlock = false;
        protects.push_back(pin);
      }
      for (const auto& name : git_obeyed_entries()) {
        if (host.kind(git_dir + "/" + name) != HostFs::Kind::missing) add_protect(git_dir + "/" + name);
      }
    }
  };
  auto protect_repository = [&](const std::string& git_dir) {
    protect_git_dir(git_dir);
    if (auto common = git_pointer(host, git_dir + "/commondir", git_dir, false)) protect_git_dir(*common);
  };
  if (!in.workspace_read_only) {
    const std::string dot_git = workspace + "/.git";
    switch (host.kind(dot_git)) {
      case HostFs::Kind::directory:
        protect_repository(dot_git);
        break;
      case HostFs::Kind::file:
        add_protect(dot_git);  // the pointer itself
        if (auto git_dir = git_pointer(host, dot_git, workspace, true)) protect_repository(*git_dir);
        break;
      case HostFs::Kind::symlink:
        if (auto git_dir = host.real_path(dot_git); git_dir && host.kind(*git_dir) == HostFs::Kind::directory) {
          protect_repository(*git_dir);
        }
        break;
      case HostFs::Kind::missing:
      case HostFs::Kind::other:
        break;
    }
  }
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
    add_protect(*real);
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
