// HttpsTerminator (https_terminator.h): its two TLS sides and the pump between them. The sandbox-facing server and
// the verifying client of the upstream run over memory BIOs; the encrypted bytes come and go through the caller,
// each direction within its bound, and the pump moves what it can until nothing moves. What the plaintext holds is
// followed by https_terminator_framing.cc and decided by https_terminator_decide.cc.
#include "runtime/relay/https_terminator.h"

#include <openssl/err.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "runtime/relay/https_terminator_answers.h"
#include "runtime/relay/tls_upstream.h"

namespace oishell::relay {
namespace {

// Plaintext handed to SSL_write at once: one TLS record.
constexpr size_t kRecord = 16 * 1024;
// What one record adds when encrypted (header, tag, padding byte; TLS 1.2 CBC would be less than this too): a
// write is made only when its encrypted form fits the direction's bound.
constexpr size_t kRecordOverhead = 256;
// SSL_read takes a record's bytes out of the input BIO as they come, and holds a partial record inside OpenSSL
// (uncounted) until the rest arrives, when its plaintext reappears here. The room offered for input keeps that
// much free, so that what a direction holds, OpenSSL's partial record included, stays within the bound.
constexpr size_t kInFlightRecord = kRecord + kRecordOverhead;
// The pump repeats while something moves; this bounds the rounds (each moves at least one byte or changes state).
constexpr int kMaxPumpRounds = 10000;

}  // namespace

std::string_view event_kind_name(TerminatorEvent::Kind kind) {
  switch (kind) {
    case TerminatorEvent::Kind::allowed: return "allowed";
    case TerminatorEvent::Kind::denied: return "denied";
    case TerminatorEvent::Kind::credential_used: return "credential_used";
    case TerminatorEvent::Kind::credential_refused: return "credential_refused";
    case TerminatorEvent::Kind::refused: return "refused";
    case TerminatorEvent::Kind::tls_error: return "tls_error";
    case TerminatorEvent::Kind::upstream_error: return "upstream_error";
    case TerminatorEvent::Kind::upstream_certificate: return "upstream_certificate";
    case TerminatorEvent::Kind::secret_withheld: return "secret_withheld";
  }
  return "?";
}

Result<std::unique_ptr<HttpsTerminator>> HttpsTerminator::create(TerminatorConfig config) {
  if (config.authority == nullptr || config.upstream_ctx == nullptr) {
    return Status::error("https terminator: no certificate authority or upstream context");
  }
  if (config.rules.empty()) return Status::error("https terminator for " + config.host + ": no terminating rule");
  if (config.max_buffered_bytes < 4 * (kRecord + kRecordOverhead)) {
    return Status::error("https terminator: max_buffered_bytes below " +
                         std::to_string(4 * (kRecord + kRecordOverhead)));
  }
  if (config.max_head_bytes >= config.max_buffered_bytes) {
    return Status::error("https terminator: max_head_bytes must be below max_buffered_bytes");
  }
  std::vector<std::vector<PathGlob>> globs;
  for (const TerminatedRule& rule : config.rules) {
    if (rule.rule == nullptr || rule.rule->tls != HostRule::Tls::terminate) {
      return Status::error("https terminator for " + config.host + ": a rule that does not terminate TLS");
    }
    std::vector<PathGlob>& parsed = globs.emplace_back();
    for (const std::string& path : rule.rule->paths) {
      auto glob = PathGlob::parse(path);
      if (!glob) return glob.status().with_context("rule `" + rule.rule->text + "`: path `" + path + "`");
      parsed.push_back(std::move(glob).value());
    }
  }
  std::unique_ptr<HttpsTerminator> terminator(new HttpsTerminator(std::move(config), std::move(globs)));
  OI_TRY(terminator->init());
  return terminator;
}

HttpsTerminator::HttpsTerminator(TerminatorConfig config, std::vector<std::vector<PathGlob>> globs)
    : config_(std::move(config)), globs_(std::move(globs)) {
  for (const TerminatedRule& rule : config_.rules) {
    all_bindings_.insert(all_bindings_.end(), rule.bindings.begin(), rule.bindings.end());
    for (const CredentialBinding& binding : rule.bindings) scrubber_.add(binding.name, binding.secret);
  }
}

HttpsTerminator::~HttpsTerminator() = default;

// Both sides' SSL read and write memory BIOs: the bytes stay in memory, and the caller moves them.
static Status attach_memory_bios(SSL* ssl, BIO** in, BIO** out) {
  BioPtr read_bio(BIO_new(BIO_s_mem()));
  BioPtr write_bio(BIO_new(BIO_s_mem()));
  if (!read_bio || !write_bio) return openssl_error("BIO_new(BIO_s_mem())");
  *in = read_bio.get();
  *out = write_bio.get();
  SSL_set_bio(ssl, read_bio.release(), write_bio.release());  // the SSL owns both from here
  return Status::ok();
}

Result<SslCtxPtr> HttpsTerminator::client_facing_context(TlsAuthority& authority) {
  auto context = authority.server_context();
  if (!context) return context.status();
  if (SSL_CTX_set_num_tickets(context->get(), 0) != 1) return openssl_error("SSL_CTX_set_num_tickets(0)");
  SSL_CTX_set_session_cache_mode(context->get(), SSL_SESS_CACHE_OFF);
  return context;
}

Status HttpsTerminator::init() {
  SSL_CTX* server = config_.client_facing_ctx;
  if (server == nullptr) {
    auto made = client_facing_context(*config_.authority);
    if (!made) return made.status().with_context("https terminator for " + config_.host);
    own_server_ctx_ = std::move(made).value();
    server = own_server_ctx_.get();
  }
  client_.ssl.reset(SSL_new(server));
  if (!client_.ssl) return openssl_error("SSL_new (sandbox side)");
  OI_TRY(attach_memory_bios(client_.ssl.get(), &client_.in, &client_.out));
  SSL_set_accept_state(client_.ssl.get());
  return Status::ok();
}

// The upstream side begins with the first allowed request rather than at once: a connection whose requests are
// all refused never reaches the upstream, and the client's handshake (which names the host by SNI) is complete by
// then, so a failure upstream can always be told to the client as a 502.
void HttpsTerminator::start_upstream() {
  if (upstream_started_) return;
  upstream_started_ = true;
  upstream_.ssl.reset(SSL_new(config_.upstream_ctx));
  Status made = upstream_.ssl ? attach_memory_bios(upstream_.ssl.get(), &upstream_.in, &upstream_.out)
                              : openssl_error("SSL_new (upstream side)");
  if (made) made = set_upstream_host(upstream_.ssl.get(), config_.host);
  if (made) offer_upstream_session(upstream_.ssl.get(), config_.host);  // resumed if the host gave one before
  if (!made) {
    upstream_.failed = true;
    event({.kind = TerminatorEvent::Kind::tls_error, .reason = "upstream side: " + made.message()});
    fail_upstream(
        terminator_error_json({{"error", "upstream_tls"}, {"host", config_.host}, {"reason", made.message()}}));
    return;
  }
  SSL_set_connect_state(upstream_.ssl.get());
}

void HttpsTerminator::from_client(std::string_view encrypted) {
  if (!done_ && !client_.eof && !encrypted.empty()) {
    BIO_write(client_.in, encrypted.data(), static_cast<int>(encrypted.size()));
  }
  pump();
}

void HttpsTerminator::from_upstream(std::string_view encrypted) {
  if (!done_ && upstream_started_ && !upstream_.eof && !encrypted.empty()) {
    BIO_write(upstream_.in, encrypted.data(), static_cast<int>(encrypted.size()));
  }
  pump();
}

void HttpsTerminator::client_closed() {
  client_.eof = true;
  pump();
}

void HttpsTerminator::upstream_closed() {
  upstream_.eof = true;
  pump();
}

static size_t take(BIO* bio, char* out, size_t max) {
  if (bio == nullptr) return 0;
  size_t n = std::min<size_t>({BIO_ctrl_pending(bio), max, static_cast<size_t>(std::numeric_limits<int>::max())});
  if (n == 0) return 0;
  int got = BIO_read(bio, out, static_cast<int>(n));
  return got > 0 ? static_cast<size_t>(got) : 0;
}

static std::string take(BIO* bio, size_t max) {
  std::string out(std::min<size_t>(bio ? BIO_ctrl_pending(bio) : 0, max), '\0');
  out.resize(take(bio, out.data(), out.size()));
  return out;
}

std::string HttpsTerminator::take_to_client(size_t max) {
  std::string out = take(client_.out, max);
  if (!out.empty()) pump();
  return out;
}

std::string HttpsTerminator::take_to_upstream(size_t max) {
  std::string out = take(upstream_.out, max);
  if (!out.empty()) pump();
  return out;
}

size_t HttpsTerminator::take_to_client(char* out, size_t max) {
  size_t n = take(client_.out, out, max);
  if (n > 0) pump();
  return n;
}

size_t HttpsTerminator::take_to_upstream(char* out, size_t max) {
  size_t n = take(upstream_.out, out, max);
  if (n > 0) pump();
  return n;
}

static size_t pending(BIO* bio) { return bio ? BIO_ctrl_pending(bio) : 0; }

size_t HttpsTerminator::buffered_to_upstream() const {
  return pending(client_.in) + client_plain_.size() + to_upstream_.size() + pending(upstream_.out);
}

size_t HttpsTerminator::buffered_to_client() const {
  return pending(upstream_.in) + upstream_plain_.size() + response_framing_.size() + to_sandbox_.held() +
         to_client_.size() + pending(client_.out);
}

size_t HttpsTerminator::client_input_room() const {
  if (done_ || client_.eof || request_ == RequestState::closed) return 0;
  size_t held = buffered_to_upstream() + kInFlightRecord;
  return held < config_.max_buffered_bytes ? config_.max_buffered_bytes - held : 0;
}

size_t HttpsTerminator::upstream_input_room() const {
  if (done_ || !upstream_started_ || upstream_.eof) return 0;
  size_t held = buffered_to_client() + kInFlightRecord;
  return held < config_.max_buffered_bytes ? config_.max_buffered_bytes - held : 0;
}

bool HttpsTerminator::finished() const {
  bool client_flushed = (to_client_.empty() && to_sandbox_.empty()) || client_.failed || !client_.handshake_done;
  return done_ && client_flushed && pending(client_.out) == 0 && pending(upstream_.out) == 0;
}

std::vector<TerminatorEvent> HttpsTerminator::take_events() { return std::exchange(events_, {}); }

void HttpsTerminator::event(TerminatorEvent e) {
  // Nothing here should hold a secret (names, decoded paths, parser reasons); redacting anyway keeps it so if a
  // reason ever quotes a header.
  for (std::string* field : {&e.method, &e.path, &e.rule, &e.credential, &e.reason}) {
    *field = redact(*field, all_bindings_);
  }
  events_.push_back(std::move(e));
}

void HttpsTerminator::pump() {
  for (int round = 0; round < kMaxPumpRounds; ++round) {
    auto state = std::make_tuple(buffered_to_upstream(), buffered_to_client(), client_plain_.size(),
                                 upstream_plain_.size(), pending_.size(), events_.size(), client_.handshake_done,
                                 upstream_.handshake_done, done_, request_, response_, upstream_started_);
    if (!client_.handshake_done && !client_.failed && !done_) client_handshake();
    if (client_.handshake_done && !done_ && request_ != RequestState::closed) read_plain(client_);
    process_requests();
    if (upstream_started_ && !upstream_.failed && !done_) {
      if (!upstream_.handshake_done) upstream_handshake();
      if (upstream_.handshake_done) {
        write_plain(upstream_, to_upstream_, to_upstream_.size(), &HttpsTerminator::buffered_to_upstream);
        read_plain(upstream_);
      }
    }
    process_responses();
    if (client_.handshake_done && !client_.failed) {
      scrub_to_client();
      write_plain(client_, to_client_, to_client_.size(), &HttpsTerminator::buffered_to_client);
    }
    if (!done_ && request_ == RequestState::closed && pending_.empty()) finish();
    if (done_ && client_.handshake_done && !client_.failed && !client_.shut_down && to_client_.empty() &&
        to_sandbox_.empty()) {
      client_.shut_down = true;  // close_notify: the client can tell the end from a truncation
      ERR_clear_error();
      SSL_shutdown(client_.ssl.get());
    }
    if (state == std::make_tuple(buffered_to_upstream(), buffered_to_client(), client_plain_.size(),
                                 upstream_plain_.size(), pending_.size(), events_.size(), client_.handshake_done,
                                 upstream_.handshake_done, done_, request_, response_, upstream_started_)) {
      return;
    }
  }
}

void HttpsTerminator::client_handshake() {
  ERR_clear_error();
  int rc = SSL_do_handshake(client_.ssl.get());
  if (rc == 1) {
    client_.handshake_done = true;
    // The authority mints for any name the terminating rules cover, so a client could ask for another covered
    // name than the tunnel's. Requests still go to the tunnel's host alone (the upstream's SNI and the Host check),
    // but a client that believes it talks to another host is refused here rather than misled.
    const char* name = SSL_get_servername(client_.ssl.get(), TLSEXT_NAMETYPE_host_name);
    std::optional<std::string> normalised = name ? normalise_host(name) : std::nullopt;
    if (normalised != config_.host) {
      event({.kind = TerminatorEvent::Kind::tls_error,
             .reason = "sandbox side: server name `" + std::string(name ? name : "").substr(0, 256) +
                       "` is not the tunnel's host " + config_.host});
      done_ = true;  // no request is read; the close_notify follows
    }
    return;
  }
  int code = SSL_get_error(client_.ssl.get(), rc);
  if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) {
    if (client_.eof) {
      event({.kind = TerminatorEvent::Kind::tls_error, .reason = "sandbox side: closed during the handshake"});
      done_ = true;
    }
    return;
  }
  client_.failed = true;  // its alert, if any, is in client_.out for the caller to send
  event({.kind = TerminatorEvent::Kind::tls_error,
         .reason = "sandbox side handshake: " + openssl_error("SSL_do_handshake").message()});
  done_ = true;
}

