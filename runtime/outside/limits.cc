// Resource limits: cgroup v2 where a subtree delegated to this process passes the memory and pids controllers down
// (cgroup::find_v2_parent), else cgroup v1 where the controller's hierarchy is writable (root here), else rlimits.
// File size, open files and cpu time are always rlimits (per process). Every choice is recorded in mechanisms(),
// with the reason a better one was not available. docs/limits.md.
#include "runtime/outside/limits.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "policy/units.h"
#include "runtime/outside/cgroup_fs.h"

namespace oishell {
namespace {

using cgroup::OwnedCgroup;

class CgroupLimits final : public ResourceLimits {
 public:
  CgroupLimits(const LimitsSpec& spec, const BeforeMkdir& before_mkdir, const cgroup::OwnCgroups& own,
               PremadeGroup premade)
      : spec_(spec), before_mkdir_(before_mkdir), own_(own), premade_(std::move(premade.group)),
        init_in_premade_(premade.init_inside) {}
  ~CgroupLimits() override { teardown(); }

  // The first error of before_mkdir_ (no cgroup was made after it).
  const Status& announce_error() const { return announce_error_; }

  void prepare() {
    const bool want_memory = spec_.memory_bytes.has_value();
    const bool want_pids = spec_.pids.has_value();
    if (!want_memory && !want_pids) {
      v2_ = std::move(premade_);  // init may be in it: kept (limit-less) until teardown()
      init_in_v2_ = init_in_premade_;
      return;
    }
    std::string v2_why;
    if (try_v2(want_memory, want_pids, &v2_why) || !announce_error_) return;  // an announce error: prepare() fails
    if (want_memory) try_v1_memory(v2_why);
    if (want_pids && announce_error_) try_v1_pids(v2_why);
  }

  Status add_process(pid_t pid) override {
    for (const OwnedCgroup* g : {&v2_, &memory_, &pids_}) {
      if (g == &v2_ && init_in_v2_) continue;  // born there: no move
      if (!g->path().empty()) OI_TRY_CTX(g->add_process(pid), "joining cgroup " + g->path());
    }
    return Status::ok();
  }

  std::vector<RlimitSetting> rlimits() const override {
    std::vector<RlimitSetting> out;
    if (spec_.file_size_bytes) out.push_back({RLIMIT_FSIZE, *spec_.file_size_bytes, *spec_.file_size_bytes});
    if (spec_.open_files) out.push_back({RLIMIT_NOFILE, *spec_.open_files, *spec_.open_files});
    if (spec_.cpu_time_seconds) {
      // SIGXCPU at the soft limit (a recognisable death), SIGKILL a second later.
      out.push_back({RLIMIT_CPU, *spec_.cpu_time_seconds, *spec_.cpu_time_seconds + 1});
    }
    if (spec_.memory_bytes && !memory_by_cgroup()) out.push_back({RLIMIT_AS, *spec_.memory_bytes, *spec_.memory_bytes});
    if (spec_.pids && !pids_by_cgroup()) out.push_back({RLIMIT_NPROC, *spec_.pids, *spec_.pids});
    return out;
  }

  std::vector<std::string> cgroup_dirs() const override {
    std::vector<std::string> dirs;
    for (const OwnedCgroup* g : {&v2_, &memory_, &pids_}) {
      if (!g->path().empty()) dirs.push_back(g->path());
    }
    return dirs;
  }

  std::vector<std::string> mechanisms() const override {
    std::vector<std::string> out = notes_;
    if (spec_.cpu_time_seconds) {
      out.push_back("cpu time: rlimit RLIMIT_CPU (" + std::to_string(*spec_.cpu_time_seconds) + " s per process)");
    }
    if (spec_.file_size_bytes) {
      out.push_back("file size: rlimit RLIMIT_FSIZE (" + policy::format_size(*spec_.file_size_bytes) + ")");
    }
    if (spec_.open_files) out.push_back("open files: rlimit RLIMIT_NOFILE (" + std::to_string(*spec_.open_files) + ")");
    return out;
  }

  std::string kill_reason() const override {
    if (!spec_.memory_bytes) return "";
    std::optional<std::string> text;
    if (!v2_.path().empty() && memory_v2_) text = v2_.read("memory.events");
    if (!memory_.path().empty()) text = memory_.read("memory.oom_control");
    if (!text) return "";
    auto kills = cgroup::keyed_value(*text, "oom_kill");
    if (kills && *kills > 0) return "memory limit " + policy::format_size(*spec_.memory_bytes);
    return "";
  }

