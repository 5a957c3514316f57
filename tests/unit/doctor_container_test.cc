// `oishell doctor` in a container (tools/oishell/doctor_container.h): each setting oishell needs, whether the
// container gives it, and the run flag or pod field that fixes it — for a pod as runtimes start it by default, the
// session pod of deploy/kubernetes/pod.yaml, and Docker.
#include <gtest/gtest.h>

#include "tools/oishell/doctor_container.h"

namespace oishell::cli {
namespace {

const ContainerSetting& setting(const std::vector<ContainerSetting>& all, const std::string& name) {
  for (const auto& s : all) {
    if (s.name == name) return s;
  }
  static const ContainerSetting kMissing{"(missing)", false, "", ""};
  return kMissing;
}

KernelFacts blocked_kernel() {
  KernelFacts k;
  k.userns_works = false;
  k.userns_detail = "unshare(user|mount|net): EPERM (Operation not permitted)";
  k.cgroup_v2_dir = "/sys/fs/cgroup";
  k.cgroup_v2_writable = false;
  return k;
}

TEST(DoctorContainer, ADefaultPodNamesEveryFieldThatFixesIt) {
  HostSignals host;
  host.container = ContainerKind::kubernetes;
  host.seccomp_mode = 2;
  ContainerProbe probe;
  probe.apparmor_label = "cri-containerd.apparmor.d (enforce)";
  probe.proc_masks = {"/proc/kcore", "/proc/sys"};
  auto all = container_settings(blocked_kernel(), host, probe);
  ASSERT_EQ(6u, all.size());
  for (const auto& s : all) EXPECT_EQ(s.name == "cgroups" || s.name == "tun", s.ok) << s.name;
  // tun is named, and said to be unneeded: nobody should grant a device or NET_ADMIN for oishell.
  EXPECT_NE(std::string::npos, setting(all, "tun").state.find(": not needed (")) << setting(all, "tun").state;
  EXPECT_EQ("", setting(all, "tun").fix);
  EXPECT_EQ("spec.hostUsers: false (a user namespace of the pod's own), with the seccomp fix",
            setting(all, "user namespaces").fix);
  EXPECT_NE(std::string::npos, setting(all, "seccomp").fix.find("{type: Localhost, localhostProfile: oishell.json}"));
  EXPECT_NE(std::string::npos,
            setting(all, "AppArmor").fix.find("{type: Localhost, localhostProfile: oishell-container}"));
  EXPECT_EQ("masked: /proc/kcore, /proc/sys", setting(all, "/proc").state);
  EXPECT_EQ("securityContext.procMount: Unmasked (needs spec.hostUsers: false); or the policy's process.own_proc: "
            "best_effort (the container's /proc, with its other processes)",
            setting(all, "/proc").fix);
  EXPECT_EQ("resources.limits (memory, cpu, ephemeral-storage) on the container", setting(all, "cgroups").fix);
}

TEST(DoctorContainer, TheSessionPodNeedsNothingMore) {
  HostSignals host;
  host.container = ContainerKind::kubernetes;
  host.seccomp_mode = 2;
  KernelFacts k = blocked_kernel();
  k.userns_works = true;
  ContainerProbe probe;
  probe.apparmor_label = "oishell (enforce)";
  auto all = container_settings(k, host, probe);
  for (const auto& s : all) EXPECT_TRUE(s.ok) << s.name << ": " << s.state;
  EXPECT_EQ("a filter is on and lets oishell create its namespaces", setting(all, "seccomp").state);
  EXPECT_EQ("unmasked", setting(all, "/proc").state);
}

TEST(DoctorContainer, DockerGetsRunFlagsAndAHostGetsNoSection) {
  HostSignals host;
  host.container = ContainerKind::docker;
  host.seccomp_mode = 2;
  ContainerProbe probe;
  probe.apparmor_label = "docker-default (enforce)";
  probe.proc_masks = {"/proc/kcore"};
  auto all = container_settings(blocked_kernel(), host, probe);
  EXPECT_EQ("--security-opt seccomp=/usr/share/oishell/seccomp/oishell.json", setting(all, "seccomp").fix);
  EXPECT_EQ("--security-opt systempaths=unconfined (podman: --security-opt unmask=ALL); or the policy's "
            "process.own_proc: best_effort (the container's /proc, with its other processes)",
            setting(all, "/proc").fix);
  EXPECT_NE(std::string::npos, setting(all, "AppArmor").fix.find("--security-opt apparmor=oishell-container"));
  host.container = ContainerKind::none;
  EXPECT_TRUE(container_settings(blocked_kernel(), host, probe).empty());
}

TEST(DoctorContainer, ProcMasksAreTheMountsUnderProc) {
  const std::string mountinfo =
      "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
      "23 22 0:5 /null /proc/kcore rw,nosuid - tmpfs tmpfs rw\n"
      "24 22 0:21 /sys /proc/sys ro,nosuid - proc proc rw\n"
      "25 1 0:22 / /sys ro - sysfs sysfs ro\n"
      "26 1 0:23 / /process-data rw - tmpfs tmpfs rw\n";
  EXPECT_EQ((std::vector<std::string>{"/proc/kcore", "/proc/sys"}), proc_masks_in(mountinfo));
  EXPECT_TRUE(proc_masks_in("garbage\n\n").empty());
}

}  // namespace
}  // namespace oishell::cli
