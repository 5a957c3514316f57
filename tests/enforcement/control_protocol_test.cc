// The supervisor <-> init messages (runtime/control_protocol.h). A runtime unit test: it lives in this binary
// because this is the one that links the runtime. Binary data (the seccomp program) survives the trip byte for byte;
// a message that is not what it claims is refused, never half-read.
#include <string>

#include <gtest/gtest.h>

#include "runtime/control_protocol.h"

namespace oishell::test {
namespace {

TEST(ControlProtocol, JoinedCarriesBinaryDataAndRlimitsExactly) {
  control::ControlMessage joined{control::Kind::joined};
  for (int i = 0; i < 256; ++i) joined.data.push_back(static_cast<char>(i));  // every byte value, NUL included
  joined.number = 1;
  joined.strings = {"7 4096 4096", "1 17179869184 17179869184"};
  auto decoded = control::decode(control::encode(joined));
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().message();
  EXPECT_EQ(decoded->kind, control::Kind::joined);
  EXPECT_EQ(decoded->data, joined.data);
  EXPECT_EQ(decoded->number, 1);
  EXPECT_EQ(decoded->strings, joined.strings);
}

TEST(ControlProtocol, SpecCarriesThePolicyText) {
  control::ControlMessage spec{control::Kind::spec};
  spec.message = R"({"version":1,"hostname":"oishell","env":[["A","quote \" and \\ backslash"]]})";
  auto decoded = control::decode(control::encode(spec));
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().message();
  EXPECT_EQ(decoded->kind, control::Kind::spec);
  EXPECT_EQ(decoded->message, spec.message);
}

TEST(ControlProtocol, MalformedMessagesAreRefused) {
  EXPECT_EQ(control::decode(R"({"t":"joined","data":"0g"})").status().message(),
            "control message `joined`: malformed field");  // not hex
  EXPECT_EQ(control::decode(R"({"t":"joined","data":"abc"})").status().message(),
            "control message `joined`: malformed field");  // odd length
  EXPECT_EQ(control::decode(R"({"t":"go"})").status().message(), "control message: unknown type `go`");
  EXPECT_EQ(control::decode("not json").status().message(), "control message: not a JSON object with a type");
  // The neighbour: the same shapes, well formed.
  EXPECT_TRUE(control::decode(R"({"t":"joined","data":"00ff"})").is_ok());
}

}  // namespace
}  // namespace oishell::test
