#pragma once
// Where the project's data files live (profiles/, executor drivers in runtime/executors/drivers/):
// $OISHELL_DATA_DIR if set; the source tree when the binary runs from the build tree; else <prefix>/share/oishell.
#include <string>

namespace oishell {

// The directory of the running binary (/proc/self/exe); empty when it cannot be read.
std::string self_exe_dir();
// Directory holding `profiles/` and `drivers/` (installed layout) or the source tree (build layout).
std::string data_dir();
// Full path of a data file given its path relative to the source tree (e.g. "profiles/default.yaml").
// In the installed layout the same relative path is looked up under share/oishell.
std::string data_path(const std::string& relative);

}  // namespace oishell
