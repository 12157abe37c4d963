package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// dirState maps every path under root to its contents (directories to
// "<dir>"), to show that a request left the filesystem alone.
func dirState(t *testing.T, root string) map[string]string {
	t.Helper()
	state := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			state[rel] = "<dir>"
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		state[rel] = string(data)
		return nil
	}))
	return state
}

// Issue 13.9: every method that takes a session id answers -32602 for an
// id that cannot name a session, and touches nothing on disk: not the
// session directory, not the files a path-shaped id points at.
func TestBinaryInvalidSessionIDsAreInvalidParams(t *testing.T) {
	model := newCountingModel(t)
	root := t.TempDir()
	dir, cwd := filepath.Join(root, "sessions"), t.TempDir()
	require.NoError(t, os.Mkdir(dir, 0o700))
	p := storeAgent(t, model, dir)
	sid := p.NewSession(cwd)
	askText(t, p, sid, "hello")

	// Bait: a real session file one level up ("../x") and at an absolute
	// path, copies of the live one, so a path-shaped id would find them.
	data, err := os.ReadFile(filepath.Join(dir, sid+".jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "x.jsonl"), data, 0o600))
	abs := filepath.Join(root, "abs")
	require.NoError(t, os.WriteFile(abs+".jsonl", data, 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(root, "abs"), 0o700)) // RemoveAll bait
	before := dirState(t, root)

	ids := []string{
		"../x", "..", ".", "../" + filepath.Base(root) + "/x", abs, "/etc/passwd", "a\x00b", sid + "\x00",
		"a/b", `a\b`, ".hidden", "x..y", "sess id", "é", "\u2028", strings.Repeat("a", 129),
		"../sessions/" + sid, // even one that resolves to a real session
	}
	methods := map[string]func(id string) any{
		acp.MethodSessionLoad: func(id string) any {
			return map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}
		},
		acp.MethodSessionResume: func(id string) any { return map[string]any{"sessionId": id, "cwd": cwd} },
		acp.MethodSessionFork:   func(id string) any { return map[string]any{"sessionId": id, "cwd": cwd} },
		acp.MethodSessionClose:  func(id string) any { return map[string]any{"sessionId": id} },
		acp.MethodSessionDelete: func(id string) any { return map[string]any{"sessionId": id} },
		acp.MethodSessionPrompt: func(id string) any {
			return map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}
		},
		acp.MethodSessionSetMode: func(id string) any { return map[string]any{"sessionId": id, "modeId": "default"} },
		acp.MethodSessionSetConfigOption: func(id string) any {
			return map[string]any{"sessionId": id, "configId": "mode", "value": "default"}
		},
		acp.MethodExtSessionStats: func(id string) any { return map[string]any{"sessionId": id} },
		acp.MethodExtSessionFork:  func(id string) any { return map[string]any{"sessionId": id} },
		acp.MethodExtSessionSteer: func(id string) any { return map[string]any{"sessionId": id, "text": "x"} },
	}
	names := make([]string, 0, len(methods))
	for m := range methods {
		names = append(names, m)
	}
	sort.Strings(names)
	cases := 0
	for _, method := range names {
		for _, id := range ids {
			// session/cancel is a notification: nothing answers, nothing
			// may happen either.
			p.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": id})
			resp, _ := p.Call(method, methods[method](id))
			cases++
			if assert.NotNil(t, resp.Error, "%s %q: %s", method, id, resp.Raw) {
				assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code, "%s %q: %s", method, id, resp.Raw)
				assert.Contains(t, resp.Error.Message, "invalid session id", "%s %q", method, id)
			}
		}
	}
	t.Logf("%d method × id cases, all -32602", cases)
	assert.Equal(t, before, dirState(t, root), "invalid ids left the filesystem alone")
	// The live session is untouched and still answers.
	assert.Equal(t, "2 user messages", askText(t, p, sid, "still here"))
	resp, _ := p.Call(acp.MethodSessionList, map[string]any{})
	var list acp.ListSessionsResponse
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1)
	assert.Equal(t, sid, string(list.Sessions[0].SessionID))
}

