package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acphttp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/internal/winetest"
)

// rawRequest sends one HTTP request to serve and returns the status and
// body. hdr values replace the defaults; an empty value removes one.
func rawRequest(t *testing.T, s *served, method, body string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	return rawRequestURL(t, s.url, s.token, method, body, hdr)
}

func rawRequestURL(t *testing.T, url, token, method, body string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		return resp.StatusCode, "", resp.Header
	}
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Header
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`

// storedConversation opens a session with a conversation whose file the
// attacks must leave intact, and returns its id.
func storedConversation(t *testing.T, s *served) string {
	t.Helper()
	c := dialServe(t, s, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	sid := c.newSession(t, ctx, s.root)
	require.Equal(t, "end_turn", c.prompt(t, ctx, sid, "stream please"))
	require.NoError(t, c.Close())
	return sid
}

// checkSurvived: the server answers, and the stored conversation loads
// with everything in it.
func checkSurvived(t *testing.T, s *served, sid string) {
	t.Helper()
	assert.Equal(t, "ok", healthzOf(t, s, false)["status"])
	c := dialServe(t, s, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	require.NoError(t, c.Call(ctx, "session/load", map[string]any{"sessionId": sid, "cwd": s.root, "mcpServers": []any{}}, nil))
	waitUntil(t, "the replay", func() bool { return strings.Contains(c.textOf(sid), "c49") })
	assert.Contains(t, c.textOf(sid), wantStream())
	require.NoError(t, c.Close())
}

// TestServeRefusesBadCredentials: no token, a wrong one, another scheme,
// a token in the query string (even the right one, even with the right
// header), on POST, GET, DELETE and the WebSocket upgrade.
func TestServeRefusesBadCredentials(t *testing.T) {
	s := startServe(t, nil)
	sid := storedConversation(t, s)
	for _, tc := range []struct {
		name   string
		url    string
		hdr    map[string]string
		status int
		says   string
	}{
		{"no token", s.url, map[string]string{"Authorization": ""}, 401, "missing bearer token"},
		{"wrong token", s.url, map[string]string{"Authorization": "Bearer " + strings.Repeat("A", 43)}, 401, "invalid bearer token"},
		{"prefix of the token", s.url, map[string]string{"Authorization": "Bearer " + s.token[:10]}, 401, "invalid bearer token"},
		{"basic auth", s.url, map[string]string{"Authorization": "Basic " + s.token}, 401, "missing bearer token"},
		{"token in the query", s.url + "?token=" + s.token, nil, 400, "credentials in the URL are refused"},
		{"access_token in the query", s.url + "?access_token=x", map[string]string{"Authorization": ""}, 400, "credentials in the URL are refused"},
		{"the token as any query value", s.url + "?q=" + s.token, nil, 400, "credentials in the URL are refused"},
		{"the token as a query name", s.url + "?" + s.token, nil, 400, "credentials in the URL are refused"},
		{"the token as a query name with a value", s.url + "?x=1&" + s.token + "=1", nil, 400, "credentials in the URL are refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				hdr := map[string]string{"Accept": "text/event-stream"}
				for k, v := range tc.hdr {
					hdr[k] = v
				}
				status, body, h := rawRequestURL(t, tc.url, s.token, method, initBody, hdr)
				assert.Equal(t, tc.status, status, "%s: %s", method, body)
				assert.Contains(t, body, tc.says, method)
				assert.Empty(t, h.Get("Acp-Connection-Id"), "no connection was opened")
				if tc.status == 401 {
					assert.Contains(t, h.Get("WWW-Authenticate"), "Bearer")
				}
			}
			// The WebSocket upgrade, likewise.
			hdr := http.Header{}
			for k, v := range tc.hdr {
				if v != "" {
					hdr.Set(k, v)
				}
			}
			if _, ok := tc.hdr["Authorization"]; !ok {
				hdr.Set("Authorization", "Bearer "+s.token)
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
			defer cancel()
			ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(tc.url, "http"), &websocket.DialOptions{HTTPHeader: hdr})
			require.Error(t, err)
			if ws != nil {
				ws.CloseNow()
			}
			require.NotNil(t, resp)
			assert.Equal(t, tc.status, resp.StatusCode)
		})
	}
	// /healthz too: a probe configured with the token in its URL is told
	// so, with or without the header, not answered as if nothing was
	// wrong while its URL goes into logs.
	healthz := strings.TrimSuffix(s.url, "/acp") + "/healthz"
	for _, u := range []string{healthz + "?token=" + s.token, healthz + "?access_token=x", healthz + "?" + s.token} {
		for _, hdr := range []map[string]string{nil, {"Authorization": ""}} { // with the token, without
			status, body, _ := rawRequestURL(t, u, s.token, http.MethodGet, "", hdr)
			assert.Equal(t, http.StatusBadRequest, status, "%s: %s", u, body)
			assert.Contains(t, body, "credentials in the URL are refused")
		}
	}
	assert.EqualValues(t, 0, healthzOf(t, s, true)["transport"].(map[string]any)["connections"])
	checkSurvived(t, s, sid)
}

// TestServeRefusesCrossOriginRequests: a page in a browser cannot open a
// WebSocket (or POST) to the agent, even with the Origin of the host it
// dialled (DNS rebinding) and even with the token; an origin allowed with
// --allow-origin can.
func TestServeRefusesCrossOriginRequests(t *testing.T) {
	s := startServe(t, nil, "--allow-origin", "https://editor.example")
	host := strings.TrimPrefix(strings.TrimSuffix(s.url, "/acp"), "http://")
	for _, origin := range []string{"https://evil.example", "http://" + host, "null"} {
		ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
		ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http"), &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer " + s.token}, "Origin": {origin}}})
		cancel()
		require.Error(t, err, origin)
		if ws != nil {
			ws.CloseNow()
		}
		require.NotNil(t, resp, origin)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, origin)
		status, body, _ := rawRequest(t, s, http.MethodPost, initBody, map[string]string{"Origin": origin})
		assert.Equal(t, http.StatusForbidden, status, origin)
		assert.Contains(t, body, "is not allowed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http"), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + s.token}, "Origin": {"https://editor.example"}}})
	require.NoError(t, err, "an allowed origin")
	assert.NotEmpty(t, resp.Header.Get("Acp-Connection-Id"))
	ws.Close(websocket.StatusNormalClosure, "")
}

// escapes are the ways out of serve's root: the file system's root and
// a system directory (/ and /etc, or C:\ and C:\Windows), and a symbolic
// link in the root to the file system's root.
func escapes(t *testing.T, s *served) (top, sys, link string) {
	t.Helper()
	top, sys = "/", "/etc"
	if onWindows {
		top = filepath.VolumeName(s.root) + `\`
		sys = filepath.Join(top, "Windows")
	}
	link = filepath.Join(s.root, "escape")
	require.NoError(t, os.Symlink(top, link))
	if winetest.Active {
		link = top // Wine makes no symlink: the case is the root itself again
	}
	return top, sys, link
}

// TestServeConfinesSessionsToRoots: a client cannot open a session (new,
// load, resume, fork) whose cwd or additionalDirectories is outside
// --root, through a symbolic link either, nor start a stdio MCP server;
// session/list shows no session outside the roots.
func TestServeConfinesSessionsToRoots(t *testing.T) {
	s := startServe(t, nil)
	outside := t.TempDir()
	top, sys, link := escapes(t, s)
	inside := filepath.Join(s.root, "project")
	require.NoError(t, os.Mkdir(inside, 0o755))
	sid := storedConversation(t, s)
	for _, ws := range []bool{false, true} {
		c := dialServe(t, s, ws)
		ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
		for _, tc := range []struct {
			method string
			params map[string]any
			says   string
		}{
			{"session/new", map[string]any{"cwd": top, "mcpServers": []any{}}, "cwd: " + top + " is outside"},
			{"session/new", map[string]any{"cwd": outside, "mcpServers": []any{}}, "is outside the directories this agent serves"},
			{"session/new", map[string]any{"cwd": link, "mcpServers": []any{}}, "is outside"},
			{"session/new", map[string]any{"cwd": s.root + "/../", "mcpServers": []any{}}, "is outside"},
			{"session/new", map[string]any{"cwd": inside, "mcpServers": []any{}, "additionalDirectories": []string{sys}}, "additionalDirectories[0]: " + sys + " is outside"},
			{"session/new", map[string]any{"cwd": inside, "mcpServers": []any{map[string]any{"name": "sh", "command": "/bin/sh", "args": []string{"-c", "id"}, "env": []any{}}}}, "stdio MCP servers"},
			{"session/load", map[string]any{"sessionId": sid, "cwd": top, "mcpServers": []any{}}, "is outside"},
			{"session/resume", map[string]any{"sessionId": sid, "cwd": outside}, "is outside"},
			{"session/fork", map[string]any{"sessionId": sid, "cwd": top}, "not open"},
		} {
			err := c.Call(ctx, tc.method, tc.params, nil)
			var re *acphttp.RPCError
			require.ErrorAs(t, err, &re, "%s %v", tc.method, tc.params)
			assert.Equal(t, int64(-32602), re.Code)
			assert.Contains(t, re.Message, tc.says)
		}
		// Inside the root it works; a fork of that live session into /etc
		// does not.
		live := c.newSession(t, ctx, inside)
		err := c.Call(ctx, "session/fork", map[string]any{"sessionId": live, "cwd": sys}, nil)
		var re *acphttp.RPCError
		require.ErrorAs(t, err, &re, "fork of a live session into /etc")
		assert.Contains(t, re.Message, "is outside")
		cancel()
		c.Close()
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries)
	checkSurvived(t, s, sid)
}

// TestServeHidesStoredSessionsOutsideTheRoots (issue 30 review): the
// session directory is shared with the user's editor sessions, so a
// client that learns the id of one outside the roots must not reach it
// through any method that takes a session id: session/load and resume
// (which would replay it), fork, delete, archive, unarchive, set_title
// and status all answer exactly as for an unknown id (-32002, the same
// message and data), and change nothing. The sessions: one with a
// conversation in a directory outside, one started there and never
// prompted (a reservation), one inside whose additionalDirectories are
// outside, and a subagent that worked inside for a parent stored outside
// (a child follows its parent). session/list shows none of them, while a
// session under the root still works. v2 clients (resume with a replay,
// fork, and the same management methods) are answered alike.
func TestServeHidesStoredSessionsOutsideTheRoots(t *testing.T) {
	s := startServe(t, nil)
	sessionDir := filepath.Join(s.state, "sessions")
	outside := t.TempDir()
	inside := filepath.Join(s.root, "project")
	require.NoError(t, os.Mkdir(inside, 0o755))
	mine := storedConversation(t, s)

	// The user's editor, on stdio, on the same session directory.
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "delegate", "events": []any{map[string]any{"toolCall": map[string]any{"id": "t1", "name": "task",
			"arguments": map[string]any{"description": "look", "prompt": "[child] look around"}}}}},
		map[string]any{"match": "[child]", "events": []any{map[string]any{"text": "child saw the secret plan"}}},
		map[string]any{"events": []any{map[string]any{"text": "the secret plan is in the editor's session"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--session-dir", sessionDir)
	p.Initialize(nil)
	conversation := p.NewSession(outside)
	askText(t, p, conversation, "tell me the secret plan")
	reserved := p.NewSession(outside)
	resp, _ := p.Call(acp.MethodSessionNew, map[string]any{"cwd": inside, "mcpServers": []any{}, "additionalDirectories": []string{outside}})
	var wide acp.NewSessionResponse
	acptest.MustResult(t, resp, &wide)
	askText(t, p, string(wide.SessionID), "hello")
	// A parent stored outside, loaded by the editor in the root: its
	// subagent's own directory is inside.
	parent := p.NewSession(outside)
	askText(t, p, parent, "hello")
	resp, _ = p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: parent, CWD: inside, MCPServers: []acp.McpServer{}})
	acptest.MustResult(t, resp, nil)
	askText(t, p, parent, "delegate please")
	// session/list leaves subagents out: the child is the file whose
	// header names the parent (the directory holds the serve session made
	// above too).
	files, err := filepath.Glob(filepath.Join(sessionDir, "*.jsonl"))
	require.NoError(t, err)
	child := ""
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		first, _, _ := strings.Cut(string(data), "\n")
		var hdr struct {
			ID       string `json:"id"`
			Parent   string `json:"parentSessionId"`
			Subagent bool   `json:"subagent"`
		}
		if json.Unmarshal([]byte(first), &hdr) == nil && hdr.Subagent && hdr.Parent == parent {
			require.Empty(t, child, "one subagent")
			child = hdr.ID
		}
	}
	require.NotEmpty(t, child, "the subagent is stored: %v", files)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 10*time.Second))
	theirs := func() map[string]string {
		out := map[string]string{}
		for _, name := range []string{conversation + ".jsonl", string(wide.SessionID) + ".jsonl", parent + ".jsonl", child + ".jsonl",
			filepath.Join(".reserved", reserved)} {
			data, err := os.ReadFile(filepath.Join(sessionDir, name))
			require.NoError(t, err, name)
			out[name] = string(data)
		}
		return out
	}
	before := theirs()

	unknown := "0b7c8d4e-1111-4000-8000-000000000000"
	type method struct {
		method string
		params func(id string) map[string]any
	}
	idOnly := func(id string) map[string]any { return map[string]any{"sessionId": id} }
	common := []method{
		{"session/set_title", func(id string) map[string]any { return map[string]any{"sessionId": id, "title": "mine now"} }},
		{"session/status", idOnly},
		{"session/archive", idOnly},
		{"session/unarchive", idOnly},
		{"session/delete", idOnly},
	}
	for _, version := range []struct {
		name    string
		dial    func() *acphttp.Client
		methods []method
	}{
		{"v1", func() *acphttp.Client { return dialServe(t, s, false).Client }, append([]method{
			{"session/load", func(id string) map[string]any {
				return map[string]any{"sessionId": id, "cwd": s.root, "mcpServers": []any{}}
			}},
			{"session/resume", func(id string) map[string]any { return map[string]any{"sessionId": id, "cwd": s.root} }},
			{"session/fork", func(id string) map[string]any {
				return map[string]any{"sessionId": id, "cwd": s.root, "additionalDirectories": []string{}, "mcpServers": []any{}}
			}},
		}, common...)},
		{"v2", func() *acphttp.Client { return dialServeV2(t, s, false) }, append([]method{
			{"session/resume", func(id string) map[string]any {
				return map[string]any{"sessionId": id, "cwd": s.root, "replayFrom": map[string]any{"type": "start"}}
			}},
			{"session/fork", func(id string) map[string]any { return map[string]any{"sessionId": id, "cwd": s.root} }},
		}, common...)},
	} {
		c := version.dial()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		answer := func(method string, params map[string]any) *acphttp.RPCError {
			err := c.Call(ctx, method, params, nil)
			var re *acphttp.RPCError
			require.ErrorAs(t, err, &re, "%s %s %v", version.name, method, params)
			return re
		}
		for _, m := range version.methods {
			want := answer(m.method, m.params(unknown))
			require.Equal(t, int64(-32002), want.Code, "%s %s of an unknown id", version.name, m.method)
			for name, id := range map[string]string{"conversation": conversation, "never prompted": reserved,
				"additionalDirectories outside": string(wide.SessionID), "subagent of a parent outside": child} {
				got := answer(m.method, m.params(id))
				assert.Equal(t, want.Code, got.Code, "%s %s, %s", version.name, m.method, name)
				assert.Equal(t, strings.ReplaceAll(want.Message, unknown, id), got.Message, "%s %s, %s: as an unknown id", version.name, m.method, name)
				assert.JSONEq(t, strings.ReplaceAll(string(want.Data), unknown, id), string(got.Data), "%s %s, %s", version.name, m.method, name)
			}
		}
		var listed struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
			} `json:"sessions"`
		}
		require.NoError(t, c.Call(ctx, "session/list", map[string]any{}, &listed))
		var ids []string
		for _, si := range listed.Sessions {
			ids = append(ids, si.SessionID)
		}
		assert.Equal(t, []string{mine}, ids, "%s: only the session under the root is listed", version.name)
		// The session under the root answers every one of them.
		var st struct {
			Status string `json:"status"`
		}
		require.NoError(t, c.Call(ctx, "session/status", map[string]any{"sessionId": mine}, &st))
		assert.Equal(t, "saved", st.Status, version.name)
		require.NoError(t, c.Call(ctx, "session/set_title", map[string]any{"sessionId": mine, "title": "renamed"}, nil))
		cancel()
		require.NoError(t, c.Close())
	}
	assert.Equal(t, before, theirs(), "nothing outside the roots was touched")
	assert.NotContains(t, s.stderr.String(), "secret plan")
	checkSurvived(t, s, mine)
}

// TestServeRefusesMalformedRequests: each malformed or unknown thing gets
// a clear HTTP status or JSON-RPC error, and the server goes on.
func TestServeRefusesMalformedRequests(t *testing.T) {
	s := startServe(t, nil)
	sid := storedConversation(t, s)
	status, _, h := rawRequest(t, s, http.MethodPost, initBody, nil)
	require.Equal(t, http.StatusOK, status)
	conn := h.Get("Acp-Connection-Id")
	prompt := func(id string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"` + id + `","prompt":[{"type":"text","text":"hi"}]}}`
	}
	for _, tc := range []struct {
		name   string
		method string
		body   string
		hdr    map[string]string
		status int
		says   string
	}{
		{"text/plain body", http.MethodPost, initBody, map[string]string{"Content-Type": "text/plain"}, 415, "Unsupported Media Type"},
		{"no content type", http.MethodPost, initBody, map[string]string{"Content-Type": ""}, 415, "Unsupported Media Type"},
		{"not JSON", http.MethodPost, `{"jsonrpc":`, map[string]string{"Acp-Connection-Id": conn}, 400, "Invalid JSON"},
		{"a batch", http.MethodPost, `[` + initBody + `]`, nil, 400, "batches are not supported"},
		{"a number", http.MethodPost, `42`, map[string]string{"Acp-Connection-Id": conn}, 400, "not an object"},
		{"no connection id", http.MethodPost, prompt(sid), map[string]string{"Acp-Session-Id": sid}, 400, "Missing Acp-Connection-Id"},
		{"unknown connection id", http.MethodPost, prompt(sid), map[string]string{"Acp-Connection-Id": "0b7c8d4e-0000-4000-8000-000000000000", "Acp-Session-Id": sid}, 404, "Unknown Acp-Connection-Id"},
		{"garbage connection id", http.MethodPost, prompt(sid), map[string]string{"Acp-Connection-Id": "../../etc/passwd", "Acp-Session-Id": sid}, 404, "Unknown Acp-Connection-Id"},
		{"initialize on a connection", http.MethodPost, initBody, map[string]string{"Acp-Connection-Id": conn}, 400, "Initialize not allowed"},
		{"no session header", http.MethodPost, prompt(sid), map[string]string{"Acp-Connection-Id": conn}, 400, "Missing Acp-Session-Id"},
		// A session-scoped method must name its session in the header
		// even when its params name none.
		{"no session anywhere", http.MethodPost, `{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{"prompt":[]}}`, map[string]string{"Acp-Connection-Id": conn}, 400, "Missing Acp-Session-Id"},
		{"mismatched session header", http.MethodPost, prompt(sid), map[string]string{"Acp-Connection-Id": conn, "Acp-Session-Id": "other"}, 400, "Mismatched Acp-Session-Id"},
		{"malformed session header", http.MethodPost, prompt("../x"), map[string]string{"Acp-Connection-Id": conn, "Acp-Session-Id": "../x"}, 400, "malformed Acp-Session-Id"},
		{"a huge session header", http.MethodGet, "", map[string]string{"Acp-Connection-Id": conn, "Acp-Session-Id": strings.Repeat("a", 5000), "Accept": "text/event-stream"}, 400, "malformed Acp-Session-Id"},
		{"GET without Accept", http.MethodGet, "", map[string]string{"Acp-Connection-Id": conn}, 406, "Not Acceptable"},
		{"GET of an unknown connection", http.MethodGet, "", map[string]string{"Acp-Connection-Id": "nope", "Accept": "text/event-stream"}, 404, "Unknown Acp-Connection-Id"},
		{"DELETE without an id", http.MethodDelete, "", nil, 400, "Missing Acp-Connection-Id"},
		{"DELETE of an unknown id", http.MethodDelete, "", map[string]string{"Acp-Connection-Id": "nope"}, 404, "Unknown Acp-Connection-Id"},
		{"a bad Last-Event-ID", http.MethodGet, "", map[string]string{"Acp-Connection-Id": conn, "Accept": "text/event-stream", "Last-Event-ID": "999999"}, 409, "outside the retention window"},
		{"PUT", http.MethodPut, "", nil, 405, "Method Not Allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := rawRequest(t, s, tc.method, tc.body, tc.hdr)
			assert.Equal(t, tc.status, status, body)
			assert.Contains(t, body, tc.says)
		})
	}
	// An initialize whose id the server refuses is answered at once, with
	// the JSON-RPC error (it waited for the initialize timeout, then 504);
	// one whose id the server spells otherwise ("\u0041" is "A") opens a
	// connection.
	for _, id := range []string{`1.5`, `-1`, `1e3`, `99999999999999999999`, `{"a":1}`, `true`} {
		status, body, h := rawRequest(t, s, http.MethodPost, strings.Replace(initBody, `"id":1`, `"id":`+id, 1), nil)
		assert.Equal(t, http.StatusBadRequest, status, "id %s: %s", id, body)
		assert.Contains(t, body, `"code":-32600`, "id %s", id)
		assert.Empty(t, h.Get("Acp-Connection-Id"), "id %s", id)
	}
	status, body, h := rawRequest(t, s, http.MethodPost, strings.Replace(initBody, `"id":1`, `"id":"\u0041"`, 1), nil)
	require.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"protocolVersion"`)
	require.NotEmpty(t, h.Get("Acp-Connection-Id"))
	status, _, _ = rawRequest(t, s, http.MethodDelete, "", map[string]string{"Acp-Connection-Id": h.Get("Acp-Connection-Id")})
	assert.Equal(t, http.StatusAccepted, status)
	// Headers over the server's limit: 431, from net/http.
	status, _, _ = rawRequest(t, s, http.MethodPost, initBody, map[string]string{"X-Big": strings.Repeat("b", 200<<10)})
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, status)
	// A header line that is not HTTP at all.
	nc, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/acp"))
	require.NoError(t, err)
	fmt.Fprintf(nc, "POST /acp HTTP/1.1\r\nHost: x\r\nAuthorization Bearer %s\r\n\r\n", s.token)
	line, _ := bufio.NewReader(nc).ReadString('\n')
	nc.Close()
	assert.Contains(t, line, "400")

	// An unknown session on a real connection: JSON-RPC -32002 on that
	// session's stream.
	c := dialServe(t, s, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	err = c.Call(ctx, "session/prompt", map[string]any{"sessionId": "no-such-session", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, nil)
	var re *acphttp.RPCError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, int64(-32002), re.Code)
	err = c.Call(ctx, "session/load", map[string]any{"sessionId": "no-such-session", "cwd": s.root, "mcpServers": []any{}}, nil)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, int64(-32002), re.Code)
	// Malformed JSON-RPC inside a valid object: -32600 on the stream.
	err = c.Call(ctx, "session/new", "not an object", nil)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, int64(-32600), re.Code)
	c.Close()
	checkSurvived(t, s, sid)
}

// TestServeRefusesOversizedMessages: a body over --max-message-bytes is
// 413 over HTTP; over WebSocket the message is skipped and answered
// -32600, and the connection goes on.
func TestServeRefusesOversizedMessages(t *testing.T) {
	s := startServe(t, nil, "--max-message-bytes", "65536")
	sid := storedConversation(t, s)
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"pad":"` + strings.Repeat("x", 70000) + `"}}`
	status, body, _ := rawRequest(t, s, http.MethodPost, big, nil)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Contains(t, body, "over 65536 bytes")

	// A body that never ends is cut at the limit too (no Content-Length).
	pr, pw := io.Pipe()
	go func() {
		chunk := bytes.Repeat([]byte("x"), 4096)
		for {
			if _, err := pw.Write(chunk); err != nil {
				return
			}
		}
	}()
	req, _ := http.NewRequest(http.MethodPost, s.url, pr)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		resp.Body.Close()
	}
	pr.Close()

	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http"), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + s.token}}})
	require.NoError(t, err)
	defer ws.CloseNow()
	ws.SetReadLimit(-1)
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(big)))
	_, data, err := ws.Read(ctx)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"code":-32600`)
	assert.Contains(t, string(data), "over 65536 bytes")
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(initBody)))
	_, data, err = ws.Read(ctx)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"protocolVersion":1`, "the connection goes on")
	checkSurvived(t, s, sid)
}

