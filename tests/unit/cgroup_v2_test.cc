// Resource limits through a delegated cgroup v2 subtree, against a fake cgroupfs tree in a temporary directory.
//
// This machine has only hugetlb on cgroup v2 (memory and pids are on v1), so the v2 path cannot run for real here:
// FakeCgroupFs imitates what the kernel does with the directories (mkdir makes the interface files of the
// controllers the parent passes down, rmdir refuses a group with processes until cgroup.kill, and who may write
// where stands for the ownership systemd gives a user's user@UID.service subtree) and the limits code reads and
// writes the files as it would in /sys/fs/cgroup. The tests check which directory is chosen (v2 when delegated, v1
// or rlimits when not), which files get which values, and that teardown removes what was made.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/outside/cgroup_fs.h"
#include "runtime/outside/limits.h"
#include "tests/unit/test_util.h"

namespace oishell {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const std::string& path, const std::string& content) { std::ofstream(path, std::ios::trunc) << content; }

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The kernel's side of a cgroup tree, in plain directories. The files a limit is written to start empty (the kernel
// shows "max"): a write then leaves exactly the value written, which is what the tests read back.
class FakeCgroupFs final : public cgroup::TreeOps {
 public:
  struct Removal {
    std::string dir;
    bool killed;  // cgroup.kill had been written when it went
  };

  // Children of `root` are v1 groups of `controller`.
  void v1_hierarchy(const std::string& root, const std::string& controller) { v1_roots_.push_back({root, controller}); }
  // Not delegated: this process may not write the directory (make groups in it) nor its cgroup.procs and
  // cgroup.subtree_control.
  void deny_dir(const std::string& dir) {
    for (const char* file : {"", "/cgroup.procs", "/cgroup.subtree_control"}) denied_.insert(dir + file);
  }
  void deny(const std::string& path) { denied_.insert(path); }

  int make_dir(const std::string& path) const override {
    const std::string parent = path.substr(0, path.rfind('/'));
    if (!may_write(parent)) return EACCES;
    if (::mkdir(path.c_str(), 0755) != 0) return errno;
    made_.push_back(path);
    put(path + "/cgroup.procs", "");
    for (const auto& [root, controller] : v1_roots_) {
      if (parent.rfind(root, 0) != 0) continue;
      if (controller == "memory") {
        put(path + "/memory.limit_in_bytes", "");
        put(path + "/memory.memsw.limit_in_bytes", "");
        put(path + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
      } else {
        put(path + "/pids.max", "");
      }
      return 0;
    }
    // v2: the controllers the parent passes down ("+memory" as written, or "memory" as the kernel shows it).
    std::string enabled;
    bool memory = false, pids = false;
    for (std::string c : words(slurp(parent + "/cgroup.subtree_control"))) {
      if (c[0] == '+') c.erase(0, 1);
      enabled += (enabled.empty() ? "" : " ") + c;
      memory |= c == "memory";
      pids |= c == "pids";
    }
    put(path + "/cgroup.controllers", enabled + "\n");
    put(path + "/cgroup.subtree_control", "");
    put(path + "/cgroup.events", "populated 0\nfrozen 0\n");
    put(path + "/cgroup.kill", "");
    if (memory) {
      put(path + "/memory.max", "");
      put(path + "/memory.swap.max", "");
      put(path + "/memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n");
    }
    if (pids) put(path + "/pids.max", "");
    return 0;
  }

  int remove_dir(const std::string& path) const override {
    if (!fs::exists(path)) return ENOENT;
    const bool killed = slurp(path + "/cgroup.kill").starts_with("1");
    if (!words(slurp(path + "/cgroup.procs")).empty() && !killed) return EBUSY;
    for (const auto& entry : fs::directory_iterator(path)) {
      if (entry.is_regular_file()) fs::remove(entry.path());
    }
    if (::rmdir(path.c_str()) != 0) return errno;
    removed_.push_back({path, killed});
    return 0;
  }

  bool may_write(const std::string& path) const override { return fs::exists(path) && !denied_.count(path); }

  const std::vector<std::string>& made() const { return made_; }
  const std::vector<Removal>& removed() const { return removed_; }

 private:
  std::vector<std::pair<std::string, std::string>> v1_roots_;
  std::set<std::string> denied_;
  mutable std::vector<std::string> made_;
  mutable std::vector<Removal> removed_;
};

// A systemd machine's unified hierarchy: this process in a terminal's scope of the user's service manager,
// user.slice/user-1000.slice/user@1000.service/app.slice/term.scope, plus v1 memory and pids hierarchies.
class CgroupV2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(top_);
    put(top_ + "/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
    put(top_ + "/cgroup.subtree_control", "cpu io memory pids\n");
    put(top_ + "/cgroup.procs", "1\n");
    for (const std::string& root : {v1_memory_, v1_pids_}) {
      fs::create_directories(root);
      put(root + "/cgroup.procs", "1\n");
    }
    fake_.v1_hierarchy(v1_memory_, "memory");
    fake_.v1_hierarchy(v1_pids_, "pids");
  }