// Issue 13.7: a request whose id cannot be echoed exactly (invalid UTF-8,
// a lone surrogate escape) is answered -32600 with id null and never run;
// nothing the binary writes is invalid UTF-8 (acptest checks every line).
func TestBinaryRefusesIDsThatCannotBeEchoed(t *testing.T) {
	model := newCountingModel(t)
	dir, cwd := t.TempDir(), t.TempDir()
	p := storeAgent(t, model, dir)
	sid := p.NewSession(cwd)
	title := "saved without a prompt" // a title saves the session
	resp, _ := p.Call(acp.MethodSessionSetTitle, &acp.SetSessionTitleRequest{SessionID: acp.SessionId(sid), Title: &title})
	acptest.MustResult(t, resp, nil)
	cwdJSON, err := json.Marshal(cwd)
	require.NoError(t, err)
	ids := []string{`"\ud800"`, `"\udfff"`, `"x\ud83d"`, `"\ud83d\u0041"`, "\"\xff\"", "\"\xed\xa0\x80\"", "\"a\xc3\""}
	for _, id := range ids {
		lines := []string{
			`{"jsonrpc":"2.0","id":` + id + `,"method":"session/new","params":{"cwd":` + string(cwdJSON) + `,"mcpServers":[]}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"session/delete","params":{"sessionId":"` + sid + `"}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"run me"}]}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":` + id + `}`, // the id echoed in an error message
		}
		for _, line := range lines {
			p.SendLine(line)
			m := p.Next()
			require.True(t, m.IsResponse(), "%q answered by %s", line, m.Raw)
			assert.Equal(t, "null", string(m.ID), "%q: %s", line, m.Raw)
			if assert.NotNil(t, m.Error, "%q: %s", line, m.Raw) {
				assert.Equal(t, acp.CodeInvalidRequest, m.Error.Code, "%q", line)
			}
		}
	}
	// Nothing ran: still one session, still there, and the model was
	// asked nothing.
	resp, _ = p.Call(acp.MethodSessionList, map[string]any{})
	var list acp.ListSessionsResponse
	acptest.MustResult(t, resp, &list)
	require.Len(t, list.Sessions, 1, "no session/new ran")
	assert.Equal(t, sid, string(list.Sessions[0].SessionID), "no session/delete ran")
	model.mu.Lock()
	assert.Empty(t, model.bodies, "no session/prompt ran")
	model.mu.Unlock()
	// The connection is still up.
	assert.Equal(t, "1 user messages", askText(t, p, sid, "hello"))
}

// recorder is an httptest server that records every request it gets.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(chatOnly(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, fmt.Sprintf("%s %s %v %s", req.Method, req.URL, req.Header, body))
		r.mu.Unlock()
		http.Error(w, "should never be reached", http.StatusTeapot)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

// Issue 13.4: a provider that answers a redirect, to another origin or
// to its own, is not followed: the prompt fails with an error naming the
// target, and the other origin receives nothing (no key, no conversation).
// One agent per provider goes through every case, a prompt each.
func TestBinaryProvidersDoNotFollowRedirects(t *testing.T) {
	type redirectCase struct {
		status     int
		sameOrigin bool
	}
	var cases []redirectCase
	for _, status := range []int{301, 302, 303, 307, 308} {
		cases = append(cases, redirectCase{status, false}, redirectCase{status, true})
	}
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			evil := newRecorder(t)
			var (
				self    *httptest.Server
				current atomic.Pointer[redirectCase]
				hits    atomic.Int32
			)
			self = httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
				if hits.Add(1) > 1 {
					http.Error(w, "followed a same-origin redirect", http.StatusTeapot)
					return
				}
				c := current.Load()
				target := evil.URL + "/steal"
				if c.sameOrigin {
					target = self.URL + "/elsewhere"
				}
				http.Redirect(w, r, target, c.status)
			}))
			t.Cleanup(self.Close)
			env := []string{"OPENAI_API_KEY=sk-secret-openai", "OPENAI_BASE_URL=" + self.URL + "/v1",
				"ANTHROPIC_API_KEY=sk-secret-anthropic", "ANTHROPIC_BASE_URL=" + self.URL}
			model := "openai/test-model"
			if provider == "anthropic" {
				model = "anthropic/claude-test"
			}
			p := startAgent(t, env, "--model", model)
			p.Initialize(nil)
			sid := p.NewSession(t.TempDir())
			for _, c := range cases {
				current.Store(&c)
				hits.Store(0)
				resp, _ := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid,
					Prompt: []acp.ContentBlock{acp.TextBlock("the secret conversation")}})
				want := evil.URL + "/steal"
				if c.sameOrigin {
					want = self.URL + "/elsewhere"
				}
				if assert.NotNil(t, resp.Error, "%+v: %s", c, resp.Raw) {
					assert.Contains(t, resp.Error.Message, fmt.Sprintf("HTTP %d: the server redirected the request to %s", c.status, want))
					assert.NotContains(t, resp.Error.Message, "sk-secret")
				}
				assert.Equal(t, int32(1), hits.Load(), "%+v: the redirect was not followed on the same origin either", c)
			}
			assert.Empty(t, evil.got(), "the other origin received nothing")
		})
	}
}

