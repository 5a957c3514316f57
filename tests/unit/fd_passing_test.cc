// runtime/fd_passing: messages with descriptors over a SOCK_SEQPACKET pair, inline or, when large, in a sealed
// memfd passed with them; a descriptor that is not a sealed memfd is not taken for a payload.
#include "runtime/fd_passing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <sys/stat.h>

namespace oishell {
namespace {

struct Pair {
  Pair() {
    int fds[2];
    EXPECT_EQ(0, ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds));
    a.reset(fds[0]);
    b.reset(fds[1]);
  }
  UniqueFd a, b;
};

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131) ^ (i >> 7));
  return s;
}

// The inode a descriptor refers to, to tell that a passed one is the same file.
ino_t inode_of(int fd) {
  struct stat st {};
  EXPECT_EQ(0, ::fstat(fd, &st));
  return st.st_ino;
}

TEST(FdPassing, SmallAndLargeMessagesArriveWholeWithTheirDescriptors) {
  Pair p;
  UniqueFd file(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  for (size_t size : {size_t{0}, size_t{1}, kInlineMessageBytes, kInlineMessageBytes + 1, size_t{3} << 20}) {
    const std::string payload = pattern(size);
    ASSERT_TRUE(send_message(p.a.get(), payload, {file.get(), file.get()}).is_ok()) << size;
    auto got = receive_message(p.b.get());
    ASSERT_TRUE(got.is_ok()) << size << ": " << got.status().message();
    EXPECT_EQ(payload, got->payload) << size;
    ASSERT_EQ(2u, got->fds.size()) << size;  // the memfd of a large one is not among them
    EXPECT_EQ(inode_of(file.get()), inode_of(got->fds[0].get()));
  }
}

TEST(FdPassing, TheLimitIsSaidAndAClosedPeerIsAnEmptyMessage) {
  Pair p;
  Status too_large = send_message(p.a.get(), std::string(kMaxMessageBytes + 1, 'x'));
  ASSERT_FALSE(too_large.is_ok());
  EXPECT_EQ("message of 16777217 bytes exceeds the limit of 16777216", too_large.message());
  // The neighbour at the limit itself goes.
  ASSERT_TRUE(send_message(p.a.get(), std::string(kMaxMessageBytes, 'x')).is_ok());
  auto at_limit = receive_message(p.b.get());
  ASSERT_TRUE(at_limit.is_ok());
  EXPECT_EQ(kMaxMessageBytes, at_limit->payload.size());
  p.a.reset();
  auto closed = receive_message(p.b.get());
  ASSERT_TRUE(closed.is_ok());
  EXPECT_TRUE(closed->payload.empty());
  EXPECT_TRUE(closed->fds.empty());
}

// A peer that closes with a message of ours unread (sandbox init failing before it read the process queued for it):
// the kernel reports ECONNRESET before the messages still queued for us, and its last words (init's reason) must
// still come, then the end. Without the retry the caller got "recv(MSG_PEEK): ECONNRESET" in place of the reason.
TEST(FdPassing, ThePeersLastMessageComesEvenWhenItClosedWithOursUnread) {
  Pair p;
  ASSERT_TRUE(send_message(p.a.get(), "never read by b").is_ok());
  ASSERT_TRUE(send_message(p.b.get(), "fail: the reason").is_ok());
  p.b.reset();
  auto last = receive_message(p.a.get());
  ASSERT_TRUE(last.is_ok()) << last.status().message();
  EXPECT_EQ("fail: the reason", last->payload);
  auto end = receive_message(p.a.get());
  ASSERT_TRUE(end.is_ok()) << end.status().message();
  EXPECT_TRUE(end->payload.empty());
}

TEST(FdPassing, APayloadDescriptorMustBeASealedMemfd) {
  Pair p;
  // A packet that says "in the memfd" with an ordinary file as its last descriptor: refused, never read.
  UniqueFd file(::open("/etc/passwd", O_RDONLY | O_CLOEXEC));
  const char m = 'm';
  iovec iov{const_cast<char*>(&m), 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  const int fd = file.get();
  std::memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
  ASSERT_EQ(1, ::sendmsg(p.a.get(), &msg, 0));
  auto refused = receive_message(p.b.get());
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ("message: its payload descriptor is not a sealed memfd", refused.status().message());
  // A packet of another protocol (no framing byte this side knows) is refused too.
  ASSERT_EQ(1, ::send(p.a.get(), "x", 1, 0));
  auto foreign = receive_message(p.b.get());
  ASSERT_FALSE(foreign.is_ok());
  EXPECT_EQ("recvmsg: a packet that is not a message of this protocol", foreign.status().message());
}

}  // namespace
}  // namespace oishell
