#include "runtime/outside/repo_guard.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <memory>
#include <stop_token>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>

#include "runtime/outside/repo_files.h"
#include "runtime/outside/repo_snapshot.h"
#include "runtime/outside/repo_walk.h"

namespace oishell {
namespace {

using repo_guard::join;
using repo_guard::TrustedDirs;
using repo_guard::Walker;

std::string normalised(std::string path) {
  while (path.size() > 1 && path.ends_with('/')) path.pop_back();
  return path;
}

}  // namespace

struct RepoGuard::Snapshot {
  TrustedDirs trusted;  // the thread's until it is joined
  std::jthread thread;  // declared last: stopped and joined before `trusted` goes
};

RepoGuard::RepoGuard(std::vector<std::string> roots, struct timespec start, std::vector<std::string> skip)
    : start_(start) {
  for (auto& root : roots) root = normalised(std::move(root));
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  for (const auto& root : roots) {  // a root inside another is walked with it
    bool inside = std::any_of(roots_.begin(), roots_.end(),
                              [&](const std::string& outer) { return root.starts_with(join(outer, "")); });
    if (!inside) roots_.push_back(root);
  }
  for (auto& path : skip) skip_.insert(normalised(std::move(path)));
}

RepoGuard::~RepoGuard() = default;
RepoGuard::RepoGuard(RepoGuard&&) noexcept = default;
RepoGuard& RepoGuard::operator=(RepoGuard&&) noexcept = default;

struct timespec RepoGuard::start_time() {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return now;
}

void RepoGuard::snapshot_async() {
  if (snapshot_) return;
  snapshot_ = std::make_unique<Snapshot>();
  // The thread owns copies of what it reads, and writes only into the Snapshot, which stays where it is when the
  // guard is moved.
  auto walk = [roots = roots_, skip = skip_, start = start_, record = &snapshot_->trusted](std::stop_token stop) {
    Walker walker = Walker::recording(start, skip, record, std::move(stop));
    for (const auto& root : roots) walker.walk_root(root);
  };
  // Every signal blocked in the thread (it inherits the mask): signals keep going to the threads that wait for them
  // (a signalfd, a handler meant to interrupt the caller).
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  bool started = false;
  try {
    snapshot_->thread = std::jthread(walk);
    started = true;
    // Named before this returns (unless already gone), for ps and for tests that wait for it to end.
    (void)::pthread_setname_np(snapshot_->thread.native_handle(), kSnapshotThreadName);
  } catch (const std::system_error&) {
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (!started) walk(std::stop_token());  // no thread to be had (EAGAIN): the same walk, on the caller's time
}

void RepoGuard::snapshot_now() {
  if (snapshot_) return;
  snapshot_ = std::make_unique<Snapshot>();
  Walker walker = Walker::recording(start_, skip_, &snapshot_->trusted, std::stop_token());
  for (const auto& root : roots_) walker.walk_root(root);
}

std::vector<RepoFinding> RepoGuard::check() {
  const TrustedDirs* trusted = nullptr;
  if (snapshot_) {
    if (snapshot_->thread.joinable()) snapshot_->thread.join();
    trusted = &snapshot_->trusted;
  }
  Walker walker = Walker::checking(start_, skip_, trusted);
  for (const auto& root : roots_) walker.walk_root(root);
  std::vector<RepoFinding> findings = walker.take();
  auto order = [](const RepoFinding& a, const RepoFinding& b) {
    return std::tie(a.path, a.found, a.action) < std::tie(b.path, b.found, b.action);
  };
  std::sort(findings.begin(), findings.end(), order);
  findings.erase(std::unique(findings.begin(), findings.end()), findings.end());
  if (findings.size() > kMaxFindings) {
    size_t more = findings.size() - (kMaxFindings - 1);
    findings.resize(kMaxFindings - 1);
    findings.push_back({roots_.empty() ? "" : roots_.front(), std::to_string(more) + " more findings",
                        "handled the same way; not listed"});
  }
  return findings;
}

}  // namespace oishell
