#pragma once
// The seccomp programs of the built-in levels (policy::seccomp_spec(): default and strict, with and without nested
// namespaces, no allow_syscalls), compiled by libseccomp when oishell was built (tools/seccomp_precompile.cc) with
// user notification. Compiling one at every sandbox start took about a millisecond of the supervisor's time.
#include <linux/filter.h>

#include <vector>

#include "policy/sandbox_spec.h"

namespace oishell {

// The program for `spec` when it is exactly one of the built-in levels; nullptr otherwise.
const std::vector<sock_filter>* prebuilt_seccomp_program(const SeccompSpec& spec);

// Every precompiled spec, for the test that compiles each again and compares.
std::vector<SeccompSpec> prebuilt_seccomp_specs();

}  // namespace oishell
