package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// Issue 15.1: Ollama and llama.cpp name the calls of every response
// call_0, call_1, ...; offload must not put one turn's tool result in
// place of another's. Each tool message of the next request holds its own
// result, inline or behind a reference to a file holding it.
func TestOffloadKeepsEachResultWhenProvidersReuseToolCallIDs(t *testing.T) {
	big := func(c string) string { return strings.Repeat(c, 12_000) }
	m := newFakeModel(
		calls(call("call_0", "dump", `{"n":"A"}`)), says("got A"),
		calls(call("call_0", "dump", `{"n":"B"}`)), says("got B"),
		calls(call("call_0", "dump", `{"n":"C"}`)), says("got C"),
		says("done"),
	)
	s := newSession(t, m, func(c *agent.SessionConfig) {
		c.History.OffloadDir = t.TempDir()
		c.History.OffloadThreshold = 7_000 // tokens: three results exceed it, two do not
	})
	require.NoError(t, s.Tools().Register(agent.Tool{
		Name: "dump", Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(_ context.Context, args json.RawMessage) (agent.ToolResult, error) {
			var a struct{ N string }
			_ = json.Unmarshal(args, &a)
			return agent.ToolResult{Text: big(a.N)}, nil
		},
	}))
	for _, q := range []string{"one", "two", "three", "four"} {
		_, err := s.Prompt(context.Background(), q)
		require.NoError(t, err)
	}
	reqs := m.Requests()
	last := reqs[len(reqs)-1]
	assert.NotContains(t, strings.Join(messageSummary(last), "\n"), "Compressed History", "offload alone was enough: no compaction")
	var got []string
	offloaded := 0
	for _, msg := range last.Messages {
		if msg.Role != llm.RoleTool {
			continue
		}
		text := msg.Text()
		if path, ok := strings.CutPrefix(strings.TrimSpace(text), compact.ReferencePrefix); ok {
			data, err := os.ReadFile(strings.TrimSpace(path))
			require.NoError(t, err)
			text = string(data)
			offloaded++
		}
		got = append(got, text[:1])
		assert.Len(t, text, 12_000)
	}
	assert.Equal(t, []string{"A", "B", "C"}, got, "each turn's result stays its own")
	assert.Positive(t, offloaded, "the test offloaded something")
	var stored []string
	for _, e := range s.Transcript() {
		if e.Kind == agent.EntryToolOutput {
			stored = append(stored, e.Text[:min(len(e.Text), 40)])
		}
	}
	assert.Len(t, stored, 3)
}
