package sandbox

import "fmt"

// networkFiltered reports whether p gets the network filter (see
// networkFilter): whenever the policy cuts the network, or keeps it to
// grub's proxy (ProxyPort, --allow-domain), so that the proxy's port is
// the only way out.
func networkFiltered(p Policy) bool { return p.NoNetwork || p.ProxyPort != 0 }

// abiResolveUnix is the first Landlock ABI that can refuse connecting to
// pathname Unix sockets (LANDLOCK_ACCESS_FS_RESOLVE_UNIX).
const abiResolveUnix = 9

// unixLeftToLandlock reports whether the network filter may let a command
// create AF_UNIX sockets under p on a kernel with Landlock ABI abi: only
// where enforce refuses connecting to pathname Unix sockets (a restricted
// filesystem without WithResolveUnix, which it gives NoNetwork) and the
// ABI can. Abstract sockets are Landlock's scope (ABI 6) either way.
func unixLeftToLandlock(p Policy, abi int) bool {
	return p.NoNetwork && p.Mode != ModeOff && abi >= abiResolveUnix
}

// filterOptions are what the filter lets through that depends on the
// policy and the kernel.
type filterOptions struct {
	// unix lets AF_UNIX sockets be created (see unixLeftToLandlock).
	unix bool
	// listen lets listen(2) through. Where Landlock refuses every TCP
	// bind (NoNetwork) a TCP socket could still listen unbound, on an
	// ephemeral port of every address (the kernel's autobind, which
	// Landlock does not see), and take connections from the network.
	listen bool
}

// filterFor is the filter's options for p on a kernel with Landlock ABI
// abi, for a launcher in a network namespace of its own (ownNet) or not.
// In its own namespace a listening socket takes connections from that
// namespace only, so listen is let through there.
func filterFor(p Policy, abi int, ownNet bool) filterOptions {
	return filterOptions{unix: unixLeftToLandlock(p, abi), listen: !p.NoNetwork || ownNet}
}

// networkGaps says what cutting the network under p cannot do on a
// kernel with Landlock ABI abi where FilterSupported answered filterOK
// and why, for Resolve's warning; "" when nothing is missing or p does
// not cut the network.
func networkGaps(p Policy, abi int, filterOK bool, why string) string {
	if !networkFiltered(p) {
		return ""
	}
	if !filterOK {
		gaps := "UDP (DNS included), Multipath TCP, raw sockets"
		if !unixLeftToLandlock(p, abi) {
			gaps += " and pathname Unix sockets (a Docker or SSH agent socket)"
		}
		return fmt.Sprintf("no seccomp network filter here (%s): --no-network refuses TCP only; %s still reach out", why, gaps)
	}
	if !unixLeftToLandlock(p, abi) {
		reason := fmt.Sprintf("Landlock %s cannot refuse only connecting to pathname ones (ABI 9 can)", abiName(abi))
		if abi >= abiResolveUnix {
			reason = "--sandbox=off does not check pathname ones"
		}
		return "--no-network refuses Unix sockets altogether, since " + reason + ": a tool that talks to a local daemon over one (ssh-agent, Docker, a database) fails"
	}
	return ""
}
