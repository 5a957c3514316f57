// Credential placeholders replaced by their secrets in the one header they are bound to, found and refused
// everywhere else in a request head; secrets redacted from text (runtime/relay/credential_rewrite.h).
#include "runtime/relay/credential_rewrite.h"

#include <algorithm>
#include <optional>

#include "base/base64.h"
#include "base/percent_encoding.h"
#include "policy/http_token.h"
#include "runtime/relay/http_head_lines.h"

namespace oishell::relay {
namespace {

constexpr std::string_view kPlaceholderPrefix = "oishell-cred-";
constexpr size_t kPlaceholderHexDigits = 32;
// A target percent-encoded more times than this is not decoded further (each round shortens it, so this only
// bounds the work on a hostile target).
constexpr int kMaxDecodeRounds = 8;
constexpr size_t kMaxShownName = 64;

bool is_ows(char c) { return c == ' ' || c == '\t'; }

bool is_control(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
         c == '=';
}

// A header name for a reason: printable, cut short (the parser allows only token characters; this is for a head
// that did not come through it).
std::string shown_name(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, kMaxShownName)) out.push_back(is_tchar(c) ? c : '?');
  if (name.size() > kMaxShownName) out += "...";
  return out;
}

// `text` with its %XY escapes decoded, as many times as that changes it (a server or application may decode more
// than once); a malformed escape stays as it is.
std::string fully_percent_decoded(std::string_view text) {
  std::string current(text);
  for (int round = 0; round < kMaxDecodeRounds && current.find('%') != std::string::npos; ++round) {
    std::string next = oishell::percent_decoded(current);
    if (next == current) break;
    current = std::move(next);
  }
  return current;
}

// The bytes of `value` when it is `Basic <base64>` (RFC 7617), else nullopt.
std::optional<std::string> basic_decoded(std::string_view value) {
  size_t space = value.find(' ');
  if (space == std::string_view::npos || !iequals(value.substr(0, space), "basic")) return std::nullopt;
  size_t start = value.find_first_not_of(' ', space);
  if (start == std::string_view::npos) return std::nullopt;
  return base64_decode(value.substr(start));
}

// The credential `placeholder` stands for: its binding's name, else the <name> of its form.
std::string credential_name(std::string_view placeholder, const std::vector<CredentialBinding>& bound) {
  for (const CredentialBinding& b : bound) {
    if (b.placeholder == placeholder) return b.name;
  }
  size_t fixed = kPlaceholderPrefix.size() + 1 + kPlaceholderHexDigits;
  if (placeholder.starts_with(kPlaceholderPrefix) && placeholder.size() > fixed &&
      placeholder[placeholder.size() - kPlaceholderHexDigits - 1] == '-') {
    return std::string(placeholder.substr(kPlaceholderPrefix.size(), placeholder.size() - fixed));
  }
  return std::string(placeholder);
}

// How `b`'s placeholder must be sent to be replaced, for a reason.
std::string bound_form(const CredentialBinding& b) {
  if (b.scheme.empty()) return "`" + b.header + ": <placeholder>`";
  if (iequals(b.scheme, "basic")) return "`" + b.header + ": " + b.scheme + " base64(user:<placeholder>)`";
  return "`" + b.header + ": " + b.scheme + " <placeholder>`";
}

// What the reason adds after where a placeholder was found.
std::string why_refused(std::string_view placeholder, const std::vector<CredentialBinding>& bound) {
  for (const CredentialBinding& b : bound) {
    if (b.placeholder == placeholder) return "; it is put in only as " + bound_form(b);
  }
  return "; the credential is not bound to this host";
}

// Why `b` cannot be used, or empty. Checked before anything is rewritten: a secret with a line break would end the
// header early and inject whatever follows, and a leading or trailing space would be dropped by the server as
// whitespace.
std::string binding_problem(const CredentialBinding& b) {
  if (b.placeholder.empty()) return "no placeholder";
  if (!is_token(b.header)) return "header name `" + shown_name(b.header) + "` is not a token";
  if (!b.scheme.empty() && !is_token(b.scheme)) return "scheme `" + shown_name(b.scheme) + "` is not a token";
  if (b.secret.empty()) return "empty secret";
  if (std::any_of(b.secret.begin(), b.secret.end(), is_control)) {
    return "the secret has a control character (a line break left from the file it was read from?)";
  }
  if (is_ows(b.secret.front()) || is_ows(b.secret.back())) return "the secret starts or ends with whitespace";
  return {};
}

struct Found {
  size_t position;  // in the text searched; npos when found in a decoding of it
  std::string_view placeholder;
};

