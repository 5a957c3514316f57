// base/edit_distance.h: the distance the "did you mean" suggestions of policy keys, profile keys and the
// interpreter's flags all rank by.
#include "base/edit_distance.h"

#include <gtest/gtest.h>

namespace oishell {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(0u, edit_distance("model", "model"));
  EXPECT_EQ(1u, edit_distance("modl", "model"));     // one inserted
  EXPECT_EQ(1u, edit_distance("modeel", "model"));   // one deleted
  EXPECT_EQ(1u, edit_distance("modal", "model"));    // one substituted
  EXPECT_EQ(2u, edit_distance("modle", "model"));    // a transposition is two
  EXPECT_EQ(3u, edit_distance("kitten", "sitting"));
}

TEST(EditDistance, AnEmptyWordIsTheOthersLength) {
  EXPECT_EQ(0u, edit_distance("", ""));
  EXPECT_EQ(5u, edit_distance("", "model"));
  EXPECT_EQ(5u, edit_distance("model", ""));
}

TEST(EditDistance, IsSymmetricAndCountsBytes) {
  EXPECT_EQ(edit_distance("allow_domains", "allow-domain"), edit_distance("allow-domain", "allow_domains"));
  EXPECT_EQ(2u, edit_distance("\xc3\xa9", "e"));  // é is two bytes
}

}  // namespace
}  // namespace oishell
