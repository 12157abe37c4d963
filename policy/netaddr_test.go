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
