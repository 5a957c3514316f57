// Unit tests for runtime/relay/credential_rewrite.h: a placeholder replaced by its secret only in its bound header
// and form, refused everywhere else in the head (literal, percent-encoded, inside Basic credentials), and secrets
// redacted from text.
#include "runtime/relay/credential_rewrite.h"

#include <gtest/gtest.h>

#include "base/base64.h"

namespace oishell::relay {
namespace {

const std::string kGithub = "oishell-cred-github-0123456789abcdef0123456789abcdef";
const std::string kNpm = "oishell-cred-npm-fedcba9876543210fedcba9876543210";
const std::string kOther = "oishell-cred-other-00112233445566778899aabbccddeeff";
const std::string kGithubSecret = "ghp_S3cr3tG1thubT0ken";
const std::string kNpmSecret = "npm_Z+/x=9y==";

CredentialBinding github(std::string scheme = "Bearer") {
  return {"github", kGithub, kGithubSecret, "Authorization", std::move(scheme)};
}

CredentialBinding npm() { return {"npm", kNpm, kNpmSecret, "X-Npm-Token", ""}; }

const std::vector<std::string>& all_placeholders() {
  static const std::vector<std::string> all = {kGithub, kNpm, kOther};
  return all;
}

std::string request(std::string_view target, std::vector<std::string> header_lines) {
  std::string head = "GET " + std::string(target) + " HTTP/1.1\r\nHost: api.example.com\r\n";
  for (const std::string& line : header_lines) head += line + "\r\n";
  return head + "\r\n";
}

RewriteResult rewrite(std::string_view head, const std::vector<CredentialBinding>& bound) {
  return rewrite_request_head(head, bound, all_placeholders());
}

// The rewritten head, checked to hold no placeholder of any credential.
std::string rewritten(std::string_view head, const std::vector<CredentialBinding>& bound) {
  RewriteResult r = rewrite(head, bound);
  EXPECT_TRUE(r.ok) << head << ": refused: " << r.refused_credential << " " << r.reason;
  for (const std::string& p : all_placeholders()) EXPECT_EQ(std::string::npos, r.head.find(p)) << r.head;
  return r.head;
}

RewriteResult refused(std::string_view head, const std::vector<CredentialBinding>& bound) {
  RewriteResult r = rewrite(head, bound);
  EXPECT_FALSE(r.ok) << head << " passed as " << r.head;
  EXPECT_TRUE(r.head.empty());
  return r;
}

TEST(CredentialRewrite, BearerReplacedInBoundHeader) {
  RewriteResult r = rewrite(request("/user", {"Authorization: Bearer " + kGithub, "Accept: */*"}), {github()});
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ("GET /user HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer " + kGithubSecret +
                "\r\nAccept: */*\r\n\r\n",
            r.head);
  EXPECT_EQ(std::vector<std::string>{"github"}, r.replaced);
}

TEST(CredentialRewrite, TokenSchemeReplaced) {
  EXPECT_EQ(request("/user", {"Authorization: token " + kGithubSecret}),
            rewritten(request("/user", {"Authorization: token " + kGithub}), {github("token")}));
}

TEST(CredentialRewrite, HeaderNameAndSchemeCaseInsensitive) {
  // The client's spelling of the name and scheme is kept.
  EXPECT_EQ(request("/", {"authorization: bearer " + kGithubSecret}),
            rewritten(request("/", {"authorization: bearer " + kGithub}), {github()}));
  EXPECT_EQ(request("/", {"AUTHORIZATION: BEARER " + kGithubSecret}),
            rewritten(request("/", {"AUTHORIZATION: BEARER " + kGithub}), {github()}));
  CredentialBinding lower = github();
  lower.header = "authorization";
  lower.scheme = "bearer";
  EXPECT_EQ(request("/", {"Authorization: Bearer " + kGithubSecret}),
            rewritten(request("/", {"Authorization: Bearer " + kGithub}), {lower}));
}

TEST(CredentialRewrite, OptionalWhitespaceAroundTheValueKept) {
  EXPECT_EQ(request("/", {"Authorization:   Bearer " + kGithubSecret + " \t"}),
            rewritten(request("/", {"Authorization:   Bearer " + kGithub + " \t"}), {github()}));
  EXPECT_EQ(request("/", {"Authorization:Bearer  " + kGithubSecret}),
            rewritten(request("/", {"Authorization:Bearer  " + kGithub}), {github()}));
  EXPECT_EQ(request("/", {"X-Npm-Token:\t" + kNpmSecret}), rewritten(request("/", {"X-Npm-Token:\t" + kNpm}), {npm()}));
}

TEST(CredentialRewrite, EmptySchemeMeansTheValueIsThePlaceholder) {
  EXPECT_EQ(request("/", {"X-Npm-Token: " + kNpmSecret}), rewritten(request("/", {"X-Npm-Token: " + kNpm}), {npm()}));
  RewriteResult r = refused(request("/", {"X-Npm-Token: Bearer " + kNpm}), {npm()});
  EXPECT_EQ("npm", r.refused_credential);
  EXPECT_EQ("in header X-Npm-Token; it is put in only as `X-Npm-Token: <placeholder>`", r.reason);
}

TEST(CredentialRewrite, SecretKeptVerbatim) {
  CredentialBinding b = github();
  b.secret = "a+b/c=d==+/ %!";
  EXPECT_EQ(request("/", {"Authorization: Bearer a+b/c=d==+/ %!"}),
            rewritten(request("/", {"Authorization: Bearer " + kGithub}), {b}));
  EXPECT_EQ(request("/", {"X-Npm-Token: npm_Z+/x=9y=="}), rewritten(request("/", {"X-Npm-Token: " + kNpm}), {npm()}));
}

TEST(CredentialRewrite, TwoBindingsInOneRequest) {
  RewriteResult r = rewrite(request("/pkg", {"X-Npm-Token: " + kNpm, "Authorization: Bearer " + kGithub}),
                            {github(), npm()});
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(request("/pkg", {"X-Npm-Token: " + kNpmSecret, "Authorization: Bearer " + kGithubSecret}), r.head);
  EXPECT_EQ((std::vector<std::string>{"npm", "github"}), r.replaced);
}

TEST(CredentialRewrite, OnlyTheBindingsUsedAreReported) {
  RewriteResult r = rewrite(request("/", {"Authorization: Bearer " + kGithub}), {github(), npm()});
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(std::vector<std::string>{"github"}, r.replaced);
}

TEST(CredentialRewrite, HeadWithoutPlaceholdersIsByteIdentical) {
  for (std::string head : {
           request("/repos/a/b?x=1", {"Authorization: Bearer ghp_user_supplied", "Accept: */*"}),
           request("/", {}),
           std::string("\r\n\r\nPOST /x HTTP/1.0\r\nX-Npm-Token:   \t v \t\r\nContent-Length: 0\r\n\r\n"),
           request("/", {"Authorization: Basic " + base64_encode("user:password")}),
           request("/oishell-cred-", {"X-A: oishell-cred-github-"}),
       }) {
    RewriteResult r = rewrite(head, {github(), npm()});
    EXPECT_TRUE(r.ok) << head << r.reason;
    EXPECT_EQ(head, r.head);
    EXPECT_TRUE(r.replaced.empty());
  }
}

TEST(CredentialRewrite, PlaceholderInTheQueryRefused) {
  RewriteResult r = refused(request("/search?q=" + kGithub, {"Authorization: Bearer " + kGithub}), {github()});
  EXPECT_EQ("github", r.refused_credential);
  EXPECT_EQ("in the request target; it is put in only as `Authorization: Bearer <placeholder>`", r.reason);
}

TEST(CredentialRewrite, PlaceholderInThePathRefused) {
  RewriteResult r = refused(request("/u/" + kNpm + "/x", {}), {github()});
  EXPECT_EQ("npm", r.refused_credential);
  EXPECT_EQ("in the request target; the credential is not bound to this host", r.reason);
  r = refused(request("https://api.example.com/" + kOther, {}), {github()});
  EXPECT_EQ("other", r.refused_credential);
}

TEST(CredentialRewrite, NameOfAnUnboundCredentialFromItsPlaceholder) {
  // Not bound here, so no binding names it: the name is the placeholder's middle, dashes and all.
  std::string dashed = "oishell-cred-my-api-key-0123456789abcdef0123456789abcdef";
  RewriteResult r = rewrite_request_head(request("/" + dashed, {}), {github()}, {dashed});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ("my-api-key", r.refused_credential);
}

TEST(CredentialRewrite, PercentEncodedPlaceholderInTheTargetRefused) {
  std::string encoded = "oishell%2Dcred%2dgithub-0123456789abcdef%30123456789abcdef";
  RewriteResult r = refused(request("/x?t=" + encoded, {}), {github()});
  EXPECT_EQ("github", r.refused_credential);
  EXPECT_EQ(0u, r.reason.find("in the request target (percent-encoded)"));
  std::string twice = "%256Fishell-cred-github-0123456789abcdef0123456789abcdef";  // "%6F" is "o"
  EXPECT_EQ("github", refused(request("/x/" + twice, {}), {github()}).refused_credential);
}

TEST(CredentialRewrite, PlaceholderInTheRequestLineOutsideTheTargetRefused) {
  std::string head = kGithub + " / HTTP/1.1\r\nHost: h\r\n\r\n";
  RewriteResult r = refused(head, {github()});
  EXPECT_EQ("github", r.refused_credential);
  EXPECT_EQ(0u, r.reason.find("in the request line"));
}

TEST(CredentialRewrite, PlaceholderOfAnotherCredentialInTheBoundHeaderRefused) {
  RewriteResult r = refused(request("/", {"Authorization: Bearer " + kOther}), {github()});
  EXPECT_EQ("other", r.refused_credential);
  EXPECT_EQ("in header Authorization; the credential is not bound to this host", r.reason);
  // Bound here, but to another header.
  r = refused(request("/", {"Authorization: Bearer " + kNpm}), {github(), npm()});
  EXPECT_EQ("npm", r.refused_credential);
  EXPECT_EQ("in header Authorization; it is put in only as `X-Npm-Token: <placeholder>`", r.reason);
}

TEST(CredentialRewrite, BoundPlaceholderInAnUnrelatedHeaderRefused) {
  RewriteResult r = refused(request("/", {"Authorization: Bearer " + kGithub, "X-Debug: " + kGithub}), {github()});
  EXPECT_EQ("github", r.refused_credential);
  EXPECT_EQ("in header X-Debug; it is put in only as `Authorization: Bearer <placeholder>`", r.reason);
  r = refused(request("/", {"X-Forwarded-Token: " + kGithub, "Authorization: Bearer " + kGithub}), {github()});
  EXPECT_EQ(0u, r.reason.find("in header X-Forwarded-Token"));
  r = refused(request("/", {"Cookie: session=1; t=" + kGithub}), {github()});
  EXPECT_EQ(0u, r.reason.find("in header Cookie"));
}

TEST(CredentialRewrite, PercentEncodedPlaceholderInAHeaderRefused) {
  RewriteResult r = refused(request("/", {"Cookie: t=oishell-cred-github%2D0123456789abcdef0123456789abcdef"}),
                            {github()});
  EXPECT_EQ("github", r.refused_credential);
  EXPECT_EQ(0u, r.reason.find("in header Cookie"));
}

TEST(CredentialRewrite, PlaceholderInAHeaderNameRefused) {
  RewriteResult r = refused(request("/", {kGithub + ": 1"}), {github()});
  EXPECT_EQ("github", r.refused_credential);
  EXPECT_EQ(0u, r.reason.find("in a header name"));
}

TEST(CredentialRewrite, BoundPlaceholderNotInItsExactFormRefused) {
  for (std::string value : {
           "Bearer " + kGithub + "x",
           "Bearer x" + kGithub,
           "Bearer " + kGithub + ", Bearer " + kGithub,
           "Bearer " + kGithub + " " + kGithub,
           "token " + kGithub,  // another scheme
           kGithub,             // no scheme
           "Bearer\t" + kGithub,
       }) {
    RewriteResult r = refused(request("/", {"Authorization: " + value}), {github()});
    EXPECT_EQ("github", r.refused_credential) << value;
    EXPECT_EQ("in header Authorization; it is put in only as `Authorization: Bearer <placeholder>`", r.reason)
        << value;
  }
}

TEST(CredentialRewrite, PlaceholderNotBoundToThisHostRefusedEvenInItsHeader) {
  RewriteResult r = refused(request("/", {"Authorization: Bearer " + kGithub}), {});
  EXPECT_EQ("github", r.refused_credential);
  EXPECT_EQ("in header Authorization; the credential is not bound to this host", r.reason);
}

TEST(CredentialRewrite, BasicWithThePlaceholderAsPassword) {
  std::string sent = "Authorization: Basic " + base64_encode("x-access-token:" + kGithub);
  RewriteResult r = rewrite(request("/o/r.git/info/refs", {sent}), {github("Basic")});
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(request("/o/r.git/info/refs", {"Authorization: Basic " + base64_encode("x-access-token:" + kGithubSecret)}),
            r.head);
  EXPECT_EQ(std::vector<std::string>{"github"}, r.replaced);
  // An empty user-id; the scheme in another case.
  EXPECT_EQ(request("/", {"Authorization: basic " + base64_encode(":" + kGithubSecret)}),
            rewritten(request("/", {"Authorization: basic " + base64_encode(":" + kGithub)}), {github("Basic")}));
  // Unpadded base64 is read; the secret goes back padded.
  std::string unpadded = base64_encode("ab:" + kGithub);
  while (unpadded.back() == '=') unpadded.pop_back();
  EXPECT_EQ(request("/", {"Authorization: Basic " + base64_encode("ab:" + kGithubSecret)}),
            rewritten(request("/", {"Authorization: Basic " + unpadded}), {github("Basic")}));
}

TEST(CredentialRewrite, BasicWithThePlaceholderAsUserId) {
  EXPECT_EQ(request("/", {"Authorization: Basic " + base64_encode(kGithubSecret + ":")}),
            rewritten(request("/", {"Authorization: Basic " + base64_encode(kGithub + ":")}), {github("Basic")}));
  // A secret with ":" would end a user-id early: it goes in only as a password.
  CredentialBinding colon = github("Basic");
  colon.secret = "user:pass";
  RewriteResult r = refused(request("/", {"Authorization: Basic " + base64_encode(kGithub + ":")}), {colon});
  EXPECT_EQ("github", r.refused_credential);
  EXPECT_EQ("in header Authorization; it is put in only as `Authorization: Basic base64(user:<placeholder>)`",
            r.reason);
  EXPECT_EQ(request("/", {"Authorization: Basic " + base64_encode("u:user:pass")}),
            rewritten(request("/", {"Authorization: Basic " + base64_encode("u:" + kGithub)}), {colon}));
}

TEST(CredentialRewrite, BasicInAnyOtherFormRefused) {
  for (std::string value : {
           "Basic " + kGithub,                                   // not base64
           "Basic " + base64_encode(kGithub + ":pw"),            // placeholder user-id with a password
           "Basic " + base64_encode("a:b:" + kGithub),           // the password would be "b:<placeholder>"
           "Basic " + base64_encode("u:" + kGithub + "x"),       // embedded
           "Basic " + base64_encode(kGithub + ":" + kGithub),    // twice
           "Basic " + base64_encode(kOther + ":" + kGithub),     // another credential as the user-id
       }) {
    RewriteResult r = refused(request("/", {"Authorization: " + value}), {github("Basic")});
    EXPECT_FALSE(r.refused_credential.empty()) << value;
    EXPECT_EQ(0u, r.reason.find("in header Authorization")) << value << ": " << r.reason;
  }
  RewriteResult r =
      refused(request("/", {"Authorization: Basic " + base64_encode(kOther + ":" + kGithub)}), {github("Basic")});
  EXPECT_EQ("other", r.refused_credential);
}

TEST(CredentialRewrite, BasicEncodedPlaceholderInAnotherHeaderRefused) {
  RewriteResult r = refused(request("/", {"Proxy-Authorization: Basic " + base64_encode("u:" + kNpm)}), {github()});
  EXPECT_EQ("npm", r.refused_credential);
  EXPECT_EQ("in header Proxy-Authorization; the credential is not bound to this host", r.reason);
  // Basic credentials for a Bearer binding: found in the base64.
  r = refused(request("/", {"Authorization: Basic " + base64_encode("u:" + kGithub)}), {github()});
  EXPECT_EQ("github", r.refused_credential);
}

TEST(CredentialRewrite, EncodingsNotFoundAreNeverReplaced) {
  // The documented limit: base64 outside `Basic` is not searched. The placeholder is not found, and not replaced:
  // the host gets the encoded placeholder, never the secret.
  std::string head = request("/", {"Authorization: Bearer " + base64_encode("u:" + kGithub)});
  RewriteResult r = rewrite(head, {github("Basic")});
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(head, r.head);
  EXPECT_EQ(std::string::npos, r.head.find(base64_encode("u:" + kGithubSecret)));
}

TEST(CredentialRewrite, UnusableSecretRefusedBeforeAnything) {
  CredentialBinding newline = github();
  newline.secret = kGithubSecret + "\n";
  RewriteResult r = refused(request("/", {"Authorization: Bearer " + kGithub}), {newline});
  EXPECT_EQ("github", r.refused_credential);
  EXPECT_NE(std::string::npos, r.reason.find("control character")) << r.reason;
  CredentialBinding injection = github();
  injection.secret = "x\r\nX-Injected: 1";
  EXPECT_FALSE(rewrite(request("/", {"Authorization: Bearer " + kGithub}), {injection}).ok);
  CredentialBinding space = github();
  space.secret = " " + kGithubSecret;
  EXPECT_NE(std::string::npos,
            refused(request("/", {}), {space}).reason.find("starts or ends with whitespace"));
  CredentialBinding empty = github();
  empty.secret.clear();
  EXPECT_NE(std::string::npos, refused(request("/", {}), {empty}).reason.find("empty secret"));
  CredentialBinding bad_header = github();
  bad_header.header = "Authorization:";
  EXPECT_NE(std::string::npos, refused(request("/", {}), {bad_header}).reason.find("not a token"));
}

TEST(CredentialRewrite, MalformedHeadRefused) {
  EXPECT_FALSE(rewrite("GET / HTTP/1.1\r\nHost: h\r\n", {github()}).ok);
  EXPECT_FALSE(rewrite("GET / HTTP/1.1\r\nHost: h\r\n\r\nbody", {github()}).ok);
  EXPECT_FALSE(rewrite("GET/HTTP/1.1\r\n\r\n", {github()}).ok);
  EXPECT_FALSE(rewrite("GET / HTTP/1.1\r\nno colon\r\n\r\n", {github()}).ok);
  EXPECT_FALSE(rewrite("", {github()}).ok);
}

TEST(CredentialRewrite, RedactHidesSecrets) {
  std::vector<CredentialBinding> bindings = {github(), npm()};
  RewriteResult r = rewrite(request("/", {"Authorization: Bearer " + kGithub, "X-Npm-Token: " + kNpm}), bindings);
  ASSERT_TRUE(r.ok) << r.reason;
  std::string shown = redact(r.head, bindings);
  EXPECT_EQ(request("/", {"Authorization: Bearer <redacted:github>", "X-Npm-Token: <redacted:npm>"}), shown);
  EXPECT_EQ(std::string::npos, shown.find(kGithubSecret));
  EXPECT_EQ(std::string::npos, shown.find(kNpmSecret));
  EXPECT_EQ("a <redacted:github><redacted:github> b", redact("a " + kGithubSecret + kGithubSecret + " b", bindings));
  EXPECT_EQ("nothing secret here " + kGithub, redact("nothing secret here " + kGithub, bindings));
  EXPECT_EQ("", redact("", bindings));
}

TEST(CredentialRewrite, RedactPrefersTheLongestSecret) {
  CredentialBinding short_one{"short", "p1", "abc", "X-A", ""};
  CredentialBinding long_one{"long", "p2", "abcdef", "X-B", ""};
  EXPECT_EQ("<redacted:long> <redacted:short>", redact("abcdef abc", {short_one, long_one}));
  // The marker is never searched again, even when a secret occurs in it.
  CredentialBinding red{"red", "p3", "red", "X-C", ""};
  EXPECT_EQ("<redacted:red>", redact("red", {red}));
}

TEST(CredentialRewrite, RedactHidesBasicCredentialsHoldingASecret) {
  CredentialBinding b = github("Basic");
  RewriteResult r = rewrite(request("/", {"Authorization: Basic " + base64_encode("u:" + kGithub)}), {b});
  ASSERT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(request("/", {"Authorization: Basic <redacted:github>"}), redact(r.head, {b}));
  std::string harmless = "Authorization: Basic " + base64_encode("user:password");
  EXPECT_EQ(harmless, redact(harmless, {b}));
}

}  // namespace
}  // namespace oishell::relay
