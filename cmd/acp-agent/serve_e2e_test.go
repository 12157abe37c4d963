package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp/acphttp"
)

// served is a running `acp-agent serve`.
type served struct {
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:PORT/acp
	token  string
	stderr *syncWriter
	exited chan error
	// dirs the test gave it, for a restart on the same state.
	root, state string
	args        []string
}

// serveScript is the replay model of the serve tests: "stream" streams
// c0 … c49, "write" writes a file (a permission round trip), "hang" waits
// to be cancelled, "slow" streams s0 … s299 slowly, "flood" streams 5 MB;
// the turn after a tool result says done.
func serveScript(t *testing.T) string {
	t.Helper()
	var stream, slow []map[string]any
	for i := range 50 {
		stream = append(stream, map[string]any{"text": fmt.Sprintf("c%d ", i)})
	}
	for i := range 300 {
		slow = append(slow, map[string]any{"text": fmt.Sprintf("s%d ", i), "delayMs": 2})
	}
	return writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "stream", "events": stream},
		map[string]any{"match": "write", "events": []any{map[string]any{"toolCall": map[string]any{
			"id": "w1", "name": "write_file", "arguments": map[string]any{"path": "notes.txt", "content": "written over serve\n"}}}}},
		map[string]any{"match": "hang", "events": []any{map[string]any{"text": "waiting"}, map[string]any{"hang": true}}},
		map[string]any{"match": "slow", "events": slow},
		map[string]any{"match": "flood", "events": []any{map[string]any{"text": strings.Repeat("x", 1000), "repeat": 5000}}},
		map[string]any{"events": []any{map[string]any{"text": "done"}}},
	}})
}

