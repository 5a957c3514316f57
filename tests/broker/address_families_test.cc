// The broker's first decision (runtime/broker/address_families.h): unix, inet, inet6 and netlink only, netlink to
// the kernel only.
#include "runtime/broker/address_families.h"

#include <gtest/gtest.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>

namespace oishell::broker {
namespace {

sockaddr_storage of_family(int family) {
  sockaddr_storage ss{};
  ss.ss_family = static_cast<sa_family_t>(family);
  return ss;
}

sockaddr_storage netlink(uint32_t groups, uint32_t pid) {
  sockaddr_nl nl{};
  nl.nl_family = AF_NETLINK;
  nl.nl_groups = groups;
  nl.nl_pid = pid;
  sockaddr_storage ss{};
  std::memcpy(&ss, &nl, sizeof nl);
  return ss;
}

TEST(AddressFamilies, TheFourFamiliesAndADisconnectGoOn) {
  for (int domain : {AF_UNIX, AF_INET, AF_INET6}) {
    for (int family : {AF_UNSPEC, AF_UNIX, AF_INET, AF_INET6}) {
      EXPECT_EQ(0, refused_address(domain, of_family(family), sizeof(sockaddr_storage))) << domain << " " << family;
    }
  }
  EXPECT_EQ(0, refused_address(AF_NETLINK, netlink(0, 0), sizeof(sockaddr_nl)));
  EXPECT_EQ(0, refused_address(AF_NETLINK, of_family(AF_UNSPEC), sizeof(sa_family_t)));
}

TEST(AddressFamilies, EveryOtherFamilyIsRefused) {
  for (int family : {AF_PACKET, AF_VSOCK, AF_BLUETOOTH, AF_TIPC, AF_CAN, AF_ALG, AF_XDP, AF_MAX - 1, 255}) {
    for (int domain : {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK}) {
      EXPECT_EQ(EAFNOSUPPORT, refused_address(domain, of_family(family), sizeof(sockaddr_storage)))
          << domain << " " << family;
    }
    // A socket of that family (a policy without the `sockets` set could make one): refused whatever the address.
    EXPECT_EQ(EAFNOSUPPORT, refused_address(family, of_family(AF_INET), sizeof(sockaddr_storage))) << family;
    EXPECT_EQ(EAFNOSUPPORT, refused_address(family, of_family(AF_UNSPEC), sizeof(sockaddr_storage))) << family;
  }
}

TEST(AddressFamilies, NetlinkReachesTheKernelOnly) {
  EXPECT_EQ(EPERM, refused_address(AF_NETLINK, netlink(1, 0), sizeof(sockaddr_nl)));  // RTMGRP_LINK
  EXPECT_EQ(EPERM, refused_address(AF_NETLINK, netlink(0x80000000u, 0), sizeof(sockaddr_nl)));
  EXPECT_EQ(EPERM, refused_address(AF_NETLINK, netlink(0, 4242), sizeof(sockaddr_nl)));
  // What netlink_connect answers for another family's address or a short one.
  EXPECT_EQ(EINVAL, refused_address(AF_NETLINK, of_family(AF_INET), sizeof(sockaddr_storage)));
  EXPECT_EQ(EINVAL, refused_address(AF_NETLINK, netlink(0, 0), sizeof(sockaddr_nl) - 1));
  // A netlink address on an inet or unix socket is the kernel's to refuse (EAFNOSUPPORT, EINVAL): not the broker's.
  EXPECT_EQ(0, refused_address(AF_INET, netlink(1, 0), sizeof(sockaddr_nl)));
}

}  // namespace
}  // namespace oishell::broker