// TestServeLimitsOpenStreams: 10,000 event streams opened at once: up to
// --max-streams are served, the others refused with 503 saying why; the
// server stays up, and serves again once they are gone.
func TestServeLimitsOpenStreams(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("opens 10,000 streams")
	}
	streams, limit := 10000, 2000
	if winetest.Active {
		// A tenth: Wine's sockets take 40 s for all of them, and the
		// limit is the same code on every OS.
		streams, limit = 1000, 200
	}
	s := startServe(t, nil, "--max-streams", fmt.Sprint(limit))
	sid := storedConversation(t, s)
	tr := &http.Transport{MaxIdleConnsPerHost: 100}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true) // h2c: many streams, few sockets
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// 160 connections, 62 session streams and the connection stream each.
	var conns []string
	for range (streams + 62) / 63 {
		req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(initBody))
		req.Header.Set("Authorization", "Bearer "+s.token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		conns = append(conns, resp.Header.Get("Acp-Connection-Id"))
	}
	var ok, refused, other atomic.Int64
	var otherMsg atomic.Value
	var wg sync.WaitGroup
	var bodies sync.WaitGroup
	n := 0
	for _, conn := range conns {
		for i := range 63 {
			if n == streams {
				break
			}
			n++
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
				req.Header.Set("Authorization", "Bearer "+s.token)
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("Acp-Connection-Id", conn)
				if i > 0 {
					req.Header.Set("Acp-Session-Id", fmt.Sprintf("attack-%d", i))
				}
				resp, err := hc.Do(req)
				if err != nil {
					other.Add(1)
					otherMsg.Store(err.Error())
					return
				}
				switch resp.StatusCode {
				case http.StatusOK:
					ok.Add(1)
					bodies.Add(1)
					go func() { defer bodies.Done(); io.Copy(io.Discard, resp.Body); resp.Body.Close() }()
					return
				case http.StatusServiceUnavailable:
					data, _ := io.ReadAll(resp.Body)
					if strings.Contains(string(data), "too many open event streams") {
						refused.Add(1)
					} else {
						other.Add(1)
						otherMsg.Store(string(data))
					}
				default:
					other.Add(1)
					otherMsg.Store(resp.Status)
				}
				resp.Body.Close()
			}()
		}
	}
	wg.Wait()
	assert.EqualValues(t, streams, n)
	assert.EqualValues(t, limit, ok.Load())
	assert.EqualValues(t, streams-limit, refused.Load())
	assert.Zero(t, other.Load(), "%v", otherMsg.Load())
	assert.Equal(t, "ok", healthzOf(t, s, false)["status"])
	cancel()
	bodies.Wait()
	waitUntil(t, "the streams to close", func() bool {
		return healthzOf(t, s, true)["transport"].(map[string]any)["openStreams"].(float64) == 0
	})
	checkSurvived(t, s, sid)
}

