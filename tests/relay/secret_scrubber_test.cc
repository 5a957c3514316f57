// SecretScrubber (runtime/relay/secret_scrubber.h): secrets overwritten in place, whatever the reads split them by.
#include "runtime/relay/secret_scrubber.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace oishell::relay {
namespace {

// Feeds `stream` in pieces of `step` bytes, as a socket would deliver it, and returns what was released.
std::string through(const SecretScrubber& scrubber, const std::string& stream, size_t step,
                    std::vector<std::string>* found) {
  std::string buffer, out;
  size_t released = 0;
  for (size_t at = 0; at < stream.size(); at += step) {
    buffer += stream.substr(at, step);
    const bool final = at + step >= stream.size();
    released = scrubber.scrub(buffer, released, final, found);
    out += buffer.substr(0, released);  // sent
    buffer.erase(0, released);
    released = 0;
  }
  return out;
}

TEST(SecretScrubber, EverySecretIsOverwrittenWhateverTheSplit) {
  SecretScrubber scrubber;
  scrubber.add("github", "ghp_S3cr3t");
  scrubber.add("basic", "eC1hY2Nlc3M6Z2hw");
  const std::string stream = "a ghp_S3cr3t b eC1hY2Nlc3M6Z2hw c ghp_S3cr3tghp_S3cr3t ghp_S3cr3";
  const std::string expected = "a ********** b **************** c ******************** ghp_S3cr3";
  for (size_t step = 1; step <= stream.size(); ++step) {
    std::vector<std::string> found;
    EXPECT_EQ(expected, through(scrubber, stream, step, &found)) << "step " << step;
    std::sort(found.begin(), found.end());
    EXPECT_EQ((std::vector<std::string>{"basic", "github", "github", "github"}), found) << "step " << step;
  }
}

TEST(SecretScrubber, HoldsBackOnlyWhatCouldStartASecret) {
  SecretScrubber scrubber;
  scrubber.add("k", "0123456789");
  std::string buffer(100, 'x');
  EXPECT_EQ(100u, scrubber.scrub(buffer, 0, false, nullptr));  // no tail starts the secret: nothing waits
  buffer += "0123";
  EXPECT_EQ(100u, scrubber.scrub(buffer, 100, false, nullptr));  // "0123" might: it waits for what follows
  buffer += "x";
  EXPECT_EQ(105u, scrubber.scrub(buffer, 100, false, nullptr));  // it did not
  buffer += "012345678";
  EXPECT_EQ(105u, scrubber.scrub(buffer, 105, false, nullptr));
  EXPECT_EQ(114u, scrubber.scrub(buffer, 105, true, nullptr));  // final: everything goes
  // Without secrets nothing waits; repeats and empty values are not added.
  SecretScrubber none;
  none.add("empty", "");
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(buffer.size(), none.scrub(buffer, 0, false, nullptr));
}

}  // namespace
}  // namespace oishell::relay
