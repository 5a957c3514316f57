#include "runtime/outside/kernel_probe_ns.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include "base/status.h"
#include "base/unique_fd.h"

namespace oishell::probe_ns {
namespace {

std::string failed(const std::string& call) { return call + ": " + errno_text(errno); }

bool write_file(const char* path, const std::string& content) {
  UniqueFd fd(::open(path, O_WRONLY | O_CLOEXEC));
  return fd && ::write(fd.get(), content.data(), content.size()) == static_cast<ssize_t>(content.size());
}

std::string enter(uid_t uid, gid_t gid) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) != 0) return failed("unshare(user|mount|net)");
  if (!write_file("/proc/self/setgroups", "deny")) return failed("write /proc/self/setgroups");
  if (!write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1")) {
    return failed("write /proc/self/uid_map");
  }
  if (!write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1")) {
    return failed("write /proc/self/gid_map");
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return failed("mount(/, MS_PRIVATE)");
  if (::mount("tmpfs", "/tmp", "tmpfs", 0, nullptr) != 0) return failed("mount(tmpfs)");
  return "ok";
}

std::string try_tun() {
  UniqueFd fd(::open("/dev/net/tun", O_RDWR | O_CLOEXEC));
  if (!fd) return failed("open(/dev/net/tun)");
  ifreq ifr{};
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(ifr.ifr_name, "oishell0", IFNAMSIZ - 1);
  if (::ioctl(fd.get(), TUNSETIFF, &ifr) != 0) return failed("ioctl(TUNSETIFF)");
  return "ok";
}

// Appends one netlink message: header, nfgenmsg, then optional attributes.
void put_message(std::vector<char>& buf, uint16_t type, uint16_t flags, uint32_t seq, uint8_t family,
                 uint16_t res_id, const std::vector<char>& attrs = {}) {
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(NLMSG_LENGTH(sizeof(nfgenmsg)) + attrs.size());
  h.nlmsg_type = type;
  h.nlmsg_flags = flags;
  h.nlmsg_seq = seq;
  nfgenmsg g{};
  g.nfgen_family = family;
  g.version = NFNETLINK_V0;
  g.res_id = htons(res_id);
  size_t start = buf.size();
  buf.resize(start + NLMSG_ALIGN(h.nlmsg_len), 0);
  std::memcpy(buf.data() + start, &h, sizeof h);
  std::memcpy(buf.data() + start + NLMSG_HDRLEN, &g, sizeof g);
  if (!attrs.empty()) std::memcpy(buf.data() + start + NLMSG_LENGTH(sizeof(nfgenmsg)), attrs.data(), attrs.size());
}

std::string try_nftables() {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER));
  if (!fd) return failed("socket(AF_NETLINK, NETLINK_NETFILTER)");
  const char name[] = "oishell_probe";
  std::vector<char> attr(NLA_ALIGN(NLA_HDRLEN + sizeof name), 0);
  nlattr a{static_cast<uint16_t>(NLA_HDRLEN + sizeof name), NFTA_TABLE_NAME};
  std::memcpy(attr.data(), &a, sizeof a);
  std::memcpy(attr.data() + NLA_HDRLEN, name, sizeof name);
  std::vector<char> batch;
  put_message(batch, NFNL_MSG_BATCH_BEGIN, NLM_F_REQUEST, 1, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  put_message(batch, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK, 2,
              NFPROTO_INET, 0, attr);
  put_message(batch, NFNL_MSG_BATCH_END, NLM_F_REQUEST, 3, AF_UNSPEC, NFNL_SUBSYS_NFTABLES);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd.get(), batch.data(), batch.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    return failed("sendto(nftables batch)");
  }
  timeval tv{2, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char reply[8192];
  ssize_t n = ::recv(fd.get(), reply, sizeof reply, 0);
  if (n < 0) return failed("recv(nftables ack)");
  for (auto* h = reinterpret_cast<nlmsghdr*>(reply); NLMSG_OK(h, static_cast<unsigned>(n));
       h = NLMSG_NEXT(h, n)) {
    if (h->nlmsg_type != NLMSG_ERROR) continue;
    auto* err = static_cast<nlmsgerr*>(NLMSG_DATA(h));
    if (err->error == 0) return "ok";
    errno = -err->error;
    return failed("nftables NEWTABLE");
  }
  return "no acknowledgement from nftables";
}

}  // namespace

NsResults run() {
  NsResults results;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    results.userns = failed("pipe2");
    return results;
  }
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  pid_t pid = ::fork();
  if (pid < 0) {
    results.userns = failed("fork");
    return results;
  }
  if (pid == 0) {
    ::close(p[0]);
    std::string userns = enter(uid, gid);
    std::string out = userns + "\n";
    if (userns == "ok") {
      out += try_tun() + "\n" + try_nftables() + "\n";
    } else {
      out += "needs a user namespace\nneeds a user namespace\n";
    }
    [[maybe_unused]] ssize_t n = ::write(p[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(p[1]);
  std::string text;
  char buf[1024];
  ssize_t n;
  while ((n = ::read(p[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) text.append(buf, static_cast<size_t>(n));
  }
  ::close(p[0]);
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {}
  std::istringstream in(text);
  if (!std::getline(in, results.userns)) results.userns = "probe child died";
  std::getline(in, results.tun);
  std::getline(in, results.nftables);
  return results;
}

}  // namespace oishell::probe_ns
