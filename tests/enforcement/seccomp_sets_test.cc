// The deny sets as data, without a kernel: the range-to-blocks helper, and the argument rules of the sets that
// compare values (setid_files, sockets, personality, terminal_injection) evaluated the way the filter evaluates them.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <initializer_list>
#include <string>

#include "policy/seccomp_sets.h"

namespace oishell::test {
namespace {

using seccomp_sets::Block;

bool in(const std::vector<Block>& blocks, uint32_t v) {
  int hits = 0;
  for (const Block& b : blocks) hits += (v & b.mask) == b.value;
  EXPECT_LE(hits, 1) << "blocks overlap at " << v;
  return hits == 1;
}

// Blocks in ascending order, each aligned and a power of two long, each starting where the last ended.
void expect_exact_cover(const std::vector<Block>& blocks, uint32_t lo, uint32_t hi) {
  ASSERT_FALSE(blocks.empty());
  uint64_t at = lo;
  for (const Block& b : blocks) {
    const uint64_t size = uint64_t{static_cast<uint32_t>(~b.mask)} + 1;
    EXPECT_EQ(size & (size - 1), 0u) << "mask " << b.mask << " is not a run of ones from the top";
    EXPECT_EQ(b.value & ~b.mask, 0u) << "block at " << b.value << " is not aligned";
    EXPECT_EQ(b.value, at);
    at = b.value + size;
  }
  EXPECT_EQ(at, uint64_t{hi} + 1);
  EXPECT_LE(blocks.size(), 62u);
}

TEST(SeccompBlocks, SmallRangesExactly) {
  EXPECT_EQ(seccomp_sets::aligned_blocks(5, 5), (std::vector<Block>{{0xffffffff, 5}}));
  EXPECT_EQ(seccomp_sets::aligned_blocks(18, 255),
            (std::vector<Block>{{0xfffffffe, 18},
                                {0xfffffffc, 20},
                                {0xfffffff8, 24},
                                {0xffffffe0, 32},
                                {0xffffffc0, 64},
                                {0xffffff80, 128}}));
  EXPECT_TRUE(seccomp_sets::aligned_blocks(3, 2).empty());
  for (uint32_t lo = 0; lo < 70; ++lo) {
    for (uint32_t hi = lo; hi < 70; ++hi) {
      auto blocks = seccomp_sets::aligned_blocks(lo, hi);
      for (uint32_t v = 0; v < 140; ++v) ASSERT_EQ(in(blocks, v), v >= lo && v <= hi) << lo << ".." << hi << " " << v;
    }
  }
}

TEST(SeccompBlocks, WholeAndLargeRanges) {
  EXPECT_EQ(seccomp_sets::aligned_blocks(0, 0xffffffff), (std::vector<Block>{{0, 0}}));
  EXPECT_EQ(seccomp_sets::aligned_blocks(0xffffffff, 0xffffffff), (std::vector<Block>{{0xffffffff, 0xffffffff}}));
  expect_exact_cover(seccomp_sets::aligned_blocks(1, 0xfffffffe), 1, 0xfffffffe);
  EXPECT_EQ(seccomp_sets::aligned_blocks(1, 0xfffffffe).size(), 62u);  // the worst case
  expect_exact_cover(seccomp_sets::aligned_blocks(0x20009, 0xfffffffe), 0x20009, 0xfffffffe);
  expect_exact_cover(seccomp_sets::aligned_blocks(256, 0x7fffffff), 256, 0x7fffffff);
}

TEST(SeccompBlocks, ExceptLeavesOutTheAllowedValues) {
  auto blocks = seccomp_sets::blocks_except(0, 255, {17, 0, 6, 1, 6});
  for (uint32_t v = 0; v < 1000; ++v) {
    bool allowed = v == 0 || v == 1 || v == 6 || v == 17;
    ASSERT_EQ(in(blocks, v), v <= 255 && !allowed) << v;
  }
  auto all_but = seccomp_sets::blocks_except(0, 0xffffffff, {0, 0xffffffff});
  expect_exact_cover(all_but, 1, 0xfffffffe);
  EXPECT_TRUE(seccomp_sets::blocks_except(3, 3, {3}).empty());
  EXPECT_EQ(seccomp_sets::blocks_except(0, 3, {7}), seccomp_sets::aligned_blocks(0, 3));  // out of range: ignored
}

// Whether any rule of `set` for `syscall` denies a call with `args`, compared as the filter compares them.
bool denies(std::string_view set, std::string_view syscall, std::array<uint64_t, 6> args) {
  const seccomp_sets::DenySet* s = seccomp_sets::find(set);
  EXPECT_NE(s, nullptr) << set;
  if (s == nullptr) return false;
  for (const auto& rule : s->rules) {
    if (rule.syscall != syscall) continue;
    bool all = true;
    for (const auto& c : rule.when) {
      const uint64_t v = args[c.arg];
      switch (c.op) {
        case seccomp_sets::ArgCheck::Op::masked_eq: all = all && (v & c.mask) == c.value; break;
        case seccomp_sets::ArgCheck::Op::ne: all = all && v != c.value; break;
        case seccomp_sets::ArgCheck::Op::ge: all = all && v >= c.value; break;
      }
    }
    if (all) return true;
  }
  return false;
}

TEST(SeccompSetRules, SetIdFiles) {
  for (uint64_t mode : {04755u, 02755u, 06000u, 0104755u /* S_IFREG|S_ISUID */}) {
    EXPECT_TRUE(denies("setid_files", "chmod", {0, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "fchmod", {3, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "fchmodat", {0, 0, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "fchmodat2", {0, 0, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "mknod", {0, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "mknodat", {0, 0, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "creat", {0, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "open", {0, O_WRONLY | O_CREAT, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "openat", {0, 0, O_RDWR | O_CREAT | O_EXCL, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "openat", {0, 0, O_TMPFILE | O_WRONLY, mode})) << mode;
    EXPECT_TRUE(denies("setid_files", "open", {0, O_TMPFILE & ~O_DIRECTORY, mode})) << mode;
  }
  for (uint64_t mode : {0755u, 01777u, 0644u, 0777u, 010644u /* S_IFIFO */}) {
    EXPECT_FALSE(denies("setid_files", "chmod", {0, mode})) << mode;
    EXPECT_FALSE(denies("setid_files", "fchmodat", {0, 0, mode})) << mode;
    EXPECT_FALSE(denies("setid_files", "mknodat", {0, 0, mode})) << mode;
    EXPECT_FALSE(denies("setid_files", "openat", {0, 0, O_WRONLY | O_CREAT, mode})) << mode;
  }
  // The mode of an open that creates nothing is never used (garbage in the register is common): allowed.
  EXPECT_FALSE(denies("setid_files", "openat", {0, 0, O_RDONLY, 06777}));
  EXPECT_FALSE(denies("setid_files", "open", {0, O_WRONLY | O_TRUNC, 04755}));
  // A mode bit in the upper half of the register does not exist for the kernel (umode_t).
  EXPECT_FALSE(denies("setid_files", "chmod", {0, (uint64_t{S_ISUID} << 32) | 0755}));
}

TEST(SeccompSetRules, Sockets) {
  for (uint64_t family : {AF_INET, AF_INET6}) {
    for (uint64_t proto : std::initializer_list<uint64_t>{0, IPPROTO_TCP, IPPROTO_UDP}) {
      EXPECT_FALSE(denies("sockets", "socket", {family, SOCK_STREAM, proto})) << family << " " << proto;
      EXPECT_FALSE(denies("sockets", "socket", {family, SOCK_DGRAM | SOCK_CLOEXEC, proto})) << family << " " << proto;
    }
    for (uint64_t proto :
         std::initializer_list<uint64_t>{IPPROTO_SCTP, 115u /* L2TP */, 256u /* SMC */, 262u /* MPTCP */, 2u, 255u,
                                         1u << 31, ~uint64_t{0}, (uint64_t{1} << 32) | IPPROTO_TCP}) {
      EXPECT_TRUE(denies("sockets", "socket", {family, SOCK_STREAM, proto})) << family << " " << proto;
    }
  }
  EXPECT_FALSE(denies("sockets", "socket", {AF_INET, SOCK_DGRAM, IPPROTO_ICMP}));
  EXPECT_TRUE(denies("sockets", "socket", {AF_INET6, SOCK_DGRAM, IPPROTO_ICMP}));
  EXPECT_FALSE(denies("sockets", "socket", {AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6}));
  EXPECT_TRUE(denies("sockets", "socket", {AF_INET, SOCK_DGRAM, IPPROTO_ICMPV6}));
  EXPECT_FALSE(denies("sockets", "socket", {AF_UNIX, SOCK_STREAM, 0}));
  EXPECT_FALSE(denies("sockets", "socketpair", {AF_UNIX, SOCK_STREAM, 0}));
  for (uint64_t family : std::initializer_list<uint64_t>{AF_INET, AF_INET6, AF_TIPC, AF_NETLINK,
                                                         (uint64_t{1} << 32) | AF_UNIX}) {
    EXPECT_TRUE(denies("sockets", "socketpair", {family, SOCK_STREAM, 0})) << family;
  }
}

TEST(SeccompSetRules, Personality) {
  for (uint64_t allowed : {0x0u, 0x8u, 0x20000u, 0x20008u, 0xffffffffu}) {
    EXPECT_FALSE(denies("personality", "personality", {allowed})) << allowed;
  }
  for (uint64_t denied : {uint64_t{ADDR_NO_RANDOMIZE}, uint64_t{READ_IMPLIES_EXEC}, uint64_t{MMAP_PAGE_ZERO},
                          uint64_t{ADDR_COMPAT_LAYOUT}, uint64_t{PER_BSD}, uint64_t{PER_LINUX32_3GB},
                          uint64_t{ADDR_NO_RANDOMIZE | UNAME26}, 1ul, 7ul, 9ul, 0x20001ul, 0x20009ul, 0x1ffffUL,
                          0xfffffffeul, 0x7ffffffful, 0x80000000ul}) {
    EXPECT_TRUE(denies("personality", "personality", {denied})) << denied;
  }
  // The kernel reads an unsigned int: the upper half of the register is ignored, by the kernel and the filter alike.
  EXPECT_TRUE(denies("personality", "personality", {(uint64_t{1} << 32) | ADDR_NO_RANDOMIZE}));
  EXPECT_FALSE(denies("personality", "personality", {(uint64_t{1} << 32) | PER_LINUX}));
  // Spot checks over the whole range: only the five values are allowed.
  uint32_t v = 12345;
  for (int i = 0; i < 100000; ++i) {
    v = v * 1664525u + 1013904223u;
    bool allowed = v == 0 || v == 8 || v == 0x20000 || v == 0x20008 || v == 0xffffffff;
    ASSERT_EQ(denies("personality", "personality", {v}), !allowed) << v;
  }
}

TEST(SeccompSetRules, TerminalIoctls) {
  for (uint64_t request :
       std::initializer_list<uint64_t>{TIOCSTI, TIOCLINUX, TIOCSETD, (uint64_t{1} << 32) | TIOCSETD}) {
    EXPECT_TRUE(denies("terminal_injection", "ioctl", {0, request})) << request;
  }
  for (uint64_t request : {TIOCGETD, TIOCGWINSZ, TIOCSCTTY}) {
    EXPECT_FALSE(denies("terminal_injection", "ioctl", {0, request})) << request;
  }
}

// openat2's mode is in memory: the filter answers ENOSYS itself (no report), as for clone3.
TEST(SeccompSetRules, Openat2IsAnsweredByTheFilter) {
  const auto& rules = seccomp_sets::find("setid_files")->rules;
  auto it = std::find_if(rules.begin(), rules.end(),
                         [](const auto& r) { return std::string_view(r.syscall) == "openat2"; });
  ASSERT_NE(it, rules.end());
  EXPECT_EQ(it->err, ENOSYS);
  EXPECT_FALSE(it->report);
  EXPECT_TRUE(it->when.empty());
}

TEST(SeccompSetRules, PersonalityLeftStrictExtras) {
  const auto& rules = seccomp_sets::find("strict_extras")->rules;
  EXPECT_EQ(rules.end(), std::find_if(rules.begin(), rules.end(), [](const auto& r) {
              return std::string_view(r.syscall) == "personality";
            }));
}

}  // namespace
}  // namespace oishell::test
