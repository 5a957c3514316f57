#pragma once
// The TLS tests' fixtures (tls_authority_test.cc, tls_upstream_test.cc): an authority for the test names, PEM
// parsing, and a real handshake between two SSL_CTXs over a memory BIO pair, in one thread, both ends non-blocking,
// with a bounded number of steps (a stalled handshake ends the loop instead of hanging the test).
#include <openssl/err.h>
#include <openssl/pem.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <stdlib.h>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/relay/tls_authority.h"

namespace oishell::relay::testing {

// A temporary directory (for CA files), removed with what is in it.
class TempDir {
 public:
  TempDir() {
    char path[] = "/tmp/oishell-relay-test-XXXXXX";
    if (mkdtemp(path) == nullptr) ADD_FAILURE() << "mkdtemp: " << errno;
    path_ = path;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};


inline const std::vector<std::string> kNames = {"api.example.test", "*.example.org"};

inline std::unique_ptr<TlsAuthority> authority(const std::vector<std::string>& names = kNames,
                                               std::chrono::seconds validity = std::chrono::hours(24)) {
  auto made = TlsAuthority::create(names, validity);
  if (!made) {
    ADD_FAILURE() << made.status().message();
    return nullptr;
  }
  return std::move(made).value();
}

inline X509Ptr parse_pem(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

// ALPN's wire form: each protocol preceded by its length.
inline std::string alpn_wire(const std::vector<std::string>& protocols) {
  std::string wire;
  for (const std::string& protocol : protocols) wire += static_cast<char>(protocol.size()) + protocol;
  return wire;
}

struct Handshake {
  enum class State { pending, done, failed };
  State client = State::pending;
  State server = State::pending;
  int client_reason = 0;  // ERR_GET_REASON of the client's last error: the alert it received, or its own refusal
  std::string client_error, server_error;
  long verify_result = -1;  // the client's
  std::string alpn;         // what the client was told was selected
  X509Ptr peer;             // the certificate the client was shown
};

// Runs a handshake between a server made from `server_context` and a client made from `client_context` (after
// `setup`), over a memory BIO pair, stepping each side in turn until neither can go on. A side that keeps waiting
// (a stall) stays `pending` after the bounded number of rounds.
inline Handshake handshake(SSL_CTX* server_context, SSL_CTX* client_context, const std::function<void(SSL*)>& setup) {
  Handshake result;
  SslPtr server(SSL_new(server_context));
  SslPtr client(SSL_new(client_context));
  BIO* server_end = nullptr;
  BIO* client_end = nullptr;
  if (!server || !client || BIO_new_bio_pair(&server_end, 0, &client_end, 0) != 1) {
    ADD_FAILURE() << openssl_error("setting up the handshake").message();
    return result;
  }
  SSL_set_bio(server.get(), server_end, server_end);  // each SSL owns its end
  SSL_set_bio(client.get(), client_end, client_end);
  SSL_set_accept_state(server.get());
  SSL_set_connect_state(client.get());
  setup(client.get());
  auto step = [](SSL* ssl, Handshake::State& state, std::string& error, int* reason, const char* side) {
    if (state != Handshake::State::pending) return;
    ERR_clear_error();
    int rc = SSL_do_handshake(ssl);
    if (rc == 1) {
      state = Handshake::State::done;
      return;
    }
    int code = SSL_get_error(ssl, rc);
    if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) return;
    if (reason) *reason = ERR_GET_REASON(ERR_peek_last_error());
    error = openssl_error(side).message();
    state = Handshake::State::failed;
  };
  for (int round = 0; round < 50; ++round) {
    step(client.get(), result.client, result.client_error, &result.client_reason, "client SSL_do_handshake");
    step(server.get(), result.server, result.server_error, nullptr, "server SSL_do_handshake");
    if (result.client != Handshake::State::pending && result.server != Handshake::State::pending) break;
  }
  result.verify_result = SSL_get_verify_result(client.get());
  const unsigned char* selected = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(client.get(), &selected, &length);
  result.alpn.assign(reinterpret_cast<const char*>(selected), length);
  if (X509* peer = SSL_get0_peer_certificate(client.get())) {
    X509_up_ref(peer);
    result.peer.reset(peer);
  }
  return result;
}

inline constexpr auto kDone = Handshake::State::done;
inline constexpr auto kFailed = Handshake::State::failed;

}  // namespace oishell::relay::testing
