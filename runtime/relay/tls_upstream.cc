#include "runtime/relay/tls_upstream.h"

#include <deque>
#include <map>
#include <mutex>
#include <optional>

#include "base/terminal_text.h"
#include "policy/net_rules.h"

namespace oishell::relay {
namespace {

// The sessions one upstream context keeps (its ex_data, freed with it): host -> a reference to its newest session.
struct SessionStore {
  std::mutex mutex;
  std::map<std::string, SSL_SESSION*> sessions;
  std::deque<std::string> order;  // sessions' hosts, oldest first
  ~SessionStore() {
    for (auto& [host, session] : sessions) SSL_SESSION_free(session);
  }
};

void free_store(void*, void* store, CRYPTO_EX_DATA*, int, long, void*) { delete static_cast<SessionStore*>(store); }

int store_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, &free_store);
  return index;
}

SessionStore* store_of(SSL_CTX* context) {
  return static_cast<SessionStore*>(SSL_CTX_get_ex_data(context, store_index()));
}

// OpenSSL hands over each new session (TLS 1.3: each ticket, after the handshake); 1 keeps its reference.
int on_new_session(SSL* ssl, SSL_SESSION* session) {
  SessionStore* store = store_of(SSL_get_SSL_CTX(ssl));
  const char* host = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
  if (store == nullptr || host == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return 0;
  std::lock_guard lock(store->mutex);
  auto [slot, added] = store->sessions.try_emplace(host, nullptr);
  if (!added) SSL_SESSION_free(slot->second);
  slot->second = session;
  if (added) {
    store->order.push_back(host);
    if (store->order.size() > kMaxUpstreamSessions) {
      auto oldest = store->sessions.find(store->order.front());
      SSL_SESSION_free(oldest->second);
      store->sessions.erase(oldest);
      store->order.pop_front();
    }
  }
  return 1;
}

}  // namespace

bool offer_upstream_session(SSL* ssl, const std::string& host) {
  SessionStore* store = store_of(SSL_get_SSL_CTX(ssl));
  if (store == nullptr) return false;
  std::lock_guard lock(store->mutex);
  auto found = store->sessions.find(host);
  if (found == store->sessions.end() || SSL_SESSION_is_resumable(found->second) != 1) return false;
  return SSL_set_session(ssl, found->second) == 1;  // takes its own reference
}

Result<SslCtxPtr> upstream_client_context(const std::string& ca_file) {
  SslCtxPtr context(SSL_CTX_new(TLS_client_method()));
  if (!context) return openssl_error("SSL_CTX_new(TLS_client_method)");
  if (SSL_CTX_set_min_proto_version(context.get(), TLS1_2_VERSION) != 1) {
    return openssl_error("SSL_CTX_set_min_proto_version(TLS 1.2)");
  }
  SSL_CTX_set_options(context.get(), SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  // A new context trusts nothing: either call below is the whole of its trust.
  if (ca_file.empty()) {
    if (SSL_CTX_set_default_verify_paths(context.get()) != 1) return openssl_error("SSL_CTX_set_default_verify_paths");
  } else if (SSL_CTX_load_verify_locations(context.get(), ca_file.c_str(), nullptr) != 1) {
    return openssl_error("SSL_CTX_load_verify_locations(" + ca_file + ")").with_context("upstream CA file");
  }
  auto* store = new SessionStore();
  if (SSL_CTX_set_ex_data(context.get(), store_index(), store) != 1) {
    delete store;
    return openssl_error("SSL_CTX_set_ex_data(upstream sessions)");
  }
  // Sessions go to the store alone, not to OpenSSL's cache (which a client never looks up by itself).
  SSL_CTX_set_session_cache_mode(context.get(), SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(context.get(), &on_new_session);
  static constexpr unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  if (SSL_CTX_set_alpn_protos(context.get(), kAlpn, sizeof kAlpn) != 0) {  // 0 is success here
    return openssl_error("SSL_CTX_set_alpn_protos(http/1.1)");
  }
  return context;
}

Status set_upstream_host(SSL* ssl, const std::string& host) {
  std::optional<std::string> name = normalise_host(host);
  if (!name || IpAddress::parse(*name)) {
    return Status::error("upstream TLS host `" + escape_for_terminal(host) + "`: not a DNS name");
  }
  if (SSL_set_tlsext_host_name(ssl, name->c_str()) != 1) {
    return openssl_error("SSL_set_tlsext_host_name(" + *name + ")");
  }
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (SSL_set1_host(ssl, name->c_str()) != 1) return openssl_error("SSL_set1_host(" + *name + ")");
  return Status::ok();
}

}  // namespace oishell::relay
