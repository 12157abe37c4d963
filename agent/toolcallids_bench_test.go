package agent

import (
	"fmt"
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// BenchmarkUniqueToolCallIDs measures the id check of one model response
// with one call, in a session of 100,000 entries (half of them a tool
// call, half its result): the check runs once per response, under the
// session's lock.
func BenchmarkUniqueToolCallIDs(b *testing.B) {
	s := &Session{}
	for i := range 50_000 {
		s.tr.entries = append(s.tr.entries,
			&Entry{Kind: EntryToolCalls, ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: "read"}}},
			&Entry{Kind: EntryToolOutput})
	}
	b.ResetTimer()
	for b.Loop() {
		calls := []llm.ToolCall{{ID: "call_x", Name: "read"}}
		s.uniqueToolCallIDs(calls)
	}
}
