package agent_test

import (
	"context"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// floodModel's first response streams total bytes of tool-call arguments
// (or of text) in pieces of piece bytes, generated on the fly so the test
// holds none of it; later responses answer "done". It records what it
// streamed and the requests it got.
type floodModel struct {
	total, piece int
	text         bool // flood text instead of arguments

	mu       sync.Mutex
	streamed int
	requests []*llm.Request
}

func (m *floodModel) Name() string { return "flood" }

func (m *floodModel) Stream(_ context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		m.mu.Lock()
		m.requests = append(m.requests, req)
		first := len(m.requests) == 1
		m.mu.Unlock()
		if !first {
			if yield(llm.Event{Kind: llm.EventTextDelta, Text: "done"}, nil) {
				yield(llm.Event{Kind: llm.EventFinish, Finish: llm.FinishStop}, nil)
			}
			return
		}
		if !m.text && !yield(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{ID: "call_1", Name: "write", ArgumentsDelta: `{"x":"`}}, nil) {
			return
		}
		piece := strings.Repeat("a", m.piece)
		for sent := 0; sent < m.total; sent += m.piece {
			ev := llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{ArgumentsDelta: piece}}
			if m.text {
				ev = llm.Event{Kind: llm.EventTextDelta, Text: piece}
			}
			if !yield(ev, nil) {
				return
			}
			m.mu.Lock()
			m.streamed += m.piece
			m.mu.Unlock()
		}
		if m.text {
			yield(llm.Event{Kind: llm.EventFinish, Finish: llm.FinishStop}, nil)
			return
		}
		if yield(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{ArgumentsDelta: `"}`}}, nil) {
			yield(llm.Event{Kind: llm.EventFinish, Finish: llm.FinishToolCalls}, nil)
		}
	}
}

// Issue 13.6: 150 MB of streamed arguments (or text) are cut off at the
// cap: the prompt fails with an error that says so, the model's stream is
// stopped there, and the next request tells the model its call was not
// run and why.
func TestStreamedResponsesAreCutOffAtTheLimit(t *testing.T) {
	const flood, piece = 150 << 20, 64 << 10
	for _, c := range []struct {
		name   string
		text   bool
		limits llm.Limits
		cap    int
	}{
		{"arguments, default cap", false, llm.Limits{}, llm.DefaultMaxToolArgumentBytes},
		{"arguments, configured cap", false, llm.Limits{MaxToolArgumentBytes: 1 << 20}, 1 << 20},
		{"text, default cap", true, llm.Limits{}, llm.DefaultMaxTextBytes},
		{"text, configured cap", true, llm.Limits{MaxTextBytes: 1 << 20}, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &floodModel{total: flood, piece: piece, text: c.text}
			s := agent.NewSession(agent.SessionConfig{CWD: "/tmp/x", ModelConfig: agent.ModelConfig{Model: m, ModelName: "m", StreamLimits: c.limits}})
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			_, err := s.Prompt(context.Background(), "write a big file")
			require.ErrorIs(t, err, llm.ErrResponseTooLarge)
			var le *llm.LimitError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, c.cap, le.Limit)
			assert.ErrorContains(t, err, "passed the limit of")
			m.mu.Lock()
			streamed := m.streamed
			m.mu.Unlock()
			assert.LessOrEqual(t, streamed, c.cap, "the stream was stopped at the cap, not read to its end")

			if c.text {
				// The text up to the cap is kept as the answer.
				tr := s.Transcript()
				require.Len(t, tr, 2)
				require.Equal(t, agent.EntryAssistant, tr[1].Kind)
				assert.LessOrEqual(t, len(tr[1].Text), c.cap)
			}
			res, err := s.Prompt(context.Background(), "and now?")
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text)
			m.mu.Lock()
			msgs := m.requests[len(m.requests)-1].Messages
			m.mu.Unlock()
			if c.text {
				// Megabytes of text pass any context window: the next
				// request carries a compaction's summary instead (issue
				// 26: the kept window is sized in tokens).
				require.Len(t, msgs, 2)
				assert.Contains(t, msgs[0].Text(), "[Compressed History]")
				assert.Equal(t, "and now?", msgs[1].Text())
				return
			}
			require.Len(t, msgs, 4, "user, the refused call, its error result, user")
			require.Len(t, msgs[1].ToolCalls, 1)
			assert.Equal(t, llm.ToolCall{ID: "call_1", Name: "write", Arguments: "{}"}, msgs[1].ToolCalls[0], "the cut-off arguments are not kept")
			assert.Equal(t, llm.RoleTool, msgs[2].Role)
			assert.Equal(t, "call_1", msgs[2].ToolCallID)
			assert.True(t, msgs[2].IsError)
			assert.Contains(t, msgs[2].Text(), "passed the limit of")
			assert.Contains(t, msgs[2].Text(), "smaller pieces")
		})
	}
}

// BenchmarkStreamedToolArguments1MBIn16BytePieces is the case: one
// tool call whose 1 MB of arguments arrive in 16-byte pieces, through a
// session's model loop. Accumulating with += took 12 s per turn.
func BenchmarkStreamedToolArguments1MBIn16BytePieces(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		m := &floodModel{total: 1 << 20, piece: 16}
		s := agent.NewSession(agent.SessionConfig{CWD: "/tmp/x", ModelConfig: agent.ModelConfig{Model: m, ModelName: "m"}})
		res, err := s.Prompt(context.Background(), "write")
		if err != nil || res.Text != "done" {
			b.Fatalf("prompt: %q, %v", res.Text, err)
		}
		s.Close()
	}
}
