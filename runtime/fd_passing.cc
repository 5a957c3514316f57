#include "runtime/fd_passing.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/scm_rights.h"

namespace oishell {

namespace {

constexpr char kInline = 'i';
constexpr char kInMemfd = 'm';
static_assert(kMaxPassedFds + 1 <= kMaxAttachedFds, "the payload's memfd travels beside the passed fds");

constexpr unsigned kSeals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;

Status send_packet(int socket, std::string_view packet, const std::vector<int>& fds) {
  if (send_with_fds(socket, packet.data(), packet.size(), fds.data(), fds.size()) < 0) {
    return Status::from_errno(errno, "sendmsg");
  }
  return Status::ok();
}

// A sealed memfd holding `payload`: its contents cannot change once the receiver has it.
Result<UniqueFd> sealed_memfd(const std::string& payload) {
  UniqueFd fd(::memfd_create("oishell-message", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return Status::from_errno(errno, "memfd_create");
  for (size_t done = 0; done < payload.size();) {
    ssize_t n = ::write(fd.get(), payload.data() + done, payload.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::from_errno(errno, "write(memfd)");
    done += static_cast<size_t>(n);
  }
  if (::fcntl(fd.get(), F_ADD_SEALS, kSeals) != 0) return Status::from_errno(errno, "fcntl(memfd, F_ADD_SEALS)");
  return fd;
}

// The payload a sender put in `memfd`: sealed, so that what is read is what was sent, and not larger than accepted.
Result<std::string> read_memfd(int memfd) {
  int seals = ::fcntl(memfd, F_GET_SEALS);
  if (seals < 0 || (static_cast<unsigned>(seals) & kSeals) != kSeals) {
    return Status::error("message: its payload descriptor is not a sealed memfd");
  }
  struct stat st {};
  if (::fstat(memfd, &st) != 0) return Status::from_errno(errno, "fstat(memfd)");
  if (static_cast<uint64_t>(st.st_size) > kMaxMessageBytes) {
    return Status::error("message of " + std::to_string(st.st_size) + " bytes exceeds the limit of " +
                         std::to_string(kMaxMessageBytes));
  }
  std::string payload(static_cast<size_t>(st.st_size), '\0');
  for (size_t done = 0; done < payload.size();) {
    ssize_t n = ::pread(memfd, payload.data() + done, payload.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::from_errno(n < 0 ? errno : EIO, "pread(memfd)");
    done += static_cast<size_t>(n);
  }
  return payload;
}

}  // namespace

Status send_message(int socket, const std::string& payload, const std::vector<int>& fds) {
  if (payload.size() > kMaxMessageBytes) {
    return Status::error("message of " + std::to_string(payload.size()) + " bytes exceeds the limit of " +
                         std::to_string(kMaxMessageBytes));
  }
  if (fds.size() > kMaxPassedFds) return Status::error("too many fds to pass: " + std::to_string(fds.size()));
  if (payload.size() <= kInlineMessageBytes) {
    std::string packet;
    packet.reserve(payload.size() + 1);
    packet += kInline;
    packet += payload;
    return send_packet(socket, packet, fds);
  }
  auto memfd = sealed_memfd(payload);
  if (!memfd.is_ok()) return memfd.status().with_context("a message of " + std::to_string(payload.size()) + " bytes");
  std::vector<int> with_payload = fds;
  with_payload.push_back(memfd->get());
  return send_packet(socket, std::string_view(&kInMemfd, 1), with_payload);
}

Result<Message> receive_message(int socket) {
  // The packet's length first (MSG_PEEK | MSG_TRUNC, no descriptor taken: there is no room for any), then the
  // packet into a payload of that size. A buffer of the largest size instead costs a 192 KiB allocation per
  // thread, which in a new process (sandbox init) took 0.2 ms, more than the extra call.
  // ECONNRESET once: the peer closed while a packet of ours sat unread on its side. The kernel reports that error
  // before the packets still queued for us (a datagram receive takes the socket's error first, and clears it), so
  // the peer's last words, such as sandbox init's reason for failing, come on the next call, or the end (0). The
  // peer may close between the two calls below, so either of them may be the one that takes the error.
  bool reset_taken = false;
  auto receive = [&reset_taken](auto call) {  // EINTR again; ECONNRESET again once (see above)
    for (;;) {
      ssize_t n = call();
      if (n >= 0) return n;
      if (errno == EINTR) continue;
      if (errno != ECONNRESET || reset_taken) return n;
      reset_taken = true;
    }
  };
  ssize_t length = receive([socket] { return ::recv(socket, nullptr, 0, MSG_PEEK | MSG_TRUNC); });
  if (length < 0) return Status::from_errno(errno, "recv(MSG_PEEK)");
  Message out;
  out.payload.resize(std::min(static_cast<size_t>(length), kInlineMessageBytes + 1));
  iovec iov{out.payload.data(), out.payload.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * (kMaxPassedFds + 1))];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  // The packet the peek saw is still queued if the peer closes now: the reset is taken here then.
  ssize_t n = receive([socket, &msg] { return ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC); });
  if (n < 0) return Status::from_errno(errno, "recvmsg");
  out.payload.resize(static_cast<size_t>(n));
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof fd);
      out.fds.emplace_back(fd);
    }
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) return Status::error("recvmsg: message truncated");
  if (out.payload.empty()) return out;  // the peer closed
  const char where = out.payload[0];
  out.payload.erase(0, 1);
  if (where == kInline) return out;
  if (where != kInMemfd || !out.payload.empty() || out.fds.empty()) {
    return Status::error("recvmsg: a packet that is not a message of this protocol");
  }
  UniqueFd memfd = std::move(out.fds.back());
  out.fds.pop_back();
  auto payload = read_memfd(memfd.get());
  if (!payload.is_ok()) return payload.status();
  out.payload = std::move(payload.value());
  return out;
}

}  // namespace oishell
