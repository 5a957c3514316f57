// The executor control channel's parser (runtime/executors/protocol.h, parse_control_line): every line a driver
// sends is accepted, and its malformed neighbours are refused. The block's code shares the python driver's process
// and can write any bytes to the socket; without strict parsing, `D 3 ok zero` ended block 3 (atoi gave 0), and
// `I 3 svg <anything>` reached the client as an image.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "runtime/executors/protocol.h"

namespace oishell::executors {
namespace {

// A 1x1 PNG, as python's base64.b64encode writes it.
constexpr const char* kTinyPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=";

std::string refusal(const std::string& line) {
  auto parsed = parse_control_line(line);
  return parsed ? std::string("accepted") : parsed.status().message();
}

TEST(ControlLine, AcceptsWhatTheDriversSend) {
  EXPECT_TRUE(std::holds_alternative<ControlReady>(*parse_control_line("R")));

  auto line = parse_control_line("L 18 2147483647");
  ASSERT_TRUE(line.is_ok()) << line.status().message();
  EXPECT_EQ(18u, std::get<ControlActiveLine>(*line).seq);
  EXPECT_EQ(2147483647, std::get<ControlActiveLine>(*line).line);
  EXPECT_TRUE(parse_control_line("L 1 0").is_ok());  // well formed; the executor reports only lines >= 1

  for (const char* status : {"ok", "error", "interrupted"}) {
    auto done = parse_control_line(std::string("D 7 ") + status + " 130");
    ASSERT_TRUE(done.is_ok()) << status << ": " << done.status().message();
    EXPECT_EQ(7u, std::get<ControlDone>(*done).seq);
    EXPECT_EQ(status, std::get<ControlDone>(*done).status);
    EXPECT_EQ(130, std::get<ControlDone>(*done).code);
  }
  EXPECT_EQ(-2147483648, std::get<ControlDone>(*parse_control_line("D 1 error -2147483648")).code);
  EXPECT_EQ(2147483647, std::get<ControlDone>(*parse_control_line("D 1 error 2147483647")).code);
  EXPECT_EQ(9007199254740991u, control_seq(*parse_control_line("D 9007199254740991 ok 0")));  // 2^53 - 1

  const std::string png_line = std::string("I 2 png ") + kTinyPng;  // the parsed image points into it
  auto png = parse_control_line(png_line);
  ASSERT_TRUE(png.is_ok()) << png.status().message();
  EXPECT_EQ(2u, std::get<ControlImage>(*png).seq);
  EXPECT_EQ("png", std::get<ControlImage>(*png).format);
  EXPECT_EQ(kTinyPng, std::get<ControlImage>(*png).base64);
  auto jpeg = parse_control_line("I 2 jpeg /9j/4AAQ");  // FF D8 FF E0 00 10: a JFIF header
  ASSERT_TRUE(jpeg.is_ok()) << jpeg.status().message();
  EXPECT_EQ("jpeg", std::get<ControlImage>(*jpeg).format);
}

TEST(ControlLine, RefusesLinesThatAreNoneOfThem) {
  for (const char* line :
       {"", "R ", " R", "RR", "r", "X 1 2 3", "garbage", "l 1 1", "Lx 1 1", "Z 1 ok 0", "\xFF\xFE"}) {
    EXPECT_EQ("not one of the R, L, I, D lines", refusal(line)) << line;
  }
}

TEST(ControlLine, RefusesActiveLinesOutOfShapeOrRange) {
  for (const char* line : {"L", "L ", "L 1", "L 1 1 1", "L  1 1", "L 1  1", "L 1 1 "}) {
    EXPECT_EQ("L: not `L <seq> <line>`", refusal(line)) << line;
  }
  for (const char* line : {"L 01 1", "L -1 1", "L +1 1", "L 0x1 1", "L 9007199254740992 1", "L 1a 1"}) {
    EXPECT_EQ("L: seq is not a decimal number in range", refusal(line)) << line;
  }
  for (const char* line : {"L 1 -3", "L 1 +3", "L 1 07", "L 1 2147483648", "L 1 1\r", "L 1 99999999999999999999999"}) {
    EXPECT_EQ("L: line is not a decimal number in range", refusal(line)) << line;
  }
}

TEST(ControlLine, RefusesDoneLinesOutsideTheStatusSetOrTheCodeRange) {
  EXPECT_EQ("D: not `D <seq> <status> <code>`", refusal("D 1 ok"));
  EXPECT_EQ("D: not `D <seq> <status> <code>`", refusal("D 1 ok 0 extra"));
  EXPECT_EQ("D: seq is not a decimal number in range", refusal("D x ok 0"));
  for (const char* status : {"OK", "done", "timeout", "killed", "ok\t"}) {
    EXPECT_EQ("D: status is not ok, error or interrupted", refusal(std::string("D 1 ") + status + " 0")) << status;
  }
  for (const char* code : {"zero", "", "2147483648", "-2147483649", "-0", "00", "1.5", "-", "+1", "1e3"}) {
    EXPECT_NE("accepted", refusal(std::string("D 1 ok ") + code)) << code;
  }
  EXPECT_EQ("D: code is not a decimal integer in the 32-bit range", refusal("D 1 ok zero"));
  EXPECT_EQ("D: code is not a decimal integer in the 32-bit range", refusal("D 1 error 99999999999"));
}

TEST(ControlLine, RefusesImagesOutsideTheAllowlistOrNotStrictBase64) {
  EXPECT_EQ("I: not `I <seq> <format> <base64>`", refusal("I 1 png"));
  EXPECT_EQ("I: not `I <seq> <format> <base64>`", refusal("I 1 png iVBORw0K Ggo="));
  for (const char* format : {"gif", "svg", "PNG", "html", "svg+xml"}) {
    EXPECT_EQ("I: format is not png or jpeg", refusal(std::string("I 1 ") + format + " " + kTinyPng)) << format;
  }
  for (const char* data : {"!!!!", "iVBORw0KGgo",  // no padding
                           "iVBORw0KGgo==",         // 13 characters
                           "iVBO=w0KGgo=",          // '=' inside
                           "iVBORw0KGgp=",          // non-zero bits after the last byte
                           "iVBORw0KGh==",          // ... and with two '='
                           "iVBORw0KGgo=\n", "iVBORw0KG-_=", "===="}) {
    EXPECT_EQ("I: data is not strict base64", refusal(std::string("I 1 png ") + data)) << data;
  }
  // Valid base64, but not the format it claims: "hello world", and a PNG sent as jpeg.
  EXPECT_EQ("I: data does not start with the format's signature", refusal("I 1 png aGVsbG8gd29ybGQ="));
  EXPECT_EQ("I: data does not start with the format's signature", refusal(std::string("I 1 jpeg ") + kTinyPng));
}

TEST(ControlLine, ImagesUpToTwelveMebibytes) {
  // "iVBORw0KGgoA": the PNG signature and one zero byte (9 bytes); then zero bytes up to exactly 12 MiB.
  std::string data = "iVBORw0KGgoA" + std::string(kMaxImageBytes / 3 * 4 - 12, 'A');
  ASSERT_EQ(kMaxImageBytes / 3 * 4, data.size());
  EXPECT_EQ("accepted", refusal("I 1 png " + data));
  EXPECT_EQ("I: image larger than 12 MiB", refusal("I 1 png " + data + "AAAA"));
}

TEST(ControlLine, RefusalsNeverQuoteTheLine) {
  // The event that reports a dropped line carries the refusal; what the sandbox wrote must not reach the client.
  for (const char* line : {"SECRET", "L 1 SECRET", "D 1 SECRET 0", "I 1 SECRET x", "I 1 png SECRET="}) {
    EXPECT_EQ(std::string::npos, refusal(line).find("SECRET")) << line;
  }
}

}  // namespace
}  // namespace oishell::executors
