// runtime/fd_passing: messages with descriptors over a SOCK_SEQPACKET pair, inline or, when large, in a sealed
// memfd passed with them; a descriptor that is not a sealed memfd is not taken for a payload.
#include "runtime/fd_passing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>
#include <sys/stat.h>

#include "base/scm_rights.h"

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
  const int fd = file.get();
  ASSERT_EQ(1, send_with_fds(p.a.get(), &m, 1, &fd, 1));
  auto refused = receive_message(p.b.get());
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ("message: its payload descriptor is not a sealed memfd", refused.status().message());
  // A packet of another protocol (no framing byte this side knows) is refused too.
  ASSERT_EQ(1, ::send(p.a.get(), "x", 1, 0));
  auto foreign = receive_message(p.b.get());
  ASSERT_FALSE(foreign.is_ok());
  EXPECT_EQ("recvmsg: a packet that is not a message of this protocol", foreign.status().message());
}

TEST(SendWithFds, TheBytesArriveWithEveryDescriptorAttached) {
  Pair p;
  UniqueFd file(::open("/etc/passwd", O_RDONLY | O_CLOEXEC));
  const int fds[2] = {file.get(), p.a.get()};
  ASSERT_EQ(3, send_with_fds(p.a.get(), "abc", 3, fds, 2));
  char bytes[8] = {};
  iovec iov{bytes, sizeof bytes};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ASSERT_EQ(3, ::recvmsg(p.b.get(), &msg, MSG_CMSG_CLOEXEC));
  EXPECT_EQ("abc", std::string(bytes, 3));
  cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
  ASSERT_NE(nullptr, cmsg);
  ASSERT_EQ(CMSG_LEN(sizeof(int) * 2), cmsg->cmsg_len);
  int got[2];
  std::memcpy(got, CMSG_DATA(cmsg), sizeof got);
  UniqueFd first(got[0]), second(got[1]);
  struct stat want {}, have {}, passed_socket {};
  ASSERT_EQ(0, ::fstat(file.get(), &want));
  ASSERT_EQ(0, ::fstat(first.get(), &have));
  EXPECT_EQ(want.st_ino, have.st_ino);  // the file, in order
  ASSERT_EQ(0, ::fstat(second.get(), &passed_socket));
  EXPECT_TRUE(S_ISSOCK(passed_socket.st_mode));  // then the socket
}

TEST(SendWithFds, NoDescriptorsIsAPlainMessageAndTooManyIsEinval) {
  Pair p;
  ASSERT_EQ(1, send_with_fds(p.a.get(), "x", 1, nullptr, 0));
  char byte = 0;
  iovec iov{&byte, 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ASSERT_EQ(1, ::recvmsg(p.b.get(), &msg, 0));
  EXPECT_EQ('x', byte);
  EXPECT_EQ(nullptr, CMSG_FIRSTHDR(&msg));
  std::vector<int> many(kMaxAttachedFds + 1, p.a.get());
  errno = 0;
  EXPECT_EQ(-1, send_with_fds(p.a.get(), "y", 1, many.data(), many.size()));
  EXPECT_EQ(EINVAL, errno);
  // The limit itself is sent whole.
  many.pop_back();
  EXPECT_EQ(1, send_with_fds(p.a.get(), "z", 1, many.data(), many.size()));
}

}  // namespace
}  // namespace oishell
