#pragma once
// DNS messages for the broker tests: queries built by hand (so that tests can break them on purpose) and a reader
// for the stub's answers that checks every length it follows.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/net_rules.h"

namespace oishell::broker::testing {

// An address from its text form (a literal the test knows is valid).
inline IpAddress ip(const char* text) { return *IpAddress::parse(text); }

struct QuerySpec {
  uint16_t id = 0x1234;
  std::string name;
  uint16_t type = 1;
  uint16_t klass = 1;
  uint8_t opcode = 0;
  bool rd = true;
  bool edns = false;
  uint16_t edns_size = 1232;
  uint8_t edns_version = 0;
};
std::vector<uint8_t> make_query(const QuerySpec& spec);
// Wire form of a dotted name ("" = the root).
std::vector<uint8_t> encode_name(const std::string& name);

struct Answer {
  uint16_t type = 0;
  uint32_t ttl = 0;
  std::vector<uint8_t> rdata;
  std::string ptr_name;  // PTR: the target, dotted
};

struct Response {
  uint16_t id = 0;
  uint16_t flags = 0;
  int rcode = -1;  // with the OPT record's extended bits
  uint16_t qdcount = 0;
  std::vector<uint8_t> question;
  std::vector<Answer> answers;
  bool has_opt = false;
  uint16_t opt_udp_size = 0;
  bool qr() const { return flags & 0x8000; }
  bool tc() const { return flags & 0x0200; }
  bool rd() const { return flags & 0x0100; }
  bool ra() const { return flags & 0x0080; }
  // The single A/AAAA answer as text ("198.18.0.1"), or "" when there is not exactly one.
  std::string address() const;
};
// Empty when the message is not a well-formed response.
std::optional<Response> parse_response(const std::vector<uint8_t>& message);

}  // namespace oishell::broker::testing
