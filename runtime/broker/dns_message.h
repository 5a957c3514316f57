#pragma once
// DNS messages as the sandbox's stub needs them (RFC 1035, EDNS(0) RFC 6891): read one query, build its answer.
// Pure functions on byte buffers: no syscalls, no policy. Reading never goes past the buffer; every malformed
// input is a result, not a crash (tests/broker fuzz it).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/net_rules.h"

namespace oishell::broker::dns {

enum class Rcode : uint16_t {
  noerror = 0,
  formerr = 1,
  servfail = 2,
  nxdomain = 3,
  notimp = 4,
  refused = 5,
  badvers = 16,  // extended (RFC 6891): only with an OPT record
};

namespace rrtype {
constexpr uint16_t a = 1;
constexpr uint16_t cname = 5;
constexpr uint16_t ptr = 12;
constexpr uint16_t mx = 15;
constexpr uint16_t txt = 16;
constexpr uint16_t aaaa = 28;
constexpr uint16_t srv = 33;
constexpr uint16_t opt = 41;
constexpr uint16_t any = 255;
}  // namespace rrtype
constexpr uint16_t kClassIn = 1;

constexpr size_t kHeaderSize = 12;
constexpr size_t kClassicUdpSize = 512;  // without EDNS
constexpr uint16_t kEdnsUdpSize = 1232;  // what the stub advertises and the most it sends over UDP (DNS flag day 2020)
constexpr size_t kMaxTcpMessage = 65535;

struct Query {
  uint16_t id = 0;
  uint8_t opcode = 0;
  bool recursion_desired = false;
  bool checking_disabled = false;
  std::string name;               // the question's name as text, case kept, no trailing dot ("" = the root)
  std::vector<uint8_t> question;  // QNAME QTYPE QCLASS exactly as sent: echoed in the answer (0x20 case games)
  uint16_t type = 0;
  uint16_t klass = 0;
  bool edns = false;              // an OPT record came with it
  uint8_t edns_version = 0;
  uint16_t udp_payload = kClassicUdpSize;  // the client's advertised UDP size, at least 512
};

enum class ParseOutcome {
  query,            // one well-formed question: answer it
  ignore,           // not a query at all (shorter than a header, or a response): no answer
  format_error,     // answer FORMERR (id and flags of the query are set; the question may be empty)
  not_implemented,  // an opcode other than QUERY: answer NOTIMP (id and flags set)
};

struct Parsed {
  ParseOutcome outcome = ParseOutcome::ignore;
  Query query;
};

// One message received by the stub. A query has QR clear, opcode QUERY, exactly one question whose name has no
// compression pointer, labels of 1..63 bytes of printable ASCII other than '.' (at most 255 bytes on the wire), and
// records in the other sections that are well-formed (the one OPT among them is read; others are skipped); nothing
// may follow the last record. Names are not checked against host-name syntax here (the stub does that).
Parsed parse_query(std::span<const uint8_t> message);

// An answer record; its owner is always the question's name (a compression pointer to it).
struct Record {
  uint16_t type = 0;
  uint32_t ttl = 0;
  std::vector<uint8_t> rdata;
};
Record address_record(const IpAddress& address, uint32_t ttl);  // A (v4) or AAAA (v6)
// PTR whose target is `name` (a valid host name: dotted labels of 1..63 bytes, at most 253 characters).
Record ptr_record(std::string_view name, uint32_t ttl);

// The most the stub sends in one message: over TCP 65535; over UDP 512, or with EDNS the client's size capped
// at kEdnsUdpSize.
size_t max_response_size(const Query& query, bool tcp);

// The answer to `query` (its id, opcode, RD and CD echoed; RA set; AA clear): the question when the query had one,
// `answers`, and an OPT record (UDP size kEdnsUdpSize, version 0) when the query had one. An answer longer than
// `max_size` is sent truncated instead: no records, TC set, so that the client asks again over TCP.
// An extended rcode (badvers) needs the OPT record: without one it is sent as SERVFAIL.
std::vector<uint8_t> build_response(const Query& query, Rcode rcode, const std::vector<Record>& answers,
                                    size_t max_size);

// "4.3.2.1.in-addr.arpa" -> 1.2.3.4; "b.a.9.8....ip6.arpa" (32 nibbles) -> the IPv6 address. Lower-case input;
// anything else (a partial reverse name, leading zeros, upper-case hex) -> nullopt.
std::optional<IpAddress> parse_reverse_name(std::string_view name);
// The reverse of parse_reverse_name(): the in-addr.arpa / ip6.arpa name of `address`.
std::string reverse_name(const IpAddress& address);

}  // namespace oishell::broker::dns
