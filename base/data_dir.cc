#include "base/data_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>

#include "oishell/build_config.h"

namespace oishell {
namespace {

bool is_dir(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// <prefix> when the binary runs installed (<prefix>/bin/NAME beside <prefix>/share/oishell/profiles); else empty.
std::string installed_prefix() {
  std::string exe_dir = self_exe_dir();
  if (exe_dir.empty() || !is_dir(exe_dir + "/../share/oishell/profiles")) return {};
  char resolved[PATH_MAX];
  if (!::realpath((exe_dir + "/..").c_str(), resolved)) return {};
  return resolved;
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

std::string local_profile_dir() {
  if (const char* env = std::getenv("OISHELL_DATA_DIR"); env && *env) return {};
  const std::string prefix = installed_prefix();
  if (prefix.empty()) return {};
  // As GNUInstallDirs places sysconfdir: /etc for the prefix /usr, <prefix>/etc otherwise.
  return (prefix == "/usr" ? std::string("/etc") : prefix + "/etc") + "/oishell/profiles";
}

std::string data_path(const std::string& relative) {
  if (relative.starts_with("profiles/") && relative.size() > 9) {
    if (std::string local = local_profile_dir(); !local.empty()) {
      std::string path = local + "/" + relative.substr(9);
      if (is_file(path)) return path;
    }
  }
  return data_dir() + "/" + relative;
}

}  // namespace oishell
