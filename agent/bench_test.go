package agent_test

import (
	"fmt"
	"testing"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// bigSession returns a session whose transcript has n entries: user and
// assistant messages, tool calls and tool results, each with a payload.
func bigSession(b *testing.B, n int) *agent.Session {
	b.Helper()
	entries := make([]agent.Entry, 0, n)
	for i := 0; len(entries) < n; i++ {
		text := fmt.Sprintf("message %d: %0200d", i, i)
		entries = append(entries,
			agent.UserEntry(text),
			agent.Entry{Kind: agent.EntryToolCalls, ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("c", i), Name: "read_file", Arguments: `{"path":"/x"}`}}},
			agent.Entry{Kind: agent.EntryToolOutput, ToolCallID: fmt.Sprint("c", i), ToolName: "read_file", Text: text},
			agent.AssistantEntry(text),
		)
	}
	s := agent.NewSession(agent.SessionConfig{CWD: "/tmp"})
	if err := s.Resume(entries[:n]); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkFork100kEntries: Fork shares the immutable entries; it copies
// only the slice of pointers and the registry.
func BenchmarkFork100kEntries(b *testing.B) {
	s := bigSession(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		f, err := s.Fork()
		if err != nil {
			b.Fatal(err)
		}
		if f.Stats().TotalEntries != 100_000 {
			b.Fatal("fork lost entries")
		}
	}
}

// BenchmarkForkFromUserEntry100kEntries forks from the middle: the counts
// of the prefix are recomputed.
func BenchmarkForkFromUserEntry100kEntries(b *testing.B) {
	s := bigSession(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.ForkFromUserEntry(50_000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStats100kEntries: Stats reads counters kept on append.
func BenchmarkStats100kEntries(b *testing.B) {
	s := bigSession(b, 100_000)
	b.ReportAllocs()
	for b.Loop() {
		if s.Stats().TotalEntries != 100_000 {
			b.Fatal("wrong count")
		}
	}
}
