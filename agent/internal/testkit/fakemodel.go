package testkit

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

// WaitTimeout bounds every wait of these tests; nothing legitimately takes
// longer than a few milliseconds.
const WaitTimeout = 5 * time.Second

// Gate lets a test hold a model Call or a tool Call at a known point:
// Started is closed when the holder reaches the Gate, which then blocks
// until Release (or until its context is done).
type Gate struct {
	started  chan struct{}
	release  chan struct{}
	startOne sync.Once
	relOne   sync.Once
}

func (g *Gate) Started() <-chan struct{} { return g.started }

// Release lets the holder go on; it may be called any number of times.
func (g *Gate) Release() { g.relOne.Do(func() { close(g.release) }) }

// wait marks the Gate reached and blocks until Release or ctx is done.
func (g *Gate) Wait(ctx context.Context) error {
	g.startOne.Do(func() { close(g.started) })
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitStarted fails the test if the Gate is not reached in time.
func (g *Gate) AwaitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(WaitTimeout):
		t.Fatal("Gate was never reached")
	}
}

// Reply is one scripted model response: Text deltas are streamed first,
// then the Call waits at Gate (if any), then it fails with Err or streams
// Calls, Usage and the finish event.
type Reply struct {
	Text   []string
	Gate   *Gate
	Calls  []llm.ToolCall
	Usage  *llm.Usage
	Err    error
	Finish llm.FinishReason // default: tool_calls with Calls, else stop
}

// FakeModel is a scripted agent.Model. Each Stream Call takes the next
// queued Reply; when none is queued it answers "re: <last user text>". It
// records every request and is safe for concurrent use.
type FakeModel struct {
	mu        sync.Mutex
	script    []Reply
	requests  []*llm.Request
	cancelled int // Calls that ended because their ctx was done
	gates     []*Gate
}

var _ agent.Model = (*FakeModel)(nil)

func NewFakeModel(replies ...Reply) *FakeModel { return &FakeModel{script: replies} }

func (m *FakeModel) Name() string { return "fake" }

// push queues more replies.
func (m *FakeModel) Push(replies ...Reply) {
	m.mu.Lock()
	m.script = append(m.script, replies...)
	m.mu.Unlock()
}

// Gate returns a new Gate that is released when the test ends (before the
// session is closed), so a forgotten Gate cannot hang Close.
func (m *FakeModel) Gate() *Gate {
	g := &Gate{started: make(chan struct{}), release: make(chan struct{})}
	m.mu.Lock()
	m.gates = append(m.gates, g)
	m.mu.Unlock()
	return g
}

func (m *FakeModel) ReleaseAll() {
	m.mu.Lock()
	gates := m.gates
	m.mu.Unlock()
	for _, g := range gates {
		g.Release()
	}
}

// Requests returns the requests received so far, in order.
func (m *FakeModel) Requests() []*llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*llm.Request(nil), m.requests...)
}

func (m *FakeModel) Request(t *testing.T, i int) *llm.Request {
	t.Helper()
	reqs := m.Requests()
	require.Greater(t, len(reqs), i, "the model got %d requests", len(reqs))
	return reqs[i]
}

func (m *FakeModel) Cancelled() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cancelled
}

func (m *FakeModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		m.mu.Lock()
		m.requests = append(m.requests, req)
		var r Reply
		if len(m.script) > 0 {
			r = m.script[0]
			m.script = m.script[1:]
		} else {
			r = Reply{Text: []string{"re: " + LastUserText(req)}}
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
			if err := r.Gate.Wait(ctx); err != nil {
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
			// Split each Call in two fragments, as providers do.
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

func LastUserText(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text()
		}
	}
	return ""
}

// Says is a Reply of plain text.
func Says(text ...string) Reply { return Reply{Text: text} }

// Calls is a Reply of tool Calls.
func Calls(c ...llm.ToolCall) Reply { return Reply{Calls: c} }

func Call(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}

// NewSession returns a session on m, closed when the test ends (after m's
// gates are released).
func NewSession(t *testing.T, m *FakeModel, configure ...func(*agent.SessionConfig)) *agent.Session {
	t.Helper()
	cfg := agent.SessionConfig{CWD: "/tmp/x", ModelConfig: agent.ModelConfig{Model: m, ModelName: "m"}}
	for _, f := range configure {
		f(&cfg)
	}
	s := agent.NewSession(cfg)
	t.Cleanup(func() {
		m.ReleaseAll()
		require.NoError(t, s.Close())
	})
	return s
}

// Fork forks s and closes the Fork when the test ends.
func Fork(t *testing.T, m *FakeModel, s *agent.Session, index ...int) *agent.Session {
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
		m.ReleaseAll()
		require.NoError(t, f.Close())
	})
	return f
}

