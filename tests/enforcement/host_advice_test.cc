// What `oishell doctor` and a failing `oishell run` say when this machine will not build a sandbox: the layer that
// is unavailable and the setting that enables it, decided from the signals a host gives (pure: injected here).
#include "runtime/outside/host_advice.h"

#include <gtest/gtest.h>

namespace oishell::test {
namespace {

constexpr char kCloneFailed[] = "namespaces: clone3(CLONE_NEWUSER|NEWNS|NEWPID): EPERM (Operation not permitted)";

TEST(HostAdvice, SysctlsComeFirstAndNameTheCommand) {
  HostSignals host;
  host.uid = 1000;
  host.max_user_namespaces = 0;
  EXPECT_EQ(sandbox_blocked_advice(host, "namespaces: clone3(...): ENOSPC (No space left on device)"),
            "the user namespace layer is unavailable: user.max_user_namespaces=0 allows none. Enable it with `sudo "
            "sysctl -w user.max_user_namespaces=15000` (and a file in /etc/sysctl.d to keep it)");
  host.max_user_namespaces = 15000;
  host.unprivileged_userns_clone = 0;
  EXPECT_NE(sandbox_blocked_advice(host, kCloneFailed).find("`sudo sysctl -w kernel.unprivileged_userns_clone=1`"),
            std::string::npos);
  host.unprivileged_userns_clone = 1;
  host.apparmor_restrict_unprivileged_userns = 1;
  EXPECT_NE(sandbox_blocked_advice(host, "uid/gid maps: write /proc/self/uid_map: EPERM")
                .find("`sudo apparmor_parser -r /etc/apparmor.d/oishell`"),
            std::string::npos);
  // Root is not subject to either restriction.
  host.uid = 0;
  EXPECT_EQ(sandbox_blocked_advice(host, kCloneFailed), "");
}

TEST(HostAdvice, ContainersNameTheirSetting) {
  HostSignals host;
  host.container = ContainerKind::docker;
  host.seccomp_mode = 2;
  EXPECT_EQ(sandbox_blocked_advice(host, kCloneFailed),
            "the user namespace layer is unavailable: Docker's default seccomp profile refuses creating namespaces "
            "(unshare, clone). Enable it with oishell's profile, the runtime's default plus the calls oishell needs: "
            "`--security-opt seccomp=/usr/share/oishell/seccomp/oishell.json` (rather than `seccomp=unconfined`, "
            "which drops the container's filter), and where AppArmor confines the container its companion, "
            "/usr/share/oishell/apparmor/oishell-container loaded on the host: `--security-opt "
            "apparmor=oishell-container`");
  EXPECT_EQ(sandbox_blocked_advice(host, "mount namespace: fsmount(proc): EPERM (Operation not permitted)"),
            "the mount layer is unavailable: Docker masks parts of /proc, so the sandbox cannot mount a /proc of its "
            "own. Enable it with `--security-opt systempaths=unconfined`, or accept the container's /proc, "
            "read-only and with its other processes listed, with the policy's `process: {own_proc: best_effort}`");
  host.container = ContainerKind::kubernetes;
  EXPECT_NE(sandbox_blocked_advice(host, kCloneFailed).find("`securityContext.seccompProfile: {type: Localhost, "
                                                          "localhostProfile: oishell.json}`"),
            std::string::npos);
  EXPECT_NE(sandbox_blocked_advice(host, "mount namespace: fsmount(proc): EPERM").find("procMount: Unmasked"),
            std::string::npos);
  host.container = ContainerKind::podman;
  EXPECT_NE(sandbox_blocked_advice(host, kCloneFailed).find("Podman's default seccomp profile"), std::string::npos);
  EXPECT_NE(sandbox_blocked_advice(host, "mount namespace: fsmount(proc): EPERM").find("`--security-opt unmask=ALL`"),
            std::string::npos);
  // Podman's default profile lets the namespaces through but not sethostname: the call is named, and the fix.
  EXPECT_EQ(sandbox_blocked_advice(host, "uts namespace: sethostname: EPERM (Operation not permitted)"),
            "the sandbox cannot be built: Podman's default seccomp profile refuses sethostname, which oishell needs "
            "to build it. Enable it with oishell's profile, the runtime's default plus the calls oishell needs: "
            "`--security-opt seccomp=/usr/share/oishell/seccomp/oishell.json` (rather than `seccomp=unconfined`, "
            "which drops the container's filter), and where AppArmor confines the container its companion, "
            "/usr/share/oishell/apparmor/oishell-container loaded on the host: `--security-opt "
            "apparmor=oishell-container`");
  host.container = ContainerKind::none;
  EXPECT_NE(sandbox_blocked_advice(host, kCloneFailed).find("already runs under a seccomp filter"), std::string::npos);
  EXPECT_NE(sandbox_blocked_advice(host, "pivot_root: ENOSYS").find("filter that refuses pivot_root"),
            std::string::npos);
  // Without a filter, an EPERM from those calls is not the filter's: no advice.
  host.seccomp_mode = 0;
  EXPECT_EQ("", sandbox_blocked_advice(host, "uts namespace: sethostname: EPERM (Operation not permitted)"));
}

TEST(HostAdvice, OtherFailuresGetNone) {
  HostSignals host;
  host.container = ContainerKind::docker;
  EXPECT_EQ(sandbox_blocked_advice(host, "relay: bind(127.0.0.1:3128): EADDRINUSE"), "");
  // The neighbour of the real machine: nothing restricts it, so nothing is advised.
  EXPECT_EQ(sandbox_blocked_advice(HostSignals{}, kCloneFailed), "");
}

}  // namespace
}  // namespace oishell::test
