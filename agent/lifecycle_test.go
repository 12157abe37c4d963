package agent_test

// Seed 001: streaming input (Send), the output stream (Subscribe), the
// session's configuration and its lifecycle (Close, Delete).

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// eventView renders an output event compactly.
func eventView(ev agent.OutputEvent) string {
	switch ev.Type {
	case agent.OutputToolCall:
		// Seed 001 AS-004: tool_use carries the tool's name and input.
		return string(ev.Type) + ":" + ev.ToolCallID + ":" + ev.ToolName + ":" + ev.Arguments
	case agent.OutputToolResult:
		return string(ev.Type) + ":" + ev.ToolCallID + ":" + ev.ToolName + ":" + ev.Text
	}
	return string(ev.Type) + ":" + ev.Text + ev.Err
}

// untilResult reads sub up to and including the next turn result.
func untilResult(t *testing.T, sub *agent.Subscription) []string {
	t.Helper()
	var out []string
	for {
		ev := nextEvent(t, sub)
		out = append(out, eventView(ev))
		if ev.Type == agent.OutputResult {
			return out
		}
	}
}

func TestLifecycleSendIsConsumedInFIFOOrder(t *testing.T) {
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Text: []string{"one done"}, Gate: g})
	s := newSession(t, m)
	sub := s.Subscribe(64)

	require.NoError(t, s.Send(llm.TextPart("one")))
	g.AwaitStarted(t)
	require.NoError(t, s.Send(llm.TextPart("two")))
	require.NoError(t, s.Send(llm.TextPart("three"), llm.TextPart("and more")))
	require.Error(t, s.Send(), "Send needs content")
	assert.Equal(t, []pendingView{
		{agent.SourceFollowUp, agent.PendingQueued, "two"},
		{agent.SourceFollowUp, agent.PendingQueued, "three\nand more"},
	}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, false)))

	g.Release()
	results := waitResults(t, sub, 3)
	assert.Equal(t, []string{"one done", "re: two", "re: threeand more"},
		[]string{results[0].Text, results[1].Text, results[2].Text})
	assert.Equal(t, []string{"one", "two", "three\nand more"}, userTexts(s.Transcript()))
	reqs := m.Requests()
	require.Len(t, reqs, 3)
	lastMsg := reqs[2].Messages[len(reqs[2].Messages)-1]
	assert.Equal(t, []llm.Part{llm.TextPart("three"), llm.TextPart("and more")}, lastMsg.Content,
		"the parts reach the model as sent")
	assert.Equal(t, 0, s.PendingMessageCount())
}

func TestLifecycleIdleSessionHoldsNoGoroutine(t *testing.T) {
	m := newFakeModel()
	s := newSession(t, m)
	sub := s.Subscribe(8)
	before := goleak.IgnoreCurrent()

	for _, text := range []string{"first", "second"} {
		require.NoError(t, s.Send(llm.TextPart(text)))
		res := waitResults(t, sub, 1)
		assert.Equal(t, "re: "+text, res[0].Text)
		// The worker exits once the queue is empty, so an idle session that
		// is never closed leaks nothing; the next message starts it again.
		goleak.VerifyNone(t, before)
	}
}

func TestLifecycleSubscribersEachSeeEveryEventInOrder(t *testing.T) {
	m := newFakeModel(
		reply{Text: []string{"Hel", "lo"}, Calls: []llm.ToolCall{call("c1", "echo", `{"v":1}`)}},
		says("do", "ne"),
		reply{Text: []string{"oops"}, Err: errors.New("provider down")},
	)
	s := newSession(t, m)
	require.NoError(t, s.Tools().Register((&recordingTool{}).Tool("echo", nil)))
	subs := []*agent.Subscription{s.Subscribe(64), s.Subscribe(64), s.Subscribe(64)}

	_, err := s.Prompt(context.Background(), "hi")
	require.NoError(t, err)
	want := []string{"text:Hel", "text:lo", `tool_call:c1:echo:{"v":1}`, `tool_result:c1:echo:echo:{"v":1}`, "text:do", "text:ne", "result:done"}
	for i, sub := range subs {
		assert.Equal(t, want, untilResult(t, sub), "subscriber %d", i)
	}

	// A late subscriber sees only what is published after it subscribed;
	// an unsubscribed one sees nothing more.
	late := s.Subscribe(64)
	subs[2].Unsubscribe()
	_, err = s.Prompt(context.Background(), "again", agent.FollowUp)
	require.Error(t, err)
	want = []string{"text:oops", "result:oops" + err.Error()}
	for _, sub := range []*agent.Subscription{subs[0], subs[1], late} {
		got := untilResult(t, sub)
		assert.Equal(t, want, got, "a failed turn is broadcast with its error")
	}
	assert.Contains(t, err.Error(), "provider down")
	assert.Empty(t, drain(t, subs[2]), "unsubscribed")
	assert.NoError(t, subs[2].Err())
}