// TestServeDropsAClientThatNeverReads: a client opens its session's event
// stream and never reads it while a turn streams 5 MB. The stream is
// dropped after the stall timeout (memory stays bounded), the turn runs to
// its end and is saved, the session's requests get 409 until the client
// re-attaches it with session/resume, and then it works again. Over
// WebSocket the connection is closed.
func TestServeDropsAClientThatNeverReads(t *testing.T) {
	t.Parallel()
	s := startServe(t, nil, "--stall-timeout", "1s", "--max-buffered-bytes", "65536")
	sid := storedConversation(t, s)
	status, _, h := rawRequest(t, s, http.MethodPost, initBody, nil)
	require.Equal(t, http.StatusOK, status)
	conn := h.Get("Acp-Connection-Id")
	post := func(sessionID, body string) (int, string) {
		st, b, _ := rawRequest(t, s, http.MethodPost, body, map[string]string{"Acp-Connection-Id": conn, "Acp-Session-Id": sessionID})
		return st, b
	}
	st, _ := post("", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"`+jsonText(s.root)+`","mcpServers":[]}}`)
	require.Equal(t, http.StatusAccepted, st)
	// The connection stream, read, for the session id.
	connStream := openRawStream(t, s, conn, "")
	defer connStream.Close()
	created := connStream.next(t, `"sessionId"`)
	var resp struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(created), &resp))
	nsid := resp.Result.SessionID
	// The session's stream, never read: a socket whose receive buffer
	// fills.
	addr := strings.TrimSuffix(strings.TrimPrefix(s.url, "http://"), "/acp")
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.(*net.TCPConn).SetReadBuffer(4096))
	fmt.Fprintf(nc, "GET /acp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\nAcp-Connection-Id: %s\r\nAcp-Session-Id: %s\r\n\r\n", addr, s.token, conn, nsid)
	time.Sleep(100 * time.Millisecond)
	st, _ = post(nsid, `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"`+nsid+`","prompt":[{"type":"text","text":"flood"}]}}`)
	require.Equal(t, http.StatusAccepted, st)
	var dropped map[string]any
	waitUntil(t, "the stream to be dropped", func() bool {
		for _, c := range healthzOf(t, s, true)["transport"].(map[string]any)["open"].([]any) {
			if c.(map[string]any)["id"] == conn {
				for _, ss := range c.(map[string]any)["sessions"].([]any) {
					if ss.(map[string]any)["sessionId"] == nsid && ss.(map[string]any)["dropped"] == true {
						dropped = ss.(map[string]any)
						return true
					}
				}
			}
		}
		return false
	})
	assert.EqualValues(t, 1, dropped["drops"])
	assert.Nil(t, dropped["pendingBytes"], "nothing held for it any more")
	st, body := post(nsid, `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"`+nsid+`","prompt":[{"type":"text","text":"hi"}]}}`)
	assert.Equal(t, http.StatusConflict, st)
	assert.Contains(t, body, "re-attach it with session/load or session/resume")
	assert.Contains(t, body, "took no message for 1s")
	// The log line may reach the pipe after the state healthz shows.
	waitUntil(t, "the drop to be logged", func() bool { return strings.Contains(s.stderr.String(), "dropped an event stream") })
	nc.Close()
	// Re-attach: a stream that reads, then session/resume.
	sess := openRawStream(t, s, conn, nsid)
	defer sess.Close()
	st, _ = post(nsid, `{"jsonrpc":"2.0","id":5,"method":"session/resume","params":{"sessionId":"`+nsid+`","cwd":"`+jsonText(s.root)+`"}}`)
	require.Equal(t, http.StatusAccepted, st)
	sess.next(t, `"id":5`)
	st, _ = post(nsid, `{"jsonrpc":"2.0","id":6,"method":"session/prompt","params":{"sessionId":"`+nsid+`","prompt":[{"type":"text","text":"stream"}]}}`)
	require.Equal(t, http.StatusAccepted, st)
	assert.Contains(t, sess.next(t, `"id":6`), `"stopReason":"end_turn"`)

	// WebSocket: a client that never reads is disconnected.
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.url, "http"), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + s.token}}})
	require.NoError(t, err)
	defer ws.CloseNow()
	for i, m := range []string{initBody, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"` + jsonText(s.root) + `","mcpServers":[]}}`} {
		require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(m)))
		for {
			_, data, err := ws.Read(ctx)
			require.NoError(t, err)
			if bytes.Contains(data, []byte(fmt.Sprintf(`"id":%d`, i+1))) {
				if i == 1 {
					require.NoError(t, json.Unmarshal(data, &resp))
				}
				break
			}
		}
	}
	prompt := `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + resp.Result.SessionID + `","prompt":[{"type":"text","text":"flood"}]}}`
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(prompt)))
	waitUntil(t, "the WebSocket to be dropped", func() bool {
		return strings.Contains(s.stderr.String(), "dropped a WebSocket connection")
	})
	checkSurvived(t, s, sid)
}

// rawStream reads one event stream.
type rawStream struct {
	resp *http.Response
	r    *bufio.Reader
}

func openRawStream(t *testing.T, s *served, conn, sid string) *rawStream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Acp-Connection-Id", conn)
	if sid != "" {
		req.Header.Set("Acp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return &rawStream{resp: resp, r: bufio.NewReaderSize(resp.Body, 1<<20)}
}

// next returns the data of the next event that contains want.
func (rs *rawStream) next(t *testing.T, want string) string {
	t.Helper()
	done := make(chan string, 1)
	go func() {
		for {
			line, err := rs.r.ReadString('\n')
			if err != nil {
				done <- ""
				return
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, want) {
				done <- data
				return
			}
		}
	}()
	select {
	case d := <-done:
		require.NotEmpty(t, d, "stream ended before %s", want)
		return d
	case <-time.After(waitBudget(t)):
		t.Fatalf("no event with %s", want)
		return ""
	}
}

func (rs *rawStream) Close() { rs.resp.Body.Close() }
