package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// heldCallModel streams one call of tool "run" in two fragments and holds
// the second until coming is closed (or gives up after a while), then
// answers "done" to the next request.
type heldCallModel struct {
	coming chan struct{}
	calls  atomic.Int32
}

func (m *heldCallModel) Name() string { return "held" }

func (m *heldCallModel) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if m.calls.Add(1) > 1 {
			if yield(llm.Event{Kind: llm.EventTextDelta, Text: "done"}, nil) {
				yield(llm.Event{Kind: llm.EventFinish, Finish: llm.FinishStop}, nil)
			}
			return
		}
		if !yield(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{ID: "c1", Name: "run", ArgumentsDelta: `{"a":`}}, nil) {
			return
		}
		select {
		case <-m.coming:
		case <-time.After(waitTimeout):
			yield(llm.Event{}, errors.New("the tool's Coming was not called while its arguments streamed"))
			return
		case <-ctx.Done():
			yield(llm.Event{}, ctx.Err())
			return
		}
		// Some servers name the tool again in every fragment.
		if yield(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Name: "run", ArgumentsDelta: `1}`}}, nil) {
			yield(llm.Event{Kind: llm.EventFinish, Finish: llm.FinishToolCalls}, nil)
		}
	}
}

// A tool's Coming is called as soon as the model's stream names a call of
// it, while the call's arguments are still streaming and before it runs:
// run_command starts the sandbox helper then.
func TestAToolsComingIsCalledWhenItsCallIsNamedBeforeItRuns(t *testing.T) {
	m := &heldCallModel{coming: make(chan struct{})}
	s := agent.NewSession(agent.SessionConfig{CWD: "/tmp/x", ModelConfig: agent.ModelConfig{Model: m, ModelName: "held"}})
	defer func() { require.NoError(t, s.Close()) }()
	var (
		mu    sync.Mutex
		order []string
	)
	note := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, what)
	}
	var once sync.Once
	require.NoError(t, s.Tools().Register(agent.Tool{Name: "run",
		Parameters: json.RawMessage(`{"type":"object"}`),
		Coming: func() {
			note("coming")
			once.Do(func() { close(m.coming) })
		},
		Run: func(context.Context, json.RawMessage) (agent.ToolResult, error) {
			note("run")
			return agent.ToolResult{Text: "ran"}, nil
		}}))
	// Another tool's Coming is not called for it.
	require.NoError(t, s.Tools().Register(agent.Tool{Name: "other", Coming: func() { note("other coming") },
		Run: func(context.Context, json.RawMessage) (agent.ToolResult, error) { return agent.ToolResult{}, nil }}))
	res, err := s.Prompt(context.Background(), "run it")
	require.NoError(t, err)
	assert.Equal(t, agent.StopEndTurn, res.StopReason)
	assert.Equal(t, []string{"coming", "run"}, order)
}
