#include "agent/llm/curl_api.h"

#include <dlfcn.h>

#include <mutex>

namespace oishell::agent {
namespace {

template <typename F>
bool load(void* lib, const char* name, F* out) {
  void* sym = ::dlsym(lib, name);
  if (!sym) return false;
  *out = reinterpret_cast<F>(sym);
  return true;
}

}  // namespace

Result<const CurlApi*> curl_api() {
  static CurlApi api;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = nullptr;
    for (const char* name : {"libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"}) {
      lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
    }
    if (!lib) {
      const char* why = ::dlerror();
      error = std::string("cannot load libcurl (install libcurl4): ") + (why ? why : "not found");
      return;
    }
    bool ok = load(lib, "curl_global_init", &api.global_init) && load(lib, "curl_easy_init", &api.easy_init) &&
              load(lib, "curl_easy_cleanup", &api.easy_cleanup) && load(lib, "curl_easy_setopt", &api.easy_setopt) &&
              load(lib, "curl_easy_getinfo", &api.easy_getinfo) &&
              load(lib, "curl_easy_strerror", &api.easy_strerror) && load(lib, "curl_multi_init", &api.multi_init) &&
              load(lib, "curl_multi_cleanup", &api.multi_cleanup) &&
              load(lib, "curl_multi_add_handle", &api.multi_add_handle) &&
              load(lib, "curl_multi_remove_handle", &api.multi_remove_handle) &&
              load(lib, "curl_multi_perform", &api.multi_perform) && load(lib, "curl_multi_poll", &api.multi_poll) &&
              load(lib, "curl_multi_info_read", &api.multi_info_read) &&
              load(lib, "curl_multi_strerror", &api.multi_strerror) &&
              load(lib, "curl_slist_append", &api.slist_append) &&
              load(lib, "curl_slist_free_all", &api.slist_free_all) &&
              load(lib, "curl_easy_perform", &api.easy_perform) && load(lib, "curl_easy_send", &api.easy_send) &&
              load(lib, "curl_easy_recv", &api.easy_recv);
    if (!ok) {
      error = "libcurl is too old (curl_multi_poll needs 7.66 or later)";
      return;
    }
    api.global_init(CURL_GLOBAL_DEFAULT);
  });
  if (!error.empty()) return Status::error(error);
  return &api;
}

}  // namespace oishell::agent
