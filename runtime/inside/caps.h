#pragma once
#include "base/status.h"

namespace oishell {

// Clears the bounding, ambient, inheritable, permitted and effective sets, locks the securebits (NOROOT,
// NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE, each with its _LOCKED) and sets no_new_privs.
// Must be called single-threaded, after the mount tree is built and before seccomp.
Status drop_all_capabilities();

}  // namespace oishell
