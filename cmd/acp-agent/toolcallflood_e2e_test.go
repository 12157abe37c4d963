package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// A response's tool calls are capped by their number, not only by their
// arguments' bytes: 2,000 calls of read_file (20 bytes of arguments each,
// up to 28 KiB of result each: 8 MiB of arguments made 13 GB of results)
// stop at 256. The prompt fails naming the limit, no call runs (each is
// failed, "not run"), and the next prompt works.
func TestBinaryToolCallsOfOneResponseAreCapped(t *testing.T) {
	const sent = 2000
	var mu sync.Mutex
	written, requests := 0, 0
	chunk := func(delta string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	srv := httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		requests++
		first := requests == 1
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if !first {
			fmt.Fprint(w, chunk(`{"content":"done"}`))
			fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		for k := range sent {
			if _, err := fmt.Fprint(w, chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"f.txt\"}"}}]}`, k, k))); err != nil {
				return // the agent hung up
			}
			w.(http.Flusher).Flush()
			mu.Lock()
			written++
			mu.Unlock()
		}
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "f.txt"), []byte(strings.Repeat("text\n", 100)), 0o644))
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + srv.URL + "/v1"}, "--model", "openai/test-model", "--mode", "full-access")
	p.Initialize(nil)
	sid := p.NewSession(cwd)
	resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("read")}})
	require.NotNil(t, resp.Error, "%s", resp.Raw)
	assert.Contains(t, resp.Error.Message, "passed the limit of 256 calls")
	status := map[acp.ToolCallId]acp.ToolCallStatus{}
	for _, m := range updates {
		u := m.Update(t).Update
		if tc := u.ToolCall; tc != nil {
			status[tc.ToolCallID] = tc.Status
		}
		if tc := u.ToolCallUpdate; tc != nil && tc.Status != "" {
			status[tc.ToolCallID] = tc.Status
		}
	}
	assert.Len(t, status, 256, "the calls before the cap are reported")
	for id, st := range status {
		require.Equal(t, acp.ToolCallStatusFailed, st, "%s did not run", id)
	}
	resp, _ = p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("so?")}})
	acptest.MustResult(t, resp, nil)
}
