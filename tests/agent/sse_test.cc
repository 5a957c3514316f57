#include "agent/llm/sse.h"

#include <gtest/gtest.h>

#include <vector>

namespace oishell::agent {
namespace {

std::vector<SseEvent> parse(const std::vector<std::string>& feeds, bool finish = true) {
  std::vector<SseEvent> out;
  SseParser p([&out](const SseEvent& e) { out.push_back(e); });
  for (const auto& f : feeds) p.feed(f);
  if (finish) p.finish();
  return out;
}

TEST(Sse, DataLinesDispatchOnBlankLine) {
  auto ev = parse({"data: {\"a\":1}\n\ndata: [DONE]\n\n"});
  ASSERT_EQ(2u, ev.size());
  EXPECT_EQ("{\"a\":1}", ev[0].data);
  EXPECT_EQ("[DONE]", ev[1].data);
}

TEST(Sse, EventSplitAnywhereAcrossFeedsIncludingCrLf) {
  std::string stream = "event: content_block_delta\r\ndata: {\"x\":\"y\"}\r\n\r\nevent: ping\r\ndata: {}\r\n\r\n";
  for (size_t cut = 1; cut < stream.size(); ++cut) {
    auto ev = parse({stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(2u, ev.size()) << "cut at " << cut;
    EXPECT_EQ("content_block_delta", ev[0].event);
    EXPECT_EQ("{\"x\":\"y\"}", ev[0].data);
    EXPECT_EQ("ping", ev[1].event);
  }
}

TEST(Sse, CommentsIgnoredMultipleDataLinesJoined) {
  auto ev = parse({": keep-alive\n\ndata: one\ndata: two\n\n"});
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ("one\ntwo", ev[0].data);
}

TEST(Sse, BareCrEndsLinesAndNoSpaceAfterColonIsKept) {
  auto ev = parse({"data:x\r\rdata:  y\n\n"});
  ASSERT_EQ(2u, ev.size());
  EXPECT_EQ("x", ev[0].data);
  EXPECT_EQ(" y", ev[1].data);  // only one leading space is removed
}

TEST(Sse, UnterminatedLastEventKeptAtFinishButNotBefore) {
  EXPECT_EQ(0u, parse({"data: partial"}, /*finish=*/false).size());
  auto ev = parse({"data: partial"});
  ASSERT_EQ(1u, ev.size());
  EXPECT_EQ("partial", ev[0].data);
}

TEST(Sse, EventWithoutDataIsNotDispatched) {
  EXPECT_EQ(0u, parse({"event: ping\n\n"}).size());
}

}  // namespace
}  // namespace oishell::agent
