package main

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokenCatcher is a server that records the Authorization headers it is
// sent and answers 401 (so connect gives up at once).
type tokenCatcher struct {
	mu   sync.Mutex
	seen []string
}

func (c *tokenCatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.seen = append(c.seen, r.Header.Get("Authorization"))
	c.mu.Unlock()
	http.Error(w, "no", http.StatusUnauthorized)
}

func (c *tokenCatcher) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

// TestConnectNeverSendsTheTokenInClearBeyondLoopback: `acp-agent connect`
// refuses a plain http:// URL whose host is not loopback (serve refuses
// to listen there for the same reason: the bearer token would cross the
// network in clear) unless --insecure, and follows no redirect, which
// Go's client would follow with the Authorization header to the same
// host name, https to plain http included. The names resolve to loopback
// through an /etc/hosts bound over in a mount namespace the test makes:
// nothing leaves the machine.
func TestConnectNeverSendsTheTokenInClearBeyondLoopback(t *testing.T) {
	const secret = "Zm9vYmFyLXNlY3JldC10b2tlbi0xMjM0NTY3ODkw"
	plain := &tokenCatcher{}
	ps := httptest.NewServer(plain)
	defer ps.Close()
	pu, err := url.Parse(ps.URL)
	require.NoError(t, err)
	// The TLS server redirects to the plain one, on the same host name
	// (example.com, which its certificate names).
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://example.com:"+pu.Port()+"/acp", http.StatusTemporaryRedirect)
	}))
	defer ts.Close()
	tu, err := url.Parse(ts.URL)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o644))
	inNS, hostsEnv := hostsNamespace(t, "127.0.0.1 localhost\n127.0.0.1 agent.test\n127.0.0.1 example.com\n")
	connect := func(args ...string) string {
		t.Helper()
		cmd := inNS(append([]string{agentBin, "connect"}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + dir, hostsEnv,
			"ACP_AGENT_TOKEN=" + secret, "SSL_CERT_FILE=" + certFile}
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "connect fails: %s", out)
		return string(out)
	}

	out := connect("http://agent.test:" + pu.Port() + "/acp")
	assert.Contains(t, out, "refusing to send the token over plain HTTP to agent.test:"+pu.Port())
	assert.Empty(t, plain.got(), "nothing was sent to a plain-HTTP host that is not loopback")

	out = connect("https://example.com:" + tu.Port() + "/acp")
	assert.Contains(t, out, "connect follows no redirects")
	assert.Empty(t, plain.got(), "a redirect from https to plain http took the token along")

	// The controls: loopback by address, and --insecure, reach the server
	// (so the assertions above could fail).
	connect("http://127.0.0.1:" + pu.Port() + "/acp")
	connect("--insecure", "http://agent.test:"+pu.Port()+"/acp")
	assert.Equal(t, []string{"Bearer " + secret, "Bearer " + secret}, plain.got())
}