  // Makes the chain below the top; `passes` says what each level's cgroup.subtree_control holds (slice, user
  // slice, service, app.slice; the scope passes nothing). The scope holds a process, as ours does.
  void make_chain(const std::vector<std::string>& passes) {
    const std::vector<std::string> chain = {slice_, user_, service_, app_, scope_};
    for (size_t i = 0; i < chain.size(); ++i) {
      ASSERT_EQ(0, fake_.make_dir(chain[i])) << chain[i];
      if (i < passes.size()) put(chain[i] + "/cgroup.subtree_control", passes[i]);
    }
    put(scope_ + "/cgroup.procs", std::to_string(::getpid()) + "\n");
    baseline_ = fake_.made().size();
  }

  // systemd's delegation: the user owns user@1000.service and everything below it, nothing above.
  void delegate_service() {
    for (const std::string& dir : {top_, slice_, user_}) fake_.deny_dir(dir);
  }
  // No delegation: not even our own scope is ours (a login session's scope is root's).
  void delegate_nothing() {
    for (const std::string& dir : {top_, slice_, user_, service_, app_, scope_}) fake_.deny_dir(dir);
  }
  void no_v1() {
    fake_.deny(v1_memory_);
    fake_.deny(v1_pids_);
  }

  cgroup::OwnCgroups own() const {
    const std::string mountinfo =
        "34 30 0:31 / " + v1_memory_ + " rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,memory\n"
        "38 30 0:35 / " + v1_pids_ + " rw,nosuid,nodev,noexec,relatime shared:13 - cgroup cgroup rw,pids\n"
        "40 30 0:37 / " + top_ + " rw,nosuid,nodev,noexec,relatime shared:14 - cgroup2 cgroup2 rw,nsdelegate\n";
    const std::string membership = "8:pids:/\n4:memory:/\n"
                                   "0::/user.slice/user-1000.slice/user@1000.service/app.slice/term.scope\n";
    return cgroup::OwnCgroups::parse(mountinfo, membership, fake_);
  }

  static LimitsSpec spec() {
    LimitsSpec s;
    s.memory_bytes = 64ULL << 20;
    s.pids = 32;
    return s;
  }

  // prepare() with the fake tree; `announced` collects what before_mkdir saw, and whether it existed then.
  std::unique_ptr<ResourceLimits> prepare(const LimitsSpec& s = spec()) {
    auto limits = ResourceLimits::prepare(
        s,
        [this](const std::string& dir) {
          announced_.push_back(dir + (fs::exists(dir) ? " (existed)" : ""));
          return Status::ok();
        },
        own());
    EXPECT_TRUE(limits.is_ok()) << limits.status().message();
    return limits.is_ok() ? std::move(limits.value()) : nullptr;
  }

