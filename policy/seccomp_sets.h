#pragma once
// seccomp deny sets, named by purpose. Pure data: which syscalls (and which argument values) each set denies, with
// which errno, and whether the denial is reported (user notification) or answered directly by the filter; and which
// of them a spec puts in its program (sets_in_effect), the one answer the compiler (runtime/inside/seccomp_compile)
// and the guarantee table (policy/guarantees) both read. `oishell doctor` and the tests list them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "policy/sandbox_spec.h"

namespace oishell::seccomp_sets {

// One comparison on a syscall argument. 32-bit (int) arguments are compared under a 0xffffffff mask, so garbage in
// the upper half of the register cannot slip past an equality test; `ne` and `ge` compare all 64 bits, which errs on
// the side of denying (an argument with upper garbage is "not equal" and "greater").
struct ArgCheck {
  enum class Op { masked_eq, ne, ge };
  unsigned arg = 0;
  Op op = Op::masked_eq;
  uint64_t mask = 0;   // masked_eq only
  uint64_t value = 0;
};

// Denies `syscall` when every check holds (no checks: always).
struct Rule {
  const char* syscall;
  int err;              // errno returned to the caller
  bool report = true;   // false: answered by the filter itself (clone3 -> ENOSYS, a libc fallback, not an attack)
  std::vector<ArgCheck> when;
};

struct DenySet {
  std::string_view name;
  std::string_view purpose;  // one line for `oishell doctor` and docs
  std::vector<Rule> rules;
};

// Every set, in a stable order: mount_and_pivot, namespaces, kernel_modules, kexec, keyring, bpf_and_perf, tracing,
// userfaultfd, io_uring, handles, terminal_injection, sockets, clock_and_admin, setid_files, personality,
// strict_extras.
const std::vector<DenySet>& all();

// Calls the supervisor performs itself (runtime/broker): connect(2) in every family, and the sends that connect
// implicitly (sendto/sendmsg/sendmmsg with MSG_FASTOPEN). Not deny rules: always in the program, whatever the
// level, the sets or allow_syscalls; each goes to the user-notification listener, and the broker answers it.
const std::vector<Rule>& broker_rules();
// The calls that name a path, for `oishell learn` (SeccompSpec::observe_paths): each is shown to the supervisor,
// which records its path and lets it through (SECCOMP_USER_NOTIF_FLAG_CONTINUE: no decision rests on what it read).
// `err` is unused. A call that a deny set also names is left to the deny set.
const std::vector<Rule>& observed_path_rules();

// nullptr when no set has that name.
const DenySet* find(std::string_view name);

// The sets the `default` seccomp level uses (every set but strict_extras); `strict` adds strict_extras.
std::vector<std::string_view> default_set_names();

// An aligned power-of-two block of 32-bit values: v is in it when (v & mask) == value. One masked_eq check on the
// low 32 bits of an argument, which is how a range ("protocol 18 to 255") becomes a few filter rules.
struct Block {
  uint32_t mask = 0;
  uint32_t value = 0;
  bool operator==(const Block&) const = default;
};

// The fewest aligned blocks that together hold exactly [lo, hi], in ascending order (none when lo > hi; at most 62).
// Pure.
std::vector<Block> aligned_blocks(uint32_t lo, uint32_t hi);

// The fewest aligned blocks, gap by gap, that hold every value of [lo, hi] except those in `allowed` (in any order;
// values outside [lo, hi] are ignored). Pure.
std::vector<Block> blocks_except(uint32_t lo, uint32_t hi, std::vector<uint32_t> allowed);

// The sets no spec can leave out, nor take a call out of:
//   io_uring     its rings open, connect, make sockets and more inside the kernel, where no seccomp rule sees the
//                call: with it, every other set and the connect broker could be gone round;
//   setid_files  nothing else stops the owner of a file from setting its set-id bits, and the owner of a sandbox
//                root started is host root: a set-uid-root program left in the workspace.
const std::vector<std::string_view>& floor_set_names();

// Why allow_syscalls may not name `syscall` (a call of a floor set), as one clause; "" when it may.
std::string why_not_liftable(std::string_view syscall);

// One set as a program holds it: its rules less those of the calls allow_syscalls names.
struct SetInEffect {
  const DenySet* set = nullptr;
  std::vector<const Rule*> rules;   // in the program
  std::vector<std::string> lifted;  // the calls allow_syscalls took out of this set (each once, in the set's order)
};

// The deny sets `spec` compiles to, in order: its sets (every default set when the list is empty; strict adds
// strict_extras; each once), without `namespaces` when nested namespaces are allowed, each without the calls
// allow_syscalls names. An error for an unknown set, a floor set left out, or a floor set's call in allow_syscalls.
Result<std::vector<SetInEffect>> sets_in_effect(const SeccompSpec& spec);

}  // namespace oishell::seccomp_sets
