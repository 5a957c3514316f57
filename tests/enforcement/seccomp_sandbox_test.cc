// seccomp end to end: inside `oishell run`, each deny set answers with its errno beside an allowed neighbour,
// and a denial reaches the events file as a "denied" event naming the syscall and its set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "sandbox_fixture.h"

namespace oishell::test {
namespace {

TEST(SeccompSandbox, DenySetsAnswerEperm) {
  SandboxWorkspace w;
  // Without a sandbox most of these succeed as root, or fail with EINVAL/EFAULT/EBADF/ENOENT for the bad arguments.
  for (const char* call : {"mount", "umount", "chroot", "pivot_root", "unshare_user", "unshare_net", "setns",
                           "init_module", "finit_module", "kexec_load", "keyctl", "add_key", "bpf", "perf_event_open",
                           "ptrace", "process_vm_readv", "userfaultfd", "io_uring_setup", "open_by_handle_at",
                           "settimeofday", "af_packet", "inet_raw", "netlink_audit"}) {
    EXPECT_EQ("EPERM", w.probe({"syscall", call})) << call;
  }
}

TEST(SeccompSandbox, Neighbours) {
  SandboxWorkspace w;
  EXPECT_EQ("ENOSYS", w.probe({"syscall", "clone3"}));  // libc falls back to clone(2) ...
  EXPECT_EQ("ok", w.probe({"syscall", "fork"}));         // ... which works without namespace flags
  EXPECT_EQ("ok", w.probe({"syscall", "inet_stream"}));
  EXPECT_EQ("ok", w.probe({"syscall", "netlink_route"}));
  EXPECT_EQ("EINVAL", probe_on_host({"syscall", "clone3"}));  // the host's answer to a size-0 clone3
  EXPECT_EQ("ok", probe_on_host({"syscall", "unshare_user"}));
}

TEST(SeccompSandbox, TerminalInjection) {
  SandboxWorkspace w;
  // On the host (dev.tty.legacy_tiocsti=1) faking input into one's own controlling terminal works.
  EXPECT_EQ("ok", probe_on_host({"tiocsti"}));
  EXPECT_EQ("EPERM", w.probe({"tiocsti"}));
  EXPECT_EQ("ok", w.probe({"tiocsti", "winsz"}));
}

TEST(SeccompSandbox, DenialArrivesAsAnEvent) {
  SandboxWorkspace w;
  std::string events = w.path("events.jsonl");
  EXPECT_EQ("EPERM", w.probe({"syscall", "keyctl"}, {"--events", events}));
  std::ifstream in(events);
  std::string line;
  bool found = false;
  std::string all;
  while (std::getline(in, line)) {
    all += line + "\n";
    auto e = nlohmann::json::parse(line, nullptr, false);
    if (e.is_discarded()) continue;
    if (e.value("event", "") == "denied" && e.value("kind", "") == "syscall" && e.value("syscall", "") == "keyctl" &&
        e.value("set", "") == "keyring" && e.value("errno", "") == "EPERM" && e.contains("pid")) {
      found = true;
    }
  }
  EXPECT_TRUE(found) << all;
}

}  // namespace
}  // namespace oishell::test