  // The oishell-* groups made below `parent` (none elsewhere is checked by comparing with made()).
  std::vector<std::string> groups_in(const std::string& parent) const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(parent)) {
      if (entry.is_directory() && entry.path().filename().string().starts_with("oishell-")) {
        out.push_back(entry.path().string());
      }
    }
    return out;
  }

  std::vector<std::string> new_dirs() const {
    return {fake_.made().begin() + static_cast<long>(baseline_), fake_.made().end()};
  }

  static bool has_rlimit(const ResourceLimits& limits, int resource) {
    auto r = limits.rlimits();
    return std::any_of(r.begin(), r.end(), [&](const RlimitSetting& s) { return s.resource == resource; });
  }

  TempDir tmp_;
  const std::string top_ = tmp_.path() + "/unified";
  const std::string v1_memory_ = tmp_.path() + "/memory";
  const std::string v1_pids_ = tmp_.path() + "/pids";
  const std::string slice_ = top_ + "/user.slice";
  const std::string user_ = slice_ + "/user-1000.slice";
  const std::string service_ = user_ + "/user@1000.service";
  const std::string app_ = service_ + "/app.slice";
  const std::string scope_ = app_ + "/term.scope";
  FakeCgroupFs fake_;
  size_t baseline_ = 0;  // fake_.made() before the case's own prepare()
  std::vector<std::string> announced_;
};

