package policy

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"syscall"
	"time"
)

// metadataAddresses are the cloud metadata services (they hand out
// credentials) outside the link-local ranges: Alibaba Cloud's, AWS's and
// Google Cloud's IPv6 ones, and Azure's WireServer.
var metadataAddresses = []netip.Addr{
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("fd20:ce::254"),
	netip.MustParseAddr("168.63.129.16"),
}

// nat64 is the well-known NAT64 prefix: 64:ff9b::a9fe:a9fe reaches
// 169.254.169.254 through a NAT64 gateway.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// ReachedAddress is the address a connection to a reaches, however a
// writes it: without its IPv6 zone, IPv4-mapped IPv6 as IPv4, and
// through NAT64 the IPv4 address the gateway connects to (on its own
// network).
func ReachedAddress(a netip.Addr) netip.Addr {
	b := a.WithZone("").Unmap()
	if b.Is6() && nat64.Contains(b) {
		raw := b.As16()
		b = netip.AddrFrom4([4]byte(raw[12:]))
	}
	return b
}

// CheckDialAddress refuses the addresses the agent never connects to on
// behalf of a model (web_fetch) or a client (a model endpoint it routes
// to): the link-local ones (169.254.0.0/16, fe80::/10; where cloud
// metadata services answer and hand out the machine's credentials) and
// the metadata addresses outside them, however they are written
// (ReachedAddress).
func CheckDialAddress(a netip.Addr) error {
	b := ReachedAddress(a)
	if b.IsLinkLocalUnicast() || b.IsLinkLocalMulticast() || slices.Contains(metadataAddresses, b) {
		return fmt.Errorf("%s is a link-local or cloud metadata address; acp-agent does not connect there", a)
	}
	return nil
}

// CheckURLAddress applies CheckDialAddress to u's host when it is an
// address (a name is resolved, and checked, where it is dialled). A
// request sent through a proxy is dialled by the proxy, not by the
// agent's dialler: transports that may use one check the URL first.
func CheckURLAddress(u *url.URL) error {
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		return CheckDialAddress(a)
	}
	return nil
}

// DialControl is a net.Dialer Control that applies CheckDialAddress to
// the address each connection is dialled to, so names that resolve there
// and redirects are covered.
func DialControl(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dialling %q, not an address: %w", address, err)
	}
	return CheckDialAddress(ap.Addr())
}

// Dialer is a net.Dialer like http.DefaultTransport's (30 s to connect,
// 30 s keep-alive) whose Control is DialControl: for the transports of
// connections a client or a model chose the address of (routed model
// endpoints, MCP http and sse servers).
func Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: DialControl}
}
