#pragma once
// libcurl, loaded on first use (dlopen of libcurl.so.4) instead of linked: the interpreter's start-up (and
// `--version`) then does not map libcurl and the ~30 libraries it pulls in (TLS, LDAP, Kerberos, SSH, ...).
#include <curl/curl.h>

#include "base/status.h"

namespace oishell::agent {

struct CurlApi {
  CURLcode (*global_init)(long);
  CURL* (*easy_init)();
  void (*easy_cleanup)(CURL*);
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  const char* (*easy_strerror)(CURLcode);
  CURLM* (*multi_init)();
  CURLMcode (*multi_cleanup)(CURLM*);
  CURLMcode (*multi_add_handle)(CURLM*, CURL*);
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*);
  CURLMcode (*multi_perform)(CURLM*, int*);
  CURLMcode (*multi_poll)(CURLM*, curl_waitfd*, unsigned, int, int*);
  CURLMsg* (*multi_info_read)(CURLM*, int*);
  const char* (*multi_strerror)(CURLMcode);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
  // A blocking transfer, and the raw connection of CURLOPT_CONNECT_ONLY (the Kubernetes attach websocket).
  CURLcode (*easy_perform)(CURL*);
  CURLcode (*easy_send)(CURL*, const void*, size_t, size_t*);
  CURLcode (*easy_recv)(CURL*, void*, size_t, size_t*);
};

// Loads libcurl and curl_global_init()s it once; later calls return the same table.
Result<const CurlApi*> curl_api();

}  // namespace oishell::agent
