// on_unlisted: ask — the relay holds the connection until the AskHandler's question is answered or times out.
#include <gtest/gtest.h>

#include <future>

#include "tests/relay/test_util.h"

namespace oishell::relay::testing {
namespace {

class Asker {
 public:
  AskHandler handler() {
    return [this](const AskRequest& request) {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
      cv_.notify_all();
    };
  }
  // Waits for the n-th question (1-based).
  std::optional<AskRequest> wait(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::seconds(5), [&] { return requests_.size() >= n; })) return std::nullopt;
    return requests_[n - 1];
  }
  size_t count() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<AskRequest> requests_;
};

class RelayAskTest : public ::testing::Test {
 protected:
  Server echo_{Server::Kind::echo, "127.0.0.3"};
  NetworkSpec spec() {
    NetworkSpec s;
    s.on_unlisted = OnUnlisted::ask;
    s.hosts["asked.example"] = "127.0.0.3";
    s.allow_private = {cidr("127.0.0.0/8")};
    return s;
  }
  std::string target() const { return "asked.example:" + std::to_string(echo_.port()); }
};

// Runs a CONNECT in the background; the future holds "" on success, else the refusal.
std::future<std::string> connect_async(uint16_t relay_port, std::string target) {
  return std::async(std::launch::async, [relay_port, target] {
    std::string refusal;
    UniqueFd fd = http_connect("127.0.0.1", relay_port, target, &refusal);
    if (!fd) return refusal.empty() ? std::string("no answer") : refusal;
    // An answered question is inspected: the first bytes must name the host (the echo server sends them back).
    std::string request = "GET / HTTP/1.1\r\nHost: " + target + "\r\n\r\n";
    send_all(fd.get(), request);
    return read_exact(fd.get(), request.size()) == request ? std::string() : std::string("no echo");
  });
}

TEST_F(RelayAskTest, AllowOnceAllowsThisConnectionOnly) {
  Asker asker;
  RelayUnderTest relay(spec(), {}, asker.handler());
  auto first = connect_async(relay.http_port, target());
  auto q = asker.wait(1);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ("asked.example", q->host);
  EXPECT_EQ(echo_.port(), q->port);
  EXPECT_EQ(0, echo_.accepted());  // held, not connected, while the question is open
  relay.relay().answer(q->id, AskAnswer::allow_once);
  EXPECT_EQ("", first.get());
  auto second = connect_async(relay.http_port, target());
  auto q2 = asker.wait(2);  // asked again
  ASSERT_TRUE(q2.has_value());
  relay.relay().answer(q2->id, AskAnswer::deny);
  std::string refusal = second.get();
  EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403")) << refusal;
  EXPECT_NE(std::string::npos, refusal.find("ask: denied")) << refusal;
}

TEST_F(RelayAskTest, AllowAlwaysHoldsForTheSession) {
  Asker asker;
  RelayUnderTest relay(spec(), {}, asker.handler());
  auto first = connect_async(relay.http_port, target());
  auto q = asker.wait(1);
  ASSERT_TRUE(q.has_value());
  relay.relay().answer(q->id, AskAnswer::allow_always);
  EXPECT_EQ("", first.get());
  EXPECT_EQ("", connect_async(relay.http_port, target()).get());
  EXPECT_EQ(1u, asker.count());
  auto allowed = relay.events.wait_for("net.ask", "asked.example");
  EXPECT_TRUE(allowed.has_value());
}