  void teardown() override {
    v2_.remove();
    memory_.remove();
    pids_.remove();
  }

 private:
  // mkdir(parent/oishell-PID-N), announced to before_mkdir_ first. A parent we may not write to is not announced
  // (an ordinary user starts no janitor for cgroups it cannot make); its error is the mkdir's.
  Result<OwnedCgroup> create_group(const std::string& parent) {
    const std::string name = cgroup::sandbox_group_name();
    if (!own_.ops().may_write(parent)) return Status::from_errno(EACCES, "mkdir(\"" + parent + "/" + name + "\")");
    if (before_mkdir_) {
      if (Status announced = before_mkdir_(parent + "/" + name); !announced) {
        announce_error_ = announced;
        return announced;
      }
    }
    return OwnedCgroup::create(parent, name, own_.ops());
  }

  bool memory_by_cgroup() const { return !memory_.path().empty() || (!v2_.path().empty() && memory_v2_); }
  bool pids_by_cgroup() const { return !pids_.path().empty() || (!v2_.path().empty() && pids_v2_); }

  // The group goes where find_v2_parent() says: below a parent that passes the controllers down, enabling them
  // there first when it does not yet. All or nothing: v2 takes both controllers or neither.
  bool try_v2(bool want_memory, bool want_pids, std::string* why) {
    if (!premade_.path().empty()) return limit_v2(std::move(premade_), init_in_premade_, want_memory, want_pids, why);
    std::vector<std::string> needed;
    if (want_memory) needed.push_back("memory");
    if (want_pids) needed.push_back("pids");
    auto parent = cgroup::find_v2_parent(own_, needed);
    if (!parent) {
      *why = "cgroup v2: " + parent.status().message();
      return false;
    }
    if (Status s = cgroup::enable_controllers(*parent); !s) {
      *why = "cgroup v2: " + s.message();
      return false;
    }
    auto group = create_group(parent->dir);
    if (!group) {
      *why = "cgroup v2: " + group.status().message();
      return false;
    }
    return limit_v2(std::move(group.value()), false, want_memory, want_pids, why);
  }

  // memory.max (and memory.swap.max) and pids.max in `group`, which then is v2_. On an error the limits fall back
  // (*why says why); a group init is in stays v2_, limit-less, so that init is not killed with it now.
  bool limit_v2(OwnedCgroup group, bool init_inside, bool want_memory, bool want_pids, std::string* why) {
    Status s = Status::ok();
    bool swap_limited = false;
    if (want_memory) {
      s = group.write("memory.max", std::to_string(*spec_.memory_bytes));
      if (s && group.has("memory.swap.max")) {
        s = group.write("memory.swap.max", "0");
        swap_limited = s.is_ok();
      }
    }
    if (s && want_pids) s = group.write("pids.max", std::to_string(*spec_.pids));
    if (!s) {
      *why = "cgroup v2: " + s.message();
      if (init_inside) {
        v2_ = std::move(group);
        init_in_v2_ = true;
      }
      return false;  // otherwise `group` is removed on return
    }
    v2_ = std::move(group);
    init_in_v2_ = init_inside;
    memory_v2_ = want_memory;
    pids_v2_ = want_pids;
    if (want_memory) {
      notes_.push_back("memory: cgroup v2 " + v2_.path() + " (" + policy::format_size(*spec_.memory_bytes) +
                       (swap_limited ? ", no swap)" : ", swap not limited: no memory.swap.max)"));
    }
    if (want_pids) notes_.push_back("pids: cgroup v2 " + v2_.path() + " (" + std::to_string(*spec_.pids) + ")");
    return true;
  }

  void try_v1_memory(const std::string& v2_why) {
    const std::string size = policy::format_size(*spec_.memory_bytes);
    const std::string rlimit_note = "memory: rlimit RLIMIT_AS (" + size +
                                    " of address space per process; allocations fail with ENOMEM instead of a kill)";
    auto dir = own_.v1_dir("memory");
    if (!dir) {
      notes_.push_back(rlimit_note + "; " + v2_why + ", no cgroup v1 memory controller");
      return;
    }
    auto group = create_group(*dir);
    if (!group) {
      notes_.push_back(rlimit_note + "; " + v2_why + ", cgroup v1 not writable: " + group.status().message());
      return;
    }
    const std::string bytes = std::to_string(*spec_.memory_bytes);
    Status s = group->write("memory.limit_in_bytes", bytes);
    bool swap_limited = false;
    if (s && group->has("memory.memsw.limit_in_bytes")) {
      s = group->write("memory.memsw.limit_in_bytes", bytes);
      swap_limited = s.is_ok();
    }
    if (!s) {
      notes_.push_back(rlimit_note + "; cgroup v1: " + s.message());
      return;
    }
    memory_ = std::move(*group);
    notes_.push_back("memory: cgroup v1 " + memory_.path() + " (" + size +
                     (swap_limited ? ", swap included)" : ", swap not limited: no memory.memsw)"));
  }

