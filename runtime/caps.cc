// Capabilities: bounding set dropped, ambient cleared, securebits locked, no_new_privs, then every set cleared.
// The order matters: dropping the bounding set and locking securebits need CAP_SETPCAP, so the process sets are
// cleared last. Each step is verified afterwards (a silent partial drop would be a weaker sandbox).
#include "runtime/caps.h"

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
  // cap_max_bits() is the kernel's count (from /proc/sys/kernel/cap_last_cap), not the header's.
  const cap_value_t last = static_cast<cap_value_t>(cap_max_bits()) - 1;
  for (cap_value_t cap = 0; cap <= last; ++cap) {
    if (cap_get_bound(cap) == 0) continue;  // already absent
    if (cap_drop_bound(cap) != 0) {
      char* name = cap_to_name(cap);
      Status s = Status::from_errno(errno, std::string("cap_drop_bound(") + (name ? name : "?") + ")");
      cap_free(name);
      return s;
    }
  }
  for (cap_value_t cap = 0; cap <= last; ++cap) {
    if (cap_get_bound(cap) != 0) return Status::error("bounding set still holds capability " + std::to_string(cap));
  }
  return Status::ok();
}

}  // namespace

Status drop_all_capabilities() {
  OI_TRY_CTX(drop_bounding_set(), "dropping the capability bounding set");

  if (cap_reset_ambient() != 0) return Status::from_errno(errno, "cap_reset_ambient");

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

  // Verify: effective, permitted and inheritable are empty, the ambient set too.
  CapPtr now(cap_get_proc());
  if (!now) return Status::from_errno(errno, "cap_get_proc");
  if (cap_compare(now.get(), empty.get()) != 0) return Status::error("capabilities remain after cap_set_proc(empty)");
  const cap_value_t last = static_cast<cap_value_t>(cap_max_bits()) - 1;
  for (cap_value_t cap = 0; cap <= last; ++cap) {
    if (cap_get_ambient(cap) > 0) return Status::error("ambient capability " + std::to_string(cap) + " remains");
  }
  if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) return Status::error("no_new_privs is not set");
  return Status::ok();
}

}  // namespace oishell
