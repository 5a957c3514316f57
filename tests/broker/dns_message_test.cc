// DNS messages: what parse_query() accepts and refuses (every outcome), what build_response() writes (every rcode,
// A, AAAA, PTR, EDNS, truncation), reverse names, and random or truncated input that must never be read past.
#include "runtime/broker/dns_message.h"

#include <gtest/gtest.h>

#include <random>

#include "dns_test_util.h"

namespace oishell::broker {
namespace {

using namespace testing;
using dns::ParseOutcome;
using dns::Rcode;

dns::Parsed parse(const std::vector<uint8_t>& m) { return dns::parse_query(std::span<const uint8_t>(m)); }

TEST(DnsMessage, ReadsAQuery) {
  auto parsed = parse(make_query({.id = 0xbeef, .name = "Example.COM", .type = dns::rrtype::aaaa}));
  ASSERT_EQ(ParseOutcome::query, parsed.outcome);
  EXPECT_EQ(0xbeef, parsed.query.id);
  EXPECT_EQ("Example.COM", parsed.query.name);  // case kept: normalised by the stub, echoed as sent
  EXPECT_EQ(dns::rrtype::aaaa, parsed.query.type);
  EXPECT_EQ(dns::kClassIn, parsed.query.klass);
  EXPECT_TRUE(parsed.query.recursion_desired);
  EXPECT_FALSE(parsed.query.edns);
  EXPECT_EQ(dns::kClassicUdpSize, parsed.query.udp_payload);
  EXPECT_EQ(encode_name("Example.COM").size() + 4, parsed.query.question.size());
}

TEST(DnsMessage, ReadsEdns) {
  auto parsed = parse(make_query({.name = "a.example", .edns = true, .edns_size = 4096}));
  ASSERT_EQ(ParseOutcome::query, parsed.outcome);
  EXPECT_TRUE(parsed.query.edns);
  EXPECT_EQ(4096, parsed.query.udp_payload);
  EXPECT_EQ(dns::kEdnsUdpSize, dns::max_response_size(parsed.query, false));  // capped
  auto small = parse(make_query({.name = "a.example", .edns = true, .edns_size = 100}));
  EXPECT_EQ(dns::kClassicUdpSize, small.query.udp_payload);  // below 512 counts as 512 (RFC 6891 6.2.5)
  auto v1 = parse(make_query({.name = "a.example", .edns = true, .edns_version = 1}));
  ASSERT_EQ(ParseOutcome::query, v1.outcome);
  EXPECT_EQ(1, v1.query.edns_version);
  EXPECT_EQ(dns::kMaxTcpMessage, dns::max_response_size(v1.query, true));
}

TEST(DnsMessage, IgnoresWhatIsNotAQuery) {
  EXPECT_EQ(ParseOutcome::ignore, parse({}).outcome);
  EXPECT_EQ(ParseOutcome::ignore, parse({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}).outcome);  // shorter than a header
  auto response = make_query({.name = "a.example"});
  response[2] |= 0x80;  // QR: a response is never answered
  EXPECT_EQ(ParseOutcome::ignore, parse(response).outcome);
}

TEST(DnsMessage, OtherOpcodesAreNotImplemented) {
  auto parsed = parse(make_query({.id = 7, .name = "a.example", .opcode = 5}));  // UPDATE
  EXPECT_EQ(ParseOutcome::not_implemented, parsed.outcome);
  EXPECT_EQ(7, parsed.query.id);
  EXPECT_EQ(5, parsed.query.opcode);
}

TEST(DnsMessage, MalformedQueriesAreFormatErrors) {
  auto base = make_query({.id = 9, .name = "a.example"});
  auto expect_formerr = [](std::vector<uint8_t> m, const char* what) {
    auto parsed = parse(m);
    EXPECT_EQ(ParseOutcome::format_error, parsed.outcome) << what;
    EXPECT_EQ(9, parsed.query.id) << what;
  };
  {
    auto m = base;
    m[5] = 2;  // QDCOUNT 2
    expect_formerr(m, "two questions");
  }
  {
    auto m = base;
    m[5] = 0;
    expect_formerr(m, "no question");
  }
  {
    auto m = base;
    m.pop_back();
    expect_formerr(m, "truncated class");
  }
  {
    auto m = base;
    m.push_back(0);
    expect_formerr(m, "trailing byte");
  }
  {
    auto m = base;
    m[12] = 0xc0;  // a compression pointer in the question
    m[13] = 0x0c;
    expect_formerr(m, "pointer");
  }
  {
    auto m = base;
    m[12] = 0x40;  // reserved label type
    expect_formerr(m, "label type");
  }
  {
    auto m = base;
    m[13] = '.';  // "a" -> "."
    expect_formerr(m, "dot in a label");
  }
  {
    auto m = base;
    m[13] = 0;
    expect_formerr(m, "NUL in a label");
  }
  {
    QuerySpec spec{.id = 9};
    for (int i = 0; i < 5; ++i) spec.name += std::string(i ? "." : "") + std::string(60, 'a');  // 305 bytes
    expect_formerr(make_query(spec), "name longer than 255 bytes");
  }
  {
    auto m = base;
    m[11] = 1;  // ARCOUNT 1 with nothing there
    expect_formerr(m, "missing additional record");
  }
  {
    auto m = make_query({.id = 9, .name = "a.example", .edns = true});
    auto opt = std::vector<uint8_t>(m.end() - 11, m.end());
    m.insert(m.end(), opt.begin(), opt.end());
    m[11] = 2;
    expect_formerr(m, "two OPT records");
  }
  {
    auto m = make_query({.id = 9, .name = "a.example", .edns = true});
    m[m.size() - 11] = 0xc0;  // OPT owned by a name (a pointer to the question) instead of the root
    m.insert(m.end() - 10, 0x0c);
    expect_formerr(m, "OPT not at the root");
  }
  {
    auto m = make_query({.id = 9, .name = "a.example", .edns = true});
    m[7] = 1;  // the OPT counted as an answer
    m[11] = 0;
    expect_formerr(m, "OPT in the answer section");
  }
}

TEST(DnsMessage, SkipsOtherRecords) {
  auto m = make_query({.name = "a.example"});
  m[11] = 1;  // an additional TXT record owned by a pointer to the question
  std::vector<uint8_t> rr = {0xc0, 0x0c, 0, 16, 0, 1, 0, 0, 0, 0, 0, 3, 2, 'h', 'i'};
  m.insert(m.end(), rr.begin(), rr.end());
  EXPECT_EQ(ParseOutcome::query, parse(m).outcome);
  m.back() = 0;
  m.pop_back();  // rdata shorter than its length
  EXPECT_EQ(ParseOutcome::format_error, parse(m).outcome);
}

TEST(DnsMessage, BuildsAddressAnswers) {
  auto q = parse(make_query({.id = 42, .name = "Mixed.Case.example"})).query;
  auto bytes = dns::build_response(q, Rcode::noerror, {dns::address_record(ip("198.18.0.7"), 60)}, 512);
  auto r = parse_response(bytes);
  ASSERT_TRUE(r);
  EXPECT_EQ(42, r->id);
  EXPECT_TRUE(r->qr());
  EXPECT_TRUE(r->rd());
  EXPECT_TRUE(r->ra());
  EXPECT_FALSE(r->tc());
  EXPECT_EQ(0, r->rcode);
  EXPECT_EQ(1, r->qdcount);
  EXPECT_EQ(q.question, r->question);  // echoed byte for byte, case included
  ASSERT_EQ(1u, r->answers.size());
  EXPECT_EQ(60u, r->answers[0].ttl);
  EXPECT_EQ("198.18.0.7", r->address());
  EXPECT_FALSE(r->has_opt);

  auto q6 = parse(make_query({.name = "a.example", .type = dns::rrtype::aaaa})).query;
  auto r6 = parse_response(dns::build_response(q6, Rcode::noerror, {dns::address_record(ip("fd6f:6973:6865:6c6c::c612:7"), 60)}, 512));
  ASSERT_TRUE(r6);
  EXPECT_EQ(dns::rrtype::aaaa, r6->answers.at(0).type);
  EXPECT_EQ("fd6f:6973:6865:6c6c::c612:7", r6->address());
}

TEST(DnsMessage, BuildsEveryRcode) {
  auto q = parse(make_query({.name = "a.example"})).query;
  for (Rcode rcode : {Rcode::noerror, Rcode::formerr, Rcode::servfail, Rcode::nxdomain, Rcode::notimp, Rcode::refused}) {
    auto r = parse_response(dns::build_response(q, rcode, {}, 512));
    ASSERT_TRUE(r);
    EXPECT_EQ(static_cast<int>(rcode), r->rcode);
    EXPECT_TRUE(r->answers.empty());
    EXPECT_EQ(1, r->qdcount);
  }
  // BADVERS lives in the OPT record's extended bits; without one it cannot be said: SERVFAIL.
  auto edns = parse(make_query({.name = "a.example", .edns = true, .edns_version = 1})).query;
  auto bad = parse_response(dns::build_response(edns, Rcode::badvers, {}, 512));
  ASSERT_TRUE(bad);
  EXPECT_EQ(16, bad->rcode);
  EXPECT_TRUE(bad->has_opt);
  auto plain = parse_response(dns::build_response(q, Rcode::badvers, {}, 512));
  EXPECT_EQ(2, plain->rcode);
}

TEST(DnsMessage, FormatErrorWithoutAQuestion) {
  auto m = make_query({.id = 77, .name = "a.example"});
  m[5] = 3;
  auto parsed = parse(m);
  ASSERT_EQ(ParseOutcome::format_error, parsed.outcome);
  auto r = parse_response(dns::build_response(parsed.query, Rcode::formerr, {}, 512));
  ASSERT_TRUE(r);
  EXPECT_EQ(77, r->id);
  EXPECT_EQ(1, r->rcode);
  EXPECT_EQ(0, r->qdcount);
}

TEST(DnsMessage, EchoesEdns) {
  auto q = parse(make_query({.name = "a.example", .edns = true, .edns_size = 4096})).query;
  auto r = parse_response(dns::build_response(q, Rcode::noerror, {dns::address_record(ip("198.18.0.1"), 60)}, 1232));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->has_opt);
  EXPECT_EQ(dns::kEdnsUdpSize, r->opt_udp_size);
  EXPECT_EQ("198.18.0.1", r->address());
}

TEST(DnsMessage, TruncatesWhatDoesNotFit) {
  auto q = parse(make_query({.name = "a.example"})).query;
  std::vector<dns::Record> many;
  for (int i = 0; i < 40; ++i) many.push_back(dns::address_record(ip("198.18.0.1"), 60));  // 40 x 16 bytes
  auto r = parse_response(dns::build_response(q, Rcode::noerror, many, 512));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->tc());
  EXPECT_TRUE(r->answers.empty());
  EXPECT_EQ(1, r->qdcount);
  auto tcp = parse_response(dns::build_response(q, Rcode::noerror, many, dns::kMaxTcpMessage));
  EXPECT_FALSE(tcp->tc());
  EXPECT_EQ(40u, tcp->answers.size());
}

