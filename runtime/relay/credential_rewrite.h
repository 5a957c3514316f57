#pragma once
// Credentials that never enter the sandbox (issue 16). Inside, a credential exists only as a placeholder
// `oishell-cred-<name>-<32 lowercase hex>` (made per sandbox by the supervisor). In a request the relay has
// decrypted (`tls: terminate`) and decided to let through, the placeholder is replaced by the secret in one place
// only: the header the credential is bound to, on a request to a host it is bound to, in exactly the form
// configured (`Authorization: Bearer <placeholder>`). A placeholder anywhere else in the head is a leak attempt
// (a secret put in a URL or a header that the host logs or echoes) and refuses the whole request. Pure functions.
//
// `Authorization: Basic` is supported, because that is what git and most HTTP clients send a token as: with a
// binding whose scheme is "Basic", the client sends base64("user:" + placeholder) or base64(placeholder + ":")
// (RFC 7617); the relay decodes it, puts the secret in place of the placeholder and encodes it again.
//
// Known limits:
//   - The body is not scanned: bodies stream, and are not held to be searched. A placeholder in a body reaches only
//     a host the policy lets this request reach, which is the same as any other data the sandbox sends it, and it
//     is never replaced there.
//   - Found: a placeholder written literally anywhere in the head; percent-encoded (once or several times) in the
//     request target or a header value; base64-encoded in a header value of the form `Basic <base64>`. Other
//     encodings (base64 elsewhere, split over two headers, reversed) are not found, but they are never replaced
//     either: what reaches the host is the placeholder, which is worthless outside this sandbox.
//   - The bound host receives the secret (that is the point). A host endpoint that echoes request headers back
//     would show it to the sandbox: the terminator's scrubber (secret_scrubber.h) overwrites it in the response,
//     in any framing and in the spellings an echo gives it (escaped, percent-encoded, in base64), but not
//     transformed further (hashed, encrypted); the host's path rules should still not allow such an endpoint.
#include <string>
#include <string_view>
#include <vector>

namespace oishell::relay {

struct CredentialBinding {
  std::string name;         // "github"
  std::string placeholder;  // "oishell-cred-github-<32 hex>"
  std::string secret;       // printable: no control characters, no leading or trailing space
  std::string header;       // "Authorization"; matched case-insensitively
  // The auth-scheme before the placeholder ("Bearer", "token"; matched case-insensitively), "Basic" for the
  // base64 forms above, or "" when the header's value is exactly the placeholder.
  std::string scheme;
};

struct RewriteResult {
  bool ok = false;
  std::string head;                     // ok: the head with every bound placeholder replaced by its secret
  std::vector<std::string> replaced;    // ok: the credentials put in, each named once, in the order first met
  std::string refused_credential;       // !ok: the credential whose placeholder was where it may not be
  std::string reason;                   // !ok: where ("in the request target", "in header X-Foo") and why
};

// Rewrites the request head `head` (request line and header lines, CRLF-separated, ending with the empty line, as
// the relay's parser has validated it) of a request to a host whose bindings are `bound_here`. A header line whose
// name is a binding's header and whose value is exactly the binding's form (optional whitespace around it trimmed,
// RFC 9110 5.5) gets the secret in place of the placeholder; everything else is copied byte for byte, so a head
// without placeholders comes back identical. Any placeholder of `all_placeholders` (every credential of this
// sandbox; the bound ones are added anyway) anywhere else refuses the request. A binding whose secret is not
// printable (a line break left from the file it was read from) refuses the request too, before anything is sent.
RewriteResult rewrite_request_head(std::string_view head, const std::vector<CredentialBinding>& bound_here,
                                   const std::vector<std::string>& all_placeholders);

// `text` with every secret of `bindings` replaced by "<redacted:NAME>", and every `Basic` credentials whose
// decoding holds a secret replaced whole, for logs and events: a secret never appears in either. The longest secret
// wins where two start at the same place.
std::string redact(std::string_view text, const std::vector<CredentialBinding>& bindings);

}  // namespace oishell::relay
