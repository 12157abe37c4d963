package main

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A client routes a provider to a metadata address while the agent's
// environment names a proxy (HTTP_PROXY, HTTPS_PROXY: common where
// machines reach the outside only through one). The agent never dials
// the address itself, so the dial rule alone would let the proxy carry
// the request, with the client's Metadata-Flavor header, to where the
// machine's credentials are handed out. The proxy here is a loopback
// httptest server that records what it is asked for: an address the
// rule refuses reaches it never, an ordinary one does (the control).
func TestBinaryRoutedProviderNeverAsksAProxyForMetadataAddresses(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.String())
		mu.Unlock()
		http.Error(w, "proxy says no", http.StatusBadGateway)
	}))
	t.Cleanup(proxy.Close)
	// The control is a name that this test's /etc/hosts puts on loopback:
	// were the proxy ever bypassed, its direct dial would stay on this
	// machine (an ordinary address would not).
	inNS, hostsEnv := hostsNamespace(t, "127.0.0.1 localhost\n127.0.0.2 neighbour.test\n")
	cmd := inNS(agentBin, "--model", "openai/test-model", "--sandbox", "off")
	p := startAgentCmd(t, cmd, []string{hostsEnv, "HTTP_PROXY=" + proxy.URL, "HTTPS_PROXY=" + proxy.URL, "NO_PROXY=",
		"ACP_AGENT_MAX_RETRIES=0", "ACP_AGENT_DISCOVER_MODELS=false"})
	p.Initialize(nil)
	for _, tc := range []struct {
		base    string
		refused bool
	}{
		{"http://169.254.169.254/latest/meta-data/iam/security-credentials/role", true},
		{"http://100.100.100.200/latest/meta-data", true},
		{"http://[::ffff:169.254.169.254]/v1", true},
		{"http://[fd00:ec2::254]/v1", true},
		{"https://169.254.169.254/v1", true},
		// The C library's forms of 169.254.169.254, which a proxy's
		// getaddrinfo reads as the address.
		{"http://2852039166/latest/meta-data", true},
		{"http://0xA9FEA9FE/latest/meta-data", true},
		{"http://169.254.43518/latest/meta-data", true},
		{"http://neighbour.test/v1", false},
	} {
		mu.Lock()
		asked = nil
		mu.Unlock()
		resp := promptThroughRoute(t, p, tc.base)
		mu.Lock()
		got := append([]string(nil), asked...)
		mu.Unlock()
		if tc.refused {
			assert.Empty(t, got, "%s: the proxy was asked", tc.base)
			assert.Contains(t, resp.Error.Message, "link-local or cloud metadata address", tc.base)
		} else if tc.base[:5] == "http:" {
			assert.NotEmpty(t, got, "%s: the proxy carries an ordinary address (control)", tc.base)
		}
	}
}