TEST(DnsMessage, PtrRecords) {
  auto q = parse(make_query({.name = "1.0.18.198.in-addr.arpa", .type = dns::rrtype::ptr})).query;
  auto r = parse_response(dns::build_response(q, Rcode::noerror, {dns::ptr_record("allowed.example", 60)}, 512));
  ASSERT_TRUE(r);
  ASSERT_EQ(1u, r->answers.size());
  EXPECT_EQ(dns::rrtype::ptr, r->answers[0].type);
  EXPECT_EQ("allowed.example", r->answers[0].ptr_name);
}

TEST(DnsMessage, ReverseNames) {
  EXPECT_EQ(ip("198.18.0.1"), dns::parse_reverse_name("1.0.18.198.in-addr.arpa"));
  EXPECT_EQ("1.0.18.198.in-addr.arpa", dns::reverse_name(ip("198.18.0.1")));
  const IpAddress v6 = ip("fd6f:6973:6865:6c6c::c612:1");
  EXPECT_EQ("1.0.0.0.2.1.6.c.0.0.0.0.0.0.0.0.c.6.c.6.5.6.8.6.3.7.9.6.f.6.d.f.ip6.arpa", dns::reverse_name(v6));
  EXPECT_EQ(v6, dns::parse_reverse_name(dns::reverse_name(v6)));
  for (const char* bad : {"0.18.198.in-addr.arpa", "1.1.0.18.198.in-addr.arpa", "01.0.18.198.in-addr.arpa",
                          "256.0.18.198.in-addr.arpa", "a.0.18.198.in-addr.arpa", "in-addr.arpa", "example.com",
                          "1.0.0.ip6.arpa", "g.0.0.0.2.1.6.c.0.0.0.0.0.0.0.0.c.6.c.6.5.6.8.6.3.7.9.6.f.6.d.f.ip6.arpa",
                          "10.0.0.2.1.6.c.0.0.0.0.0.0.0.0.c.6.c.6.5.6.8.6.3.7.9.6.f.6.d.f.ip6.arpa"}) {
    EXPECT_FALSE(dns::parse_reverse_name(bad)) << bad;
  }
}

