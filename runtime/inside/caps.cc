// Capabilities: bounding set dropped, ambient cleared, securebits locked, no_new_privs, then every set cleared.
// The order matters: dropping the bounding set and locking securebits need CAP_SETPCAP, so the process sets are
// cleared last. Every call is checked and the process sets are read back (a silent partial drop would be a weaker
// sandbox).
#include "runtime/inside/caps.h"

#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include <cerrno>
#include <memory>
#include <string>

namespace oishell {
namespace {

struct CapFree {
  void operator()(cap_t c) const { cap_free(c); }
};
using CapPtr = std::unique_ptr<std::remove_pointer_t<cap_t>, CapFree>;

constexpr unsigned long kSecurebits =
    SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
    SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

Status drop_bounding_set() {
  // cap_max_bits() is the kernel's count (from /proc/sys/kernel/cap_last_cap), not the header's. PR_CAPBSET_DROP
  // succeeds only once the capability is out of the set (absent ones included), so its result is the check.
  const cap_value_t last = static_cast<cap_value_t>(cap_max_bits()) - 1;
  for (cap_value_t cap = 0; cap <= last; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      char* name = cap_to_name(cap);
      Status s = Status::from_errno(errno, std::string("prctl(PR_CAPBSET_DROP, ") + (name ? name : "?") + ")");
      cap_free(name);
      return s;
    }
  }
  return Status::ok();
}

}  // namespace

Status drop_all_capabilities() {
  OI_TRY_CTX(drop_bounding_set(), "dropping the capability bounding set");

  // Clears the whole ambient set in one call; it succeeds only when the set is empty afterwards.
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    return Status::from_errno(errno, "prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
  }

  if (::prctl(PR_SET_SECUREBITS, kSecurebits, 0, 0, 0) != 0) {
    return Status::from_errno(errno, "prctl(PR_SET_SECUREBITS)").with_context("locking securebits");
  }
  int bits = ::prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
  if (bits < 0) return Status::from_errno(errno, "prctl(PR_GET_SECUREBITS)");
  if ((static_cast<unsigned long>(bits) & kSecurebits) != kSecurebits) {
    return Status::error("securebits not locked (got " + std::to_string(bits) + ")");
  }

  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Status::from_errno(errno, "prctl(PR_SET_NO_NEW_PRIVS)");

  CapPtr empty(cap_init());  // cap_init() gives a state with every set clear
  if (!empty) return Status::from_errno(errno, "cap_init");
  if (cap_set_proc(empty.get()) != 0) return Status::from_errno(errno, "cap_set_proc(empty)");

  // Verify: effective, permitted and inheritable are empty (the ambient set cannot outgrow permitted).
  CapPtr now(cap_get_proc());
  if (!now) return Status::from_errno(errno, "cap_get_proc");
  if (cap_compare(now.get(), empty.get()) != 0) return Status::error("capabilities remain after cap_set_proc(empty)");
  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) return Status::error("no_new_privs is not set");
  return Status::ok();
}

}  // namespace oishell
