#pragma once
// The relay's end of a `tls: terminate` connection (issue 16), sans I/O: one object per terminated tunnel, fed the
// encrypted bytes read from the sandbox's socket and from the upstream socket, handing back the encrypted bytes to
// write to each. Between the two it is the TLS server the sandbox talks to (a leaf of the sandbox's TlsAuthority)
// and a verifying TLS client of the real host (tls_upstream.h), and it reads every HTTP/1.1 request of the
// connection (kept-alive and pipelined ones included):
//   - each request is decided on its own by the first terminating rule whose `methods` and `paths` admit it;
//   - an allowed request's head gets the deciding rule's credentials in place of their placeholders
//     (credential_rewrite.h) and goes upstream; its body streams by its framing, never held whole;
//   - each response streams back and is followed by its framing to where it ends, so the next request is
//     checked in turn; what reaches the sandbox is scrubbed of the secrets (scrubbed_stream.h: a chunked body's
//     payload as one stream, its framing kept as it came);
//   - a denied request, a placeholder where it may not be, an `Upgrade`, a malformed request: the sandbox gets a
//     JSON error response with `Connection: close` after the responses it is still owed, and the connection ends.
// It does no I/O, owns no fd and starts no thread: OpenSSL runs over memory BIOs, so the relay's event loop drives
// it like any other connection's bytes. Single-threaded.
//
// Memory: what it holds per direction (encrypted input not yet read, plaintext waiting, encrypted output not yet
// taken), a partial record OpenSSL has read included, stays within `max_buffered_bytes`, provided the caller feeds
// at most *_input_room() bytes at a time. OpenSSL's fixed per-SSL buffers (about 34 KiB per side) come on top.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "policy/http_path.h"
#include "policy/net_rules.h"
#include "runtime/relay/credential_rewrite.h"
#include "runtime/relay/http_parser.h"
#include "runtime/relay/http_response.h"
#include "runtime/relay/scrubbed_stream.h"
#include "runtime/relay/secret_scrubber.h"
#include "runtime/relay/tls_authority.h"
#include "runtime/relay/tls_openssl.h"

namespace oishell::relay {

// One terminating allow rule and the credentials it declares: a credential is bound to the rule that declares it,
// so a request decided by another rule (say, a read-only GET rule) never carries it.
struct TerminatedRule {
  const HostRule* rule = nullptr;  // outlives the terminator
  std::vector<CredentialBinding> bindings;
};

struct TerminatorConfig {
  TlsAuthority* authority = nullptr;  // the client-facing side: its server_context(); outlives the terminator
  // client_facing_context(*authority), made once and shared by the relay's connections (making an SSL_CTX costs
  // about a tenth of a millisecond); null: the terminator makes its own. Outlives the terminator.
  SSL_CTX* client_facing_ctx = nullptr;
  SSL_CTX* upstream_ctx = nullptr;    // upstream_client_context(...); outlives the terminator
  std::string host;                   // the tunnel's destination, normalised (already allowed by the host rules)
  uint16_t port = 443;
  std::vector<TerminatedRule> rules;  // the terminating allow rules matching host:port, in policy order
  std::vector<std::string> all_placeholders;  // every credential placeholder of the sandbox
  size_t max_head_bytes = 64 * 1024;
  size_t max_buffered_bytes = 1 << 20;  // per direction
};

struct TerminatorEvent {
  enum class Kind {
    allowed,             // a request went upstream: method, path, rule
    denied,              // no rule admits the method and path: method, path, rule ("no rule ...")
    credential_used,     // credential: its name (never the secret); method, path, rule
    credential_refused,  // credential: its name; reason: where the placeholder was
    refused,             // a request refused before any rule (malformed, Upgrade, bad target) or cut short; reason
    tls_error,           // a handshake or record failure on either side; reason names the side
    upstream_certificate,  // the upstream's certificate failed verification; reason: OpenSSL's verify error
    upstream_error,        // the upstream broke HTTP: a malformed response, bytes no request asked for, an early
                           // close; reason
    secret_withheld        // a response carried a secret the relay put in a request (an echo): overwritten with
                           // asterisks before the sandbox got it; credential: its name
  };
  Kind kind = Kind::allowed;
  std::string method, path, rule, credential, reason;
};

std::string_view event_kind_name(TerminatorEvent::Kind kind);

class HttpsTerminator {
 public:
  [[nodiscard]] static Result<std::unique_ptr<HttpsTerminator>> create(TerminatorConfig config);
  // The context of the sandbox-facing side: the authority's server_context(), without TLS 1.3 session tickets or a
  // session cache. Sessions are not resumed: a ticket would cost each handshake an encryption and a record for
  // nothing the client could use.
  [[nodiscard]] static Result<SslCtxPtr> client_facing_context(TlsAuthority& authority);
  ~HttpsTerminator();
  HttpsTerminator(const HttpsTerminator&) = delete;
  HttpsTerminator& operator=(const HttpsTerminator&) = delete;

  // Encrypted bytes read from the sandbox's / the upstream's socket; at most *_input_room() of them.
  void from_client(std::string_view encrypted);
  void from_upstream(std::string_view encrypted);
  // The socket reached end of file (or failed).
  void client_closed();
  void upstream_closed();