  void try_v1_pids(const std::string& v2_why) {
    const std::string n = std::to_string(*spec_.pids);
    const std::string rlimit_note = "pids: rlimit RLIMIT_NPROC (" + n +
                                    " processes of the sandbox's uid, counted in its own user namespace)";
    auto dir = own_.v1_dir("pids");
    if (!dir) {
      notes_.push_back(rlimit_note + "; " + v2_why + ", no cgroup v1 pids controller");
      return;
    }
    auto group = create_group(*dir);
    if (!group) {
      notes_.push_back(rlimit_note + "; " + v2_why + ", cgroup v1 not writable: " + group.status().message());
      return;
    }
    if (Status s = group->write("pids.max", n); !s) {
      notes_.push_back(rlimit_note + "; cgroup v1: " + s.message());
      return;
    }
    pids_ = std::move(*group);
    notes_.push_back("pids: cgroup v1 " + pids_.path() + " (" + n + ")");
  }

  LimitsSpec spec_;
  BeforeMkdir before_mkdir_;
  cgroup::OwnCgroups own_;
  Status announce_error_ = Status::ok();
  OwnedCgroup premade_;  // made before init was cloned (PremadeGroup), until try_v2() takes it
  bool init_in_premade_ = false;
  OwnedCgroup v2_, memory_, pids_;
  bool init_in_v2_ = false;  // init was born in v2_
  bool memory_v2_ = false, pids_v2_ = false;
  std::vector<std::string> notes_;
};

const char* rlimit_name(int resource) {
  switch (resource) {
    case RLIMIT_FSIZE: return "RLIMIT_FSIZE";
    case RLIMIT_NOFILE: return "RLIMIT_NOFILE";
    case RLIMIT_CPU: return "RLIMIT_CPU";
    case RLIMIT_AS: return "RLIMIT_AS";
    case RLIMIT_NPROC: return "RLIMIT_NPROC";
    default: return "RLIMIT_?";
  }
}

}  // namespace

Status apply_rlimit_settings(const std::vector<RlimitSetting>& settings) {
  for (const RlimitSetting& setting : settings) {
    const auto resource = static_cast<__rlimit_resource_t>(setting.resource);
    const std::string name = rlimit_name(setting.resource);
    // Lowers a limit (never raises it above the current hard limit, which needs CAP_SYS_RESOURCE).
    rlimit current{};
    if (::getrlimit(resource, &current) != 0) return Status::from_errno(errno, "getrlimit(" + name + ")");
    rlimit lim{};
    lim.rlim_max = std::min<rlim_t>(setting.hard, current.rlim_max);
    lim.rlim_cur = std::min<rlim_t>(setting.soft, lim.rlim_max);
    if (::setrlimit(resource, &lim) != 0) {
      return Status::from_errno(errno, "setrlimit(" + name + ", " + std::to_string(lim.rlim_cur) + ")");
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<ResourceLimits>> ResourceLimits::prepare(const LimitsSpec& spec, const BeforeMkdir& before_mkdir) {
  return prepare(spec, before_mkdir, cgroup::OwnCgroups::read());
}

Result<std::unique_ptr<ResourceLimits>> ResourceLimits::prepare(const LimitsSpec& spec, const BeforeMkdir& before_mkdir,
                                                                const cgroup::OwnCgroups& where) {
  return prepare(spec, before_mkdir, where, PremadeGroup{});
}

Result<std::unique_ptr<ResourceLimits>> ResourceLimits::prepare(const LimitsSpec& spec, const BeforeMkdir& before_mkdir,
                                                                const cgroup::OwnCgroups& where, PremadeGroup premade) {
  auto limits = std::make_unique<CgroupLimits>(spec, before_mkdir, where, std::move(premade));
  limits->prepare();
  if (!limits->announce_error()) return limits->announce_error();
  return std::unique_ptr<ResourceLimits>(std::move(limits));
}

}  // namespace oishell
