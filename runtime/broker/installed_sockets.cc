// See installed_sockets.h.
#include "runtime/broker/installed_sockets.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "base/unique_fd.h"
#include "runtime/sys/syscalls.h"

namespace oishell::broker {
namespace {

// The inode of /proc/PID/ns/pid; 0 when it cannot be read (another user's process, gone).
ino_t pid_namespace_of(const std::string& pid) {
  struct stat st {};
  return ::stat(("/proc/" + pid + "/ns/pid").c_str(), &st) == 0 ? st.st_ino : 0;
}

bool numeric(const char* name) {
  if (!*name) return false;
  for (const char* p = name; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
  }
  return true;
}

}  // namespace

void InstalledSockets::add(ino_t inode, std::string host, uint16_t port, std::string address, pid_t caller) {
  if (inode == 0) return;
  if (entries_.size() >= kMax) prune();
  auto [it, added] = entries_.insert_or_assign(inode, Entry{std::move(host), port, std::move(address), caller});
  if (added) order_.push_back(inode);
}

ino_t InstalledSockets::sandbox_pid_namespace() const {
  const ino_t own = pid_namespace_of("self");
  if (ino_t init = pid_namespace_of(std::to_string(init_pid_)); init != 0 && init != own) return init;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    auto entry = entries_.find(*it);
    if (entry == entries_.end() || entry->second.caller <= 0) continue;
    ino_t ns = pid_namespace_of(std::to_string(entry->second.caller));
    if (ns != 0 && ns != own) return ns;
  }
  return 0;
}

std::map<ino_t, std::vector<std::pair<pid_t, int>>> InstalledSockets::find_open(const std::set<ino_t>& wanted) {
  std::map<ino_t, std::vector<std::pair<pid_t, int>>> found;
  const ino_t sandbox = sandbox_pid_namespace();
  if (sandbox == 0 || wanted.empty()) return found;
  DIR* proc = ::opendir("/proc");
  if (!proc) return found;
  while (dirent* process = ::readdir(proc)) {
    if (!numeric(process->d_name) || pid_namespace_of(process->d_name) != sandbox) continue;
    const std::string fds = std::string("/proc/") + process->d_name + "/fd";
    DIR* dir = ::opendir(fds.c_str());
    if (!dir) continue;
    while (dirent* fd = ::readdir(dir)) {
      if (!numeric(fd->d_name)) continue;
      char link[64];
      ssize_t n = ::readlinkat(::dirfd(dir), fd->d_name, link, sizeof link - 1);
      if (n <= 0) continue;
      link[n] = '\0';
      if (std::strncmp(link, "socket:[", 8) != 0) continue;
      ino_t inode = static_cast<ino_t>(std::strtoull(link + 8, nullptr, 10));
      if (wanted.count(inode)) found[inode].emplace_back(std::atoi(process->d_name), std::atoi(fd->d_name));
    }
    ::closedir(dir);
  }
  ::closedir(proc);
  return found;
}

void InstalledSockets::prune() {
  std::set<ino_t> all;
  for (const auto& [inode, entry] : entries_) all.insert(inode);
  auto open = find_open(all);
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = open.count(it->first) ? std::next(it) : entries_.erase(it);
  }
  // Room for a quarter more before the next walk, so that a sandbox holding thousands open does not walk /proc at
  // every connect.
  while (entries_.size() > kMax * 3 / 4 && !order_.empty()) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
  std::deque<ino_t> kept;
  for (ino_t inode : order_) {
    if (entries_.count(inode)) kept.push_back(inode);
  }
  order_.swap(kept);
}

std::vector<InstalledSockets::Closed> InstalledSockets::close_refused(
    const std::function<std::string(const std::string& host, uint16_t port, const std::string& address)>& refusal) {
  std::map<ino_t, std::string> refused;
  for (const auto& [inode, entry] : entries_) {
    if (std::string why = refusal(entry.host, entry.port, entry.address); !why.empty()) refused[inode] = why;
  }
  std::vector<Closed> closed;
  if (refused.empty()) return closed;
  std::set<ino_t> wanted;
  for (const auto& [inode, why] : refused) wanted.insert(inode);
  for (const auto& [inode, holders] : find_open(wanted)) {
    bool shut = false;
    for (const auto& [pid, fd] : holders) {
      UniqueFd process(sys::pidfd_open(pid, 0));
      if (!process) continue;
      UniqueFd socket(sys::pidfd_getfd(process.get(), fd, 0));
      if (!socket) continue;
      struct stat st {};
      if (::fstat(socket.get(), &st) != 0 || st.st_ino != inode) continue;  // the fd was reused meanwhile
      // Both ways: the program reads EOF and its writes fail (EPIPE); the peer gets a FIN.
      shut = ::shutdown(socket.get(), SHUT_RDWR) == 0 || shut;
      break;  // one open file description: shut down once for every holder
    }
    if (shut) {
      const Entry& entry = entries_[inode];
      closed.push_back({entry.host, entry.port, refused[inode]});
    }
  }
  for (const auto& [inode, why] : refused) entries_.erase(inode);  // closed now, or no longer held anywhere
  std::deque<ino_t> kept;
  for (ino_t inode : order_) {
    if (entries_.count(inode)) kept.push_back(inode);
  }
  order_.swap(kept);
  return closed;
}

}  // namespace oishell::broker