void HttpsTerminator::upstream_handshake() {
  ERR_clear_error();
  int rc = SSL_do_handshake(upstream_.ssl.get());
  if (rc == 1) {
    upstream_.handshake_done = true;
    return;
  }
  int code = SSL_get_error(upstream_.ssl.get(), rc);
  if ((code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) && !upstream_.eof) return;
  upstream_.failed = true;
  long verify = SSL_get_verify_result(upstream_.ssl.get());
  if (verify != X509_V_OK) {
    ERR_clear_error();
    std::string reason = X509_verify_cert_error_string(verify);
    event({.kind = TerminatorEvent::Kind::upstream_certificate,
           .reason = "the certificate of " + config_.host + " was refused: " + reason});
    fail_upstream(
        terminator_error_json({{"error", "upstream_certificate"}, {"host", config_.host}, {"reason", reason}}));
    return;
  }
  std::string reason = upstream_.eof ? std::string("the upstream closed during the handshake")
                                     : openssl_error("SSL_do_handshake").message();
  event({.kind = TerminatorEvent::Kind::tls_error, .reason = "upstream side handshake: " + reason});
  fail_upstream(terminator_error_json({{"error", "upstream_tls"}, {"host", config_.host}, {"reason", reason}}));
}

void HttpsTerminator::read_plain(Side& side) {
  // Decrypting never adds to what a direction holds (a record's plaintext is shorter than the record), so it needs
  // no room check; what it makes waits in the plaintext buffer until it can move on.
  std::string& into = &side == &client_ ? client_plain_ : upstream_plain_;
  char buffer[kRecord];
  for (;;) {
    ERR_clear_error();
    int n = SSL_read(side.ssl.get(), buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<size_t>(n));
      continue;
    }
    int code = SSL_get_error(side.ssl.get(), n);
    if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) return;
    if (code == SSL_ERROR_ZERO_RETURN) {  // close_notify: the peer's last byte
      side.eof = true;
      return;
    }
    side.failed = true;
    side.eof = true;
    std::string which = &side == &client_ ? "sandbox side" : "upstream side";
    event({.kind = TerminatorEvent::Kind::tls_error, .reason = which + ": " + openssl_error("SSL_read").message()});
    return;
  }
}