// The placeholder that occurs first in `text`.
std::optional<Found> find_placeholder(std::string_view text, const std::vector<std::string_view>& placeholders) {
  std::optional<Found> first;
  for (std::string_view p : placeholders) {
    size_t at = text.find(p);
    if (at != std::string_view::npos && (!first || at < first->position)) first = Found{at, p};
  }
  return first;
}

// A placeholder in the header line `line` whose value is `value`: literal, percent-encoded (applications decode
// cookies and the like), or inside its Basic credentials.
std::optional<Found> find_in_header(std::string_view line, std::string_view value,
                                    const std::vector<std::string_view>& placeholders) {
  if (auto found = find_placeholder(line, placeholders)) return found;
  if (value.find('%') != std::string_view::npos) {
    if (auto found = find_placeholder(fully_percent_decoded(value), placeholders)) {
      return Found{std::string_view::npos, found->placeholder};
    }
  }
  if (auto decoded = basic_decoded(value)) {
    if (auto found = find_placeholder(*decoded, placeholders)) return Found{std::string_view::npos, found->placeholder};
  }
  return std::nullopt;
}

// The value to send instead of `value` (a header's trimmed value) when it is exactly `b`'s form, else nullopt.
std::optional<std::string> bound_value(std::string_view value, const CredentialBinding& b) {
  if (b.scheme.empty()) {
    if (value != b.placeholder) return std::nullopt;
    return b.secret;
  }
  // RFC 9110 11.4: credentials = auth-scheme [ 1*SP ( token68 / #auth-param ) ]. The scheme and spacing the client
  // wrote are kept.
  size_t space = value.find(' ');
  if (space == std::string_view::npos || !iequals(value.substr(0, space), b.scheme)) return std::nullopt;
  size_t start = value.find_first_not_of(' ', space);
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view credentials = value.substr(start);
  std::string kept(value.substr(0, start));
  if (!iequals(b.scheme, "basic")) {
    if (credentials != b.placeholder) return std::nullopt;
    return kept + b.secret;
  }
  auto decoded = base64_decode(credentials);
  if (!decoded) return std::nullopt;
  std::string_view pair(*decoded);
  // base64(placeholder + ":"): the secret is the user-id (an API key with no password). A ":" in the secret would
  // be read as the end of the user-id, so such a secret only goes in as the password.
  if (pair.size() == b.placeholder.size() + 1 && pair.starts_with(b.placeholder) && pair.back() == ':' &&
      b.secret.find(':') == std::string::npos) {
    return kept + base64_encode(b.secret + ":");
  }
  // base64(user + ":" + placeholder): the secret is the password. The user-id ends at the first ":" (RFC 7617).
  if (pair.size() > b.placeholder.size() && pair.ends_with(b.placeholder) &&
      pair[pair.size() - b.placeholder.size() - 1] == ':') {
    std::string_view user = pair.substr(0, pair.size() - b.placeholder.size() - 1);
    if (user.find(':') != std::string_view::npos) return std::nullopt;
    return kept + base64_encode(std::string(user) + ":" + b.secret);
  }
  return std::nullopt;
}

// A Basic credentials at text[at] ("Basic", spaces, base64; anywhere, even inside a word: redacting too much is
// the safe side) whose decoding holds a secret of
// `bindings`: the binding, and where the base64 starts and ends.
struct BasicHit {
  const CredentialBinding* binding = nullptr;
  size_t begin = 0;
  size_t end = 0;
};

BasicHit basic_with_secret(std::string_view text, size_t at, const std::vector<CredentialBinding>& bindings) {
  constexpr std::string_view kBasic = "basic";
  if (!iequals(text.substr(at, kBasic.size()), kBasic)) return {};
  size_t begin = at + kBasic.size();
  if (begin >= text.size() || text[begin] != ' ') return {};
  while (begin < text.size() && text[begin] == ' ') ++begin;
  size_t end = begin;
  while (end < text.size() && is_base64_char(text[end])) ++end;
  auto decoded = base64_decode(text.substr(begin, end - begin));
  if (end == begin || !decoded) return {};
  for (const CredentialBinding& b : bindings) {
    if (!b.secret.empty() && decoded->find(b.secret) != std::string::npos) return {&b, begin, end};
  }
  return {};
}

}  // namespace