// startServe runs acp-agent serve on a free loopback port with a fresh
// root and state directory (or those of a previous run, to restart it).
func startServe(t *testing.T, prev *served, extra ...string) *served {
	t.Helper()
	s := &served{stderr: &syncWriter{}, exited: make(chan error, 1)}
	if prev != nil {
		s.root, s.state, s.args = prev.root, prev.state, prev.args
	} else {
		s.root, s.state = t.TempDir(), t.TempDir()
		// macOS-style /tmp symlinks must not make the root look foreign.
		s.root, _ = filepath.EvalSymlinks(s.root)
		s.args = append([]string{"serve", "--listen", "127.0.0.1:0", "--root", s.root,
			"--model", "replay/" + serveScript(t), "--session-dir", filepath.Join(s.state, "sessions"),
			"--sandbox", "off"}, extra...)
	}
	s.cmd = exec.Command(agentBin, s.args...)
	stoppable(s.cmd)
	s.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + s.state, "XDG_STATE_HOME=" + filepath.Join(s.state, "xdg")}
	var out io.Reader
	pr, pw := io.Pipe()
	s.cmd.Stderr = io.MultiWriter(s.stderr, pw)
	s.cmd = startCmd(t, s.cmd, func(cmd *exec.Cmd) (err error) {
		out, err = cmd.StdoutPipe()
		return err
	})
	go func() {
		err := s.cmd.Wait()
		pw.Close()
		s.exited <- err
	}()
	stdout := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(out); stdout <- b }()
	listening := regexp.MustCompile(`listening on (https?://\S+/acp)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		require.True(t, ok, "serve exited before listening:\n%s", s.stderr.String())
		s.url = u
	case <-time.After(waitBudget(t)):
		t.Fatalf("serve did not listen within %s:\n%s", waitBudget(t), s.stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(s.state, "xdg", "acp-agent", "serve-token"))
	require.NoError(t, err)
	s.token = strings.TrimSpace(string(data))
	t.Cleanup(func() {
		s.stop(t)
		select {
		case b := <-stdout:
			assert.Empty(t, string(b), "serve writes nothing to stdout")
		case <-time.After(time.Second):
		}
		if t.Failed() {
			t.Logf("serve stderr:\n%s", s.stderr.String())
		}
	})
	return s
}

// stop asks serve to stop (SIGTERM; CTRL_BREAK_EVENT on Windows) and
// waits for a clean exit. Where it cannot be asked (Wine delivers no
// console control events) it is killed.
func (s *served) stop(t *testing.T) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	if err := askToStop(s.cmd.Process); err != nil {
		_ = s.cmd.Process.Kill()
		s.exited <- <-s.exited
		return
	}
	select {
	case err := <-s.exited:
		s.exited <- err
		assert.NoError(t, err, "serve exits 0 after SIGTERM")
	case <-time.After(waitBudget(t)):
		_ = s.cmd.Process.Kill()
		t.Errorf("serve did not exit within %s of SIGTERM", waitBudget(t))
	}
}

// goClient collects what an acphttp.Client receives.
type goClient struct {
	*acphttp.Client
	mu          sync.Mutex
	text        map[string]*strings.Builder
	kinds       []string
	permissions int
}

func (c *goClient) textOf(sid string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.text[sid]; b != nil {
		return b.String()
	}
	return ""
}

func (c *goClient) reset(sid string) {
	c.mu.Lock()
	delete(c.text, sid)
	c.mu.Unlock()
}

func dialServe(t *testing.T, s *served, ws bool) *goClient {
	t.Helper()
	gc := &goClient{text: map[string]*strings.Builder{}}
	opts := acphttp.ClientOptions{URL: s.url, Token: s.token, WebSocket: ws,
		OnNotification: func(method string, params json.RawMessage) {
			var n struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					Kind    string `json:"sessionUpdate"`
					Content struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			}
			if method != "session/update" || json.Unmarshal(params, &n) != nil {
				return
			}
			gc.mu.Lock()
			defer gc.mu.Unlock()
			gc.kinds = append(gc.kinds, n.Update.Kind)
			if n.Update.Kind == "agent_message_chunk" && n.Update.Content.Type == "text" {
				b := gc.text[n.SessionID]
				if b == nil {
					b = &strings.Builder{}
					gc.text[n.SessionID] = b
				}
				b.WriteString(n.Update.Content.Text)
			}
		},
		OnRequest: func(_ context.Context, method string, params json.RawMessage) (any, error) {
			if method != "session/request_permission" {
				return nil, &acphttp.RPCError{Code: -32601, Message: "not offered: " + method}
			}
			var p struct {
				Options []struct {
					OptionID string `json:"optionId"`
					Kind     string `json:"kind"`
				} `json:"options"`
			}
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			gc.mu.Lock()
			gc.permissions++
			gc.mu.Unlock()
			for _, o := range p.Options {
				if o.Kind == "allow_once" {
					return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": o.OptionID}}, nil
				}
			}
			return nil, fmt.Errorf("no allow_once option in %s", params)
		}}
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	c, _, err := acphttp.Dial(ctx, opts, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	require.NoError(t, err)
	gc.Client = c
	t.Cleanup(func() { c.Close() })
	return gc
}

// newSession opens a session in cwd.
func (c *goClient) newSession(t *testing.T, ctx context.Context, cwd string) string {
	t.Helper()
	var created struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, c.Call(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &created))
	return created.SessionID
}

func (c *goClient) prompt(t *testing.T, ctx context.Context, sid, text string) string {
	t.Helper()
	var r struct {
		StopReason string `json:"stopReason"`
	}
	require.NoError(t, c.Call(ctx, "session/prompt", map[string]any{"sessionId": sid,
		"prompt": []any{map[string]any{"type": "text", "text": text}}}, &r))
	return r.StopReason
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBudget(t))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func wantStream() string {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "c%d ", i)
	}
	return b.String()
}

// TestServeGoClient runs the scenarios of issue 30 with this repository's
// Go client over both transports: initialize, session/new, a prompt with
// streamed updates, a permission round trip, session/cancel and
// $/cancel_request, a restart of the server and session/load.
func TestServeGoClient(t *testing.T) {
	for _, ws := range []bool{false, true} {
		name := "http"
		if ws {
			name = "websocket"
		}
		t.Run(name, func(t *testing.T) {
			s := startServe(t, nil)
			c := dialServe(t, s, ws)
			ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
			defer cancel()
			sid := c.newSession(t, ctx, s.root)

			assert.Equal(t, "end_turn", c.prompt(t, ctx, sid, "stream please"))
			assert.Equal(t, wantStream(), c.textOf(sid), "every chunk, in order, before the response")

			c.reset(sid)
			assert.Equal(t, "end_turn", c.prompt(t, ctx, sid, "write the file"))
			assert.Equal(t, 1, c.permissions, "one permission round trip")
			data, err := os.ReadFile(filepath.Join(s.root, "notes.txt"))
			require.NoError(t, err)
			assert.Equal(t, "written over serve\n", string(data))

			// session/cancel of a hanging turn.
			c.reset(sid)
			stop := make(chan string, 1)
			go func() { stop <- c.prompt(t, ctx, sid, "hang now") }()
			waitUntil(t, "the hanging turn", func() bool { return strings.Contains(c.textOf(sid), "waiting") })
			require.NoError(t, c.Notify(ctx, "session/cancel", map[string]any{"sessionId": sid}))
			assert.Equal(t, "cancelled", <-stop)

			// $/cancel_request of the prompt request: the client's call
			// ids are 1 (initialize over WebSocket), then counted up; the
			// id is read from the request it sends.
			c.reset(sid)
			go func() { stop <- c.prompt(t, ctx, sid, "hang again") }()
			waitUntil(t, "the second hanging turn", func() bool { return strings.Contains(c.textOf(sid), "waiting") })
			require.NoError(t, c.Notify(ctx, "$/cancel_request", map[string]any{"requestId": c.LastID()}))
			assert.Equal(t, "cancelled", <-stop)

			// Restart: the session is loaded, its conversation replayed.
			c.Close()
			s.stop(t)
			s2 := startServe(t, s)
			c2 := dialServe(t, s2, ws)
			require.NoError(t, c2.Call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": s.root, "mcpServers": []any{}}, nil))
			waitUntil(t, "the replay", func() bool { return strings.Contains(c2.textOf(sid), "c49") })
			assert.Contains(t, c2.textOf(sid), wantStream())
			assert.Equal(t, "end_turn", c2.prompt(t, ctx, sid, "stream again"))
		})
	}
}

// TestServeResumesWithLastEventID: the Go client's session stream is cut
// mid-turn, twice, losing events in transit each time; it reconnects with
// Last-Event-ID and gets every chunk exactly once, in order.
func TestServeResumesWithLastEventID(t *testing.T) {
	s := startServe(t, nil)
	c := dialServe(t, s, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	sid := c.newSession(t, ctx, s.root)
	stop := make(chan string, 1)
	go func() { stop <- c.prompt(t, ctx, sid, "slow please") }()
	// Each cut loses events in transit: the server delivered them, the
	// client never handled them; only a replay brings them back.
	for _, at := range []string{"s40 ", "s150 "} {
		waitUntil(t, at, func() bool { return strings.Contains(c.textOf(sid), at) })
		c.InterruptStream(sid, 5)
	}
	assert.Equal(t, "end_turn", <-stop)
	var want strings.Builder
	for i := range 300 {
		fmt.Fprintf(&want, "s%d ", i)
	}
	assert.Equal(t, want.String(), c.textOf(sid))
	assert.Equal(t, 2, c.Resumes())
}

// sdkNodeModules returns .ci/node_modules with the TypeScript SDK and ws,
// or skips the test.
func sdkNodeModules(t *testing.T) (node, modules, script string) {
	t.Helper()
	modules, err := filepath.Abs(filepath.Join("..", "..", ".ci", "node_modules"))
	require.NoError(t, err)
	for _, p := range []string{"@agentclientprotocol/sdk/dist/transports/http-stream.js", "ws/package.json"} {
		if _, err := os.Stat(filepath.Join(modules, p)); err != nil {
			t.Skipf("the ACP TypeScript SDK is not installed (%v); run `npm ci --prefix .ci` in the repository root", err)
		}
	}
	node, err = exec.LookPath("node")
	if err != nil {
		t.Skipf("the TypeScript SDK is installed but node is not on PATH: %v", err)
	}
	script, err = filepath.Abs(filepath.Join("testdata", "serve", "sdk_client.mjs"))
	require.NoError(t, err)
	return node, modules, script
}

// runSDK runs one phase of the TypeScript SDK client and decodes its
// report.
func runSDK(t *testing.T, s *served, phase, transport string, extra ...string) map[string]any {
	t.Helper()
	node, modules, script := sdkNodeModules(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script, modules, phase, s.url, s.token, transport, s.root}, extra...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node %s %s:\n%s", phase, transport, stderr.String())
	var report map[string]any
	require.NoError(t, json.Unmarshal(out, &report), "%s", out)
	return report
}

// TestServeTypeScriptSDK runs the same scenarios with the official
// TypeScript SDK's Streamable HTTP and WebSocket clients, a client nobody
// here wrote: initialize, session/new, streamed prompt, permission,
// session/cancel, $/cancel_request, restart and session/load, and (HTTP)
// a Last-Event-ID resume of a cut session stream.
func TestServeTypeScriptSDK(t *testing.T) {
	sdkNodeModules(t)
	for _, transport := range []string{"http", "ws"} {
		t.Run(transport, func(t *testing.T) {
			s := startServe(t, nil)
			r := runSDK(t, s, "run", transport)
			assert.Equal(t, "acp-agent", r["agent"])
			assert.Equal(t, "end_turn", r["streamStop"])
			assert.Equal(t, wantStream(), r["streamText"])
			assert.Equal(t, "end_turn", r["writeStop"])
			assert.EqualValues(t, 1, r["permissions"])
			assert.Equal(t, "cancelled", r["cancelStop"])
			assert.Equal(t, "cancelled", r["cancelRequestStop"])
			data, err := os.ReadFile(filepath.Join(s.root, "notes.txt"))
			require.NoError(t, err)
			assert.Equal(t, "written over serve\n", string(data))
			if transport == "http" {
				assert.NotNil(t, r["transportMeta"], "resumption is advertised on HTTP")
			} else {
				assert.Nil(t, r["transportMeta"], "and not on WebSocket")
			}

			sid, _ := r["sessionId"].(string)
			s.stop(t)
			s2 := startServe(t, s)
			l := runSDK(t, s2, "load", transport, sid)
			assert.Contains(t, l["loadText"], wantStream())
		})
	}
	t.Run("resume", func(t *testing.T) {
		s := startServe(t, nil)
		r := runSDK(t, s, "resume", "http")
		var want strings.Builder
		for i := range 300 {
			fmt.Fprintf(&want, "s%d ", i)
		}
		assert.Equal(t, "end_turn", r["slowStop"])
		assert.Equal(t, want.String(), r["slowText"], "every chunk exactly once, in order, across the cut")
		assert.EqualValues(t, 1, r["resumes"])
	})
}

// healthz fetches /healthz, with the token when auth is set.
func healthzOf(t *testing.T, s *served, auth bool) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(s.url, "/acp")+"/healthz", nil)
	require.NoError(t, err)
	if auth {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return body
}

// TestServeRoutesAnswersAsTheSDK: session/new and session/load are
// answered on the connection stream, a prompt's updates and answer on
// its session's stream (the TypeScript SDK's routing), and every event
// has a cursor.
func TestServeRoutesAnswersAsTheSDK(t *testing.T) {
	s := startServe(t, nil)
	status, _, h := rawRequest(t, s, http.MethodPost, initBody, nil)
	require.Equal(t, http.StatusOK, status)
	conn := h.Get("Acp-Connection-Id")
	post := func(sid, body string) {
		st, b, _ := rawRequest(t, s, http.MethodPost, body, map[string]string{"Acp-Connection-Id": conn, "Acp-Session-Id": sid})
		require.Equal(t, http.StatusAccepted, st, b)
	}
	cs := openRawStream(t, s, conn, "")
	defer cs.Close()
	post("", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"`+jsonText(s.root)+`","mcpServers":[]}}`)
	var resp struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(cs.next(t, `"id":2`)), &resp))
	sid := resp.Result.SessionID
	ss := openRawStream(t, s, conn, sid)
	defer ss.Close()
	post(sid, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+sid+`","prompt":[{"type":"text","text":"stream"}]}}`)
	ss.next(t, `c49 "`) // the last chunk's text ends an event (merged or not)
	assert.Contains(t, ss.next(t, `"id":3`), `"end_turn"`)
	post(sid, `{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"`+sid+`","cwd":"`+jsonText(s.root)+`","mcpServers":[]}}`)
	ss.next(t, `c49 "`) // the replay, on the session's stream
	assert.Contains(t, cs.next(t, `"id":4`), `"result"`, "the answer, on the connection's")
}

// TestConnectBridgesStdioToServe: `acp-agent connect URL` is a stdio agent
// for editors that only start subprocesses: an acptest client on its
// pipes (checking every message against the schema) runs a session on a
// remote serve through it.
func TestConnectBridgesStdioToServe(t *testing.T) {
	s := startServe(t, nil)
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(s.token+"\n"), 0o600))
	p := startAgent(t, nil, "connect", "--token-file", tokenFile, s.url)
	p.Client.AnnouncesCommands = false
	p.Initialize(nil)
	sid := p.NewSession(s.root)
	resp, updates := p.Call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "stream"}}})
	assert.Contains(t, string(resp.Result), "end_turn")
	assert.Equal(t, wantStream(), textOf(t, updates))
}
