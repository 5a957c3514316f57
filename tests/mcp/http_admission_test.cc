// Who may talk to `oishell mcp --http` (runtime/mcp/http_admission.h): each rule refuses what it is for, beside the
// request it lets through. Without these rules any page the user visits could post to the loopback port (a browser
// sends cross-origin POSTs), and a rebound DNS name could read the answers.
#include <gtest/gtest.h>

#include "runtime/mcp/http_admission.h"

namespace oishell::mcp {
namespace {

using http::HttpRequest;
using Headers = std::vector<std::pair<std::string, std::string>>;

const std::string kToken(64, 'c');

HttpRequest request(std::string method, Headers extra, std::string path = "/mcp") {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.headers = {{"Host", "127.0.0.1:8931"}, {"Authorization", "Bearer " + kToken}};
  if (r.method == "POST") {
    r.headers.push_back({"Content-Type", "application/json"});
    r.headers.push_back({"Accept", "application/json, text/event-stream"});
  } else if (r.method == "GET") {
    r.headers.push_back({"Accept", "text/event-stream"});
  }
  for (auto& [k, v] : extra) {
    std::erase_if(r.headers, [&](const auto& h) { return http::ascii_iequals(h.first, k); });
    if (!v.empty()) r.headers.push_back({k, v});
  }
  return r;
}

class Admission : public ::testing::Test {
 protected:
  HttpAdmission admission_{"127.0.0.1", 8931, kToken};
};

TEST_F(Admission, TheServedHostPassesAndAReboundNameIsRefused) {
  EXPECT_EQ(0, admission_.admit(request("POST", {})).status);
  EXPECT_EQ(0, admission_.admit(request("POST", {{"Host", "localhost:8931"}})).status);
  HttpVerdict rebound = admission_.admit(request("POST", {{"Host", "attacker.example:8931"}}));
  EXPECT_EQ(421, rebound.status);
  EXPECT_NE(std::string::npos, rebound.reason.find("attacker.example")) << rebound.reason;
  EXPECT_EQ(421, admission_.admit(request("POST", {{"Host", "127.0.0.1:8932"}})).status);
  EXPECT_EQ(421, admission_.admit(request("POST", {{"Host", ""}})).status);
}

TEST_F(Admission, AnotherOriginIsRefusedItsOwnAndNoneAreNot) {
  EXPECT_EQ(0, admission_.admit(request("POST", {{"Origin", "http://127.0.0.1:8931"}})).status);
  EXPECT_EQ(0, admission_.admit(request("POST", {{"Origin", "http://localhost:8931"}})).status);
  EXPECT_EQ(403, admission_.admit(request("POST", {{"Origin", "http://evil.example"}})).status);
  EXPECT_EQ(403, admission_.admit(request("POST", {{"Origin", "http://127.0.0.1:8932"}})).status);
  EXPECT_EQ(403, admission_.admit(request("POST", {{"Origin", "null"}})).status);
}

TEST_F(Admission, TheTokenIsRequiredAsABearerAndCompared) {
  EXPECT_EQ(0, admission_.admit(request("GET", {})).status);
  EXPECT_EQ(401, admission_.admit(request("GET", {{"Authorization", ""}})).status);
  EXPECT_EQ(401, admission_.admit(request("GET", {{"Authorization", "Bearer " + std::string(64, 'd')}})).status);
  EXPECT_EQ(401, admission_.admit(request("GET", {{"Authorization", "Bearer " + kToken.substr(1)}})).status);
  EXPECT_EQ(401, admission_.admit(request("GET", {{"Authorization", "Basic " + kToken}})).status);
  // interpreter --server's X-API-KEY is not this server's way: only the bearer token counts.
  EXPECT_EQ(401, admission_.admit(request("GET", {{"Authorization", ""}, {"X-API-KEY", kToken}})).status);
  // A cookie carrying the token is no credential here.
  EXPECT_EQ(401, admission_.admit(request("GET", {{"Authorization", ""}, {"Cookie", "token=" + kToken}})).status);
}

TEST_F(Admission, TheHostIsCheckedBeforeTheToken) {
  // A rebound page learns nothing about the token: 421 whether or not it guessed.
  EXPECT_EQ(421, admission_.admit(request("POST", {{"Host", "a.example:8931"}, {"Authorization", ""}})).status);
}

TEST_F(Admission, OneEndpointAndItsMethods) {
  EXPECT_EQ(404, admission_.admit(request("POST", {}, "/")).status);
  EXPECT_EQ(404, admission_.admit(request("POST", {}, "/mcp/")).status);
  EXPECT_EQ(0, admission_.admit(request("DELETE", {})).status);
  EXPECT_EQ(405, admission_.admit(request("PUT", {})).status);
  EXPECT_EQ(405, admission_.admit(request("OPTIONS", {})).status);
}

TEST_F(Admission, APostIsJsonAndItsAnswerFormFollowsAccept) {
  EXPECT_EQ(415, admission_.admit(request("POST", {{"Content-Type", "text/plain"}})).status);
  EXPECT_EQ(415, admission_.admit(request("POST", {{"Content-Type", "application/x-www-form-urlencoded"}})).status);
  EXPECT_EQ(0, admission_.admit(request("POST", {{"Content-Type", "application/json; charset=utf-8"}})).status);
  EXPECT_EQ(406, admission_.admit(request("POST", {{"Accept", "text/html"}})).status);
  EXPECT_EQ(AnswerForm::event_stream, HttpAdmission::answer_form(request("POST", {})));
  EXPECT_EQ(AnswerForm::json, HttpAdmission::answer_form(request("POST", {{"Accept", "application/json"}})));
  EXPECT_EQ(406, admission_.admit(request("GET", {{"Accept", "application/json"}})).status);
  EXPECT_EQ(0, admission_.admit(request("GET", {{"Accept", "text/event-stream;q=0.9"}})).status);
}

TEST_F(Admission, AnUnknownProtocolVersionIsRefused) {
  EXPECT_EQ(0, admission_.admit(request("POST", {{"MCP-Protocol-Version", "2025-06-18"}})).status);
  EXPECT_EQ(400, admission_.admit(request("POST", {{"MCP-Protocol-Version", "1999-01-01"}})).status);
}

TEST_F(Admission, TheEndpointUrl) { EXPECT_EQ("http://127.0.0.1:8931/mcp", admission_.endpoint_url()); }

}  // namespace
}  // namespace oishell::mcp
