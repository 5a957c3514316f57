#pragma once
// Where the project's data files live (profiles/, executor drivers in runtime/executors/drivers/):
// $OISHELL_DATA_DIR if set; <prefix>/share/oishell when the binary runs installed (<prefix>/bin/oishell, e.g. the
// package's /usr/bin/oishell -> /usr/share/oishell); the source tree when it runs from the build tree; else the
// configured <prefix>/share/oishell.
// An installed binary also reads the machine's own profiles, <sysconfdir>/oishell/profiles (/etc/oishell/profiles
// for prefix /usr, <prefix>/etc/oishell/profiles otherwise): a profile there is found before a built-in one of the
// same name.
#include <string>

namespace oishell {

// The directory of the running binary (/proc/self/exe); empty when it cannot be read.
std::string self_exe_dir();
// Directory holding `profiles/` and `drivers/` (installed layout) or the source tree (build layout).
std::string data_dir();
// The machine's own profiles (/etc/oishell/profiles) when the binary runs installed; empty otherwise (build tree,
// $OISHELL_DATA_DIR), so that tests never read them.
std::string local_profile_dir();
// Full path of a data file given its path relative to the source tree (e.g. "profiles/default.yaml").
// In the installed layout the same relative path is looked up under share/oishell; "profiles/NAME.yaml" is first
// looked up in local_profile_dir().
std::string data_path(const std::string& relative);

}  // namespace oishell