// PromptResult is the outcome of a prompt run in the background.
type PromptResult struct {
	Res agent.PromptResult
	Err error
}

// GoPrompt runs s.Prompt in a goroutine; the returned channel yields its
// outcome.
func GoPrompt(s *agent.Session, text string, behavior ...agent.StreamingBehavior) <-chan PromptResult {
	ch := make(chan PromptResult, 1)
	go func() {
		res, err := s.Prompt(context.Background(), text, behavior...)
		ch <- PromptResult{Res: res, Err: err}
	}()
	return ch
}

// Await returns the outcome of a background prompt.
func Await(t *testing.T, ch <-chan PromptResult) PromptResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(WaitTimeout):
		t.Fatal("prompt did not return")
		return PromptResult{}
	}
}

// NotYet asserts that a background prompt has not returned.
func NotYet(t *testing.T, ch <-chan PromptResult) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("prompt returned early: %+v", r)
	default:
	}
}

// WaitPending waits until n messages are queued: PendingMessageCount is the
// only view of the queue a goroutine's Prompt(..., FollowUp) gives.
func WaitPending(t *testing.T, s *agent.Session, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return s.PendingMessageCount() == n },
		WaitTimeout, time.Millisecond, "waiting for %d pending messages", n)
}

// NextEvent reads the next event of sub.
func NextEvent(t *testing.T, sub *agent.Subscription) agent.OutputEvent {
	t.Helper()
	select {
	case ev, ok := <-sub.C():
		require.True(t, ok, "the output stream ended (err %v)", sub.Err())
		return ev
	case <-time.After(WaitTimeout):
		t.Fatal("no output event")
		return agent.OutputEvent{}
	}
}

// WaitResults reads sub until n turn results have arrived and returns them.
func WaitResults(t *testing.T, sub *agent.Subscription, n int) []agent.OutputEvent {
	t.Helper()
	var out []agent.OutputEvent
	for len(out) < n {
		if ev := NextEvent(t, sub); ev.Type == agent.OutputResult {
			out = append(out, ev)
		}
	}
	return out
}

// Drain reads sub to its end and returns the events.
func Drain(t *testing.T, sub *agent.Subscription) []agent.OutputEvent {
	t.Helper()
	var out []agent.OutputEvent
	for {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-time.After(WaitTimeout):
			t.Fatal("the output stream did not end")
			return out
		}
	}
}

// UserTexts lists the texts of the transcript's user entries.
func UserTexts(entries []agent.Entry) []string {
	var out []string
	for _, e := range entries {
		if e.Kind == agent.EntryUser {
			out = append(out, e.Text)
		}
	}
	return out
}

// MessageSummary renders a request's conversation compactly:
// "user:hi", "assistant:hello", "assistant:[c1 read]", "tool(c1):out".
func MessageSummary(req *llm.Request) []string {
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

func ToolNames(req *llm.Request) []string {
	out := []string{}
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

// RecordingTool is a native tool that records its calls and answers
// "<name>:<args>". If g is set, every call waits at it first.
type RecordingTool struct {
	mu    sync.Mutex
	calls []string
}

func (r *RecordingTool) Calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func (r *RecordingTool) Tool(name string, g *Gate) agent.Tool {
	return agent.Tool{
		Name:        name,
		Description: "The " + name + " tool.",
		Parameters:  json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, args json.RawMessage) (agent.ToolResult, error) {
			r.mu.Lock()
			r.calls = append(r.calls, name+":"+string(args))
			r.mu.Unlock()
			if g != nil {
				if err := g.Wait(ctx); err != nil {
					return agent.ToolResult{}, err
				}
			}
			return agent.ToolResult{Text: name + ":" + string(args)}, nil
		},
	}
}