// Random bytes, random mutations of good queries, and every prefix of them: parse_query() must classify each
// without reading past it (the ASan build catches an overread), and a `query` outcome must rebuild into a
// response that parses.
TEST(DnsMessage, FuzzedInputIsClassifiedNeverOverread) {
  std::mt19937 rng(20261202);
  std::vector<std::vector<uint8_t>> seeds = {
      make_query({.name = "a.example"}),
      make_query({.name = "www.example.org", .type = dns::rrtype::aaaa, .edns = true}),
      make_query({.name = "1.0.18.198.in-addr.arpa", .type = dns::rrtype::ptr}),
  };
  int queries = 0;
  auto check = [&](const std::vector<uint8_t>& input) {
    // A copy of exactly the input's size on the heap: any read past it is an ASan error.
    std::unique_ptr<uint8_t[]> exact(new uint8_t[input.size() + (input.empty() ? 1 : 0)]);
    std::copy(input.begin(), input.end(), exact.get());
    auto parsed = dns::parse_query(std::span<const uint8_t>(exact.get(), input.size()));
    if (parsed.outcome == ParseOutcome::query) {
      ++queries;
      auto r = parse_response(dns::build_response(parsed.query, Rcode::noerror, {}, 512));
      ASSERT_TRUE(r);
      EXPECT_EQ(parsed.query.question, r->question);
    }
  };
  for (int round = 0; round < 20000; ++round) {
    std::vector<uint8_t> input;
    if (round % 4 == 0) {
      input.resize(rng() % 64);
      for (auto& b : input) b = static_cast<uint8_t>(rng());
    } else {
      input = seeds[rng() % seeds.size()];
      int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) input[rng() % input.size()] = static_cast<uint8_t>(rng());
    }
    check(input);
  }
  for (const auto& seed : seeds) {
    for (size_t n = 0; n <= seed.size(); ++n) check(std::vector<uint8_t>(seed.begin(), seed.begin() + static_cast<long>(n)));
  }
  EXPECT_GT(queries, 0);  // some mutations stay queries (a changed id, type or letter)
}

}  // namespace
}  // namespace oishell::broker
