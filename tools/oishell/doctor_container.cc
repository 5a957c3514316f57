#include "tools/oishell/doctor_container.h"

#include <fstream>
#include <sstream>

namespace oishell::cli {
namespace {

std::string read_all(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_kubernetes(const HostSignals& host) { return host.container == ContainerKind::kubernetes; }

}  // namespace

std::vector<std::string> proc_masks_in(const std::string& mountinfo) {
  std::vector<std::string> masks;
  std::istringstream lines(mountinfo);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string id, parent, device, root, mount_point;
    if (!(fields >> id >> parent >> device >> root >> mount_point)) continue;
    if (mount_point.rfind("/proc/", 0) == 0) masks.push_back(mount_point);
  }
  return masks;
}

ContainerProbe container_probe() {
  ContainerProbe p;
  p.apparmor_label = read_all("/proc/self/attr/current");
  while (!p.apparmor_label.empty() && (p.apparmor_label.back() == '\n' || p.apparmor_label.back() == '\0')) {
    p.apparmor_label.pop_back();
  }
  p.proc_masks = proc_masks_in(read_all("/proc/self/mountinfo"));
  return p;
}

std::vector<ContainerSetting> container_settings(const KernelFacts& k, const HostSignals& host,
                                                 const ContainerProbe& probe) {
  std::vector<ContainerSetting> out;
  if (host.container == ContainerKind::none) return out;
  const bool kube = is_kubernetes(host);

  // seccomp: the outer filter must allow namespace creation and the mount calls.
  ContainerSetting seccomp{"seccomp", true, "", ""};
  if (host.seccomp_mode != 2) {
    seccomp.state = "no filter around this container";
  } else if (k.userns_works) {
    seccomp.state = "a filter is on and lets oishell create its namespaces";
  } else {
    seccomp.ok = false;
    seccomp.state = "a filter is on; creating namespaces fails: " + k.userns_detail;
    seccomp.fix = kube ? "securityContext.seccompProfile: {type: Localhost, localhostProfile: oishell.json} "
                         "(/usr/share/oishell/seccomp/oishell.json in the kubelet's seccomp directory)"
                       : "--security-opt seccomp=/usr/share/oishell/seccomp/oishell.json";
  }

  ContainerSetting userns{"user namespaces", k.userns_works, k.userns_works ? "oishell can create its own" : "", ""};
  if (!k.userns_works) {
    userns.state = k.userns_detail;
    userns.fix = kube ? "spec.hostUsers: false (a user namespace of the pod's own), with the seccomp fix"
                      : "the seccomp fix below (and the AppArmor one where AppArmor confines the container)";
  }
  out.push_back(userns);
  out.push_back(seccomp);

  // AppArmor: the runtimes' default profiles deny mount.
  ContainerSetting apparmor{"AppArmor", true, probe.apparmor_label.empty() ? "not in use" : probe.apparmor_label, ""};
  const bool confined = !probe.apparmor_label.empty() && probe.apparmor_label != "unconfined" &&
                        probe.apparmor_label.find("(enforce)") != std::string::npos &&
                        probe.apparmor_label.rfind("oishell", 0) != 0;
  if (confined && !k.userns_works) {
    apparmor.ok = false;
    apparmor.fix = kube ? "securityContext.appArmorProfile: {type: Localhost, localhostProfile: oishell-container} "
                          "(deploy/kubernetes/node-profiles.yaml loads it on the nodes)"
                        : "load /usr/share/oishell/apparmor/oishell-container on the host (apparmor_parser -r) and "
                          "run with --security-opt apparmor=oishell-container";
  }
  out.push_back(apparmor);

  // /proc: a runtime that masks parts of it forbids mounting a fresh one for the sandbox's pid namespace.
  ContainerSetting proc{"/proc", probe.proc_masks.empty(), "", ""};
  if (probe.proc_masks.empty()) {
    proc.state = "unmasked";
  } else {
    std::string list;
    for (const auto& m : probe.proc_masks) list += (list.empty() ? "" : ", ") + m;
    proc.state = "masked: " + list;
    proc.fix = std::string(kube ? "securityContext.procMount: Unmasked (needs spec.hostUsers: false)"
                                : "--security-opt systempaths=unconfined (podman: --security-opt unmask=ALL)") +
               "; or the policy's process.own_proc: best_effort (the container's /proc, with its other processes)";
  }
  out.push_back(proc);

  // cgroups: read-only in an unprivileged container. Not an error: the container's own limits bound it all.
  bool writable = k.cgroup_v2_writable;
  for (const auto& c : k.cgroup_v1) writable = writable || c.writable;
  ContainerSetting cgroups{"cgroups", true, writable ? "writable: each sandbox gets its own memory and pids limits"
                                                     : "read-only: the container's limits bound every sandbox "
                                                       "together; each sandbox keeps its rlimits and its size-limited "
                                                       "tmpfs", ""};
  if (!writable) cgroups.fix = kube ? "resources.limits (memory, cpu, ephemeral-storage) on the container"
                                    : "--memory and --pids-limit on the container";
  out.push_back(cgroups);

  // tun: never needed. The sandbox's only way out is the supervisor's relay and connect broker, which need no
  // device; said so that nobody grants /dev/net/tun (or NET_ADMIN) to a pod for oishell's sake.
  out.push_back(ContainerSetting{"tun", true,
                                 (k.tun_in_userns ? std::string("available") : "not available (" + k.tun_detail + ")") +
                                     ": not needed (the sandbox's network is the supervisor's relay and connect "
                                     "broker; no device)",
                                 ""});
  return out;
}

}  // namespace oishell::cli
