// Unit tests for base/base64.h: the RFC 4648 test vectors, and what decoding accepts and refuses.
#include "base/base64.h"

#include <gtest/gtest.h>

namespace oishell {
namespace {

TEST(Base64, Rfc4648Vectors) {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},        {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [bytes, text] : vectors) {
    EXPECT_EQ(text, base64_encode(bytes));
    EXPECT_EQ(bytes, base64_decode(text).value_or("<none>")) << text;
  }
}

TEST(Base64, AllByteValuesRoundTrip) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  for (size_t n = 0; n <= bytes.size(); n += 37) {
    EXPECT_EQ(bytes.substr(0, n), base64_decode(base64_encode(bytes.substr(0, n))).value_or("<none>"));
  }
  EXPECT_EQ("+/+/", base64_encode("\xfb\xff\xbf"));
}

TEST(Base64, LenientWhereServersAre) {
  EXPECT_EQ("f", base64_decode("Zg").value_or("<none>"));     // no padding
  EXPECT_EQ("fo", base64_decode("Zm8").value_or("<none>"));
  EXPECT_EQ("f", base64_decode("Zh==").value_or("<none>"));   // stray bits after the last byte
}

TEST(Base64, Refused) {
  EXPECT_FALSE(base64_decode("Z").has_value());
  EXPECT_FALSE(base64_decode("Zg=a").has_value());
  EXPECT_FALSE(base64_decode("Z=g=").has_value());
  EXPECT_FALSE(base64_decode("Zg===").has_value());
  EXPECT_FALSE(base64_decode("Zg=").has_value());
  EXPECT_FALSE(base64_decode("Zm9v!").has_value());
  EXPECT_FALSE(base64_decode("Zm9v Zm9v").has_value());
  EXPECT_FALSE(base64_decode("Zm-_").has_value());  // base64url is another alphabet
}

}  // namespace
}  // namespace oishell
