package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/acphttp"
	"github.com/acp-agent/acp-agent/internal/winetest"
)

// TestServeShutsDownGracefully: on SIGTERM a running turn is cancelled
// and answered "cancelled" on its stream, the process exits 0, and the
// session file has everything up to then (a restart loads it).
func TestServeShutsDownGracefully(t *testing.T) {
	winetest.NeedsRealWindows(t, winetest.CtrlEvents)
	for _, ws := range []bool{false, true} {
		s := startServe(t, nil)
		c := dialServe(t, s, ws)
		ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
		sid := c.newSession(t, ctx, s.root)
		require.Equal(t, "end_turn", c.prompt(t, ctx, sid, "stream please"))
		stop := make(chan string, 1)
		go func() {
			var r struct {
				StopReason string `json:"stopReason"`
			}
			err := c.Call(ctx, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hang"}}}, &r)
			if err != nil {
				stop <- err.Error()
			}
			stop <- r.StopReason
		}()
		waitUntil(t, "the hanging turn", func() bool { return strings.Contains(c.textOf(sid), "waiting") })
		s.stop(t)
		// Not by the 10 s fallback: the connections ended with the
		// shutdown (a time limit here would measure the machine's load).
		assert.NotContains(t, s.stderr.String(), "connections still open", "the connections were ended at once")
		assert.Equal(t, "cancelled", <-stop, "the turn is answered before the streams close")
		s2 := startServe(t, s)
		c2 := dialServe(t, s2, ws)
		require.NoError(t, c2.Call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": s.root, "mcpServers": []any{}}, nil))
		waitUntil(t, "the replay", func() bool { return strings.Contains(c2.textOf(sid), "waiting") })
		assert.Contains(t, c2.textOf(sid), wantStream())
		cancel()
	}
}

// selfSigned writes a certificate and key for 127.0.0.1 and returns
// their paths and a pool that trusts it.
func selfSigned(t *testing.T) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "acp-agent test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	require.NoError(t, err)
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	kb, err := x509.MarshalECPrivateKey(priv)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
	parsed, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(parsed)
	return cert, key, pool
}

// TestServeSpeaksHTTP2: h2c (HTTP/2 without TLS) on loopback, HTTP/2
// over TLS with --tls-cert; a whole prompt runs over each.
func TestServeSpeaksHTTP2(t *testing.T) {
	run := func(t *testing.T, s *served, hc *http.Client) {
		resp, err := hc.Get(strings.TrimSuffix(s.url, "/acp") + "/healthz")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 2, resp.ProtoMajor, resp.Proto)
		c, _, err := acphttp.Dial(context.Background(), acphttp.ClientOptions{URL: s.url, Token: s.token, HTTPClient: hc},
			map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
		require.NoError(t, err)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
		defer cancel()
		var created struct {
			SessionID string `json:"sessionId"`
		}
		require.NoError(t, c.Call(ctx, "session/new", map[string]any{"cwd": s.root, "mcpServers": []any{}}, &created))
		var r struct {
			StopReason string `json:"stopReason"`
		}
		require.NoError(t, c.Call(ctx, "session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "stream"}}}, &r))
		assert.Equal(t, "end_turn", r.StopReason)
	}
	t.Run("h2c", func(t *testing.T) {
		s := startServe(t, nil)
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		defer tr.CloseIdleConnections()
		run(t, s, &http.Client{Transport: tr})
	})
	t.Run("tls", func(t *testing.T) {
		cert, key, pool := selfSigned(t)
		s := startServe(t, nil, "--tls-cert", cert, "--tls-key", key)
		require.True(t, strings.HasPrefix(s.url, "https://"), s.url)
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		run(t, s, &http.Client{Transport: tr})
	})
}

// serveExits runs serve with args and returns its exit error and stderr.
func serveExits(t *testing.T, env []string, args ...string) (error, string) {
	t.Helper()
	cmd := exec.Command(agentBin, append([]string{"serve", "--model", "replay/default"}, args...)...)
	cmd.Env = append(agentEnv(t), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd = startCmd(t, cmd, nil)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return err, stderr.String()
	case <-time.After(waitBudget(t)):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("serve %q did not exit; stderr:\n%s", args, stderr.String())
		return nil, ""
	}
}

// TestServeRefusesUnsafeSetups: plain HTTP beyond loopback, a token file
// others can read, a --root that is not a directory: serve does not
// start, and says why.
func TestServeRefusesUnsafeSetups(t *testing.T) {
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0"} {
		err, stderr := serveExits(t, env, "--listen", addr)
		require.Error(t, err, addr)
		assert.Contains(t, stderr, "refusing to serve plain HTTP", addr)
		assert.Contains(t, stderr, "--tls-cert")
	}
	token := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(token, []byte("0123456789abcdef0123456789\n"), 0o644))
	if !onWindows { // no mode bits there: the folder's ACL keeps it private
		err, stderr := serveExits(t, env, "--listen", "127.0.0.1:0", "--token-file", token)
		require.Error(t, err)
		assert.Contains(t, stderr, "is readable by others")
	}
	err, stderr := serveExits(t, env, "--listen", "127.0.0.1:0", "--root", token)
	require.Error(t, err)
	assert.Contains(t, stderr, "not a directory")
	err, stderr = serveExits(t, env, "--tls-cert", token)
	require.Error(t, err)
	assert.Contains(t, stderr, "go together")
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr          string
		tls, insecure bool
		ok            bool
	}{
		{"127.0.0.1:7420", false, false, true},
		{"[::1]:7420", false, false, true},
		{"localhost:7420", false, false, true},
		{"0.0.0.0:7420", false, false, false},
		{"192.0.2.1:7420", false, false, false},
		{"dev.example:7420", false, false, false},
		{"0.0.0.0:7420", true, false, true},
		{"0.0.0.0:7420", false, true, true},
	} {
		err := checkListen(tc.addr, tc.tls, tc.insecure)
		assert.Equal(t, tc.ok, err == nil, "%+v: %v", tc, err)
	}
}