func TestLifecycleSlowSubscriberIsDroppedWithoutStallingTheLoop(t *testing.T) {
	deltas := make([]string, 50)
	for i := range deltas {
		deltas[i] = string(rune('a' + i%26))
	}
	m := newFakeModel(says(deltas...))
	s := newSession(t, m)
	slow := s.Subscribe(1) // never read during the turn
	fast := s.Subscribe(len(deltas) + 1)

	res, err := s.Prompt(context.Background(), "stream a lot")
	require.NoError(t, err, "the turn is not stalled by the slow subscriber")
	assert.Equal(t, strings.Join(deltas, ""), res.Text)

	got := untilResult(t, fast)
	require.Len(t, got, len(deltas)+1, "the fast subscriber sees every event")
	for i, d := range deltas {
		assert.Equal(t, "text:"+d, got[i])
	}

	slowGot := drain(t, slow)
	assert.Equal(t, []agent.OutputEvent{{Type: agent.OutputText, Text: deltas[0]}}, slowGot,
		"the slow subscriber keeps what it had buffered, then its stream ends")
	assert.ErrorIs(t, slow.Err(), agent.ErrSubscriberLagged)

	// The fast subscriber goes on receiving.
	_, err = s.Prompt(context.Background(), "more", agent.FollowUp)
	require.NoError(t, err)
	assert.Equal(t, []string{"text:re: more", "result:re: more"}, untilResult(t, fast))
	assert.NoError(t, fast.Err())
}

func TestLifecycleCloseStopsInputAndLetsTheRunningTurnFinish(t *testing.T) {
	ctx := context.Background()
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Text: []string{"finished anyway"}, Gate: g})
	s := newSession(t, m)
	sub := s.Subscribe(64)

	require.NoError(t, s.Send(llm.TextPart("running")))
	g.AwaitStarted(t)
	require.NoError(t, s.Send(llm.TextPart("queued")))
	awaiting := goPrompt(s, "awaiting", agent.FollowUp)
	waitPending(t, s, 2)

	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	require.Eventually(t, func() bool {
		_, err := s.Prompt(ctx, "probe") // rejected while busy, so it never queues
		return errors.Is(err, agent.ErrSessionClosed)
	}, waitTimeout, time.Millisecond)

	// Input is refused; the queued messages failed; the turn still runs.
	assert.ErrorIs(t, s.Send(llm.TextPart("late")), agent.ErrSessionClosed)
	assert.ErrorIs(t, s.FollowUp("late"), agent.ErrSessionClosed)
	assert.ErrorIs(t, s.Steer("late"), agent.ErrSessionClosed)
	_, err := s.Prompt(ctx, "late", agent.FollowUp)
	assert.ErrorIs(t, err, agent.ErrSessionClosed)
	assert.ErrorIs(t, await(t, awaiting).Err, agent.ErrSessionClosed)
	hist := s.PendingMessages(agent.DefaultPreviewLength, true)
	assert.Equal(t, []pendingView{
		{agent.SourceFollowUp, agent.PendingFailed, "queued"},
		{agent.SourcePromptFollowUp, agent.PendingFailed, "awaiting"},
	}, pendingViews(hist))
	select {
	case <-closed:
		t.Fatal("Close returned before the running turn finished")
	default:
	}

	g.Release()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(waitTimeout):
		t.Fatal("Close did not return")
	}
	evs := drain(t, sub)
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	require.NotNil(t, last.DurationMS, "seed 001: the result carries the turn's duration")
	assert.GreaterOrEqual(t, *last.DurationMS, int64(0))
	last.DurationMS = nil
	assert.Equal(t, agent.OutputEvent{Type: agent.OutputResult, Text: "finished anyway", StopReason: "end_turn", Usage: &llm.Usage{}}, last,
		"the running turn completed; nothing ran after it; no pricing, so no cost")
	assert.NoError(t, sub.Err())
	assert.Equal(t, []string{"running"}, userTexts(s.Transcript()))
	assert.Len(t, m.Requests(), 1)
	assert.Equal(t, 0, m.Cancelled(), "the running turn was not cancelled")

	// A closed session stays closed.
	require.NoError(t, s.Close())
	_, open := <-s.Subscribe(1).C()
	assert.False(t, open, "subscribing to a closed session gives an ended stream")
	assert.ErrorIs(t, s.Send(llm.TextPart("x")), agent.ErrSessionClosed)
}

