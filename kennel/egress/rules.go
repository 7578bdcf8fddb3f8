package egress

import (
	"net"
	"net/netip"
)

// Reasons a connection is refused; they appear in events and metrics.
const (
	ReasonNotAllowed = "not_allowed" // the host is not on the run's allowlist
	ReasonAddress    = "address"     // it resolves to an address no run may reach
	ReasonToken      = "token"       // the request carried no valid run token
	ReasonResolve    = "resolve"     // the host name did not resolve
	ReasonRoute      = "route"       // an API route that does not exist
)

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT
	metadataV6  = netip.MustParseAddr("fd00:ec2::254")   // the cloud metadata service over IPv6
)

func isShared(a netip.Addr) bool { return sharedSpace.Contains(a.Unmap()) }

// forbidden says why no run may connect to a, or "" when a run may (subject
// to its allowlist).
func forbidden(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid(), a.IsUnspecified():
		return "unspecified address"
	case a.IsLoopback():
		return "loopback address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a == metadataV6:
		return "link-local or metadata address"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast address"
	case a.Is4() && a.As4()[0] == 255:
		return "broadcast address"
	}
	return ""
}

// checkAddr says why a run may not connect to a, or "" when it may.
// Private and shared addresses are reached only by a name the owner
// allowed (ownerNamed); the proxy's own gateways (the host machine) never.
func (s *Server) checkAddr(a netip.Addr, ownerNamed bool) string {
	a = a.Unmap()
	if r := forbidden(a); r != "" {
		return r
	}
	for _, g := range s.gateways {
		if g == a {
			return "the host machine"
		}
	}
	if (a.IsPrivate() || isShared(a)) && !ownerNamed {
		return "private address"
	}
	return ""
}

// localGateways lists the addresses the host machine answers on for the
// proxy's container: on a Docker bridge, the first address of each
// attached network (the bridge's gateway). Read from the container's own
// interfaces, so that it holds on any engine.
func localGateways() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		p, ok := netip.AddrFromSlice(n.IP)
		if !ok || p.IsLoopback() || p.IsLinkLocalUnicast() {
			continue
		}
		ones, _ := n.Mask.Size()
		prefix := netip.PrefixFrom(p.Unmap(), ones).Masked()
		first := prefix.Addr().Next()
		if first.IsValid() && first != p.Unmap() {
			out = append(out, first)
		}
	}
	return out
}