// TestServeTokenFile: the first start creates the token file (0600) and
// prints the token once, on stderr; a restart reads it and prints
// nothing.
func TestServeTokenFile(t *testing.T) {
	s := startServe(t, nil)
	info, err := os.Stat(filepath.Join(s.state, "xdg", "acp-agent", "serve-token"))
	require.NoError(t, err)
	if !onWindows { // no mode bits there: the folder's ACL keeps it private
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}
	assert.Equal(t, 1, strings.Count(s.stderr.String(), s.token), "printed once")
	assert.GreaterOrEqual(t, len(s.token), 40, "32 random bytes")
	s.stop(t)
	s2 := startServe(t, s)
	assert.Equal(t, s.token, s2.token)
	assert.NotContains(t, s2.stderr.String(), s.token, "not printed again")
}

// TestServeReportsCounters: /healthz answers anyone with its status and
// an authorized caller with per-connection and per-session counters;
// --telemetry-file gets the connection events.
func TestServeReportsCounters(t *testing.T) {
	tel := filepath.Join(t.TempDir(), "telemetry.jsonl")
	s := startServe(t, nil, "--telemetry-file", tel)
	c := dialServe(t, s, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	sid := c.newSession(t, ctx, s.root)
	require.Equal(t, "end_turn", c.prompt(t, ctx, sid, "stream"))
	anon := healthzOf(t, s, false)
	assert.Equal(t, "ok", anon["status"])
	assert.Nil(t, anon["transport"], "no counters without the token")
	tr := healthzOf(t, s, true)["transport"].(map[string]any)
	require.EqualValues(t, 1, tr["connections"])
	conn := tr["open"].([]any)[0].(map[string]any)
	assert.Equal(t, c.ConnectionID(), conn["id"])
	assert.EqualValues(t, 2, conn["openStreams"])
	var sess map[string]any
	for _, x := range conn["sessions"].([]any) {
		if x.(map[string]any)["sessionId"] == sid {
			sess = x.(map[string]any)
		}
	}
	require.NotNil(t, sess)
	// The prompt's 50 chunks (merged when they wait for the stream) and
	// its answer.
	assert.Greater(t, sess["messages"], float64(1), "the prompt's chunks and its answer")
	assert.Greater(t, sess["bytes"], float64(len(strings.Repeat("cN ", 50))), "at least the chunks' text")
	c.Close()
	waitUntil(t, "connection_closed", func() bool {
		data, _ := os.ReadFile(tel)
		return strings.Contains(string(data), "connection_closed")
	})
	data, err := os.ReadFile(tel)
	require.NoError(t, err)
	var names []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Name       string            `json:"name"`
			SessionID  string            `json:"sessionId"`
			Attributes map[string]string `json:"attributes"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		names = append(names, e.Name)
		if e.Name == "session_stream" {
			assert.Equal(t, sid, e.SessionID)
			assert.Equal(t, c.ConnectionID(), e.Attributes["connection"])
		}
		if e.Name == "connection_closed" {
			assert.Contains(t, e.Attributes["reason"], "DELETE")
			assert.NotEqual(t, "0", e.Attributes["messagesOut"])
		}
	}
	assert.Contains(t, names, "connection_opened")
	assert.Contains(t, names, "session_stream")
}

// TestServeReapsIdleConnections: a connection with no request and no
// open event stream for --idle-timeout is ended; its id then gets 404
// saying why.
func TestServeReapsIdleConnections(t *testing.T) {
	s := startServe(t, nil, "--idle-timeout", "500ms")
	status, _, h := rawRequest(t, s, http.MethodPost, initBody, nil)
	require.Equal(t, http.StatusOK, status)
	conn := h.Get("Acp-Connection-Id")
	waitUntil(t, "the reaping", func() bool {
		return healthzOf(t, s, true)["transport"].(map[string]any)["connections"].(float64) == 0
	})
	status, body, _ := rawRequest(t, s, http.MethodPost, `{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}`, map[string]string{"Acp-Connection-Id": conn})
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, "idle for 500ms")
	// A connection with an open event stream is not idle.
	c := dialServe(t, s, false)
	time.Sleep(1500 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	require.NoError(t, c.Call(ctx, "session/list", map[string]any{}, nil))
}
