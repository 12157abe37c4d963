package acpagent_test

import (
	"context"
	"encoding/json"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// waitTimeout bounds every wait of these tests; nothing legitimately takes
// longer than a few milliseconds.
const waitTimeout = 5 * time.Second

// gate lets a test hold a model call or a tool call at a known point:
// Started is closed when the holder reaches the gate, which then blocks
// until Release (or until its context is done).
type gate struct {
	started  chan struct{}
	release  chan struct{}
	startOne sync.Once
	relOne   sync.Once
}

func (g *gate) Started() <-chan struct{} { return g.started }

// Release lets the holder go on; it may be called any number of times.
func (g *gate) Release() { g.relOne.Do(func() { close(g.release) }) }

// wait marks the gate reached and blocks until Release or ctx is done.
func (g *gate) wait(ctx context.Context) error {
	g.startOne.Do(func() { close(g.started) })
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitStarted fails the test if the gate is not reached in time.
func (g *gate) awaitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(waitTimeout):
		t.Fatal("gate was never reached")
	}
}

// reply is one scripted model response: Text deltas are streamed first,
// then the call waits at Gate (if any), then it fails with Err or streams
// Calls, Usage and the finish event.
type reply struct {
	Text   []string
	Gate   *gate
	Calls  []llm.ToolCall
	Usage  *llm.Usage
	Err    error
	Finish llm.FinishReason // default: tool_calls with Calls, else stop
}

// fakeModel is a scripted agent.Model. Each Stream call takes the next
// queued reply; when none is queued it answers "re: <last user text>". It
// records every request and is safe for concurrent use.
type fakeModel struct {
	mu        sync.Mutex
	script    []reply
	requests  []*llm.Request
	cancelled int // calls that ended because their ctx was done
	gates     []*gate
}

var _ agent.Model = (*fakeModel)(nil)

func newFakeModel(replies ...reply) *fakeModel { return &fakeModel{script: replies} }

func (m *fakeModel) Name() string { return "fake" }

// push queues more replies.
func (m *fakeModel) push(replies ...reply) {
	m.mu.Lock()
	m.script = append(m.script, replies...)
	m.mu.Unlock()
}

// gate returns a new gate that is released when the test ends (before the
// session is closed), so a forgotten gate cannot hang Close.
func (m *fakeModel) gate() *gate {
	g := &gate{started: make(chan struct{}), release: make(chan struct{})}
	m.mu.Lock()
	m.gates = append(m.gates, g)
	m.mu.Unlock()
	return g
}

func (m *fakeModel) releaseAll() {
	m.mu.Lock()
	gates := m.gates
	m.mu.Unlock()
	for _, g := range gates {
		g.Release()
	}
}

// Requests returns the requests received so far, in order.
func (m *fakeModel) Requests() []*llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*llm.Request(nil), m.requests...)
}

func (m *fakeModel) request(t *testing.T, i int) *llm.Request {
	t.Helper()
	reqs := m.Requests()
	require.Greater(t, len(reqs), i, "the model got %d requests", len(reqs))
	return reqs[i]
}

func (m *fakeModel) Cancelled() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cancelled
}

func (m *fakeModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		m.mu.Lock()
		m.requests = append(m.requests, req)
		var r reply
		if len(m.script) > 0 {
			r = m.script[0]
			m.script = m.script[1:]
		} else {
			r = reply{Text: []string{"re: " + lastUserText(req)}}
		}
		m.mu.Unlock()

		fail := func(err error) {
			if ctx.Err() != nil {
				m.mu.Lock()
				m.cancelled++
				m.mu.Unlock()
			}
			yield(llm.Event{}, err)
		}
		for _, d := range r.Text {
			if ctx.Err() != nil {
				fail(ctx.Err())
				return
			}
			if !yield(llm.Event{Kind: llm.EventTextDelta, Text: d}, nil) {
				return
			}
		}
		if r.Gate != nil {
			if err := r.Gate.wait(ctx); err != nil {
				fail(err)
				return
			}
		}
		if ctx.Err() != nil {
			fail(ctx.Err())
			return
		}
		if r.Err != nil {
			yield(llm.Event{}, r.Err)
			return
		}
		for i, c := range r.Calls {
			// Split each call in two fragments, as providers do.
			half := len(c.Arguments) / 2
			if !yield(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, ArgumentsDelta: c.Arguments[:half]}}, nil) {
				return
			}
			if !yield(llm.Event{Kind: llm.EventToolCallDelta, ToolCall: &llm.ToolCallDelta{Index: i, ArgumentsDelta: c.Arguments[half:]}}, nil) {
				return
			}
		}
		if r.Usage != nil {
			if !yield(llm.Event{Kind: llm.EventUsage, Usage: r.Usage}, nil) {
				return
			}
		}
		finish := r.Finish
		if finish == "" {
			finish = llm.FinishStop
			if len(r.Calls) > 0 {
				finish = llm.FinishToolCalls
			}
		}
		yield(llm.Event{Kind: llm.EventFinish, Finish: finish}, nil)
	}
}

func lastUserText(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text()
		}
	}
	return ""
}

// says is a reply of plain text.
func says(text ...string) reply { return reply{Text: text} }

