// HttpsTerminator::decide (https_terminator.h): one request head of a terminated connection, decided on its own by the
// first terminating rule whose `methods` and `paths` admit it, and when allowed, given that rule's credentials in place
// of their placeholders (credential_rewrite.h) on its way upstream; otherwise answered here (a JSON error, the
// connection ending). Finding each head and following each body by its framing is https_terminator_framing.cc's.
#include <algorithm>
#include <cctype>

#include "policy/http_token.h"
#include "runtime/relay/http_head_lines.h"
#include "runtime/relay/https_terminator.h"
#include "runtime/relay/https_terminator_answers.h"

namespace oishell::relay {
namespace {

constexpr std::string_view kNoRule = "no rule allows this method and path";
constexpr std::string_view kEncodedEscape = "a rule with paths admits no percent-encoded percent (%25XX) in the path";
constexpr std::string_view kEncodedEscapeWhy =
    "the path holds %25 and two hex digits, an escape encoded twice: the rules match it decoded once, and a server "
    "that decodes it again would serve another path";

// Whether the path of `target` (the query is not matched by any rule) holds a percent-encoded escape: "%25" and
// two hex digits, either case. decode_request_path decodes once, so "/api/%252e%252e/admin" is the path
// "/api/%2e%2e/admin", which "/api/**" matches; a server (or a proxy in front of it) that decodes again reads
// "/admin" (issue 33, finding 9).
bool holds_encoded_escape(std::string_view target) {
  target = target.substr(0, target.find_first_of("?#"));
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  for (size_t at = 0; at + 5 <= target.size(); ++at) {
    if (target.substr(at, 3) == "%25" && hex(target[at + 3]) && hex(target[at + 4])) return true;
  }
  return false;
}

bool names_host(std::string_view value, const std::string& host, uint16_t port) {
  auto authority = parse_authority(value, port);
  return authority && authority->host == host && authority->port == port;
}

}  // namespace

bool HttpsTerminator::decide(const HttpRequestHead& head, std::string_view head_text) {
  auto refuse_bad = [&](const std::string& reason, const std::string& method, const std::string& path) {
    event({.kind = TerminatorEvent::Kind::refused, .method = method, .path = path, .reason = reason});
    refuse(400, "Bad Request",
           terminator_error_json({{"error", "bad_request"}, {"host", config_.host}, {"reason", reason}}));
    return false;
  };
  auto method = normalise_method(head.method);
  if (!method) return refuse_bad("bad method: " + method.status().message(), "", "");
  // A request through the tunnel names its resource in origin-form; the Host header must name the tunnel's host,
  // or a server with several virtual hosts behind this certificate would answer for another one.
  if (head.target.empty() || head.target[0] != '/') {
    return refuse_bad("the request target is not in origin-form (\"/path\")", *method, "");
  }
  auto path = decode_request_path(head.target);
  if (!path) return refuse_bad("request target: " + path.status().message(), *method, "");
  if (head.count("host") != 1 || !names_host(*head.header("host"), config_.host, config_.port)) {
    return refuse_bad("the request needs exactly one Host header naming " + config_.host, *method, *path);
  }
  if (head.header("upgrade") != nullptr) {
    // A WebSocket or h2c would turn the connection into something else than HTTP/1.1 requests, which no rule
    // could then decide.
    event({.kind = TerminatorEvent::Kind::refused, .method = *method, .path = *path,
           .reason = "Upgrade is not supported on a terminated connection"});
    refuse(403, "Forbidden",
           terminator_error_json(
               {{"error", "upgrade_refused"}, {"host", config_.host}, {"method", *method}, {"path", *path}}));
    return false;
  }
  auto framing = request_body_framing(head);
  if (!framing) return refuse_bad("request framing: " + framing.status().message(), *method, *path);

  // A rule with paths never admits a path holding "%25XX": what it matched is not what a server decoding twice
  // serves. A rule without paths admits any path, this one too.
  const bool encoded_escape = holds_encoded_escape(head.target);
  bool escape_refused = false;
  const TerminatedRule* decided = nullptr;
  for (size_t i = 0; i < config_.rules.size() && decided == nullptr; ++i) {
    const HostRule& rule = *config_.rules[i].rule;
    bool method_ok = rule.methods.empty() || std::find(rule.methods.begin(), rule.methods.end(), *method) !=
                                                 rule.methods.end();
    if (method_ok && encoded_escape && !globs_[i].empty()) {
      escape_refused = true;
      continue;
    }
    bool path_ok = globs_[i].empty() || std::any_of(globs_[i].begin(), globs_[i].end(),
                                                    [&](const PathGlob& glob) { return glob.matches(*path); });
    if (method_ok && path_ok) decided = &config_.rules[i];
  }
  if (decided == nullptr && escape_refused) {
    event({.kind = TerminatorEvent::Kind::denied, .method = *method, .path = *path,
           .rule = std::string(kEncodedEscape), .reason = std::string(kEncodedEscapeWhy)});
    refuse(403, "Forbidden",
           terminator_error_json({{"error", "policy_denied"}, {"host", config_.host}, {"method", *method},
                                  {"path", *path}, {"rule", kEncodedEscape}, {"reason", kEncodedEscapeWhy}}));
    return false;
  }
  if (decided == nullptr) {
    // The connection ends after the 403: any body of the refused request would otherwise have to be read and
    // skipped by its framing before the next request, for nothing the client could still use.
    event({.kind = TerminatorEvent::Kind::denied, .method = *method, .path = *path, .rule = std::string(kNoRule)});
    refuse(403, "Forbidden",
           terminator_error_json({{"error", "policy_denied"}, {"host", config_.host}, {"method", *method},
                                  {"path", *path}, {"rule", kNoRule}}));
    return false;
  }
  const std::string& rule_text = decided->rule->text;
  RewriteResult rewritten = rewrite_request_head(head_text, decided->bindings, config_.all_placeholders);
  if (!rewritten.ok) {
    event({.kind = TerminatorEvent::Kind::credential_refused, .method = *method, .path = *path, .rule = rule_text,
           .credential = rewritten.refused_credential, .reason = rewritten.reason});
    refuse(403, "Forbidden",
           terminator_error_json({{"error", "credential_refused"}, {"host", config_.host}, {"method", *method},
                                  {"path", *path}, {"credential", rewritten.refused_credential},
                                  {"reason", rewritten.reason}}));
    return false;
  }
  event({.kind = TerminatorEvent::Kind::allowed, .method = *method, .path = *path, .rule = rule_text});
  for (const std::string& name : rewritten.replaced) {
    event({.kind = TerminatorEvent::Kind::credential_used, .method = *method, .path = *path, .rule = rule_text,
           .credential = name});
  }
  const bool credentialed = !rewritten.replaced.empty();
  if (credentialed) {
    // What the relay put in is not to come back: the Basic forms it made join the scrubber, and the answer must come
    // as it is (a compressed echo would pass the scrubber unseen).
    for (const CredentialBinding& binding : decided->bindings) {
      if (iequals(binding.scheme, "basic")) {
        for (const std::string& token : header_tokens(rewritten.head, binding.header, "basic")) {
          scrubber_.add(binding.name, token);
        }
      }
    }
    rewritten.head = with_identity_encoding(rewritten.head);
  }
  to_upstream_ += rewritten.head;
  pending_.push_back({.local = false, .method = *method, .credentialed = credentialed});
  switch (framing->kind) {
    case BodyKind::none: request_ = RequestState::head; break;
    case BodyKind::length:
      request_ = RequestState::body_length;
      request_left_ = framing->length;
      break;
    case BodyKind::chunked:
      request_ = RequestState::body_chunked;
      request_chunks_ = ChunkedScanner();
      break;
  }
  start_upstream();
  return !done_;
}

}  // namespace oishell::relay
