#pragma once
// A workspace for sandbox enforcement cases: ws/ (the workspace, read-write inside) with public.txt, secret.txt
// and secretdir/key (both hidden by the policy), a .git with hooks/ and config (protected by the default profile),
// ro/ (bound read-only with --ro) and outside/ (not bound at all). Files are made by the user running the test, so
// that what fails inside fails because of the sandbox and not because of ownership.
#include <string>
#include <vector>

#include "harness.h"

namespace oishell::test {

class SandboxWorkspace {
 public:
  SandboxWorkspace();
  std::string ws() const { return dir_.path() + "/ws"; }
  std::string ro() const { return dir_.path() + "/ro"; }
  std::string outside() const { return dir_.path() + "/outside"; }
  std::string policy() const { return dir_.path() + "/policy.yaml"; }
  std::string path(const std::string& relative) const { return dir_.path() + "/" + relative; }
  // --policy (default profile + the hides above) --workspace ws --ro ro, then `extra`.
  std::vector<std::string> args(const std::vector<std::string>& extra = {}) const;
  // The probe in this sandbox; its first line of output.
  std::string probe(const std::vector<std::string>& probe_args, const std::vector<std::string>& extra = {}) const;
  // Reads a host file ("" when absent).
  static std::string read(const std::string& path);

 private:
  TempDir dir_;
};

}  // namespace oishell::test