// calls is a reply of tool calls.
func calls(c ...llm.ToolCall) reply { return reply{Calls: c} }

func call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

// newSession returns a session on m, closed when the test ends (after m's
// gates are released).
func newSession(t *testing.T, m *fakeModel, configure ...func(*agent.SessionConfig)) *agent.Session {
	t.Helper()
	cfg := agent.SessionConfig{CWD: "/tmp/x", ModelConfig: agent.ModelConfig{Model: m, ModelName: "m"}}
	for _, f := range configure {
		f(&cfg)
	}
	s := agent.NewSession(cfg)
	t.Cleanup(func() {
		m.releaseAll()
		require.NoError(t, s.Close())
	})
	return s
}

// fork forks s and closes the fork when the test ends.
func fork(t *testing.T, m *fakeModel, s *agent.Session, index ...int) *agent.Session {
	t.Helper()
	var (
		f   *agent.Session
		err error
	)
	if len(index) > 0 {
		f, err = s.ForkFromUserEntry(index[0])
	} else {
		f, err = s.Fork()
	}
	require.NoError(t, err)
	t.Cleanup(func() {
		m.releaseAll()
		require.NoError(t, f.Close())
	})
	return f
}

// promptResult is the outcome of a prompt run in the background.
type promptResult struct {
	res agent.PromptResult
	err error
}

// goPrompt runs s.Prompt in a goroutine; the returned channel yields its
// outcome.
func goPrompt(s *agent.Session, text string, behavior ...agent.StreamingBehavior) <-chan promptResult {
	ch := make(chan promptResult, 1)
	go func() {
		res, err := s.Prompt(context.Background(), text, behavior...)
		ch <- promptResult{res, err}
	}()
	return ch
}

// await returns the outcome of a background prompt.
func await(t *testing.T, ch <-chan promptResult) promptResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(waitTimeout):
		t.Fatal("prompt did not return")
		return promptResult{}
	}
}

// notYet asserts that a background prompt has not returned.
func notYet(t *testing.T, ch <-chan promptResult) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("prompt returned early: %+v", r)
	default:
	}
}

// waitPending waits until n messages are queued: PendingMessageCount is the
// only view of the queue a goroutine's Prompt(..., FollowUp) gives.
func waitPending(t *testing.T, s *agent.Session, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.PendingMessageCount() == n },
		waitTimeout, time.Millisecond, "waiting for %d pending messages", n)
}

// nextEvent reads the next event of sub.
func nextEvent(t *testing.T, sub *agent.Subscription) agent.OutputEvent {
	t.Helper()
	select {
	case ev, ok := <-sub.C():
		require.True(t, ok, "the output stream ended (err %v)", sub.Err())
		return ev
	case <-time.After(waitTimeout):
		t.Fatal("no output event")
		return agent.OutputEvent{}
	}
}

// waitResults reads sub until n turn results have arrived and returns them.
func waitResults(t *testing.T, sub *agent.Subscription, n int) []agent.OutputEvent {
	t.Helper()
	var out []agent.OutputEvent
	for len(out) < n {
		if ev := nextEvent(t, sub); ev.Type == agent.OutputResult {
			out = append(out, ev)
		}
	}
	return out
}

// drain reads sub to its end and returns the events.
func drain(t *testing.T, sub *agent.Subscription) []agent.OutputEvent {
	t.Helper()
	var out []agent.OutputEvent
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-time.After(waitTimeout):
			t.Fatal("the output stream did not end")
			return out
		}
	}
}

// userTexts lists the texts of the transcript's user entries.
func userTexts(entries []agent.Entry) []string {
	var out []string
	for _, e := range entries {
		if e.Kind == agent.EntryUser {
			out = append(out, e.Text)
		}
	}
	return out
}

// messageSummary renders a request's conversation compactly:
// "user:hi", "assistant:hello", "assistant:[c1 read]", "tool(c1):out".
func messageSummary(req *llm.Request) []string {
	var out []string
	for _, m := range req.Messages {
		switch {
		case m.Role == llm.RoleTool:
			out = append(out, "tool("+m.ToolCallID+"):"+m.Text())
		case len(m.ToolCalls) > 0:
			s := "assistant:" + m.Text() + "["
			for i, c := range m.ToolCalls {
				if i > 0 {
					s += " "
				}
				s += c.ID + " " + c.Name
			}
			out = append(out, s+"]")
		default:
			out = append(out, string(m.Role)+":"+m.Text())
		}
	}
	return out
}

func toolNames(req *llm.Request) []string {
	out := []string{}
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// recordingTool is a native tool that records its calls and answers
// "<name>:<args>". If g is set, every call waits at it first.
type recordingTool struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingTool) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func (r *recordingTool) tool(name string, g *gate) agent.Tool {
	return agent.Tool{
		Name:        name,
		Description: "The " + name + " tool.",
		Parameters:  json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, args json.RawMessage) (agent.ToolResult, error) {
			r.mu.Lock()
			r.calls = append(r.calls, name+":"+string(args))
			r.mu.Unlock()
			if g != nil {
				if err := g.wait(ctx); err != nil {
					return agent.ToolResult{}, err
				}
			}
			return agent.ToolResult{Text: name + ":" + string(args)}, nil
		},
	}
}
