#include "runtime/broker/as_sandbox.h"

#include <grp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/sys/thread_credentials.h"

namespace oishell::broker {
namespace {

// The calling thread's supplementary groups, sorted (getgroups(2) reads this thread's credentials).
Result<std::vector<gid_t>> thread_groups() {
  const int n = ::getgroups(0, nullptr);
  if (n < 0) return Status::from_errno(errno, "getgroups");
  std::vector<gid_t> groups(static_cast<size_t>(n));
  const int got = ::getgroups(n, groups.data());
  if (got < 0) return Status::from_errno(errno, "getgroups");
  groups.resize(static_cast<size_t>(got));
  std::sort(groups.begin(), groups.end());
  return groups;
}

// Takes `ids` on the calling thread alone, then clears its capability sets, and reads everything back.
Status become(const SandboxIds& ids) {
  std::vector<gid_t> wanted = ids.groups;
  std::sort(wanted.begin(), wanted.end());
  auto current = thread_groups();
  if (!current) return current.status();
  // Only when they differ: setgroups needs CAP_SETGID, which an ordinary caller's supervisor lacks (its groups are
  // already the sandbox's).
  if (*current != wanted && sys::thread_setgroups(wanted.size(), wanted.data()) != 0) {
    return Status::from_errno(errno, "setgroups(" + std::to_string(wanted.size()) + " groups)");
  }
  if (sys::thread_setresgid(ids.gid, ids.gid, ids.gid) != 0) {
    return Status::from_errno(errno, "setresgid(" + std::to_string(ids.gid) + ")");
  }
  // Real, effective and saved: no way back to the supervisor's uid. From root to another uid the kernel clears the
  // permitted and effective sets itself; the capset below clears them whatever the ids were (and the ambient set
  // with them: it cannot outgrow permitted).
  if (sys::thread_setresuid(ids.uid, ids.uid, ids.uid) != 0) {
    return Status::from_errno(errno, "setresuid(" + std::to_string(ids.uid) + ")");
  }
  const __user_cap_data_struct none[2] = {};
  if (sys::thread_capset(none) != 0) return Status::from_errno(errno, "capset(none)");

  uid_t ruid, euid, suid;
  gid_t rgid, egid, sgid;
  if (::getresuid(&ruid, &euid, &suid) != 0) return Status::from_errno(errno, "getresuid");
  if (::getresgid(&rgid, &egid, &sgid) != 0) return Status::from_errno(errno, "getresgid");
  if (ruid != ids.uid || euid != ids.uid || suid != ids.uid || rgid != ids.gid || egid != ids.gid || sgid != ids.gid) {
    return Status::error("the thread's ids are not the sandbox's after setresuid/setresgid");
  }
  auto groups = thread_groups();
  if (!groups) return groups.status();
  if (*groups != wanted) return Status::error("the thread's groups are not the sandbox's after setgroups");
  __user_cap_data_struct caps[2] = {};
  if (sys::thread_capget(caps) != 0) return Status::from_errno(errno, "capget");
  for (const auto& c : caps) {
    if (c.effective != 0 || c.permitted != 0 || c.inheritable != 0) {
      return Status::error("capabilities remain on the thread after capset(none)");
    }
  }
  return Status::ok();
}

// The effective id of a "Uid:" or "Gid:" line ("Uid:\treal\teffective\tsaved\tfs").
bool effective_id(const std::string& line, uint32_t* id) {
  std::istringstream fields(line.substr(4));
  uint32_t real = 0;
  return static_cast<bool>(fields >> real >> *id);
}

}  // namespace

Result<SandboxIds> sandbox_ids_of(pid_t init_pid) {
  const std::string path = "/proc/" + std::to_string(init_pid) + "/status";
  std::ifstream status(path);
  if (!status) return Status::from_errno(errno ? errno : ENOENT, "open(" + path + ")");
  SandboxIds ids;
  bool uid = false, gid = false, groups = false;
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Uid:", 0) == 0) {
      uid = effective_id(line, &ids.uid);
    } else if (line.rfind("Gid:", 0) == 0) {
      gid = effective_id(line, &ids.gid);
    } else if (line.rfind("Groups:", 0) == 0) {
      std::istringstream fields(line.substr(7));
      for (gid_t g; fields >> g;) ids.groups.push_back(g);
      groups = true;
    }
  }
  if (!uid || !gid || !groups) return Status::error("no Uid, Gid or Groups line in " + path);
  return ids;
}

Result<std::unique_ptr<AsSandbox>> AsSandbox::start(const SandboxIds& ids) {
  std::unique_ptr<AsSandbox> as(new AsSandbox());
  AsSandbox* self = as.get();
  self->thread_ = std::thread([self, ids] { self->serve(ids); });
  std::unique_lock lock(self->mu_);
  self->cv_.wait(lock, [self] { return self->ready_; });
  if (!self->started_.is_ok()) {
    Status failed = self->started_;
    lock.unlock();
    return failed.with_context("the broker's thread with the sandbox's credentials (uid " + std::to_string(ids.uid) +
                               ", gid " + std::to_string(ids.gid) + ")");  // the destructor joins the thread
  }
  return as;
}

AsSandbox::~AsSandbox() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AsSandbox::serve(const SandboxIds& ids) {
  // Signals are for the supervisor's other threads (its signalfd): none is delivered here.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  Status started = become(ids);
  std::unique_lock lock(mu_);
  started_ = started;
  ready_ = true;
  cv_.notify_all();
  if (!started.is_ok()) return;
  while (true) {
    cv_.wait(lock, [this] { return stop_ || work_ != nullptr; });
    if (stop_) return;
    const std::function<void()>* work = work_;
    lock.unlock();
    (*work)();
    lock.lock();
    work_ = nullptr;
    done_ = true;
    cv_.notify_all();
  }
}

void AsSandbox::run(const std::function<void()>& work) {
  std::unique_lock lock(mu_);
  done_ = false;
  work_ = &work;
  cv_.notify_all();
  cv_.wait(lock, [this] { return done_; });
}

int AsSandbox::connect(int fd, const sockaddr* addr, socklen_t len) {
  int err = 0;
  run([&] { err = ::connect(fd, addr, len) == 0 ? 0 : errno; });
  return err;
}

}  // namespace oishell::broker
