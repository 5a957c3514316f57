#pragma once
// `oishell doctor` in a container (Docker, Podman, a Kubernetes pod): each setting the container must give oishell,
// whether it does, and the run flag or manifest field that fixes it (deploy/kubernetes/README.md). Pure: the facts
// come in (kernel_facts(), host_signals(), the AppArmor label and /proc's mounts read by container_probe()).
#include <string>
#include <vector>

#include "runtime/outside/host_advice.h"
#include "runtime/outside/kernel_probe.h"

namespace oishell::cli {

struct ContainerProbe {
  std::string apparmor_label;       // /proc/self/attr/current: "docker-default (enforce)", "unconfined", ""
  std::vector<std::string> proc_masks;  // mount points under /proc that cover a part of it (/proc/kcore, /proc/sys)
};

// Reads this process's AppArmor label and the mounts over parts of /proc (/proc/self/mountinfo).
ContainerProbe container_probe();
// The mount points under /proc (other than /proc itself) in a mountinfo text: what a runtime masks.
std::vector<std::string> proc_masks_in(const std::string& mountinfo);

struct ContainerSetting {
  std::string name;    // "user namespaces", "seccomp", "AppArmor", "/proc", "cgroups"
  bool ok = false;
  std::string state;   // what is there now
  std::string fix;     // the flag or manifest field that fixes it ("" when ok or when nothing is needed)
};

// Empty when `host.container` is none.
std::vector<ContainerSetting> container_settings(const KernelFacts& k, const HostSignals& host,
                                                 const ContainerProbe& probe);

}  // namespace oishell::cli