RewriteResult rewrite_request_head(std::string_view head, const std::vector<CredentialBinding>& bound_here,
                                   const std::vector<std::string>& all_placeholders) {
  RewriteResult result;
  auto refuse = [](std::string credential, std::string reason) {
    RewriteResult refused;
    refused.refused_credential = std::move(credential);
    refused.reason = std::move(reason);
    return refused;
  };
  for (const CredentialBinding& b : bound_here) {
    if (std::string why = binding_problem(b); !why.empty()) {
      return refuse(b.name, "credential `" + shown_name(b.name) + "` cannot be used: " + why);
    }
  }
  std::vector<std::string_view> placeholders;
  for (const std::string& p : all_placeholders) {
    if (!p.empty()) placeholders.push_back(p);
  }
  for (const CredentialBinding& b : bound_here) placeholders.push_back(b.placeholder);
  std::sort(placeholders.begin(), placeholders.end());
  placeholders.erase(std::unique(placeholders.begin(), placeholders.end()), placeholders.end());
  auto name_of = [&](std::string_view placeholder) { return credential_name(placeholder, bound_here); };

  size_t start = 0;
  while (head.substr(start, 2) == "\r\n") start += 2;  // blank lines before a request (RFC 9112 2.2), kept
  size_t end = head.find("\r\n\r\n", start);
  if (end == std::string_view::npos || end + 4 != head.size()) {
    return refuse("", "not a request head ending with an empty line");
  }
  std::string_view block = head.substr(start, end - start);
  std::string out(head.substr(0, start));
  out.reserve(head.size() + 256);

  size_t eol = block.find("\r\n");
  std::string_view request_line = block.substr(0, eol);
  size_t sp1 = request_line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return refuse("", "malformed request line");
  std::string_view target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (auto found = find_placeholder(request_line, placeholders)) {
    bool in_target = found->position > sp1 && found->position < sp2;
    std::string where = in_target ? "in the request target" : "in the request line";
    return refuse(name_of(found->placeholder), where + why_refused(found->placeholder, bound_here));
  }
  if (auto found = find_placeholder(fully_percent_decoded(target), placeholders)) {
    return refuse(name_of(found->placeholder),
                  "in the request target (percent-encoded)" + why_refused(found->placeholder, bound_here));
  }
  out.append(request_line).append("\r\n");

  size_t pos = eol == std::string_view::npos ? block.size() + 2 : eol + 2;
  while (pos <= block.size()) {
    eol = block.find("\r\n", pos);
    std::string_view line = block.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? block.size() + 2 : eol + 2;
    const auto header = parse_header_line(line);
    if (!header) return refuse("", "malformed header line");
    const size_t colon = header->name.size();
    const std::string_view name = header->name, value = header->value;
    const size_t value_begin = header->value_begin, value_end = header->value_end;

    std::string rewritten;
    const CredentialBinding* used = nullptr;
    for (const CredentialBinding& b : bound_here) {
      if (!iequals(name, b.header)) continue;
      if (auto replacement = bound_value(value, b)) {
        rewritten.append(line.substr(0, value_begin)).append(*replacement).append(line.substr(value_end));
        used = &b;
        break;
      }
    }
    // The line as it will be sent is searched, so a placeholder left beside a replaced one (a second placeholder as
    // a Basic user-id) is still found.
    std::string_view sent = used ? std::string_view(rewritten) : line;
    std::string_view sent_value = used ? sent.substr(value_begin, sent.size() - (line.size() - value_end) - value_begin)
                                       : value;
    if (auto found = find_in_header(sent, sent_value, placeholders)) {
      bool in_name = found->position != std::string_view::npos && found->position < colon;
      std::string where = in_name ? "in a header name" : "in header " + shown_name(name);
      return refuse(name_of(found->placeholder), where + why_refused(found->placeholder, bound_here));
    }
    if (used && std::find(result.replaced.begin(), result.replaced.end(), used->name) == result.replaced.end()) {
      result.replaced.push_back(used->name);
    }
    out.append(sent).append("\r\n");
  }
  out.append("\r\n");
  result.ok = true;
  result.head = std::move(out);
  return result;
}

std::string redact(std::string_view text, const std::vector<CredentialBinding>& bindings) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (BasicHit hit = basic_with_secret(text, i, bindings); hit.binding) {
      out.append(text.substr(i, hit.begin - i)).append("<redacted:" + hit.binding->name + ">");
      i = hit.end;
      continue;
    }
    const CredentialBinding* longest = nullptr;
    for (const CredentialBinding& b : bindings) {
      if (!b.secret.empty() && text.substr(i).starts_with(b.secret) &&
          (!longest || b.secret.size() > longest->secret.size())) {
        longest = &b;
      }
    }
    if (longest) {
      out.append("<redacted:" + longest->name + ">");
      i += longest->secret.size();
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

}  // namespace oishell::relay
