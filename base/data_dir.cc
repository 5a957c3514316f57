#include "base/data_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "oishell/build_config.h"

namespace oishell {
namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::string self_exe_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  std::string path(buf, static_cast<size_t>(n));
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

std::string data_dir() {
  if (const char* env = std::getenv("OISHELL_DATA_DIR"); env && *env) return env;
  // Installed: <prefix>/bin/oishell -> <prefix>/share/oishell
  std::string exe_dir = self_exe_dir();
  if (!exe_dir.empty()) {
    std::string installed = exe_dir + "/../share/oishell";
    if (is_dir(installed + "/profiles")) return installed;
  }
  if (is_dir(std::string(build::kSourceDataDir) + "/profiles")) return build::kSourceDataDir;
  return build::kInstallDataDir;
}

std::string data_path(const std::string& relative) { return data_dir() + "/" + relative; }

}  // namespace oishell
