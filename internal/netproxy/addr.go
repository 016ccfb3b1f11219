package netproxy

import "net/netip"

// nonPublic are the ranges Public refuses beyond what netip's predicates
// cover: "this network" (0.0.0.0/8, which Linux routes to the machine
// itself), shared address space (100.64.0.0/10, carrier NAT and
// tailnets), IETF protocol assignments, benchmarking, reserved and
// broadcast addresses, IPv4-compatible and deprecated site-local IPv6.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("fec0::/10"),
}

// embedsIPv4 are the IPv6 ranges that carry an IPv4 address a gateway
// may route to: NAT64 (the last 32 bits) and 6to4 (bits 16 to 48).
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// Public reports whether a is an address the proxy connects to for a
// host that is not listed explicitly: a global unicast address that is
// not private (RFC 1918, fc00::/7), loopback, link-local (169.254.0.0/16
// with the cloud metadata service, fe80::/10), multicast, unspecified or
// in nonPublic, IPv4-mapped, NAT64 and 6to4 addresses judged by the IPv4
// address they carry.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return Public(netip.AddrFrom4([4]byte(b[12:16])))
		case sixTo4.Contains(a):
			return Public(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
