// The DNS stub's message codec (runtime/broker/dns_message.h): a query from the sandbox, over UDP or TCP, parsed;
// when it is one, answered with records and size limits as the stub does, and the answer must parse as a response
// (not a query: QR set) without reading past it. Reverse names are read back.
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/broker/dns_message.h"
#include "tests/fuzz/fuzz_input.h"

using namespace oishell::broker;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const dns::Parsed parsed = dns::parse_query(std::span<const uint8_t>(data, size));
  if (parsed.outcome == dns::ParseOutcome::ignore) return 0;
  const dns::Query& query = parsed.query;
  std::vector<dns::Record> answers;
  if (parsed.outcome == dns::ParseOutcome::query) {
    FUZZ_CHECK(query.name.size() <= 255);
    if (auto address = dns::parse_reverse_name(query.name)) {
      FUZZ_CHECK(dns::parse_reverse_name(dns::reverse_name(*address)).has_value());
      answers.push_back(dns::ptr_record("host.example", 60));
    }
    answers.push_back(dns::address_record(*oishell::IpAddress::parse("198.18.0.1"), 30));
    answers.push_back(dns::address_record(*oishell::IpAddress::parse("fd00::1"), 30));
  }
  const dns::Rcode rcode = parsed.outcome == dns::ParseOutcome::query           ? dns::Rcode::noerror
                           : parsed.outcome == dns::ParseOutcome::format_error  ? dns::Rcode::formerr
                                                                                : dns::Rcode::notimp;
  for (bool tcp : {false, true}) {
    const size_t max = dns::max_response_size(query, tcp);
    const std::vector<uint8_t> response = dns::build_response(query, rcode, answers, max);
    FUZZ_CHECK(response.size() <= max);
    FUZZ_CHECK(response.size() >= dns::kHeaderSize);
    FUZZ_CHECK(response[2] & 0x80);  // QR: an answer, which the stub's own parser ignores
    FUZZ_CHECK(dns::parse_query(response).outcome == dns::ParseOutcome::ignore);
  }
  return 0;
}
