// `network.unix` and the allow rules' `inspect`: parsing (errors with file:line:column), merging through `extends`,
// compiling against a fake host (sockets, directories, symlinks, missing paths), explain, diff and the JSON form.
#include <gtest/gtest.h>

#include "policy/compiler.h"
#include "policy/explain.h"
#include "policy/schema.h"
#include "policy/spec_json.h"
#include "tests/unit/test_util.h"

namespace oishell::testing {
namespace {

// The unit tests' host plus sockets: a session bus, a socket reached through a symlinked directory (/var/run ->
// /run, as on Debian), one in the workspace, and things that are not sockets.
const FakeHostFs& socket_host() {
  static const FakeHostFs host = [] {
    FakeHostFs fs = fake_host();
    fs.socket("/run/user/1000/bus").socket("/run/docker.sock").symlink("/var/run", "/run");
    fs.socket("/home/user/project/dev.sock").dir("/srv/sockets").file("/srv/not-a-socket");
    return fs;
  }();
  return host;
}

CompileContext socket_context() {
  CompileContext c = fake_context();
  c.fs = &socket_host();
  return c;
}

struct Compiled {
  policy::Policy policy;
  Result<SandboxSpec> spec;
};

Compiled compile_text(const std::string& text) {
  auto r = load_text(text);
  EXPECT_TRUE(r.ok()) << policy::format_diagnostics(r.errors);
  return Compiled{r.policy, policy::compile(r.policy, socket_context())};
}

SandboxSpec compiled_with_sockets(const std::string& text) {
  auto c = compile_text(text);
  EXPECT_TRUE(c.spec.is_ok()) << (c.spec ? "" : c.spec.status().message());
  return c.spec ? *c.spec : SandboxSpec{};
}

std::string explained(const std::string& text) {
  auto c = compile_text(text);
  EXPECT_TRUE(c.spec.is_ok()) << (c.spec ? "" : c.spec.status().message());
  return c.spec ? policy::explain(c.policy, *c.spec) : std::string();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string lines(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& l : items) out += l + "\n";
  return out;
}

// --- network.unix -------------------------------------------------------------------------------------------------

TEST(UnixSockets, ParsedAsPathsInEitherMode) {
  for (const char* mode : {"proxy", "none"}) {
    auto r = load_text(std::string("version: 1\nnetwork:\n  mode: ") + mode +
                       "\n  unix: [/run/user/1000/bus, $WORKSPACE/dev.sock, ~/.app.sock]\n");
    ASSERT_TRUE(r.ok()) << policy::format_diagnostics(r.errors);
    ASSERT_EQ(3u, r.policy.network.unix_sockets.size());
    EXPECT_EQ("$WORKSPACE/dev.sock", r.policy.network.unix_sockets[1].text);
    EXPECT_EQ(4, r.policy.network.unix_sockets[0].pos.line);
  }
}

TEST(UnixSockets, SyntaxErrorsNameTheLine) {
  EXPECT_EQ("test.yaml:3:10: network.unix[0]: relative path where an absolute one is needed (write "
            "$WORKSPACE/run/bus for a path in the workspace, or an absolute path) (the host path of a socket, like "
            "/run/user/1000/bus)",
            errors_of("version: 1\nnetwork:\n  unix: [run/bus]\n"));
  EXPECT_EQ("test.yaml:3:10: network.unix[0]: empty path (the host path of a socket, like /run/user/1000/bus)",
            errors_of("version: 1\nnetwork:\n  unix: [\"\"]\n"));
  EXPECT_EQ("test.yaml:3:23: network.unix[1]: `..` is not allowed in policy paths (write the path without `..`) (the "
            "host path of a socket, like /run/user/1000/bus)",
            errors_of("version: 1\nnetwork:\n  unix: [/run/a.sock, /run/../b.sock]\n"));
  EXPECT_EQ("test.yaml:3:9: network.unix: expected a list, found `/run/bus` (write [/run/bus])",
            errors_of("version: 1\nnetwork:\n  unix: /run/bus\n"));
}

TEST(UnixSockets, CompiledExpandedResolvedAndMerged) {
  SandboxSpec spec = compiled_with_sockets(R"(version: 1
network:
  unix:
    - /run/user/1000/bus
    - /var/run/docker.sock
    - $WORKSPACE/dev.sock
    - /home/user/project//dev.sock
    - /run/user/1000/later.sock
    - /var/run/not-yet/x.sock
)");
  // /var/run is a symlink to /run: resolved, so the broker compares real paths. A socket that does not exist yet is
  // kept (resolved as far as its directory exists); the same socket written twice is listed once.
  EXPECT_EQ((std::vector<std::string>{"/run/user/1000/bus", "/run/docker.sock", "/home/user/project/dev.sock",
                                      "/run/user/1000/later.sock", "/var/run/not-yet/x.sock"}),
            spec.network.unix_sockets);
}

TEST(UnixSockets, ExistingNonSocketIsAnErrorNamingTheLine) {
  auto c = compile_text("version: 1\nnetwork:\n  unix: [/srv/sockets, /srv/not-a-socket, /var/run]\n");
  ASSERT_FALSE(c.spec.is_ok());
  EXPECT_EQ("test.yaml:3:10: network.unix: /srv/sockets is a directory, not a unix socket (name the socket file "
            "itself, like /run/user/1000/bus)\n"
            "test.yaml:3:24: network.unix: /srv/not-a-socket is a regular file, not a unix socket (name the socket "
            "file itself, like /run/user/1000/bus)\n"
            "test.yaml:3:43: network.unix: /var/run (/run) is a directory, not a unix socket (name the socket file "
            "itself, like /run/user/1000/bus)",
            c.spec.status().message());
}

TEST(UnixSockets, PathLongerThanASocketAddressIsAnError) {
  std::string long_path = "/run/" + std::string(110, 'x') + ".sock";
  auto c = compile_text("version: 1\nnetwork:\n  unix: [" + long_path + "]\n");
  ASSERT_FALSE(c.spec.is_ok());
  EXPECT_EQ("test.yaml:3:10: network.unix: " + long_path +
                " is longer than 107 bytes, more than a unix socket address holds (give the socket a shorter path)",
            c.spec.status().message());
  // 107 bytes is the most that fits.
  std::string fits = "/run/" + std::string(102, 'y');
  EXPECT_EQ(std::vector<std::string>{fits},
            compiled_with_sockets("version: 1\nnetwork:\n  unix: [" + fits + "]\n").network.unix_sockets);
}

TEST(UnixSockets, ExtendsAppendsWithoutDuplicates) {
  TempDir dir;
  dir.write("base.yaml", "version: 1\nnetwork:\n  unix: [/run/user/1000/bus, /run/docker.sock]\n");
  std::string child = dir.write("child.yaml", "version: 1\nextends: base.yaml\nnetwork:\n  mode: none\n"
                                               "  unix: [/run/docker.sock, $WORKSPACE/dev.sock]\n");
  auto loaded = policy::load_policy_file(child);
  ASSERT_TRUE(loaded.ok()) << policy::format_diagnostics(loaded.errors);
  std::vector<std::string> texts;
  for (const auto& item : loaded.policy.network.unix_sockets) texts.push_back(item.text);
  EXPECT_EQ((std::vector<std::string>{"/run/user/1000/bus", "/run/docker.sock", "$WORKSPACE/dev.sock"}), texts);
  auto spec = policy::compile(loaded.policy, socket_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  EXPECT_EQ(NetMode::none, spec->network.mode);  // mode none keeps its unix sockets
  EXPECT_EQ((std::vector<std::string>{"/run/user/1000/bus", "/run/docker.sock", "/home/user/project/dev.sock"}),
            spec->network.unix_sockets);
}

TEST(UnixSockets, ExplainListsThemAndTheRefusalInBothModes) {
  std::string e = explained("version: 1\nnetwork:\n  unix: [/run/user/1000/bus]\n");
  EXPECT_TRUE(contains(e, "  May connect to the unix socket /run/user/1000/bus (network.unix): what listens there "
                          "acts outside the sandbox, with its own rights.\n"))
      << e;
  EXPECT_TRUE(contains(e, "  Every other pathname unix socket outside the sandbox's own tmpfs (/tmp, a tmpfs home, "
                          "/dev/shm) is refused, with an event.\n"))
      << e;
  e = explained("version: 1\nnetwork:\n  mode: none\n  unix: [/run/docker.sock]\n");
  EXPECT_TRUE(contains(e, "No network: the sandbox has only its own loopback")) << e;
  EXPECT_TRUE(contains(e, "May connect to the unix socket /run/docker.sock (network.unix)")) << e;
  EXPECT_TRUE(contains(e, "is refused, with an event (in mode none too).\n")) << e;
  e = explained("version: 1\n");
  EXPECT_FALSE(contains(e, "May connect to the unix socket")) << e;
  EXPECT_TRUE(contains(e, "Every other pathname unix socket outside the sandbox's own tmpfs")) << e;
}

TEST(UnixSockets, DiffShowsAddedAndRemovedInEitherMode) {
  SandboxSpec a = compiled_with_sockets("version: 1\nnetwork:\n  mode: none\n  unix: [/run/user/1000/bus, /run/docker.sock]\n");
  SandboxSpec b = compiled_with_sockets("version: 1\nnetwork:\n  mode: none\n  unix: [/run/docker.sock, $WORKSPACE/dev.sock]\n");
  auto d = policy::diff_specs(a, b);
  EXPECT_EQ("network: connect to the unix socket /home/user/project/dev.sock\n", lines(d.only_b));
  EXPECT_EQ("network: connect to the unix socket /run/user/1000/bus\n", lines(d.only_a));
  EXPECT_TRUE(policy::diff_specs(a, a).same());
}

// --- inspect ------------------------------------------------------------------------------------------------------

TEST(Inspect, ObjectFormKeyDefaultsToTrue) {
  auto r = load_text(R"(version: 1
network:
  allow:
    - example.com
    - {host: api.example.com, ports: [443]}
    - {host: git.example.com, ports: [22], inspect: false}
    - {host: "db.example.com:5432", inspect: false}
    - {host: 192.0.2.0/24, inspect: true}
)");
  ASSERT_TRUE(r.ok()) << policy::format_diagnostics(r.errors);
  const auto& allow = r.policy.network.allow;
  ASSERT_EQ(5u, allow.size());
  EXPECT_TRUE(allow[0].rule.inspect);
  EXPECT_TRUE(allow[1].rule.inspect);
  EXPECT_FALSE(allow[2].rule.inspect);
  EXPECT_EQ("git.example.com:22", allow[2].rule.text);
  EXPECT_FALSE(allow[3].rule.inspect);  // the object form takes host:port when it has no ports list
  EXPECT_EQ(std::vector<uint16_t>{5432}, allow[3].rule.ports);
  EXPECT_TRUE(allow[4].rule.inspect);
  EXPECT_EQ(HostRule::Kind::ip_cidr, allow[4].rule.kind);
}

TEST(Inspect, ErrorsNameTheLine) {
  EXPECT_EQ("test.yaml:3:43: network.deny[0].inspect: `inspect` only applies to allow rules (a denied destination "
            "is refused before any byte moves)",
            errors_of("version: 1\nnetwork:\n  deny: [{host: bad.example.com, inspect: false}]\n"));
  EXPECT_EQ("test.yaml:3:44: network.allow[0].inspect: expected true or false, found `maybe`",
            errors_of("version: 1\nnetwork:\n  allow: [{host: api.example.com, inspect: maybe}]\n"));
  EXPECT_EQ("test.yaml:3:33: network.allow[0].inspeckt: unknown key `inspeckt` (did you mean `inspect`?)",
            errors_of("version: 1\nnetwork:\n  allow: [{host: a.example.com, inspeckt: false}]\n"));
  EXPECT_EQ("test.yaml:3:11: network.allow[0].host: host rule `a.example.com:22`: with a `ports:` list the host "
            "takes no `:port`",
            errors_of("version: 1\nnetwork:\n  allow: [{host: \"a.example.com:22\", ports: [22]}]\n"));
}

TEST(Inspect, ExtendsCanAddAnUninspectedGrant) {
  TempDir dir;
  dir.write("base.yaml", "version: 1\nnetwork:\n  allow: [git.example.com]\n");
  std::string child = dir.write("child.yaml", "version: 1\nextends: base.yaml\nnetwork:\n"
                                               "  allow: [{host: git.example.com, ports: [22], inspect: false}]\n");
  auto loaded = policy::load_policy_file(child);
  ASSERT_TRUE(loaded.ok()) << policy::format_diagnostics(loaded.errors);
  auto spec = policy::compile(loaded.policy, socket_context());
  ASSERT_TRUE(spec.is_ok()) << spec.status().message();
  ASSERT_EQ(2u, spec->network.allow.size());
  NetDecision ssh = decide(spec->network, "git.example.com", 22);
  EXPECT_EQ(NetDecision::Verdict::allow, ssh.verdict);
  EXPECT_FALSE(ssh.inspect);
  EXPECT_EQ("allow git.example.com:22", ssh.rule);
  NetDecision https = decide(spec->network, "git.example.com", 443);  // only the inherited rule covers 443
  EXPECT_TRUE(https.inspect);
  EXPECT_EQ("allow git.example.com", https.rule);
}

TEST(Inspect, ExplainShowsTheTradeOffPerRule) {
  std::string e = explained(R"(version: 1
network:
  allow:
    - example.com
    - {host: git.example.com, ports: [22], inspect: false}
    - {host: 192.0.2.0/24, ports: [443]}
)");
  EXPECT_TRUE(contains(e, "  Allowed, inspected: example.com on any port. For these, the first bytes of each "
                          "connection must be a TLS ClientHello naming the host (SNI) or an HTTP/1.x request whose "
                          "Host header names it; anything else (another protocol, TLS without a server name) is "
                          "closed before a byte is forwarded.\n"))
      << e;
  EXPECT_TRUE(contains(e, "  Allowed, inspected: 192.0.2.0/24 on port 443. For these, an IP destination has no name "
                          "to compare: TLS passes only without a server name, HTTP only with the address as its Host"))
      << e;
  EXPECT_TRUE(contains(e, "  Allowed without inspection (inspect: false): git.example.com on port 22. For these, any "
                          "protocol passes (ssh, databases, ...), and a program that ignores the proxy gets a socket "
                          "connected by the supervisor, kernel to kernel, without a copy;"))
      << e;
  e = explained("version: 1\nnetwork:\n  allow_all: true\n  allow: [{host: db.example.com, inspect: false}]\n");
  EXPECT_TRUE(contains(e, "  Every public destination is allowed, inspected: the first bytes")) << e;
  EXPECT_TRUE(contains(e, "  Allowed without inspection (inspect: false): db.example.com on any port.")) << e;
}

TEST(Inspect, DiffShowsARuleThatLostItsInspection) {
  SandboxSpec a = compiled_with_sockets("version: 1\nnetwork:\n  allow: [git.example.com:22, example.com]\n");
  SandboxSpec b = compiled_with_sockets("version: 1\nnetwork:\n  allow: [{host: git.example.com:22, inspect: false}, "
                           "{host: new.example.com, inspect: false}, example.com]\n");
  auto d = policy::diff_specs(a, b);
  EXPECT_EQ("network: allow git.example.com:22 without inspection (the other inspects it)\n"
            "network: allow new.example.com without inspection\n",
            lines(d.only_b));
  EXPECT_TRUE(d.only_a.empty()) << lines(d.only_a);
  auto reverse = policy::diff_specs(b, a);
  EXPECT_TRUE(reverse.only_b.empty()) << lines(reverse.only_b);
  EXPECT_EQ(2u, reverse.only_a.size());
}

// --- protocol: udp ------------------------------------------------------------------------------------------------

TEST(Udp, ProtocolKeyDefaultsToTcp) {
  auto r = load_text(R"(version: 1
network:
  allow:
    - {host: api.example.com, ports: [443]}
    - {host: ntp.example.com, ports: [123], protocol: udp}
    - {host: "quic.example.com:443", protocol: udp}
    - {host: git.example.com, ports: [22], protocol: tcp, inspect: false}
)");
  ASSERT_TRUE(r.ok()) << policy::format_diagnostics(r.errors);
  const auto& allow = r.policy.network.allow;
  ASSERT_EQ(4u, allow.size());
  EXPECT_EQ(HostRule::Protocol::tcp, allow[0].rule.protocol);
  EXPECT_EQ(HostRule::Protocol::udp, allow[1].rule.protocol);
  EXPECT_EQ(std::vector<uint16_t>{123}, allow[1].rule.ports);
  EXPECT_EQ(HostRule::Protocol::udp, allow[2].rule.protocol);  // the host's own :port counts as its port list
  EXPECT_EQ(std::vector<uint16_t>{443}, allow[2].rule.ports);
  EXPECT_EQ(HostRule::Protocol::tcp, allow[3].rule.protocol);
  EXPECT_FALSE(allow[3].rule.inspect);
}

TEST(Udp, ErrorsNameTheLineAndSayWhy) {
  EXPECT_EQ("test.yaml:3:45: network.allow[0].ports: a udp rule must list its ports: datagrams go only to a host "
            "and port the policy names ({host: ntp.example, ports: [123], protocol: udp})",
            errors_of("version: 1\nnetwork:\n  allow: [{host: ntp.example.com, protocol: udp}]\n"));
  EXPECT_EQ("test.yaml:3:11: network.allow[0].inspect: `inspect` has no meaning for a udp rule (datagrams are "
            "relayed as they are; remove `inspect`)",
            errors_of("version: 1\nnetwork:\n  allow: [{host: ntp.example.com, ports: [123], protocol: udp, "
                      "inspect: false}]\n"));
  EXPECT_EQ("test.yaml:3:59: network.allow[0].protocol: unknown protocol `sctp` (tcp or udp)",
            errors_of("version: 1\nnetwork:\n  allow: [{host: ntp.example.com, ports: [123], protocol: sctp}]\n"));
  EXPECT_EQ("test.yaml:3:57: network.deny[0].protocol: `protocol` only applies to allow rules (a deny rule refuses "
            "every protocol)",
            errors_of("version: 1\nnetwork:\n  deny: [{host: bad.example.com, ports: [53], protocol: udp}]\n"));
}

TEST(Udp, DecideKeepsTheProtocolsApart) {
  SandboxSpec spec = compiled_with_sockets(R"(version: 1
network:
  allow:
    - {host: ntp.example.com, ports: [123], protocol: udp}
    - {host: web.example.com, ports: [443]}
    - {host: both.example.com, ports: [443], protocol: udp}
    - {host: both.example.com, ports: [443]}
  deny: [{host: both.example.com, ports: [444]}]
)");
  const auto& net = spec.network;
  using P = HostRule::Protocol;
  NetDecision ntp = decide(net, "ntp.example.com", 123, P::udp);
  EXPECT_EQ(NetDecision::Verdict::allow, ntp.verdict);
  EXPECT_EQ("allow udp ntp.example.com:123", ntp.rule);
  // The neighbours: another port; the same port over TCP; a tcp rule's host over UDP.
  EXPECT_EQ(NetDecision::Verdict::deny, decide(net, "ntp.example.com", 124, P::udp).verdict);
  EXPECT_EQ(NetDecision::Verdict::deny, decide(net, "ntp.example.com", 123, P::tcp).verdict);
  EXPECT_EQ(NetDecision::Verdict::deny, decide(net, "ntp.example.com", 123).verdict);  // tcp by default
  NetDecision web_udp = decide(net, "web.example.com", 443, P::udp);
  EXPECT_EQ(NetDecision::Verdict::deny, web_udp.verdict);
  EXPECT_EQ("udp: no udp rule allows it", web_udp.rule);
  EXPECT_EQ(NetDecision::Verdict::allow, decide(net, "web.example.com", 443, P::tcp).verdict);
  EXPECT_EQ("allow udp both.example.com:443", decide(net, "both.example.com", 443, P::udp).rule);
  EXPECT_EQ("allow both.example.com:443", decide(net, "both.example.com", 443, P::tcp).rule);
  // The DNS stub answers a name that only a udp rule allows.
  EXPECT_EQ(NetDecision::Verdict::allow, decide_name(net, "ntp.example.com").verdict);
  EXPECT_EQ(NetDecision::Verdict::deny, decide_name(net, "other.example.com").verdict);
}

TEST(Udp, AllowAllAndAskDoNotCoverUdp) {
  SandboxSpec all = compiled_with_sockets("version: 1\nnetwork:\n  allow_all: true\n");
  EXPECT_EQ(NetDecision::Verdict::allow, decide(all.network, "ntp.example.com", 123).verdict);
  EXPECT_EQ(NetDecision::Verdict::deny, decide(all.network, "ntp.example.com", 123, HostRule::Protocol::udp).verdict);
  SandboxSpec ask = compiled_with_sockets("version: 1\nnetwork:\n  on_unlisted: ask\n");
  EXPECT_EQ(NetDecision::Verdict::ask, decide(ask.network, "ntp.example.com", 123).verdict);
  EXPECT_EQ(NetDecision::Verdict::deny, decide(ask.network, "ntp.example.com", 123, HostRule::Protocol::udp).verdict);
}

TEST(Udp, ExplainSaysHowDatagramsGo) {
  std::string e = explained(R"(version: 1
network:
  allow:
    - {host: ntp.example.com, ports: [123], protocol: udp}
    - example.com:443
)");
  EXPECT_TRUE(contains(e, "  UDP allowed (protocol: udp): ntp.example.com on port 123. For these, datagrams go "
                          "through the supervisor's datagram relay, copied one by one to the checked address"))
      << e;
  EXPECT_TRUE(contains(e, "only a connected socket gets out (connect(2), then send): sendto(2) with an address "
                          "outside is unreachable.\n"))
      << e;
  EXPECT_TRUE(contains(e, "  Allowed, inspected: example.com on port 443.")) << e;  // not among the UDP ones
  EXPECT_TRUE(contains(e, "  Other UDP is refused (unreachable, with an event), except DNS questions to the stub.\n"))
      << e;
  e = explained("version: 1\nnetwork:\n  allow_all: true\n");
  EXPECT_TRUE(contains(e, "except DNS questions to the stub; allow_all does not cover UDP.\n")) << e;
}

TEST(Udp, DiffShowsAUdpGrantApartFromTcp) {
  SandboxSpec a = compiled_with_sockets("version: 1\nnetwork:\n  allow: [ntp.example.com:123]\n");
  SandboxSpec b = compiled_with_sockets("version: 1\nnetwork:\n  allow: [ntp.example.com:123, "
                           "{host: ntp.example.com, ports: [123], protocol: udp}]\n");
  auto d = policy::diff_specs(a, b);
  EXPECT_EQ("network: allow udp ntp.example.com:123\n", lines(d.only_b));
  EXPECT_TRUE(d.only_a.empty()) << lines(d.only_a);
  auto reverse = policy::diff_specs(b, a);
  EXPECT_EQ("network: allow udp ntp.example.com:123\n", lines(reverse.only_a));
}

TEST(Udp, JsonRoundTripAndSchema) {
  SandboxSpec spec = compiled_with_sockets(R"(version: 1
network:
  allow: [example.com, {host: ntp.example.com, ports: [123, 4123], protocol: udp}]
)");
  auto json = spec_to_json(spec);
  EXPECT_EQ("tcp", json["network"]["allow"][0]["protocol"]);
  EXPECT_EQ("udp", json["network"]["allow"][1]["protocol"]);
  auto back = spec_from_json(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(spec.network.allow, back->network.allow);  // HostRule equality covers protocol
  auto bad = nlohmann::json::parse(json.dump());
  bad["network"]["allow"][1]["protocol"] = "sctp";
  auto refused = spec_from_json(bad);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ("spec.network.allow: unknown protocol `sctp`", refused.status().message());
  auto schema = policy::policy_schema();
  const auto& object_rule = schema["properties"]["network"]["properties"]["allow"]["items"]["oneOf"][1];
  EXPECT_EQ(nlohmann::ordered_json({"tcp", "udp"}), object_rule["properties"]["protocol"]["enum"]);
  EXPECT_EQ("tcp", object_rule["properties"]["protocol"]["default"]);
}

// --- the compiled form and the schema -------------------------------------------------------------------------

TEST(NetworkJson, UnixSocketsAndInspectRoundTrip) {
  SandboxSpec spec = compiled_with_sockets(R"(version: 1
network:
  allow: [example.com, {host: git.example.com, ports: [22, 2222], inspect: false}, "[::1]:8080"]
  deny: [bad.example.com]
  unix: [/run/user/1000/bus, $WORKSPACE/dev.sock]
)");
  auto json = spec_to_json(spec);
  EXPECT_EQ(nlohmann::ordered_json({"/run/user/1000/bus", "/home/user/project/dev.sock"}),
            json["network"]["unix_sockets"]);
  EXPECT_EQ(true, json["network"]["allow"][0]["inspect"]);
  EXPECT_EQ(false, json["network"]["allow"][1]["inspect"]);
  EXPECT_EQ(true, json["network"]["deny"][0]["inspect"]);
  auto back = spec_from_json(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(spec.network.unix_sockets, back->network.unix_sockets);
  EXPECT_EQ(spec.network.allow, back->network.allow);  // HostRule equality covers inspect
  EXPECT_EQ(json.dump(), spec_to_json(*back).dump());

  auto relative = nlohmann::json::parse(json.dump());
  relative["network"]["unix_sockets"][0] = "run/bus";
  auto refused = spec_from_json(relative);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ("spec.network.unix_sockets: `run/bus` is not an absolute path", refused.status().message());
  auto missing = nlohmann::json::parse(json.dump());
  missing["network"]["allow"][1].erase("inspect");
  auto no_inspect = spec_from_json(missing);
  ASSERT_FALSE(no_inspect.is_ok());
  EXPECT_EQ("spec.network.rule.inspect: missing", no_inspect.status().message());
}

TEST(NetworkSchema, DescribesUnixAndInspect) {
  auto schema = policy::policy_schema();
  const auto& network = schema["properties"]["network"]["properties"];
  EXPECT_EQ("array", network["unix"]["type"]);
  EXPECT_EQ("string", network["unix"]["items"]["type"]);
  const auto& object_rule = network["allow"]["items"]["oneOf"][1];
  EXPECT_EQ("boolean", object_rule["properties"]["inspect"]["type"]);
  EXPECT_EQ(true, object_rule["properties"]["inspect"]["default"]);
}

}  // namespace
}  // namespace oishell::testing
