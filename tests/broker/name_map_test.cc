// The synthetic address map: stable per name, both families, read back from either (and from the IPv4-mapped
// form), never from outside its ranges, bounded.
#include "runtime/broker/name_map.h"

#include <gtest/gtest.h>

#include <thread>

#include "dns_test_util.h"

namespace oishell::broker {
namespace {

using Family = IpAddress::Family;
using testing::ip;

TEST(NameMap, SameNameSameAddressSequentially) {
  NameMap map;
  EXPECT_EQ(ip("198.18.0.1"), map.address_for("a.example", Family::v4));
  EXPECT_EQ(ip("198.18.0.2"), map.address_for("b.example", Family::v4));
  EXPECT_EQ(ip("198.18.0.1"), map.address_for("a.example", Family::v4));
  // IPv6: the same index in the ULA /64, the IPv4 twin in the low 32 bits.
  EXPECT_EQ(ip("fd6f:6973:6865:6c6c::c612:1"), map.address_for("a.example", Family::v6));
  EXPECT_EQ(ip("fd6f:6973:6865:6c6c::c612:3"), map.address_for("c.example", Family::v6));
  EXPECT_EQ(ip("198.18.0.3"), map.address_for("c.example", Family::v4));
  EXPECT_EQ(3u, map.size());
}

TEST(NameMap, AddressesMapBackToTheirName) {
  NameMap map;
  auto v4 = map.address_for("allowed.example", Family::v4);
  auto v6 = map.address_for("allowed.example", Family::v6);
  ASSERT_TRUE(v4 && v6);
  EXPECT_EQ("allowed.example", map.name_of(*v4));
  EXPECT_EQ("allowed.example", map.name_of(*v6));
  EXPECT_EQ("allowed.example", map.name_of(ip("::ffff:198.18.0.1")));  // what an AF_INET6 socket connects to
  // Synthetic-looking but never given out, and real addresses: no name.
  EXPECT_FALSE(map.name_of(ip("198.18.0.2")));
  EXPECT_FALSE(map.name_of(ip("198.18.0.0")));
  EXPECT_FALSE(map.name_of(ip("fd6f:6973:6865:6c6c::c612:2")));
  EXPECT_FALSE(map.name_of(ip("fd6f:6973:6865:6c6c:1::c612:1")));  // bits 64..95 must be zero
  EXPECT_FALSE(map.name_of(ip("93.184.215.14")));
  EXPECT_FALSE(map.name_of(ip("::1")));
  EXPECT_FALSE(map.name_of(ip("::198.18.0.1")));  // IPv4-compatible is not the mapped form
}

TEST(NameMap, SyntheticRanges) {
  for (const char* yes : {"198.18.0.0", "198.18.0.1", "198.19.255.255", "::ffff:198.19.1.2",
                          "fd6f:6973:6865:6c6c::", "fd6f:6973:6865:6c6c:ffff:ffff:ffff:ffff"}) {
    EXPECT_TRUE(NameMap::is_synthetic(ip(yes))) << yes;
  }
  for (const char* no : {"198.17.255.255", "198.20.0.0", "127.0.0.1", "::ffff:127.0.0.1", "fd6f:6973:6865:6c6d::1",
                         "::1", "2001:db8::1"}) {
    EXPECT_FALSE(NameMap::is_synthetic(ip(no))) << no;
  }
  // Never a real destination: the private-address guard refuses both ranges.
  EXPECT_TRUE(ip("198.18.0.1").is_private_or_special());
  EXPECT_TRUE(ip("fd6f:6973:6865:6c6c::c612:1").is_private_or_special());
}

TEST(NameMap, ExhaustedPoolFailsCleanly) {
  NameMap map(2);
  EXPECT_TRUE(map.address_for("a.example", Family::v4));
  EXPECT_TRUE(map.address_for("b.example", Family::v6));
  EXPECT_FALSE(map.address_for("c.example", Family::v4));
  EXPECT_FALSE(map.address_for("c.example", Family::v6));
  EXPECT_EQ(ip("198.18.0.1"), map.address_for("a.example", Family::v4));  // names already in keep working
  EXPECT_EQ(ip("198.18.0.2"), map.address_for("b.example", Family::v4));
  EXPECT_EQ(2u, map.size());
}

TEST(NameMap, FullPoolEndsBelowTheLastAddress) {
  EXPECT_EQ(131070u, NameMap::kPoolSize);
  NameMap map;
  std::optional<IpAddress> last;
  for (uint32_t i = 0; i < NameMap::kPoolSize; ++i) last = map.address_for("n" + std::to_string(i) + ".example", Family::v4);
  EXPECT_EQ(ip("198.19.255.254"), last);
  EXPECT_EQ("n131069.example", map.name_of(ip("198.19.255.254")));
  EXPECT_FALSE(map.address_for("one-more.example", Family::v4));
}

TEST(NameMap, ConcurrentCallersAgree) {
  NameMap map;
  std::vector<std::thread> threads;
  std::vector<std::vector<IpAddress>> seen(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) seen[static_cast<size_t>(t)].push_back(*map.address_for("n" + std::to_string(i) + ".example", Family::v4));
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(500u, map.size());
  for (int t = 1; t < 4; ++t) EXPECT_EQ(seen[0], seen[static_cast<size_t>(t)]);
  for (int i = 0; i < 500; ++i) EXPECT_EQ("n" + std::to_string(i) + ".example", map.name_of(seen[0][static_cast<size_t>(i)]));
}

}  // namespace
}  // namespace oishell::broker
