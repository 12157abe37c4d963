package compact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// history10k returns a 10,000-message history of exchanges
// u a(call) t(result), with 2 KB results, a third of them JSON.
func history10k() []llm.Message {
	msgs := make([]llm.Message, 0, 10_000)
	prose := strings.Repeat("line of tool output\n", 100)
	js := "{" + strings.Repeat(`"key":"value",`, 140) + `"end":1}`
	for i := 0; len(msgs) < 10_000; i++ {
		id := fmt.Sprintf("call_%d", i)
		out := prose
		if i%3 == 0 {
			out = js
		}
		msgs = append(msgs, user("next step please"), asst("working on it", llm.ToolCall{ID: id, Name: "read_file", Arguments: `{"path":"src/file.go"}`}), result(id, out))
	}
	return msgs[:10_000]
}

// BenchmarkOffloadDecision10k measures a step's offload decision on a
// 10,000-message history over the threshold whose scanned half is already
// offloaded: the steady state of a long session (budget 5 ms).
func BenchmarkOffloadDecision10k(b *testing.B) {
	o := &Offloader{Dir: b.TempDir(), Threshold: 150_000, ScanRatio: 0.5, MinChars: 50}
	msgs := history10k()
	first, err := o.OffloadIfNeeded(msgs, 1_000_000)
	if err != nil || first.OffloadedCount == 0 {
		b.Fatal(first.OffloadedCount, err)
	}
	msgs = first.Messages
	b.ReportAllocs()
	for b.Loop() {
		res, err := o.OffloadIfNeeded(msgs, 1_000_000)
		if err != nil || res.OffloadedCount != 0 {
			b.Fatal(res.OffloadedCount, err)
		}
	}
}

// BenchmarkEstimateTokens10k measures the token estimate of a
// 10,000-message history.
func BenchmarkEstimateTokens10k(b *testing.B) {
	msgs := history10k()
	b.ReportAllocs()
	for b.Loop() {
		if EstimateTokens(msgs) == 0 {
			b.Fatal("zero")
		}
	}
}

// BenchmarkSanitize10k measures the sanitizer on a 10,000-message history
// (budget 5 ms): a clean one, the common case, and one with a killed turn
// every 100 messages.
func BenchmarkSanitize10k(b *testing.B) {
	clean := history10k()
	dirty := make([]llm.Message, 0, len(clean))
	for i, m := range clean {
		if m.Role == llm.RoleTool && i%100 < 3 {
			continue // a call without its result
		}
		dirty = append(dirty, m)
	}
	for _, bc := range []struct {
		name    string
		msgs    []llm.Message
		changed bool
	}{{"clean", clean, false}, {"dirty", dirty, true}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, changed := Sanitize(bc.msgs); changed != bc.changed {
					b.Fatal(changed)
				}
			}
		})
	}
}
