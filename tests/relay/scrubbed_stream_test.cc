// ScrubbedStream (runtime/relay/scrubbed_stream.h): content scrubbed as one stream across the framing between its
// pieces, the framing kept in place.
#include "runtime/relay/scrubbed_stream.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace oishell::relay {
namespace {

TEST(ScrubbedStream, ASecretSplitByFramingIsFoundAndTheFramingStays) {
  SecretScrubber scrubber;
  scrubber.add("k", "ghp_S3cr3t");
  ScrubbedStream stream(scrubber);
  std::string out;
  std::vector<std::string> found;
  stream.content("x ghp_");
  stream.framing("\r\n5\r\n");
  stream.content("S3");
  stream.release(out, false, &found);
  EXPECT_EQ("x ", out);  // "ghp_" + "S3" could be the secret: held, the framing between with it
  EXPECT_GT(stream.held(), 0u);
  stream.content("cr3t y");
  stream.framing("\r\n0\r\n\r\n");
  stream.release(out, true, &found);
  EXPECT_EQ("x ****\r\n5\r\n****** y\r\n0\r\n\r\n", out);
  EXPECT_EQ(std::vector<std::string>{"k"}, found);
  EXPECT_TRUE(stream.empty());
}

TEST(ScrubbedStream, WithoutTheSecretEverythingGoesAtOnceInOrder) {
  SecretScrubber scrubber;
  scrubber.add("k", "ghp_S3cr3t");
  ScrubbedStream stream(scrubber);
  std::string out;
  std::vector<std::string> found;
  stream.content("HTTP/1.1 200 OK\r\n\r\n");
  stream.framing("4;ext\r\n");
  stream.content("ab.\n");
  stream.framing("\r\n");
  stream.release(out, false, &found);
  // Nothing could begin the secret (a last letter could: the first of its base64): nothing waits.
  EXPECT_EQ("HTTP/1.1 200 OK\r\n\r\n4;ext\r\nab.\n\r\n", out);
  EXPECT_TRUE(stream.empty());
  // A secret in a framing piece (a chunk extension) is found there, on its own.
  stream.framing("3;e=ghp_S3cr3t\r\n");
  stream.release(out, false, &found);
  EXPECT_TRUE(out.ends_with("3;e=**********\r\n")) << out;
  EXPECT_EQ(std::vector<std::string>{"k"}, found);
}

}  // namespace
}  // namespace oishell::relay
