// Who may talk to `interpreter --gui`'s server (agent/gui/request_guard.h): each rule refuses what it is for, and
// the page's own requests pass.
#include <gtest/gtest.h>

#include "agent/gui/request_guard.h"

namespace oishell::agent::gui {
namespace {

using http::HttpRequest;

const std::string kToken(64, 'a');

HttpRequest request(std::string method, std::string path, std::vector<std::pair<std::string, std::string>> headers,
                    std::string query = "") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.query = std::move(query);
  r.headers = std::move(headers);
  return r;
}

class Guard : public ::testing::Test {
 protected:
  RequestGuard guard_{"127.0.0.1", 8123, kToken};
};

TEST_F(Guard, TheServedHostPassesAndAReboundNameIsRefused) {
  EXPECT_EQ(0, guard_.check_origin(request("GET", "/api/events", {{"Host", "127.0.0.1:8123"}}), false).status);
  EXPECT_EQ(0, guard_.check_origin(request("GET", "/api/events", {{"Host", "localhost:8123"}}), false).status);
  // DNS rebinding: a site's own name, now resolving to 127.0.0.1; another port; no Host at all.
  GuardVerdict v = guard_.check_origin(request("GET", "/", {{"Host", "attacker.example:8123"}}), true);
  EXPECT_EQ(421, v.status);
  EXPECT_NE(std::string::npos, v.reason.find("attacker.example")) << v.reason;
  EXPECT_EQ(421, guard_.check_origin(request("GET", "/", {{"Host", "127.0.0.1:8124"}}), true).status);
  EXPECT_EQ(421, guard_.check_origin(request("GET", "/", {}), true).status);
}

TEST_F(Guard, AnotherOriginIsRefusedAndAPostMustNameItsOrigin) {
  const std::pair<std::string, std::string> host = {"Host", "127.0.0.1:8123"};
  EXPECT_EQ(0, guard_.check_origin(request("POST", "/api/message", {host, {"Origin", "http://127.0.0.1:8123"}}), false)
                   .status);
  EXPECT_EQ(0, guard_.check_origin(request("POST", "/api/message", {host, {"Origin", "http://localhost:8123"}}), false)
                   .status);
  // Same site, other port: another origin (a browser sends the cookie there, which is why Origin decides).
  EXPECT_EQ(403, guard_.check_origin(request("POST", "/api/message", {host, {"Origin", "http://127.0.0.1:9999"}}),
                                     false).status);
  EXPECT_EQ(403, guard_.check_origin(request("POST", "/api/message", {host, {"Origin", "null"}}), false).status);
  EXPECT_EQ(403, guard_.check_origin(request("POST", "/api/message", {host}), false).status);
  // Fetch metadata: a cross-site request to the API is refused; the page itself may be opened from anywhere.
  EXPECT_EQ(403, guard_.check_origin(request("GET", "/api/events", {host, {"Sec-Fetch-Site", "cross-site"}}), false)
                     .status);
  EXPECT_EQ(403, guard_.check_origin(request("GET", "/api/events", {host, {"Sec-Fetch-Site", "same-site"}}), false)
                     .status);
  EXPECT_EQ(0, guard_.check_origin(request("GET", "/api/events", {host, {"Sec-Fetch-Site", "same-origin"}}), false)
                   .status);
  EXPECT_EQ(0, guard_.check_origin(request("GET", "/", {host, {"Sec-Fetch-Site", "cross-site"}}), true).status);
}

TEST_F(Guard, TheTokenComesInTheAuthorizationHeaderOnly) {
  const std::pair<std::string, std::string> host = {"Host", "127.0.0.1:8123"};
  EXPECT_TRUE(guard_.authenticated(request("GET", "/api/events", {host, {"Authorization", "Bearer " + kToken}})));
  // Not from a cookie (a browser sends cookies to every port of 127.0.0.1), nor from the URL.
  EXPECT_FALSE(guard_.authenticated(request("GET", "/api/events", {host, {"Cookie", "oishell_gui_8123=" + kToken}})));
  EXPECT_FALSE(guard_.authenticated(request("GET", "/api/events", {host}, "token=" + kToken)));
  // A wrong token, a prefix of the right one, an empty one, none.
  EXPECT_FALSE(guard_.authenticated(request("GET", "/api/events", {host, {"Authorization", "Bearer " + std::string(64, 'b')}})));
  EXPECT_FALSE(guard_.authenticated(request("GET", "/api/events", {host, {"Authorization", "Bearer " + kToken.substr(0, 63)}})));
  EXPECT_FALSE(guard_.authenticated(request("GET", "/api/events", {host, {"Authorization", "Bearer "}})));
  EXPECT_FALSE(guard_.authenticated(request("GET", "/api/events", {host})));
}

TEST_F(Guard, TheAddressCarriesTheTokenInItsFragment) {
  // A fragment is never sent in a request, logged by a server or passed on as a Referer.
  EXPECT_EQ("http://127.0.0.1:8123/#token=" + kToken, guard_.url_with_token());
  RequestGuard v6("::1", 8123, kToken);
  EXPECT_EQ("http://[::1]:8123/#token=" + kToken, v6.url_with_token());
  EXPECT_EQ(0, v6.check_origin(request("GET", "/", {{"Host", "[::1]:8123"}}), true).status);
}

TEST(GuardParsing, JsonBodies) {
  EXPECT_TRUE(RequestGuard::json_body(request("POST", "/", {{"Content-Type", "application/json"}})));
  EXPECT_TRUE(RequestGuard::json_body(request("POST", "/", {{"Content-Type", "Application/JSON; charset=utf-8"}})));
  EXPECT_FALSE(RequestGuard::json_body(request("POST", "/", {{"Content-Type", "text/plain"}})));
  EXPECT_FALSE(RequestGuard::json_body(request("POST", "/", {{"Content-Type", "application/x-www-form-urlencoded"}})));
  EXPECT_FALSE(RequestGuard::json_body(request("POST", "/", {})));
}

}  // namespace
}  // namespace oishell::agent::gui
