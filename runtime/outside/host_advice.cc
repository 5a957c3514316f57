#include "runtime/outside/host_advice.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "runtime/outside/kernel_probe.h"

namespace oishell {
namespace {

bool exists(const char* path) { return ::access(path, F_OK) == 0; }

int seccomp_mode_of_self() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Seccomp:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return 0;
}

const char* runtime_name(ContainerKind kind) {
  switch (kind) {
    case ContainerKind::docker: return "Docker";
    case ContainerKind::podman: return "Podman";
    case ContainerKind::kubernetes: return "Kubernetes";
    case ContainerKind::other: return "the container runtime";
    case ContainerKind::none: break;
  }
  return "";
}

bool mentions(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }

// Whose seccomp profile refuses: "the pod's" in Kubernetes, else "<Runtime>'s default".
std::string kube_or(const HostSignals& host, const char* pod) {
  return host.container == ContainerKind::kubernetes ? std::string(pod)
                                                     : std::string(runtime_name(host.container)) + "'s default";
}

}  // namespace

HostSignals host_signals() {
  HostSignals s;
  s.uid = ::geteuid();
  s.max_user_namespaces = read_sysctl("user/max_user_namespaces");
  s.unprivileged_userns_clone = read_sysctl("kernel/unprivileged_userns_clone");
  s.apparmor_restrict_unprivileged_userns = read_sysctl("kernel/apparmor_restrict_unprivileged_userns");
  if (::getenv("KUBERNETES_SERVICE_HOST") != nullptr) {
    s.container = ContainerKind::kubernetes;
  } else if (exists("/run/.containerenv")) {
    s.container = ContainerKind::podman;
  } else if (exists("/.dockerenv")) {
    s.container = ContainerKind::docker;
  } else if (const char* c = ::getenv("container"); c != nullptr && *c != '\0') {
    s.container = ContainerKind::other;
  }
  s.seccomp_mode = seccomp_mode_of_self();
  return s;
}

std::string sandbox_blocked_advice(const HostSignals& host, const std::string& failure) {
  const bool userns = mentions(failure, "clone3(") || mentions(failure, "unshare(") ||
                      mentions(failure, "uid_map") || mentions(failure, "setgroups") || mentions(failure, "uid/gid");
  const bool proc = mentions(failure, "proc") && (mentions(failure, "EPERM") || mentions(failure, "EACCES"));
  // Another call that builds the sandbox, refused by a filter this process already runs under (a runtime's seccomp
  // profile answers EPERM or ENOSYS): podman's default, for one, lets namespaces through but not sethostname.
  std::string filtered_call;
  if (!userns && !proc && host.seccomp_mode == 2 && (mentions(failure, "EPERM") || mentions(failure, "ENOSYS"))) {
    for (const char* call : {"sethostname", "pivot_root", "fsopen", "fsconfig", "fsmount", "open_tree", "move_mount",
                             "mount_setattr", "setns", "umount2"}) {
      if (mentions(failure, call)) {
        filtered_call = call;
        break;
      }
    }
  }
  if (!userns && !proc && filtered_call.empty()) return "";
  if (host.max_user_namespaces && *host.max_user_namespaces == 0) {
    return "the user namespace layer is unavailable: user.max_user_namespaces=0 allows none. Enable it with `sudo "
           "sysctl -w user.max_user_namespaces=15000` (and a file in /etc/sysctl.d to keep it)";
  }
  if (host.uid != 0 && host.unprivileged_userns_clone && *host.unprivileged_userns_clone == 0) {
    return "the user namespace layer is unavailable: kernel.unprivileged_userns_clone=0 forbids it to ordinary "
           "users. Enable it with `sudo sysctl -w kernel.unprivileged_userns_clone=1`";
  }
  if (host.uid != 0 && host.apparmor_restrict_unprivileged_userns && *host.apparmor_restrict_unprivileged_userns == 1) {
    return "the user namespace layer is unavailable: AppArmor restricts unprivileged user namespaces "
           "(kernel.apparmor_restrict_unprivileged_userns=1) and oishell's profile is not loaded. Load it with `sudo "
           "apparmor_parser -r /etc/apparmor.d/oishell` (the package installs it there)";
  }
  if (host.container != ContainerKind::none) {
    const std::string runtime = runtime_name(host.container);
    if (proc && !userns) {
      return "the mount layer is unavailable: " + runtime + " masks parts of /proc, so the sandbox cannot mount a "
             "/proc of its own. Enable it with " +
             (host.container == ContainerKind::kubernetes
                  ? std::string("`securityContext.procMount: Unmasked` (with `hostUsers: false`)")
                  : host.container == ContainerKind::podman ? "`--security-opt unmask=ALL`"
                                                            : "`--security-opt systempaths=unconfined`") +
             ", or accept the container's /proc, read-only and with its other processes listed, with the policy's "
             "`process: {own_proc: best_effort}`";
    }
    const std::string refused =
        filtered_call.empty() ? "the user namespace layer is unavailable: " + std::string(kube_or(host, "the pod's")) +
                                    " seccomp profile" + (host.container == ContainerKind::kubernetes
                                                              ? " (RuntimeDefault) refuses creating namespaces"
                                                              : " refuses creating namespaces (unshare, clone)")
                              : "the sandbox cannot be built: " + std::string(kube_or(host, "the pod's")) +
                                    " seccomp profile refuses " + filtered_call + ", which oishell needs to build it";
    if (host.container == ContainerKind::kubernetes) {
      return refused + ". Enable it with oishell's profile, the runtime's default plus the calls oishell needs "
             "(/usr/share/oishell/seccomp/oishell.json, installed on the node): `securityContext.seccompProfile: "
             "{type: Localhost, localhostProfile: oishell.json}`, in a pod with its own user namespace "
             "(`hostUsers: false`); deploy/kubernetes/ has the whole pod";
    }
    return refused + ". Enable it with oishell's profile, the runtime's default plus the calls "
           "oishell needs: `--security-opt seccomp=/usr/share/oishell/seccomp/oishell.json` (rather than "
           "`seccomp=unconfined`, which drops the container's filter), and where AppArmor confines the container "
           "its companion, /usr/share/oishell/apparmor/oishell-container loaded on the host: `--security-opt "
           "apparmor=oishell-container`";
  }
  if (proc && !userns) {
    return "the mount layer is unavailable: mounts cover parts of /proc here (as a container runtime's masked paths "
           "do), so the kernel refuses the sandbox a /proc of its own. Enable it by running oishell where /proc is "
           "not masked, or accept this /proc, read-only and with its other processes listed, with the policy's "
           "`process: {own_proc: best_effort}`";
  }
  if (host.seccomp_mode == 2 && !filtered_call.empty()) {
    return "the sandbox cannot be built: this process already runs under a seccomp filter that refuses " +
           filtered_call + " (a container or service manager's). Start oishell outside it, or allow " + filtered_call +
           " in that filter";
  }
  if (host.seccomp_mode == 2) {
    return "the user namespace layer is unavailable: this process already runs under a seccomp filter that refuses "
           "creating namespaces (a container or service manager's). Start oishell outside it, or allow unshare and "
           "clone with namespace flags in that filter";
  }
  return "";
}

}  // namespace oishell
