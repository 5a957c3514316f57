// base/markdown_fence: markdown made from text the agent did not write keeps that text inside (issue 34, finding 6).
#include "base/markdown_fence.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace oishell {
namespace {

TEST(MarkdownFence, IsLongerThanAnyBacktickRunInside) {
  EXPECT_EQ("```", fence_for("print(1)"));
  EXPECT_EQ("```", fence_for("a `b` ``c``"));
  EXPECT_EQ("````", fence_for("x\n```\n![s](http://127.0.0.1/?d=secret)"));
  EXPECT_EQ("``````", fence_for("`````"));
  EXPECT_EQ("````python\n```\n````", fenced_markdown("python", "```"));
  EXPECT_EQ("```\n```", fenced_markdown("", ""));
}

// Streamed: the content comes before its length is known, so a line that could close the ``` fence is indented
// four spaces (a closing fence is indented three at most); every other byte passes unchanged.
TEST(MarkdownFence, StreamedLinesCannotCloseTheFence) {
  FencedStream s;
  std::string out;
  for (std::string chunk : {"ok\n", "``", "`\n![status](http://127.0.0.1/?d=x)\n", "  ```", "\r```", "\nplain ```"}) {
    out += s.feed(chunk);
  }
  EXPECT_EQ("ok\n    ```\n![status](http://127.0.0.1/?d=x)\n    ```\r    ```\nplain ```", out);
  FencedStream indented;
  EXPECT_EQ("    ```\n\tx\n", indented.feed("    ```\n\tx\n"));  // already four: not a fence, left as it is
}

TEST(MarkdownFence, ImagesInProseAreDrawnAsText) {
  ImageBreaker b;
  std::string out;
  for (std::string chunk :
       {"see ", "!", "[s](http://127.0.0.1/?d=", "x) and <I", "mg src=x> [a link](http://127.0.0.1/) !"}) {
    out += b.feed(chunk);
  }
  out += b.finish();
  EXPECT_EQ("see !\\[s](http://127.0.0.1/?d=x) and &lt;Img src=x> [a link](http://127.0.0.1/) !", out);
  ImageBreaker plain;
  EXPECT_EQ("Hello! <i>x</i> a<b", plain.feed("Hello! <i>x</i> a<b") + plain.finish());
}

TEST(MarkdownFence, QuotesEveryLine) {
  EXPECT_EQ("> Error: a\n> !\\[x](y)\n> b", quoted_markdown("Error: a\r\n![x](y)\nb"));
}

}  // namespace
}  // namespace oishell
