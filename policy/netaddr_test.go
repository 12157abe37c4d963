package policy

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

// CheckURLAddress refuses a URL whose host is an address the dial rule
// refuses, however it is written; a name passes (it is checked where it
// is dialled).
func TestCheckURLAddress(t *testing.T) {
	for raw, refused := range map[string]bool{
		"http://169.254.169.254/latest":        true,
		"https://169.254.169.254:8443/x":       true,
		"http://[::ffff:169.254.169.254]/":     true,
		"http://[fe80::1%25eth0]/":             true,
		"http://100.100.100.200/":              true,
		"http://[64:ff9b::a9fe:a9fe]/":         true,
		"http://100.100.100.201/":              false,
		"http://127.0.0.1:8080/v1":             false,
		"https://metadata.google.internal/v1/": false,
		"https://api.openai.com/v1":            false,
	} {
		u, err := url.Parse(raw)
		if !assert.NoError(t, err, raw) {
			continue
		}
		assert.Equal(t, refused, CheckURLAddress(u) != nil, raw)
	}
}

// A proxy resolves a URL's host with getaddrinfo, which reads inet_aton's
// numeric forms as IPv4 addresses (checked here with getent: each of
// these is 169.254.169.254): the URL check refuses them as the address.
func TestCheckURLAddressReadsTheCLibrarysIPv4Forms(t *testing.T) {
	for _, host := range []string{"2852039166", "0xA9FEA9FE", "0xa9fea9fe", "0251.0376.0251.0376", "169.254.43518",
		"169.16689662", "0xA9.0xFE.0xA9.0xFE", "169.254.169.254.", "2852039166.", "100.100.100.200", "1684301000"} {
		u := &url.URL{Scheme: "http", Host: host}
		assert.Error(t, CheckURLAddress(u), host)
	}
	for _, host := range []string{"example.com", "1.2.3.4", "100.100.100.201", "0x", "1.2.3.4.5", "256.1.1.1", "4294967296",
		"1e3", "0b1", "1_000", "09", "a9fea9fe", "+1.2.3.4"} {
		u := &url.URL{Scheme: "http", Host: host}
		assert.NoError(t, CheckURLAddress(u), host)
	}
}