TEST_F(CgroupV2Test, ADelegatedSubtreeThatPassesTheControllersDownIsUsed) {
  make_chain({"cpu memory pids", "cpu memory pids", "memory pids", "memory pids"});
  delegate_service();
  auto limits = prepare();
  ASSERT_TRUE(limits);

  // Our scope holds processes and passes nothing down: the group goes beside it, in app.slice.
  const std::vector<std::string> made = new_dirs();
  ASSERT_EQ(1u, made.size());
  const std::string group = made[0];
  EXPECT_EQ(app_, group.substr(0, group.rfind('/')));
  EXPECT_EQ((std::vector<std::string>{group}), announced_) << "announced before it existed";
  EXPECT_EQ((std::vector<std::string>{group}), limits->cgroup_dirs());
  EXPECT_EQ("67108864", slurp(group + "/memory.max"));
  EXPECT_EQ("0", slurp(group + "/memory.swap.max"));
  EXPECT_EQ("32", slurp(group + "/pids.max"));
  EXPECT_EQ("memory pids", slurp(app_ + "/cgroup.subtree_control")) << "already passed down: left as it was";
  EXPECT_TRUE(groups_in(v1_memory_).empty());
  EXPECT_TRUE(groups_in(v1_pids_).empty());
  const std::vector<std::string> mechanisms = limits->mechanisms();
  ASSERT_EQ(2u, mechanisms.size());
  EXPECT_EQ("memory: cgroup v2 " + group + " (64 MiB, no swap)", mechanisms[0]);
  EXPECT_EQ("pids: cgroup v2 " + group + " (32)", mechanisms[1]);
  EXPECT_FALSE(has_rlimit(*limits, RLIMIT_AS));  // the cgroup holds memory and pids: no rlimit for them
  EXPECT_FALSE(has_rlimit(*limits, RLIMIT_NPROC));

  // Sandbox init joins the group; an OOM kill in it is named.
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_TRUE(limits->add_process(child).is_ok());
  EXPECT_EQ(std::to_string(child), slurp(group + "/cgroup.procs"));
  EXPECT_EQ("", limits->kill_reason());
  put(group + "/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n");
  EXPECT_EQ("memory limit 64 MiB", limits->kill_reason());

  // Teardown: the group still holds the process, so rmdir waits for cgroup.kill; then it is gone.
  limits->teardown();
  EXPECT_FALSE(fs::exists(group));
  ASSERT_EQ(1u, fake_.removed().size());
  EXPECT_EQ(group, fake_.removed()[0].dir);
  EXPECT_TRUE(fake_.removed()[0].killed);
  limits->teardown();  // idempotent
  EXPECT_EQ(1u, fake_.removed().size());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

TEST_F(CgroupV2Test, ControllersAreEnabledWhereNothingDelegatedPassesThemDown) {
  // user-1000.slice passes memory and pids to the service, which passes nothing on (yet).
  make_chain({"cpu memory pids", "cpu memory pids", "", ""});
  delegate_service();
  auto limits = prepare();
  ASSERT_TRUE(limits);
  // term.scope holds processes (EBUSY in the kernel) and app.slice is offered nothing: the service it is.
  const std::vector<std::string> made = new_dirs();
  ASSERT_EQ(1u, made.size());
  EXPECT_EQ(service_, made[0].substr(0, made[0].rfind('/')));
  EXPECT_EQ("+memory +pids", slurp(service_ + "/cgroup.subtree_control"));
  EXPECT_EQ("", slurp(app_ + "/cgroup.subtree_control"));
  EXPECT_EQ("", slurp(scope_ + "/cgroup.subtree_control"));
  EXPECT_EQ("67108864", slurp(made[0] + "/memory.max"));
  EXPECT_EQ("32", slurp(made[0] + "/pids.max"));
  EXPECT_EQ("pids: cgroup v2 " + made[0] + " (32)", limits->mechanisms().at(1));
  limits->teardown();
  EXPECT_FALSE(fs::exists(made[0]));
}

TEST_F(CgroupV2Test, WithoutDelegationCgroupV1IsUsed) {
  make_chain({"cpu memory pids", "cpu memory pids", "memory pids", "memory pids"});
  delegate_nothing();
  auto v2 = cgroup::find_v2_parent(own(), {"memory", "pids"});
  ASSERT_FALSE(v2.is_ok());
  EXPECT_EQ("no cgroup v2 directory delegated to this process passes memory, pids down: " + scope_ +
                ": not delegated to this process (no write access to it or its cgroup.procs)",
            v2.status().message());

  auto limits = prepare();
  ASSERT_TRUE(limits);
  const std::vector<std::string> made = new_dirs();
  ASSERT_EQ(2u, made.size());  // one group per v1 hierarchy, nothing in the v2 tree
  EXPECT_EQ(v1_memory_, made[0].substr(0, made[0].rfind('/')));
  EXPECT_EQ(v1_pids_, made[1].substr(0, made[1].rfind('/')));
  EXPECT_EQ("67108864", slurp(made[0] + "/memory.limit_in_bytes"));
  EXPECT_EQ("67108864", slurp(made[0] + "/memory.memsw.limit_in_bytes"));
  EXPECT_EQ("32", slurp(made[1] + "/pids.max"));
  EXPECT_EQ("memory pids", slurp(app_ + "/cgroup.subtree_control"));
  EXPECT_EQ("memory: cgroup v1 " + made[0] + " (64 MiB, swap included)", limits->mechanisms().at(0));
  EXPECT_EQ("pids: cgroup v1 " + made[1] + " (32)", limits->mechanisms().at(1));
  EXPECT_EQ(made, announced_);
  limits->teardown();
  EXPECT_FALSE(fs::exists(made[0]));
  EXPECT_FALSE(fs::exists(made[1]));
}

TEST_F(CgroupV2Test, AControllerThatIsNotDelegatedMeansRlimitsWithoutV1) {
  // The user's slice passes only pids to the service: memory cannot be had below it.
  make_chain({"cpu memory pids", "cpu pids", "pids", "pids"});
  delegate_service();
  no_v1();
  auto limits = prepare();
  ASSERT_TRUE(limits);
  EXPECT_TRUE(new_dirs().empty());
  EXPECT_TRUE(announced_.empty());
  EXPECT_TRUE(limits->cgroup_dirs().empty());
  EXPECT_EQ("cpu pids", slurp(user_ + "/cgroup.subtree_control"));
  EXPECT_EQ("pids", slurp(service_ + "/cgroup.subtree_control"));
  const std::string memory = limits->mechanisms().at(0);
  EXPECT_TRUE(memory.starts_with("memory: rlimit RLIMIT_AS (64 MiB of address space per process")) << memory;
  EXPECT_NE(std::string::npos, memory.find(service_ + ": offers no memory controller (cgroup.controllers: cpu pids)"))
      << memory;
  EXPECT_NE(std::string::npos, memory.find(user_ + ": not delegated to this process")) << memory;
  EXPECT_TRUE(limits->mechanisms().at(1).starts_with("pids: rlimit RLIMIT_NPROC (32 ")) << limits->mechanisms().at(1);
  EXPECT_TRUE(has_rlimit(*limits, RLIMIT_AS));
  EXPECT_TRUE(has_rlimit(*limits, RLIMIT_NPROC));

  // The neighbour: pids alone is delegated, so a pids limit alone is a v2 group.
  LimitsSpec pids_only;
  pids_only.pids = 32;
  auto pids = prepare(pids_only);
  ASSERT_TRUE(pids);
  ASSERT_EQ(1u, new_dirs().size());
  EXPECT_EQ(app_, new_dirs()[0].substr(0, new_dirs()[0].rfind('/')));
  EXPECT_EQ("pids: cgroup v2 " + new_dirs()[0] + " (32)", pids->mechanisms().at(0));
  EXPECT_FALSE(has_rlimit(*pids, RLIMIT_NPROC));
}

TEST_F(CgroupV2Test, ASubtreeControlThatIsNotOursIsNotWritten) {
  // Delegated directories, but their cgroup.subtree_control is root's and nothing passes memory and pids down.
  make_chain({"cpu memory pids", "cpu memory pids", "", ""});
  delegate_service();
  for (const std::string& dir : {service_, app_, scope_}) fake_.deny(dir + "/cgroup.subtree_control");
  auto v2 = cgroup::find_v2_parent(own(), {"memory", "pids"});
  ASSERT_FALSE(v2.is_ok());
  EXPECT_NE(std::string::npos, v2.status().message().find(service_ + ": cgroup.subtree_control not writable"))
      << v2.status().message();
  auto limits = prepare();
  ASSERT_TRUE(limits);
  EXPECT_EQ("", slurp(service_ + "/cgroup.subtree_control"));
  const std::vector<std::string> made = new_dirs();
  ASSERT_EQ(2u, made.size());
  EXPECT_TRUE(limits->mechanisms().at(0).starts_with("memory: cgroup v1 " + v1_memory_ + "/"));
}

TEST_F(CgroupV2Test, AFailedAnnouncementMakesNoGroup) {
  make_chain({"cpu memory pids", "cpu memory pids", "memory pids", "memory pids"});
  delegate_service();
  auto limits = ResourceLimits::prepare(
      spec(), [](const std::string&) { return Status::error("janitor could not start"); }, own());
  ASSERT_FALSE(limits.is_ok());
  EXPECT_EQ("janitor could not start", limits.status().message());
  EXPECT_TRUE(new_dirs().empty());
}

TEST_F(CgroupV2Test, TheMountAndOurCgroupAreReadFromMountinfo) {
  make_chain({});
  EXPECT_EQ(scope_, own().v2_dir().value_or(""));
  EXPECT_EQ(top_, own().v2_mount_point().value_or(""));
  EXPECT_EQ(v1_memory_, own().v1_dir("memory").value_or(""));
  EXPECT_EQ(v1_pids_, own().v1_dir("pids").value_or(""));
  // In a cgroup namespace the mount's root is our cgroup: the path below it is what /proc/self/cgroup shows.
  auto ns = cgroup::OwnCgroups::parse("40 30 0:37 /user.slice " + top_ + " rw - cgroup2 cgroup2 rw\n",
                                      "0::/user.slice/user-1000.slice\n", fake_);
  EXPECT_EQ(top_ + "/user-1000.slice", ns.v2_dir().value_or(""));
}

}  // namespace
}  // namespace oishell