// floodServer is an OpenAI-compatible server whose first answer streams
// one tool call with total bytes of arguments in 64 KiB pieces, stopping
// when the client goes away; later answers say "done". It records the
// bytes of arguments it managed to write and the request bodies.
type floodServer struct {
	*httptest.Server
	mu      sync.Mutex
	written int
	bodies  []string
}

func newFloodServer(t *testing.T, total int) *floodServer {
	f := &floodServer{}
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	f.Server = httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, string(body))
		first := len(f.bodies) == 1
		f.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if !first {
			fmt.Fprint(w, chunk(`{"content":"done"}`))
			fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		fmt.Fprint(w, chunk(`{"tool_calls":[{"index":0,"id":"call_big","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"big.txt\",\"content\":\""}}]}`))
		piece := chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.Repeat("a", 64<<10) + `"}}]}`)
		for sent := 0; sent < total; sent += 64 << 10 {
			if _, err := io.WriteString(w, piece); err != nil {
				return // the agent hung up
			}
			w.(http.Flusher).Flush()
			f.mu.Lock()
			f.written += 64 << 10
			f.mu.Unlock()
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// Issue 13.6: 150 MB of streamed tool-call arguments are cut off at the
// cap (the default, or the one configured): the prompt ends with an error
// naming the limit, the agent hangs up on the stream, the file is not
// written, and the model is told on the next request why its call did not
// run.
func TestBinaryStreamedArgumentsAreCutOffAtTheCap(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		env  []string
		cap  int
	}{
		{"default cap", nil, nil, 8 << 20},
		{"flag", []string{"--max-tool-argument-bytes", "1048576"}, nil, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newFloodServer(t, 150<<20)
			cwd := t.TempDir()
			env := append([]string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + srv.URL + "/v1"}, c.env...)
			p := startAgent(t, env, append([]string{"--model", "openai/test-model", "--permission", "allow", "--mode", "full-access"}, c.args...)...)
			p.Initialize(nil)
			sid := p.NewSession(cwd)
			resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid,
				Prompt: []acp.ContentBlock{acp.TextBlock("write a big file")}})
			require.NotNil(t, resp.Error, "%s", resp.Raw)
			assert.Contains(t, resp.Error.Message, fmt.Sprintf("passed the limit of %d bytes", c.cap))
			assert.Contains(t, resp.Error.Message, "maxToolArgumentBytes")
			failed := false
			for _, m := range updates {
				if tc := m.Update(t).Update.ToolCall; tc != nil && tc.ToolCallID == "call_big" {
					failed = tc.Status == acp.ToolCallStatusFailed
				}
			}
			assert.True(t, failed, "the client sees the call failed")
			srv.mu.Lock()
			written := srv.written
			srv.mu.Unlock()
			assert.Less(t, written, c.cap+(32<<20), "the agent hung up near the cap, not after 150 MB")
			_, err := os.Stat(filepath.Join(cwd, "big.txt"))
			assert.True(t, os.IsNotExist(err), "nothing was written")

			resp, _ = p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("so?")}})
			acptest.MustResult(t, resp, nil)
			srv.mu.Lock()
			next := srv.bodies[len(srv.bodies)-1]
			srv.mu.Unlock()
			assert.Less(t, len(next), 64<<10, "the cut-off arguments are not sent back")
			assert.Contains(t, next, `"tool_call_id":"call_big"`)
			assert.Contains(t, next, "were cut off")
		})
	}
}