void HttpsTerminator::scrub_to_client() {
  // Final when no upstream response is under way (what to_sandbox_ holds is whole) or nothing more is moved.
  const bool final = response_ == ResponseState::head || done_;
  std::vector<std::string> found;
  to_sandbox_.release(to_client_, final, &found);
  for (std::string& name : found) {
    event({.kind = TerminatorEvent::Kind::secret_withheld, .credential = std::move(name),
           .reason = "a response from " + config_.host + " carried the secret; the sandbox got asterisks"});
  }
}

void HttpsTerminator::write_plain(Side& side, std::string& from, size_t limit,
                                  size_t (HttpsTerminator::*held)() const) {
  size_t written = 0;
  limit = std::min(limit, from.size());
  while (written < limit) {
    size_t chunk = std::min(limit - written, kRecord);
    // Encrypting moves `chunk` bytes and adds a record's overhead: only when that still fits the bound.
    if ((this->*held)() - written + kRecordOverhead > config_.max_buffered_bytes) break;
    ERR_clear_error();
    int n = SSL_write(side.ssl.get(), from.data() + written, static_cast<int>(chunk));
    if (n <= 0) {
      int code = SSL_get_error(side.ssl.get(), n);
      if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) break;
      side.failed = true;
      std::string which = &side == &client_ ? "sandbox side" : "upstream side";
      event({.kind = TerminatorEvent::Kind::tls_error, .reason = which + ": " + openssl_error("SSL_write").message()});
      finish();
      break;
    }
    written += static_cast<size_t>(n);
  }
  from.erase(0, written);
}

void HttpsTerminator::fail_upstream(const std::string& body) {
  if (client_.handshake_done && !client_.failed && !response_started_) {
    to_sandbox_.content(terminator_error_response(502, "Bad Gateway", redact(body, all_bindings_)));
  }
  finish();
}

void HttpsTerminator::finish() {
  if (done_) return;
  done_ = true;
  pending_.clear();
  client_plain_.clear();
  upstream_plain_.clear();
  to_upstream_.clear();
  if (upstream_started_ && upstream_.handshake_done && !upstream_.failed) {
    ERR_clear_error();
    SSL_shutdown(upstream_.ssl.get());
  }
}

}  // namespace oishell::relay
