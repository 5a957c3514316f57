// The supervisor <-> init messages (runtime/control_protocol.h) and the policy part init receives
// (runtime/init_spec_codec.h). Runtime unit tests: they live in this binary because this is the one that links the
// runtime. Every field survives the trip byte for byte; a message that is not what it claims is refused with where
// it broke, never half-read.
#include <string>

#include <gtest/gtest.h>

#include "runtime/control_protocol.h"
#include "runtime/init_spec_codec.h"

namespace oishell::test {
namespace {

TEST(ControlProtocol, EveryFieldSurvivesExactly) {
  control::ControlMessage m{control::Kind::spawn};
  m.id = 0x0123456789abcdefULL;
  m.number = -5;
  m.argv = {"python3", "-c", std::string("print('\0x')", 11), ""};  // NUL inside, an empty argument
  m.env = {"A=quote \" and \\ backslash", "B=\xff\xfe not UTF-8"};
  m.strings = {"7 4096 4096"};
  m.cwd = "/work/space";
  m.step = "exec";
  m.message = "line\nbreak";
  for (int i = 0; i < 256; ++i) m.data.push_back(static_cast<char>(i));  // every byte value
  auto decoded = control::decode(control::encode(m));
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().message();
  EXPECT_EQ(decoded->kind, control::Kind::spawn);
  EXPECT_EQ(decoded->id, m.id);
  EXPECT_EQ(decoded->number, -5);
  EXPECT_EQ(decoded->argv, m.argv);
  EXPECT_EQ(decoded->env, m.env);
  EXPECT_EQ(decoded->strings, m.strings);
  EXPECT_EQ(decoded->cwd, m.cwd);
  EXPECT_EQ(decoded->step, m.step);
  EXPECT_EQ(decoded->message, m.message);
  EXPECT_EQ(decoded->data, m.data);
}

TEST(ControlProtocol, MalformedMessagesAreRefused) {
  control::ControlMessage joined{control::Kind::joined};
  joined.data = "BPF";
  const std::string good = control::encode(joined);
  ASSERT_TRUE(control::decode(good).is_ok());  // the neighbour: the same message, whole

  EXPECT_EQ(control::decode("").status().message(), "control message: empty");
  EXPECT_EQ(control::decode(std::string(1, '\x7f')).status().message(), "control message: unknown type 127");
  // Cut short in the last field, or with a byte too many.
  EXPECT_EQ(control::decode(good.substr(0, good.size() - 1)).status().message(),
            "control message `joined`: malformed at byte " + std::to_string(good.size() - 3) + " of " +
                std::to_string(good.size() - 1));
  EXPECT_EQ(control::decode(good + "x").status().message(),
            "control message `joined`: malformed at byte " + std::to_string(good.size()) + " of " +
                std::to_string(good.size() + 1));
  // A string count no packet could hold is refused before anything is allocated for it.
  std::string huge_count = good;
  huge_count.replace(13, 4, "\xff\xff\xff\x7f");  // argv's count, after kind (1), id (8) and number (4)
  EXPECT_FALSE(control::decode(huge_count).is_ok());
}

SandboxSpec init_spec_example() {
  SandboxSpec spec;
  spec.mounts = {{MountStep::Kind::bind_ro, "/usr", "/usr", false, true},
                 {MountStep::Kind::bind_rw, "/home/u/p", "/home/u/p", false, false},
                 {MountStep::Kind::symlink, "usr/bin", "/bin", false, false},
                 {MountStep::Kind::hide, "", "/home/u/p/.ssh", true, false},
                 {MountStep::Kind::file, "nameserver 127.0.0.1\n", "/etc/resolv.conf", true, false}};
  spec.limits.memory_bytes = 3ULL << 30;  // sizes the scratch tmpfs
  spec.hostname = "box";
  spec.landlock.required = false;
  spec.landlock.paths = {{"/usr", FsAccess::read_exec}, {"/dev", FsAccess::dev}};
  spec.landlock.tcp_connect_ports = {3128, 1080};
  spec.landlock.tcp_bind_ports = {8000};
  spec.landlock.scope_abstract_unix = false;
  spec.network.mode = NetMode::proxy;
  spec.network.http_proxy_port = 3129;
  spec.network.socks_proxy_port = 1081;
  spec.network.dns_port = 5353;
  // What init never needs: it must not cross.
  spec.env = {{"OPENAI_API_KEY", "sk-secret"}};
  spec.network.allow = {HostRule{}};
  spec.protected_paths = {"/home/u/p/.git/hooks"};
  return spec;
}

TEST(InitSpecCodec, CarriesWhatInitAppliesAndNothingElse) {
  const SandboxSpec spec = init_spec_example();
  const std::string bytes = encode_init_spec(spec);
  EXPECT_EQ(bytes.find("sk-secret"), std::string::npos);
  auto decoded = decode_init_spec(bytes);
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().message();
  ASSERT_EQ(decoded->mounts.size(), spec.mounts.size());
  for (size_t i = 0; i < spec.mounts.size(); ++i) {
    EXPECT_EQ(decoded->mounts[i].kind, spec.mounts[i].kind);
    EXPECT_EQ(decoded->mounts[i].source, spec.mounts[i].source);
    EXPECT_EQ(decoded->mounts[i].target, spec.mounts[i].target);
    EXPECT_EQ(decoded->mounts[i].optional, spec.mounts[i].optional);
    EXPECT_EQ(decoded->mounts[i].system, spec.mounts[i].system);
  }
  EXPECT_EQ(decoded->limits.memory_bytes, std::optional<uint64_t>(3ULL << 30));
  EXPECT_EQ(decoded->hostname, "box");
  EXPECT_FALSE(decoded->landlock.required);
  ASSERT_EQ(decoded->landlock.paths.size(), 2u);
  EXPECT_EQ(decoded->landlock.paths[1].path, "/dev");
  EXPECT_EQ(decoded->landlock.paths[1].access, FsAccess::dev);
  EXPECT_EQ(decoded->landlock.tcp_connect_ports, (std::vector<uint16_t>{3128, 1080}));
  EXPECT_EQ(decoded->landlock.tcp_bind_ports, (std::vector<uint16_t>{8000}));
  EXPECT_FALSE(decoded->landlock.scope_abstract_unix);
  EXPECT_TRUE(decoded->landlock.scope_signal);
  EXPECT_EQ(decoded->network.mode, NetMode::proxy);
  EXPECT_EQ(decoded->network.http_proxy_port, 3129);
  EXPECT_EQ(decoded->network.socks_proxy_port, 1081);
  EXPECT_EQ(decoded->network.dns_port, 5353);
  EXPECT_TRUE(decoded->env.empty());
  EXPECT_TRUE(decoded->network.allow.empty());
  EXPECT_TRUE(decoded->protected_paths.empty());
  EXPECT_FALSE(decoded->network.datagram_relay);  // the example has no udp rule
}

TEST(InitSpecCodec, AUdpRuleBecomesTheDatagramRelayFlagNotARule) {
  SandboxSpec spec = init_spec_example();
  auto rule = HostRule::parse("ntp.example", {123});
  ASSERT_TRUE(rule.is_ok());
  rule->protocol = HostRule::Protocol::udp;
  spec.network.allow.push_back(*rule);
  auto decoded = decode_init_spec(encode_init_spec(spec));
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().message();
  EXPECT_TRUE(decoded->network.datagram_relay);
  EXPECT_TRUE(decoded->network.allow.empty());
}

TEST(InitSpecCodec, MalformedBytesAreRefused) {
  const std::string bytes = encode_init_spec(init_spec_example());
  ASSERT_TRUE(decode_init_spec(bytes).is_ok());
  // Cut inside the last field (the memory limit, 8 bytes): the reader says where that field began.
  EXPECT_EQ(decode_init_spec(bytes.substr(0, bytes.size() - 1)).status().message(),
            "`spec`: malformed at byte " + std::to_string(bytes.size() - 8) + " of " +
                std::to_string(bytes.size() - 1));
  EXPECT_FALSE(decode_init_spec(bytes + std::string(1, '\0')).is_ok());
  std::string other_format = bytes;
  other_format[0] = 1;
  EXPECT_EQ(decode_init_spec(other_format).status().message(), "`spec`: format 1, expected 5");
  std::string bad_kind = bytes;
  bad_kind[8] = 99;  // the first mount step's kind, after the format (4) and the count (4)
  EXPECT_EQ(decode_init_spec(bad_kind).status().message(), "`spec`: malformed at byte 9 of " +
                                                               std::to_string(bytes.size()));
}

}  // namespace
}  // namespace oishell::test