TEST_F(RelayAskTest, UnansweredQuestionTimesOutAsDeny) {
  Asker asker;
  RelayOptions options;
  options.ask_timeout_ms = 300;
  RelayUnderTest relay(spec(), options, asker.handler());
  auto started = std::chrono::steady_clock::now();
  // By hand, to see the whole fate of the connection: refused, then closed by the relay.
  UniqueFd client = connect_to("127.0.0.1", relay.http_port);
  ASSERT_TRUE(client);
  ASSERT_TRUE(send_all(client.get(), "CONNECT " + target() + " HTTP/1.1\r\nHost: " + target() + "\r\n\r\n"));
  std::string head = read_head(client.get());
  auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_TRUE(head.starts_with("HTTP/1.1 403")) << head;
  int error = -1;
  std::string body = read_all(client.get(), &error);
  EXPECT_EQ(0, error) << "the relay closes the refused connection (a clean EOF, not the 10 s receive timeout)";
  EXPECT_NE(std::string::npos, body.find("ask: timed out")) << head << body;
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_EQ(0, echo_.accepted());
  auto q = asker.wait(1);
  ASSERT_TRUE(q.has_value());

  // A late answer is ignored: the most generous one neither revives the refused connection nor allows the host for
  // the session. The next connection is asked about again and nothing reaches the server until it is answered.
  relay.relay().answer(q->id, AskAnswer::allow_always);
  auto second = connect_async(relay.http_port, target());
  auto q2 = asker.wait(2);
  ASSERT_TRUE(q2.has_value()) << "the late allow_always let the next connection through without asking";
  EXPECT_NE(q->id, q2->id);
  EXPECT_EQ(0, echo_.accepted());  // held while its own question is open
  relay.relay().answer(q2->id, AskAnswer::deny);
  std::string refusal = second.get();  // the answers are handled in order: the late one has been by now
  EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403")) << refusal;
  EXPECT_NE(std::string::npos, refusal.find("ask: denied")) << refusal;
  EXPECT_EQ(0, echo_.accepted());
  EXPECT_EQ(2u, asker.count());
  std::vector<std::string> denials;
  for (const auto& e : relay.events.all()) {
    EXPECT_NE("net.allowed", e.value("event", "")) << e.dump();
    if (e.value("event", "") == "net.denied") denials.push_back(e.value("rule", ""));
  }
  EXPECT_EQ((std::vector<std::string>{"ask: timed out", "ask: denied"}), denials);
}

TEST_F(RelayAskTest, WithoutHandlerAskDenies) {
  RelayUnderTest relay(spec());
  std::string refusal = connect_async(relay.http_port, target()).get();
  EXPECT_NE(std::string::npos, refusal.find("ask: denied")) << refusal;
}

// A destination whose address is known before any question (a literal address, a name pinned in `hosts:`) and that
// the private-address guard refuses is refused at once: asking would only teach the user that "allow" does nothing.
// The neighbour whose address allow_private covers is asked as before.
TEST_F(RelayAskTest, GuardedKnownAddressIsRefusedWithoutAQuestion) {
  Asker asker;
  NetworkSpec guarded = spec();
  guarded.allow_private = {cidr("127.0.0.3/32")};
  guarded.hosts["pinned-private.example"] = "127.0.0.4";
  RelayUnderTest relay(guarded, {}, asker.handler());
  for (std::string target : {"127.0.0.4:" + std::to_string(echo_.port()),
                             "pinned-private.example:" + std::to_string(echo_.port())}) {
    std::string refusal = connect_async(relay.http_port, target).get();
    EXPECT_TRUE(refusal.starts_with("HTTP/1.1 403")) << target << ": " << refusal;
    EXPECT_NE(std::string::npos, refusal.find("private-address guard")) << refusal;
    EXPECT_NE(std::string::npos, refusal.find("127.0.0.4 is loopback")) << refusal;
  }
  EXPECT_EQ(0u, asker.count());
  EXPECT_EQ(0, echo_.accepted());
  auto allowed = connect_async(relay.http_port, "127.0.0.3:" + std::to_string(echo_.port()));
  auto q = asker.wait(1);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ("127.0.0.3", q->host);
  relay.relay().answer(q->id, AskAnswer::allow_once);
  EXPECT_EQ("", allowed.get());
}

}  // namespace
}  // namespace oishell::relay::testing
