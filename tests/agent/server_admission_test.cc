// The server's door as data (agent/server/admission.h): which origins are the server's own, the user's list of
// others, and what a request's Host, Origin and token decide before anything reaches the agent.
#include <gtest/gtest.h>

#include "agent/server/admission.h"

namespace oishell::agent::server {

using namespace ::oishell::http;  // the loopback HTTP pieces (base/http/)
namespace {

HttpRequest request(std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest r;
  r.method = "GET";
  r.target = r.path = "/heartbeat";
  r.headers = std::move(headers);
  return r;
}

int status_of(const std::optional<std::string>& response) {
  return response ? std::stoi(response->substr(9, 3)) : 0;
}

TEST(ServerAdmission, OwnOriginsAreThoseOfTheListeningPort) {
  Listener v4;
  v4.host = "127.0.0.1";
  v4.port = 8123;
  EXPECT_EQ((std::vector<std::string>{"http://127.0.0.1:8123", "http://localhost:8123"}), own_origins(v4));
  Listener v6;
  v6.host = "::1";
  v6.port = 8123;
  EXPECT_EQ((std::vector<std::string>{"http://[::1]:8123", "http://localhost:8123"}), own_origins(v6));
  EXPECT_EQ((std::vector<std::string>{"http://localhost:1", "https://a.example", "http://b.example:8080"}),
            with_configured_origins({"http://localhost:1"}, " https://a.example/, http://b.example:8080,,"));
}

TEST(ServerAdmission, HostOriginAndTokenDecide) {
  AdmissionPolicy policy;
  policy.token = "the-token";
  policy.origins = {"http://127.0.0.1:8123", "http://localhost:8123"};
  bool first_message_auth = true;
  const std::pair<std::string, std::string> token{"X-API-KEY", "the-token"};
  // The neighbours: no Origin (not a browser), the own origin in any case.
  EXPECT_EQ(0, status_of(refusal(request({{"Host", "127.0.0.1:8123"}, token}), policy, &first_message_auth)));
  EXPECT_FALSE(first_message_auth);
  EXPECT_EQ(0, status_of(refusal(request({{"Host", "localhost:8123"}, {"Origin", "HTTP://LOCALHOST:8123"}, token}),
                                 policy, &first_message_auth)));
  for (const char* origin : {"null", "NULL", "http://127.0.0.1:8124", "http://localhost", "http://127.0.0.2:8123",
                             "http://127.0.0.1:8123/", "http://evil.example"}) {
    auto refused = refusal(request({{"Host", "127.0.0.1:8123"}, {"Origin", origin}, token}), policy,
                           &first_message_auth);
    EXPECT_EQ(403, status_of(refused)) << origin;
  }
  EXPECT_EQ(421, status_of(refusal(request({{"Host", "evil.example"}, token}), policy, &first_message_auth)));
  EXPECT_EQ(401, status_of(refusal(request({{"Host", "127.0.0.1"}, {"X-API-KEY", "the-toke"}}), policy,
                                   &first_message_auth)));
  // A websocket without a credential in its headers authenticates with its first message.
  HttpRequest upgrade = request({{"Host", "127.0.0.1:8123"}, {"Upgrade", "websocket"}, {"Connection", "Upgrade"}});
  upgrade.path = upgrade.target = "/";
  EXPECT_EQ(0, status_of(refusal(upgrade, policy, &first_message_auth)));
  EXPECT_TRUE(first_message_auth);
  upgrade.headers.emplace_back("Origin", "null");
  EXPECT_EQ(403, status_of(refusal(upgrade, policy, &first_message_auth)));
}

}  // namespace
}  // namespace oishell::agent::server