  // Encrypted bytes to write to each socket; taking them may let the terminator move more, so the caller takes
  // until both come back empty.
  std::string take_to_client(size_t max = SIZE_MAX);  // `max`: what the socket takes now
  std::string take_to_upstream(size_t max = SIZE_MAX);
  // The same into `out` (at most `max` bytes, no allocation); returns how many.
  size_t take_to_client(char* out, size_t max);
  size_t take_to_upstream(char* out, size_t max);

  // How many more bytes the terminator accepts from each socket now (0: stop reading: backpressure).
  size_t client_input_room() const;
  size_t upstream_input_room() const;
  bool wants_client_input() const { return client_input_room() > 0; }
  bool wants_upstream_input() const { return upstream_input_room() > 0; }

  // Whether the upstream side has begun: the TCP connection is needed from then on (the handshake starts with the
  // first allowed request, so a connection whose requests are all denied never reaches the upstream).
  bool upstream_started() const { return upstream_started_; }
  // Done and nothing left to take: the caller closes both sockets.
  bool finished() const;

  // What happened since the last call, oldest first. Never a secret.
  std::vector<TerminatorEvent> take_events();

  // Bytes held for each direction now (what max_buffered_bytes bounds), for tests and accounting.
  size_t buffered_to_upstream() const;
  size_t buffered_to_client() const;

 private:
  struct Side {
    SslPtr ssl;
    BIO* in = nullptr;   // network bytes in (owned by ssl)
    BIO* out = nullptr;  // network bytes out (owned by ssl)
    bool handshake_done = false;
    bool eof = false;         // the socket ended or the peer sent close_notify
    bool shut_down = false;   // our close_notify was queued
    bool failed = false;      // a fatal TLS error: nothing more is read or written on this side
  };
  // What the client is owed, in request order: an upstream response, or an error made here.
  struct Pending {
    bool local = false;
    std::string method;    // the request's: HEAD answers have no body
    std::string response;  // local only
    bool credentialed = false;  // a credential went upstream with it: its answer must come uncompressed
  };
  enum class RequestState { head, body_length, body_chunked, closed };
  enum class ResponseState { head, body_length, body_chunked, body_until_close };

  HttpsTerminator(TerminatorConfig config, std::vector<std::vector<PathGlob>> globs);
  Status init();

  void pump();  // moves every byte it can, in both directions
  void client_handshake();
  void start_upstream();
  void upstream_handshake();
  void read_plain(Side& side);  // decrypts what `side` has into its plaintext buffer
  // Encrypts `from` for `side` while `held` (the direction's buffered bytes) stays within the bound.
  // At most `limit` bytes of `from` are taken.
  void write_plain(Side& side, std::string& from, size_t limit, size_t (HttpsTerminator::*held)() const);
  // Moves what to_sandbox_ has cleared into to_client_ (scrubbed_stream.h).
  void scrub_to_client();
  // Hands the bytes at the front of upstream_plain_, of a chunked body, to to_sandbox_: chunk data and trailers as
  // content, the framing as framing.
  // Stops at the body's end or a framing error.
  Status split_chunked();
  void process_requests();
  void process_responses();
  // Decides one complete request head; returns false when the connection stops taking requests.
  bool decide(const HttpRequestHead& head, std::string_view raw_head);
  // Queues a local JSON error response; the connection takes no further requests.
  void refuse(int code, std::string_view reason_phrase, const std::string& body);
  void response_done();
  void emit_local_responses();
  // The upstream side failed: the client gets a 502 with `body` if no byte of the current response reached it yet.
  void fail_upstream(const std::string& body);
  void finish();
  void event(TerminatorEvent e);

  TerminatorConfig config_;
  std::vector<std::vector<PathGlob>> globs_;  // per rule: its paths, parsed
  std::vector<CredentialBinding> all_bindings_;  // every rule's, for redact()
  SslCtxPtr own_server_ctx_;  // when the config brings none
  Side client_;
  Side upstream_;
  bool upstream_started_ = false;

  std::string client_plain_;    // decrypted from the client, not yet decided/forwarded
  std::string to_upstream_;     // plaintext for the upstream's SSL_write
  std::string upstream_plain_;  // decrypted from the upstream, not yet followed
  SecretScrubber scrubber_;     // every secret of the sandbox, and the Basic forms this connection sent
  // Everything for the client (response heads and bodies, local answers) goes in here first, and comes out
  // scrubbed into to_client_.
  ScrubbedStream to_sandbox_{scrubber_};
  std::string response_framing_;  // a chunked body's framing piece not yet whole
  std::string to_client_;         // plaintext for the client's SSL_write, scrubbed

  RequestState request_ = RequestState::head;
  uint64_t request_left_ = 0;
  ChunkedScanner request_chunks_;
  std::deque<Pending> pending_;
  ResponseState response_ = ResponseState::head;
  uint64_t response_left_ = 0;
  ChunkedScanner response_chunks_;
  bool response_started_ = false;  // bytes of the current response went to the client

  bool done_ = false;  // no more bytes are moved; what is queued is flushed, then finished()
  std::vector<TerminatorEvent> events_;
};

}  // namespace oishell::relay
