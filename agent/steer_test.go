package agent_test

// Mid-turn steering: a steer message queued during a turn is delivered
// inside that turn at the next model-call boundary.

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// recordingSink is an agent.UpdateSink that keeps every update.
type recordingSink struct {
	mu      sync.Mutex
	updates []agent.Update
}

func (r *recordingSink) Update(_ context.Context, u agent.Update) error {
	r.mu.Lock()
	r.updates = append(r.updates, u)
	r.mu.Unlock()
	return nil
}

func (r *recordingSink) Updates() []agent.Update {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agent.Update(nil), r.updates...)
}

func TestSteerSkipsRemainingToolCallsAndReachesNextRequest(t *testing.T) {
	const steerText = "stop, do X instead"
	tests := []struct {
		name string
		// holdTool is the index of the call whose tool is running when the
		// steer is queued; -1 means the model is still streaming.
		holdTool int
		ran      []string // tool calls that ran
		skipped  []string // call ids that got the skipped result
	}{
		{"during the first of three tools", 0, []string{`t1:{"n":1}`}, []string{"c2", "c3"}},
		{"during the second of three tools", 1, []string{`t1:{"n":1}`, `t2:{"n":2}`}, []string{"c3"}},
		{"during the last tool", 2, []string{`t1:{"n":1}`, `t2:{"n":2}`, `t3:{"n":3}`}, nil},
		{"while the model streams", -1, []string{`t1:{"n":1}`}, []string{"c2", "c3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newFakeModel()
			hold := m.Gate()
			sink := &recordingSink{}
			s := newSession(t, m, func(c *agent.SessionConfig) { c.Sink = sink })
			sub := s.Subscribe(64)
			rt := &recordingTool{}
			for i, name := range []string{"t1", "t2", "t3"} {
				var g *gate
				if i == tt.holdTool {
					g = hold
				}
				require.NoError(t, s.Tools().Register(rt.Tool(name, g)))
			}
			first := reply{Text: []string{"working"}, Calls: []llm.ToolCall{
				call("c1", "t1", `{"n":1}`), call("c2", "t2", `{"n":2}`), call("c3", "t3", `{"n":3}`),
			}}
			if tt.holdTool < 0 {
				first.Gate = hold
			}
			m.Push(first, says("after steer"))

			a := goPrompt(s, "do three things")
			hold.AwaitStarted(t)
			require.NoError(t, s.Steer(steerText))
			hold.Release()

			r := await(t, a)
			require.NoError(t, r.Err)
			assert.Equal(t, "after steer", r.Res.Text)
			assert.Equal(t, tt.ran, rt.Calls(), "the tools that ran")
			require.Len(t, m.Requests(), 2)

			// The next request has every call answered, then the steer.
			want := []string{"user:do three things", "assistant:working[c1 t1 c2 t2 c3 t3]"}
			for i, id := range []string{"c1", "c2", "c3"} {
				out := fmt.Sprintf(`t%d:{"n":%d}`, i+1, i+1)
				if i >= len(tt.ran) {
					out = agent.SkippedForSteerResult
				}
				want = append(want, "tool("+id+"):"+out)
			}
			want = append(want, "user:"+steerText)
			assert.Equal(t, want, messageSummary(m.Request(t, 1)))

			// The transcript agrees: skipped calls are failed outputs, and
			// the steer is a user message of source steer.
			var skipped []string
			var steerAt, lastOutputAt int
			for i, e := range s.Transcript() {
				switch {
				case e.Kind == agent.EntryToolOutput && e.Text == agent.SkippedForSteerResult:
					assert.True(t, e.IsError)
					skipped = append(skipped, e.ToolCallID)
					lastOutputAt = i
				case e.Kind == agent.EntryToolOutput:
					assert.False(t, e.IsError)
					lastOutputAt = i
				case e.Kind == agent.EntryUser && e.Text == steerText:
					assert.Equal(t, string(agent.SourceSteer), e.Source)
					steerAt = i
				}
			}
			assert.Equal(t, tt.skipped, skipped)
			assert.Greater(t, steerAt, lastOutputAt, "the steer comes after the tool results")

			// The client is told about every call before any update of it,
			// and the skipped ones end failed with the skipped text.
			announced := map[string]agent.ToolStatus{}
			var echoedSteer bool
			for _, u := range sink.Updates() {
				switch u.Kind {
				case agent.UpdateToolCall:
					announced[u.ToolCall.ID] = u.ToolCall.Status
				case agent.UpdateToolCallProgress:
					id := u.ToolCall.ID
					require.Contains(t, announced, id, "update of a tool call the client was never told about")
					announced[id] = u.ToolCall.Status
				case agent.UpdateUserMessage:
					echoedSteer = true
				}
			}
			assert.True(t, echoedSteer, "the steer text is shown to the client")
			for _, id := range []string{"c1", "c2", "c3"} {
				want := agent.ToolCompleted
				if contains(tt.skipped, id) {
					want = agent.ToolFailed
				}
				assert.Equal(t, want, announced[id], "final status of %s", id)
			}

			// Subscribers see the tool calls that ran.
			var subCalls []string
			for {
				ev := nextEvent(t, sub)
				if ev.Type == agent.OutputToolCall {
					subCalls = append(subCalls, ev.ToolCallID)
				}
				if ev.Type == agent.OutputResult {
					break
				}
			}
			assert.Len(t, subCalls, len(tt.ran))
			// The turn's result is published after its steer was recorded.
			assert.Equal(t, []pendingView{{agent.SourceSteer, agent.PendingResolved, steerText}},
				pendingViews(s.PendingMessages(agent.DefaultPreviewLength, true)))
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestSteerDuringTextOnlyResponseMakesAnotherModelCall(t *testing.T) {
	tests := []struct {
		name     string
		steer    bool
		wantText string
		wantReqs int
	}{
		{"steer queued", true, "second answer", 2},
		{"no steer", false, "first answer", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newFakeModel()
			g := m.Gate()
			m.Push(reply{Text: []string{"first ", "answer"}, Gate: g}, says("second answer"))
			s := newSession(t, m)

			a := goPrompt(s, "question")
			g.AwaitStarted(t)
			if tt.steer {
				require.NoError(t, s.Steer("also consider Y"))
			}
			g.Release()
			r := await(t, a)
			require.NoError(t, r.Err)
			assert.Equal(t, tt.wantText, r.Res.Text)
			require.Len(t, m.Requests(), tt.wantReqs)
			if tt.steer {
				assert.Equal(t, []string{"user:question", "assistant:first answer", "user:also consider Y"},
					messageSummary(m.Request(t, 1)))
				assert.Equal(t, []string{"question", "also consider Y"}, userTexts(s.Transcript()))
				assert.Len(t, s.Transcript(), 4)
			} else {
				assert.Len(t, s.Transcript(), 2)
			}
		})
	}
}

func TestSteerAwaitedPromptReturnsResultOfJoinedTurn(t *testing.T) {
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Text: []string{"a1"}, Gate: g}, says("joined"), says("f1 done"), says("f2 done"))
	s := newSession(t, m)
	sub := s.Subscribe(64)

	a := goPrompt(s, "A")
	g.AwaitStarted(t)
	f1 := goPrompt(s, "F1", agent.FollowUp)
	waitPending(t, s, 1)
	st := goPrompt(s, "S", agent.Steer)
	waitPending(t, s, 2)
	require.NoError(t, s.FollowUp("F2"))
	assert.Equal(t, []pendingView{
		{agent.SourcePromptFollowUp, agent.PendingQueued, "F1"},
		{agent.SourceSteer, agent.PendingQueued, "S"},
		{agent.SourceFollowUp, agent.PendingQueued, "F2"},
	}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, false)))

	g.Release()
	ra, rs := await(t, a), await(t, st)
	require.NoError(t, ra.Err)
	require.NoError(t, rs.Err)
	assert.Equal(t, "joined", ra.Res.Text)
	assert.Equal(t, ra.Res, rs.Res, "the awaited steer gets the result of the turn it joined")
	rf1 := await(t, f1)
	require.NoError(t, rf1.Err)
	assert.Equal(t, "f1 done", rf1.Res.Text)

	results := waitResults(t, sub, 3) // A with S, F1, F2
	assert.Equal(t, []string{"joined", "f1 done", "f2 done"}, []string{results[0].Text, results[1].Text, results[2].Text})
	assert.Equal(t, []string{"A", "S", "F1", "F2"}, userTexts(s.Transcript()),
		"the steer joins the running turn; follow-ups run after it in FIFO order")
	var last []string
	for _, r := range m.Requests() {
		last = append(last, lastUserText(r))
	}
	assert.Equal(t, []string{"A", "S", "F1", "F2"}, last)
	assert.Equal(t, []pendingView{
		{agent.SourceSteer, agent.PendingResolved, "S"},
		{agent.SourcePromptFollowUp, agent.PendingResolved, "F1"},
		{agent.SourceFollowUp, agent.PendingResolved, "F2"},
	}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, true)))
}

func TestSteerJoinedTurnCancelledFailsTheSteer(t *testing.T) {
	m := newFakeModel()
	g1, g2 := m.Gate(), m.Gate()
	m.Push(reply{Gate: g1}, reply{Text: []string{"answering the steer"}, Gate: g2})
	s := newSession(t, m)

	a := goPrompt(s, "A")
	g1.AwaitStarted(t)
	st := goPrompt(s, "S", agent.Steer)
	waitPending(t, s, 1)
	g1.Release()
	g2.AwaitStarted(t) // the steer is in the turn now
	assert.Equal(t, 0, s.PendingMessageCount())
	notYet(t, st)

	require.True(t, s.CancelActivePrompt())
	ra, rs := await(t, a), await(t, st)
	assert.ErrorIs(t, ra.Err, context.Canceled)
	assert.ErrorIs(t, rs.Err, context.Canceled)
	assert.Equal(t, "answering the steer", rs.Res.Text)
	assert.Equal(t, []pendingView{{agent.SourceSteer, agent.PendingFailed, "S"}}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, true)))
}
