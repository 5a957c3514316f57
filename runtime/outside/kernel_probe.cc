#include "runtime/outside/kernel_probe.h"

#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include "runtime/outside/cgroup_fs.h"
#include "runtime/outside/kernel_probe_ns.h"
#include "runtime/inside/landlock.h"

namespace oishell {
namespace {

std::vector<std::string> landlock_rights_of(int abi) {
  std::vector<std::string> rights;
  if (abi >= 1) {
    rights = {"fs.execute", "fs.write_file", "fs.read_file", "fs.read_dir", "fs.remove_dir", "fs.remove_file",
              "fs.make_char", "fs.make_dir", "fs.make_reg", "fs.make_sock", "fs.make_fifo", "fs.make_block",
              "fs.make_sym"};
  }
  if (abi >= 2) rights.push_back("fs.refer");
  if (abi >= 3) rights.push_back("fs.truncate");
  if (abi >= 4) {
    rights.push_back("net.bind_tcp");
    rights.push_back("net.connect_tcp");
  }
  if (abi >= 5) rights.push_back("fs.ioctl_dev");
  if (abi >= 6) {
    rights.push_back("scope.abstract_unix_socket");
    rights.push_back("scope.signal");
  }
  if (abi >= 7) rights.push_back("restrict_self.log_flags");
  return rights;
}

KernelFacts probe() {
  KernelFacts f;
  f.max_user_namespaces = read_sysctl("user/max_user_namespaces");
  f.unprivileged_userns_clone = read_sysctl("kernel/unprivileged_userns_clone");
  f.apparmor_restrict_unprivileged_userns = read_sysctl("kernel/apparmor_restrict_unprivileged_userns");
  f.legacy_tiocsti = read_sysctl("dev/tty/legacy_tiocsti");

  f.landlock_abi = landlock_abi_version();
  f.landlock_rights = landlock_rights_of(f.landlock_abi);

  f.seccomp_filter = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0;
  f.libseccomp_api = seccomp_api_get();
  if (auto actions = cgroup::read_file("/proc/sys/kernel/seccomp/actions_avail")) {
    std::istringstream in(*actions);
    std::string a;
    while (in >> a) {
      if (a == "user_notif") f.seccomp_notify = f.libseccomp_api >= 5;
    }
  }

  const cgroup::OwnCgroups own = cgroup::OwnCgroups::read();
  if (auto v2 = own.v2_dir()) {
    f.cgroup_v2_dir = *v2;
    f.cgroup_v2_controllers = cgroup::v2_controllers(*v2);
    f.cgroup_v2_writable = ::access(v2->c_str(), W_OK) == 0;
  }
  if (auto parent = cgroup::find_v2_parent(own, {"memory", "pids"})) {
    f.cgroup_v2_parent = parent->dir;
    f.cgroup_v2_delegation = parent->enable.empty() ? "passes memory and pids down"
                                                    : "memory and pids to be enabled in its cgroup.subtree_control";
  } else {
    f.cgroup_v2_delegation = parent.status().message();
  }
  for (const char* c : {"memory", "pids"}) {
    if (auto dir = own.v1_dir(c)) f.cgroup_v1.push_back({c, *dir, ::access(dir->c_str(), W_OK) == 0});
  }
  if (auto mountinfo = cgroup::read_file("/proc/self/mountinfo")) {
    const cgroup::CgroupMounts mounts = cgroup::cgroup_mounts(*mountinfo);
    f.cgroup_favordynmods = mounts.favordynmods;
    f.cgroup_mount_point = mounts.mount_point;
  }

  probe_ns::NsResults ns = probe_ns::run();
  f.userns_works = ns.userns == "ok";
  f.userns_detail = ns.userns;
  f.tun_in_userns = ns.tun == "ok";
  f.tun_detail = ns.tun;
  f.nftables_in_userns = ns.nftables == "ok";
  f.nftables_detail = ns.nftables;
  return f;
}

}  // namespace

std::optional<int64_t> read_sysctl(const std::string& name) {
  auto text = cgroup::read_file("/proc/sys/" + name);
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  int64_t v;
  if (!(in >> v)) return std::nullopt;
  return v;
}

const KernelFacts& kernel_facts() {
  static const KernelFacts facts = probe();
  return facts;
}

}  // namespace oishell
