// HttpsTerminator's HTTP/1.1 framing (https_terminator.h): the sandbox's requests read one after the other from the
// decrypted stream, each head handed to decide() (https_terminator_decide.cc) and each body streamed upstream by its
// framing (Content-Length or chunked), never held whole; each upstream response streamed back to where its framing
// ends, so that the next request is decided in turn, a chunked body's payload and its framing told apart for the
// scrubber (scrubbed_stream.h); and the answers made here kept in request order with the upstream's.
#include <algorithm>

#include "policy/http_token.h"
#include "runtime/relay/http_head_lines.h"
#include "runtime/relay/https_terminator.h"
#include "runtime/relay/https_terminator_answers.h"

namespace oishell::relay {
namespace {

// The request head as the client wrote it, without the blank lines parse_request_head skips before it.
std::string_view raw_head(std::string_view data, size_t consumed) {
  std::string_view head = data.substr(0, consumed);
  while (head.substr(0, 2) == "\r\n") head.remove_prefix(2);
  return head;
}

// Moves the first `n` bytes of `from` to the end of `to`. A body streams through whole buffers, so the common case
// (all of `from` into an empty `to`) swaps the two rather than copying.
void move_front(std::string& from, size_t n, std::string& to) {
  if (n == from.size() && to.empty()) {
    to.swap(from);
    from.clear();
    return;
  }
  to.append(from, 0, n);
  from.erase(0, n);
}

}  // namespace

void HttpsTerminator::process_requests() {
  while (!done_ && request_ != RequestState::closed) {
    if (request_ == RequestState::head) {
      if (client_plain_.empty()) {
        if (client_.eof) request_ = RequestState::closed;  // no further request; what is owed is still sent
        return;
      }
      HeadParse parsed = parse_request_head(client_plain_, config_.max_head_bytes);
      if (parsed.status == HeadStatus::incomplete) {
        if (client_.eof) {
          event({.kind = TerminatorEvent::Kind::refused, .reason = "the sandbox closed inside a request head"});
          request_ = RequestState::closed;
        }
        return;
      }
      if (parsed.status != HeadStatus::complete) {
        bool large = parsed.status == HeadStatus::too_large;
        event({.kind = TerminatorEvent::Kind::refused, .reason = parsed.error});
        refuse(large ? 431 : 400, large ? "Request Header Fields Too Large" : "Bad Request",
               terminator_error_json({{"error", "bad_request"}, {"host", config_.host}, {"reason", parsed.error}}));
        return;
      }
      std::string head_text(raw_head(client_plain_, parsed.consumed));
      client_plain_.erase(0, parsed.consumed);
      if (!decide(parsed.head, head_text)) return;
      continue;
    }
    if (client_plain_.empty()) {
      if (client_.eof) {  // the body was cut short: the upstream must not take it as complete
        event({.kind = TerminatorEvent::Kind::refused, .reason = "the sandbox closed inside a request body"});
        finish();
      }
      return;
    }
    size_t n = 0;
    if (request_ == RequestState::body_length) {
      n = static_cast<size_t>(std::min<uint64_t>(request_left_, client_plain_.size()));
      request_left_ -= n;
      if (request_left_ == 0) request_ = RequestState::head;
    } else {
      auto fed = request_chunks_.feed(client_plain_);
      if (!fed) {
        // Part of the body is upstream already: the upstream connection cannot be reused, so both end here.
        event({.kind = TerminatorEvent::Kind::refused, .reason = "request body: " + fed.status().message()});
        finish();
        return;
      }
      n = *fed;
      if (request_chunks_.done()) request_ = RequestState::head;
    }
    move_front(client_plain_, n, to_upstream_);
  }
}

void HttpsTerminator::refuse(int code, std::string_view reason_phrase, const std::string& body) {
  // Redacted like the events: the reasons quoted in these bodies name places, never values, but a secret must not
  // reach the sandbox even if one ever did.
  pending_.push_back(
      {.local = true, .response = terminator_error_response(code, reason_phrase, redact(body, all_bindings_))});
  request_ = RequestState::closed;
  client_plain_.clear();
  emit_local_responses();
}

void HttpsTerminator::emit_local_responses() {
  while (!pending_.empty() && pending_.front().local) {
    to_sandbox_.content(pending_.front().response);
    pending_.pop_front();
  }
}

void HttpsTerminator::response_done() {
  pending_.pop_front();
  response_ = ResponseState::head;
  response_started_ = false;
  emit_local_responses();
}

void HttpsTerminator::process_responses() {
  while (!done_ && !upstream_plain_.empty()) {
    if (response_ == ResponseState::head) {
      if (pending_.empty() || pending_.front().local) {
        event({.kind = TerminatorEvent::Kind::upstream_error, .reason = "upstream side: bytes no request asked for"});
        finish();
        return;
      }
      ResponseHeadParse parsed = parse_response_head(upstream_plain_, config_.max_head_bytes);
      if (parsed.status == HeadStatus::incomplete) break;
      Result<ResponseFraming> framing = Status::error(parsed.error);
      if (parsed.status == HeadStatus::complete) {
        framing = parsed.code == 101 ? Result<ResponseFraming>(Status::error("101 Switching Protocols unasked"))
                                     : response_body_framing(parsed, pending_.front().method);
      }
      if (!framing) {
        std::string reason = "bad response: " + framing.status().message();
        event({.kind = TerminatorEvent::Kind::upstream_error, .method = pending_.front().method, .reason = reason});
        fail_upstream(
            terminator_error_json({{"error", "upstream_response"}, {"host", config_.host}, {"reason", reason}}));
        return;
      }
      if (pending_.front().credentialed) {
        for (const HttpHeader& header : parsed.headers) {
          if (iequals(header.name, "content-encoding") && !iequals(trim_ows(header.value), "identity")) {
            std::string reason = "a response to a request carrying a credential came with Content-Encoding " +
                                 std::string(trim_ows(header.value).substr(0, 64)) + ", which the relay cannot check for the secret";
            event({.kind = TerminatorEvent::Kind::upstream_error, .method = pending_.front().method,
                   .reason = reason});
            fail_upstream(terminator_error_json(
                {{"error", "upstream_response"}, {"host", config_.host}, {"reason", reason}}));
            return;
          }
        }
      }
      to_sandbox_.content(std::string_view(upstream_plain_).substr(0, parsed.consumed));
      upstream_plain_.erase(0, parsed.consumed);
      response_started_ = true;
      if (parsed.code < 200) continue;  // interim (100 Continue, 103 Early Hints): the final one follows
      switch (framing->kind) {
        case ResponseBody::none: response_done(); break;
        case ResponseBody::length:
          response_ = ResponseState::body_length;
          response_left_ = framing->length;
          break;
        case ResponseBody::chunked:
          response_ = ResponseState::body_chunked;
          response_chunks_ = ChunkedScanner();
          break;
        case ResponseBody::until_close: response_ = ResponseState::body_until_close; break;
      }
      continue;
    }
    if (response_ == ResponseState::body_chunked) {
      if (Status split = split_chunked(); !split) {
        event({.kind = TerminatorEvent::Kind::upstream_error, .reason = "bad response body: " + split.message()});
        finish();
        return;
      }
    } else {
      size_t n = upstream_plain_.size();
      if (response_ == ResponseState::body_length) {
        n = static_cast<size_t>(std::min<uint64_t>(response_left_, n));
        response_left_ -= n;
      }
      to_sandbox_.content(std::string_view(upstream_plain_).substr(0, n));
      upstream_plain_.erase(0, n);
    }
    if ((response_ == ResponseState::body_length && response_left_ == 0) ||
        (response_ == ResponseState::body_chunked && response_chunks_.done())) {
      response_done();
    }
  }
  if (done_ || !upstream_.eof || !upstream_plain_.empty()) return;
  // The upstream's last byte: a response read until close ends here; any other one it still owed never comes.
  if (response_ == ResponseState::body_until_close) response_done();
  if (!pending_.empty() && !pending_.front().local) {
    if (!response_started_) {
      event({.kind = TerminatorEvent::Kind::upstream_error, .reason = "upstream side: closed before its response"});
      fail_upstream(terminator_error_json({{"error", "upstream_closed"}, {"host", config_.host}}));
    } else {
      event({.kind = TerminatorEvent::Kind::upstream_error, .reason = "upstream side: closed inside a response"});
      finish();
    }
    return;
  }
  request_ = RequestState::closed;  // nothing more can go upstream; the owed local answers still do
}

Status HttpsTerminator::split_chunked() {
  using Part = ChunkedScanner::Part;
  const std::string_view plain(upstream_plain_);
  size_t used = 0;
  Status status = Status::ok();
  while (used < plain.size() && !response_chunks_.done()) {
    const Part part = response_chunks_.part();
    // Data goes in runs; a framing or trailer byte one at a time, so that each byte's part is known.
    const size_t n = part == Part::data
                         ? static_cast<size_t>(std::min<uint64_t>(response_chunks_.data_left(), plain.size() - used))
                         : 1;
    const std::string_view piece = plain.substr(used, n);
    auto fed = response_chunks_.feed(piece);
    if (!fed) {
      status = fed.status();
      break;
    }
    if (part == Part::framing) {
      response_framing_.append(piece);
    } else {
      to_sandbox_.framing(response_framing_);  // whole: the body went on past it
      response_framing_.clear();
      to_sandbox_.content(piece);
    }
    used += n;
  }
  upstream_plain_.erase(0, used);
  return status;
}

}  // namespace oishell::relay
