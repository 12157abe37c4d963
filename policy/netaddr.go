package policy

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
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
//
// A host the C library reads as an IPv4 address counts as one: a proxy
// resolves names with getaddrinfo, which takes inet_aton's forms
// (2852039166, 0xA9FEA9FE, 0251.0376.0251.0376, 169.254.43518, and a
// trailing dot: all 169.254.169.254).
func CheckURLAddress(u *url.URL) error {
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		return CheckDialAddress(a)
	}
	if a, ok := inetAton(u.Hostname()); ok {
		return CheckDialAddress(a)
	}
	return nil
}

// inetAton reads s as inet_aton does: one to four parts separated by
// dots (one trailing dot allowed), each decimal, octal (leading 0) or
// hexadecimal (0x), the last filling the bytes the others leave.
func inetAton(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(s, ".")
	parts := strings.Split(s, ".")
	if s == "" || len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		digits, base := p, 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			digits, base = p[2:], 16
		case len(p) > 1 && p[0] == '0':
			digits, base = p[1:], 8
		}
		n, err := strconv.ParseUint(digits, base, 32)
		if err != nil || digits == "" || digits[0] == '+' {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 0xff {
				return netip.Addr{}, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(4-i)) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
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
