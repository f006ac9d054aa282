package fetch

import (
	"net/netip"
)

// Messages of refused addresses; they are shown to the caller, who gave the
// URL, so they say what was refused without naming the address.
const (
	msgLoopback  = "The address resolves to this machine (loopback)."
	msgPrivate   = "The address resolves to a private network."
	msgLinkLocal = "The address resolves to a link-local network."
	msgMulticast = "The address resolves to a multicast address."
	msgReserved  = "The address resolves to a reserved or unspecified address."
)

// Ranges that netip's predicates do not cover but that no public service
// answers on.
var (
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")  // carrier-grade NAT, shared address space
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")      // "this network"
	ietfProto   = netip.MustParsePrefix("192.0.0.0/24")   // IETF protocol assignments
	benchmark   = netip.MustParsePrefix("198.18.0.0/15")  // network benchmarking
	reserved4   = netip.MustParsePrefix("240.0.0.0/4")    // reserved, and the broadcast address
	siteLocal6  = netip.MustParsePrefix("fec0::/10")      // deprecated site-local
	nat64       = netip.MustParsePrefix("64:ff9b::/96")   // NAT64: embeds an IPv4 address
	nat64Local  = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64
	sixToFour   = netip.MustParsePrefix("2002::/16")      // 6to4: embeds an IPv4 address
	discard6    = netip.MustParsePrefix("100::/64")       // discard-only
	orchid6     = netip.MustParsePrefix("2001:10::/28")   // deprecated ORCHID
	teredo      = netip.MustParsePrefix("2001::/32")      // Teredo: embeds an obfuscated IPv4 address
	ipv4Compat6 = netip.MustParsePrefix("::/96")          // deprecated IPv4-compatible
	benchmark6  = netip.MustParsePrefix("2001:2::/48")    // network benchmarking
)

// refusal returns why the address may not be dialled, or "" when it may.
func refusal(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		// Addresses that carry an IPv4 address are judged by it, so a
		// gateway cannot be made to reach a private IPv4 host.
		switch {
		case nat64.Contains(a):
			b := a.As16()
			if r := refusal(netip.AddrFrom4([4]byte(b[12:16]))); r != "" {
				return r
			}
		case sixToFour.Contains(a):
			b := a.As16()
			if r := refusal(netip.AddrFrom4([4]byte(b[2:6]))); r != "" {
				return r
			}
		case nat64Local.Contains(a), teredo.Contains(a), discard6.Contains(a),
			orchid6.Contains(a), benchmark6.Contains(a):
			return msgReserved
		case ipv4Compat6.Contains(a) && !a.IsLoopback() && !a.IsUnspecified():
			return msgReserved
		}
	}
	switch {
	case !a.IsValid():
		return msgReserved
	case a.IsLoopback():
		return msgLoopback
	case a.IsUnspecified():
		return msgReserved
	case a.IsPrivate(), cgnat.Contains(a), siteLocal6.Contains(a):
		return msgPrivate
	case a.IsLinkLocalUnicast():
		return msgLinkLocal
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return msgMulticast
	case thisNetwork.Contains(a), ietfProto.Contains(a), benchmark.Contains(a), reserved4.Contains(a):
		return msgReserved
	}
	return ""
}