func TestLifecycleDeleteClosesCallsOnDeleteAndNotifiesSubscribers(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"OnDelete succeeds", nil},
		{"OnDelete fails", errors.New("disk full")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				s                 *agent.Session
				deletes           atomic.Int32
				closedAtOnDelete  atomic.Bool
				subs              []*agent.Subscription
				m                 = newFakeModel()
				forkedWithoutHook *agent.Session
			)
			s = newSession(t, m, func(c *agent.SessionConfig) {
				c.OnDelete = func() error {
					deletes.Add(1)
					closedAtOnDelete.Store(errors.Is(s.Send(llm.TextPart("x")), agent.ErrSessionClosed))
					return tt.err
				}
			})
			subs = []*agent.Subscription{s.Subscribe(16), s.Subscribe(16)}
			_, err := s.Prompt(context.Background(), "hi")
			require.NoError(t, err)

			forkedWithoutHook = fork(t, m, s)
			require.NoError(t, forkedWithoutHook.Delete())
			assert.Equal(t, int32(0), deletes.Load(), "a fork does not delete its parent's data")

			err = s.Delete()
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
			} else {
				assert.NoError(t, err)
			}
			assert.Equal(t, int32(1), deletes.Load())
			assert.True(t, closedAtOnDelete.Load(), "the session is closed before its data is removed")
			for i, sub := range subs {
				evs := drain(t, sub)
				require.Len(t, evs, 3, "subscriber %d: text, result, deleted", i)
				assert.Equal(t, agent.OutputResult, evs[1].Type)
				assert.Equal(t, agent.OutputEvent{Type: agent.OutputDeleted}, evs[2], "the last event says the session was deleted")
				assert.NoError(t, sub.Err())
			}
			assert.ErrorIs(t, s.Send(llm.TextPart("after")), agent.ErrSessionClosed)
		})
	}
}

func TestLifecycleConfigSystemPromptAndAllowedTools(t *testing.T) {
	tests := []struct {
		name         string
		systemPrompt string
		allowed      []string
		wantOffered  []string
		wantRan      []string
	}{
		{"defaults", "", nil, []string{"read", "write"}, []string{"read:{}", "write:{}"}},
		{"system prompt and one allowed tool", "You are terse.", []string{"read"}, []string{"read"}, []string{"read:{}"}},
		{"no tool allowed", "", []string{}, []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newFakeModel(calls(call("c1", "read", `{}`), call("c2", "write", `{}`)), says("ok"))
			rt := &recordingTool{}
			s := newSession(t, m, func(c *agent.SessionConfig) {
				c.SystemPrompt, c.AllowedTools, c.CWD = tt.systemPrompt, tt.allowed, "/work/project"
			})
			require.NoError(t, s.Tools().Register(rt.Tool("read", nil)))
			require.NoError(t, s.Tools().Register(rt.Tool("write", nil)))
			assert.Equal(t, "/work/project", s.CWD())

			_, err := s.Prompt(context.Background(), "go")
			require.NoError(t, err)
			req := m.Request(t, 0)
			if tt.systemPrompt != "" {
				assert.Equal(t, tt.systemPrompt, req.System)
			} else {
				assert.Contains(t, req.System, "/work/project", "the default system prompt names the cwd")
			}
			assert.Equal(t, tt.wantOffered, toolNames(req))
			active := s.ActiveToolNames()
			if active == nil {
				active = []string{}
			}
			assert.Equal(t, tt.wantOffered, active, "ActiveToolNames is what the model is offered (issue 15.6)")
			assert.Equal(t, tt.wantRan, rt.Calls(), "a tool that is not allowed is not run")
			for _, e := range s.Transcript() {
				if e.Kind == agent.EntryToolOutput {
					ran := contains(tt.wantRan, e.ToolName+":{}")
					assert.Equal(t, !ran, e.IsError, "output of %s", e.ToolName)
				}
			}

			// A fork keeps the configuration.
			f := fork(t, m, s)
			assert.Equal(t, "/work/project", f.CWD())
			_, err = f.Prompt(context.Background(), "forked")
			require.NoError(t, err)
			freq := m.Request(t, 2)
			assert.Equal(t, req.System, freq.System)
			assert.Equal(t, tt.wantOffered, toolNames(freq))
		})
	}
}
