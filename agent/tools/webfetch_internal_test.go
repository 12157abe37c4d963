package tools

import (
	"net/netip"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedactUserinfoChangesOnlyRefusedURLs: the credentials of a URL
// (a user name alone too, and in a URL that does not parse) are hidden,
// nothing else is, and a URL redactUserinfo changes is refused before
// and after (web_fetch's Redact must not change what a call does).
func TestRedactUserinfoChangesOnlyRefusedURLs(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"http://alice:pw@example.com/x", "http://xxxxx@example.com/x"},
		{"https://TOKEN@example.com", "https://xxxxx@example.com"},
		{"http://:pw@example.com/", "http://xxxxx@example.com/"},
		{"http://a@b:pw@example.com/?q=@#@", "http://xxxxx@example.com/?q=@#@"},
		{"http://alice:p%zz@example.com/%zz", "http://xxxxx@example.com/%zz"},
		{"http:alice:pw@example.com", "xxxxx@example.com"}, // no authority: all before the "@"
		{"HTTPS://alice@example.com", "HTTPS://xxxxx@example.com"},
		{"https://example.com/docs@v2?to=a@b#c@d", "https://example.com/docs@v2?to=a@b#c@d"},
		{"https://example.com", "https://example.com"},
		{"not a url", "not a url"},
	} {
		got := redactUserinfo(tc.raw)
		assert.Equal(t, tc.want, got, tc.raw)
		if got != tc.raw {
			_, err := checkFetchURL(tc.raw)
			assert.Error(t, err, "%s is refused", tc.raw)
			_, err = checkFetchURL(got)
			assert.Error(t, err, "%s is refused", got)
		}
	}
}

// TestFetchGuardKeepsAFetchToWhatItsURLNames: an address on this machine
// or a private network is reached only for the host and port the URL
// names (a redirect elsewhere is refused), and one on this machine only
// when the URL names it so; public addresses and the URL's own private
// host (an intranet name) are fine.
func TestFetchGuardKeepsAFetchToWhatItsURLNames(t *testing.T) {
	for _, tc := range []struct {
		url, host, port, addr string
		refused               string // "" allowed
	}{
		{"https://example.com/", "example.com", "443", "93.184.215.14", ""},
		{"https://example.com/", "other.example", "443", "93.184.215.15", ""}, // a public redirect
		{"https://example.com/", "example.com", "443", "127.0.0.1", "its name does not say"},
		{"https://example.com/", "example.com", "443", "::ffff:127.0.0.1", "its name does not say"},
		{"https://example.com/", "example.com", "443", "0.0.0.0", "its name does not say"},
		{"https://example.com/", "example.com", "443", "10.0.0.1", ""}, // the URL's own name
		{"https://example.com/", "router.lan", "80", "192.168.1.1", "does not follow a redirect there"},
		{"https://example.com/", "10.1.2.3", "80", "10.1.2.3", "does not follow a redirect there"},
		{"https://example.com/", "fd12::1", "443", "fd12::1", "does not follow a redirect there"},
		{"https://example.com/", "ts.example", "443", "100.101.102.103", "does not follow a redirect there"},   // CGNAT
		{"https://example.com/", "nat64.example", "443", "64:ff9b::a00:1", "does not follow a redirect there"}, // 10.0.0.1 through NAT64
		{"https://example.com/", "example.com", "443", "64:ff9b::7f00:1", "its name does not say"},
		{"https://example.com/", "example.com", "443", "64:ff9b::5db8:d70e", ""}, // a public address through NAT64
		{"http://wiki.corp/", "wiki.corp", "80", "172.16.5.5", ""},
		{"http://wiki.corp/", "wiki.corp", "8080", "172.16.5.5", "does not follow a redirect there"}, // another port
		{"http://localhost:3000/", "LOCALHOST", "3000", "127.0.0.1", ""},
		{"http://localhost:3000/", "localhost", "7420", "127.0.0.1", "does not follow a redirect there"},
		{"http://app.localhost:3000/", "app.localhost", "3000", "::1", ""},
		{"http://127.0.0.1:9/", "127.0.0.1", "9", "127.0.0.1", ""},
		{"http://[::ffff:127.0.0.1]:9/", "::ffff:127.0.0.1", "9", "::ffff:127.0.0.1", ""},
		{"http://lvh.me:9/", "lvh.me", "9", "127.0.0.1", "its name does not say"},
		{"http://169.254.169.254/", "169.254.169.254", "80", "169.254.169.254", "link-local or cloud metadata"},
	} {
		u, err := url.Parse(tc.url)
		require.NoError(t, err)
		err = newFetchGuard(u).check(tc.host, tc.port, netip.MustParseAddr(tc.addr))
		if tc.refused == "" {
			assert.NoError(t, err, "%s: %s:%s at %s", tc.url, tc.host, tc.port, tc.addr)
		} else if assert.Error(t, err, "%s: %s:%s at %s", tc.url, tc.host, tc.port, tc.addr) {
			assert.Contains(t, err.Error(), tc.refused)
		}
	}
}
