package agent_test

// One test per acceptance scenario of seed 000 (SKIAgentSession), driven by
// the scripted fakeModel.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// pendingView is the part of a PendingMessage the scenarios assert on.
type pendingView struct {
	Source  agent.PendingSource
	Status  agent.PendingStatus
	Preview string
}

func pendingViews(msgs []agent.PendingMessage) []pendingView {
	out := []pendingView{}
	for _, m := range msgs {
		out = append(out, pendingView{m.Source, m.Status, m.Preview})
	}
	return out
}

func TestScenario01_PromptReturnsAssistantTextAndAppendsTranscript(t *testing.T) {
	m := newFakeModel(reply{Text: []string{"Hel", "lo", "!"}, Usage: &llm.Usage{InputTokens: 7, OutputTokens: 3}})
	s := newSession(t, m)

	res, err := s.Prompt(context.Background(), "hello")
	require.NoError(t, err)
	assert.Equal(t, "Hello!", res.Text)
	assert.Equal(t, agent.StopEndTurn, res.StopReason)
	assert.Equal(t, llm.Usage{InputTokens: 7, OutputTokens: 3}, res.Usage)

	tr := s.Transcript()
	require.Len(t, tr, 2)
	assert.Equal(t, agent.EntryUser, tr[0].Kind)
	assert.Equal(t, "hello", tr[0].Text)
	assert.Equal(t, "prompt", tr[0].Source)
	assert.Equal(t, agent.EntryAssistant, tr[1].Kind)
	assert.Equal(t, "Hello!", tr[1].Text)
	assert.False(t, tr[0].Time.IsZero())
	assert.False(t, tr[1].Time.Before(tr[0].Time))

	req := m.Request(t, 0)
	assert.Equal(t, "m", req.Model)
	assert.Equal(t, []string{"user:hello"}, messageSummary(req))
	assert.Contains(t, req.System, "/tmp/x", "the default system prompt names the working directory")

	// The next prompt sends the history and appends after it.
	res, err = s.Prompt(context.Background(), "again")
	require.NoError(t, err)
	assert.Equal(t, "re: again", res.Text)
	assert.Equal(t, []string{"user:hello", "assistant:Hello!", "user:again"}, messageSummary(m.Request(t, 1)))
	assert.Equal(t, []string{"hello", "again"}, userTexts(s.Transcript()))
	assert.Len(t, s.Transcript(), 4)
}

func TestScenario02_ForkHasNewIDAndIndependentTranscript(t *testing.T) {
	m := newFakeModel()
	s := newSession(t, m)
	ctx := context.Background()
	for _, text := range []string{"one", "two"} {
		_, err := s.Prompt(ctx, text)
		require.NoError(t, err)
	}

	f := fork(t, m, s)
	assert.NotEmpty(t, f.ID())
	assert.NotEqual(t, s.ID(), f.ID())
	assert.Equal(t, s.Transcript(), f.Transcript(), "the fork starts from the parent's snapshot")
	assert.Equal(t, s.CWD(), f.CWD())
	assert.Equal(t, "one", s.Title())
	assert.Equal(t, "one (fork)", f.Title(), "the fork's title says it is one")

	// The fork's messages do not reach the parent...
	_, err := f.Prompt(ctx, "child")
	require.NoError(t, err)
	assert.Equal(t,
		[]string{"user:one", "assistant:re: one", "user:two", "assistant:re: two", "user:child"},
		messageSummary(m.Request(t, 2)), "the fork's model sees the inherited history")
	assert.Equal(t, []string{"one", "two", "child"}, userTexts(f.Transcript()))
	assert.Equal(t, []string{"one", "two"}, userTexts(s.Transcript()))
	assert.Len(t, s.Transcript(), 4)

	// ...and the parent's do not reach the fork.
	_, err = s.Prompt(ctx, "parent")
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two", "parent"}, userTexts(s.Transcript()))
	assert.Equal(t, []string{"one", "two", "child"}, userTexts(f.Transcript()))
	assert.Equal(t, 3, s.Stats().UserMessages)
	assert.Equal(t, 3, f.Stats().UserMessages)

	named, err := s.ForkWith(agent.ForkOptions{ID: "chosen-id"})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, named.Close()) })
	assert.Equal(t, "chosen-id", named.ID())
}

func TestScenario03_ResumeRestoresTranscriptSnapshot(t *testing.T) {
	ctx := context.Background()

	t.Run("snapshot of another session", func(t *testing.T) {
		m := newFakeModel(calls(call("c1", "echo", `{"x":1}`)), says("echoed"))
		src := newSession(t, m)
		rt := &recordingTool{}
		require.NoError(t, src.Tools().Register(rt.Tool("echo", nil)))
		_, err := src.Prompt(ctx, "first")
		require.NoError(t, err)
		entries := src.Transcript()
		require.Len(t, entries, 4)

		dst := newSession(t, m)
		require.NoError(t, dst.Resume(entries))
		assert.Equal(t, entries, dst.Transcript())
		want := src.Stats()
		got := dst.Stats()
		want.SessionID = dst.ID()
		assert.Equal(t, want, got, "stats are recomputed from the resumed entries")

		// The session keeps its own copy.
		entries[0].Text = "mutated"
		assert.Equal(t, "first", dst.Transcript()[0].Text)

		_, err = dst.Prompt(ctx, "next")
		require.NoError(t, err)
		assert.Equal(t,
			[]string{"user:first", `assistant:[c1 echo]`, `tool(c1):echo:{"x":1}`, "assistant:echoed", "user:next"},
			messageSummary(m.Request(t, 2)))
	})

	t.Run("constructed entries replace the transcript", func(t *testing.T) {
		m := newFakeModel()
		s := newSession(t, m)
		_, err := s.Prompt(ctx, "to be replaced")
		require.NoError(t, err)

		entries := []agent.Entry{agent.UserEntry("hi"), agent.AssistantEntry("hello")}
		require.NoError(t, s.Resume(entries))
		assert.Equal(t, entries, s.Transcript())
		assert.Equal(t, []agent.ForkableMessage{{EntryIndex: 0, Text: "hi"}}, s.ForkableUserMessages())
	})

	t.Run("refused while a turn runs", func(t *testing.T) {
		m := newFakeModel()
		g := m.Gate()
		m.Push(reply{Gate: g})
		s := newSession(t, m)
		a := goPrompt(s, "busy")
		g.AwaitStarted(t)
		before := s.Transcript()
		require.ErrorIs(t, s.Resume([]agent.Entry{agent.UserEntry("x")}), agent.ErrPromptAlreadyRunning)
		assert.Equal(t, before, s.Transcript())
		g.Release()
		require.NoError(t, await(t, a).Err)
	})
}

func TestScenario04_CancelActivePromptReturnsCancellationError(t *testing.T) {
	tests := []struct {
		name   string
		cancel func(t *testing.T, s *agent.Session, cancelCtx context.CancelFunc)
	}{
		{"CancelActivePrompt", func(t *testing.T, s *agent.Session, _ context.CancelFunc) { assert.True(t, s.CancelActivePrompt()) }},
		{"ClearPendingState with cancelActivePrompt", func(t *testing.T, s *agent.Session, _ context.CancelFunc) {
			assert.True(t, s.ClearPendingState(true).ActivePromptCancelled)
		}},
		{"caller's context", func(_ *testing.T, _ *agent.Session, cancelCtx context.CancelFunc) { cancelCtx() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newFakeModel()
			g := m.Gate()
			m.Push(reply{Text: []string{"partial"}, Gate: g})
			s := newSession(t, m)
			assert.False(t, s.CancelActivePrompt(), "nothing runs yet")

			ctx, cancelCtx := context.WithCancel(context.Background())
			defer cancelCtx()
			done := make(chan promptResult, 1)
			go func() {
				res, err := s.Prompt(ctx, "slow question")
				done <- promptResult{Res: res, Err: err}
			}()
			g.AwaitStarted(t)
			tt.cancel(t, s, cancelCtx)

			r := await(t, done)
			require.Error(t, r.Err)
			assert.ErrorIs(t, r.Err, context.Canceled)
			assert.ErrorIs(t, r.Err, agent.ErrPromptCancelled)
			assert.Equal(t, "partial", r.Res.Text, "the partial answer comes with the error")
			assert.Equal(t, 1, m.Cancelled(), "the model call saw its context cancelled")
			assert.Equal(t, []string{"slow question"}, userTexts(s.Transcript()))

			// The session is usable again.
			res, err := s.Prompt(context.Background(), "after", agent.FollowUp)
			require.NoError(t, err)
			assert.Equal(t, "re: after", res.Text)
		})
	}
}

func TestScenario05_ForkableUserMessagesListsUserEntriesInOrder(t *testing.T) {
	m := newFakeModel(calls(call("c1", "echo", `{}`)), says("done one"))
	s := newSession(t, m)
	require.NoError(t, s.Tools().Register((&recordingTool{}).Tool("echo", nil)))
	assert.Empty(t, s.ForkableUserMessages())

	for _, text := range []string{"one", "two", "three"} {
		_, err := s.Prompt(context.Background(), text)
		require.NoError(t, err)
	}
	// 0 user one, 1 tool calls, 2 tool output, 3 assistant, 4 user two,
	// 5 assistant, 6 user three, 7 assistant.
	assert.Equal(t, []agent.ForkableMessage{
		{EntryIndex: 0, Text: "one"},
		{EntryIndex: 4, Text: "two"},
		{EntryIndex: 6, Text: "three"},
	}, s.ForkableUserMessages())
	tr := s.Transcript()
	for _, fm := range s.ForkableUserMessages() {
		assert.Equal(t, agent.EntryUser, tr[fm.EntryIndex].Kind)
		assert.Equal(t, fm.Text, tr[fm.EntryIndex].Text)
	}
}

func TestScenario06_ForkFromUserEntry(t *testing.T) {
	ctx := context.Background()
	m := newFakeModel()
	s := newSession(t, m)
	for _, text := range []string{"one", "two", "three"} {
		_, err := s.Prompt(ctx, text)
		require.NoError(t, err)
	}
	parentBefore := s.Transcript()
	forkable := s.ForkableUserMessages()
	require.Len(t, forkable, 3)
	second := forkable[1]
	require.Equal(t, "two", second.Text)

	f := fork(t, m, s, second.EntryIndex)
	assert.NotEqual(t, s.ID(), f.ID())
	assert.Equal(t, parentBefore[:second.EntryIndex], f.Transcript(), "only the context before the chosen message")
	assert.Equal(t, parentBefore, s.Transcript(), "the parent is not modified")
	assert.Equal(t, []string{"one"}, userTexts(f.Transcript()))

	_, err := f.Prompt(ctx, "two, differently")
	require.NoError(t, err)
	assert.Equal(t, []string{"user:one", "assistant:re: one", "user:two, differently"},
		messageSummary(m.Request(t, 3)), "the fork's model does not see the second round")
	assert.Equal(t, parentBefore, s.Transcript())

	_, err = s.Prompt(ctx, "four")
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two, differently"}, userTexts(f.Transcript()))
	assert.Equal(t, []string{"one", "two", "three", "four"}, userTexts(s.Transcript()))

	// Forking from the first message keeps nothing.
	empty := fork(t, m, s, forkable[0].EntryIndex)
	assert.Empty(t, empty.Transcript())
	assert.Nil(t, empty.Stats().LastUpdatedAt)
}

func TestScenario07_QueuedMessagesRunInOrderAfterThePrompt(t *testing.T) {
	ctx := context.Background()
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Text: []string{"A, partly"}, Gate: g})
	s := newSession(t, m)
	sub := s.Subscribe(64)

	a := goPrompt(s, "A")
	g.AwaitStarted(t)

	_, err := s.Prompt(ctx, "rejected")
	require.ErrorIs(t, err, agent.ErrPromptAlreadyRunning, "the default behaviour rejects")
	_, err = s.Prompt(ctx, "rejected", agent.Reject)
	require.ErrorIs(t, err, agent.ErrPromptAlreadyRunning)

	b := goPrompt(s, "B", agent.FollowUp)
	waitPending(t, s, 1)
	require.NoError(t, s.Steer("S"))
	require.NoError(t, s.FollowUp("C"))
	assert.Equal(t, 3, s.PendingMessageCount())
	notYet(t, a)
	notYet(t, b)

	g.Release()
	ra := await(t, a)
	require.NoError(t, ra.Err)
	assert.Equal(t, "re: S", ra.Res.Text, "the steer joined A's turn")
	rb := await(t, b)
	require.NoError(t, rb.Err)
	assert.Equal(t, "re: B", rb.Res.Text, "an awaited follow-up gets its own result")

	results := waitResults(t, sub, 3) // A (with S), B, C
	for _, r := range results {
		assert.Empty(t, r.Err)
	}
	assert.Equal(t, "re: C", results[2].Text)
	assert.Equal(t, 0, s.PendingMessageCount())
	assert.Equal(t, []string{"A", "S", "B", "C"}, userTexts(s.Transcript()))
	var last []string
	for _, r := range m.Requests() {
		last = append(last, lastUserText(r))
	}
	assert.Equal(t, []string{"A", "S", "B", "C"}, last, "one model call per message, in order")
}

func TestScenario08_ToolDescriptorsAndActiveToolNames(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	rt := &recordingTool{}
	m := newFakeModel()
	s := newSession(t, m)
	read := rt.Tool("read_file", nil)
	read.Description, read.ShortDescription, read.Parameters = "Read a file from the workspace.", "Read a file", schema
	require.NoError(t, s.Tools().Register(read))
	require.NoError(t, s.Tools().Register(rt.Tool("write_file", nil)))
	require.NoError(t, s.Tools().SetEnabled("write_file", false))
	search := rt.Tool("mcp_search", nil)
	search.Source, search.Parameters = agent.ToolSourceMCP, nil
	require.NoError(t, s.Tools().Register(search))

	require.ErrorIs(t, s.Tools().Register(rt.Tool("read_file", nil)), agent.ErrToolExists)
	require.ErrorIs(t, s.Tools().SetEnabled("nope", true), agent.ErrToolNotFound)

	assert.Equal(t, []agent.ToolDescriptor{
		{Name: "mcp_search", Description: "The mcp_search tool.", ShortDescription: "The mcp_search tool.", Source: agent.ToolSourceMCP, Enabled: true},
		{Name: "read_file", Description: "Read a file from the workspace.", ShortDescription: "Read a file", Parameters: schema, Source: agent.ToolSourceNative, Enabled: true},
		{Name: "write_file", Description: "The write_file tool.", ShortDescription: "The write_file tool.", Parameters: json.RawMessage(`{"type":"object"}`), Source: agent.ToolSourceNative, Enabled: false},
	}, s.ToolDescriptors())
	assert.Equal(t, []string{"mcp_search", "read_file"}, s.ActiveToolNames())

	// The model is offered the enabled tools only; a disabled one is not run.
	m.Push(calls(call("c1", "write_file", `{}`)), says("ok"))
	_, err := s.Prompt(context.Background(), "write")
	require.NoError(t, err)
	req := m.Request(t, 0)
	assert.Equal(t, []string{"mcp_search", "read_file"}, toolNames(req))
	assert.Equal(t, "Read a file from the workspace.", req.Tools[1].Description)
	assert.JSONEq(t, string(schema), string(req.Tools[1].Parameters))
	assert.Empty(t, rt.Calls(), "a disabled tool is not run")
	out := s.Transcript()[2]
	require.Equal(t, agent.EntryToolOutput, out.Kind)
	assert.True(t, out.IsError)
	assert.Contains(t, out.Text, "not available")

	// Unregistering updates both lists.
	assert.True(t, s.Unregister("read_file"))
	assert.False(t, s.Unregister("read_file"), "already gone")
	var names []string
	for _, d := range s.ToolDescriptors() {
		names = append(names, d.Name)
	}
	assert.Equal(t, []string{"mcp_search", "write_file"}, names)
	assert.Equal(t, []string{"mcp_search"}, s.ActiveToolNames())

	require.NoError(t, s.Tools().SetEnabled("write_file", true))
	assert.Equal(t, []string{"mcp_search", "write_file"}, s.ActiveToolNames())

	// Each model request offers the tools as they are then: added,
	// disabled or removed since the last request.
	m.Push(says("ok"), says("ok"), says("ok"))
	_, err = s.Prompt(context.Background(), "again")
	require.NoError(t, err)
	assert.Equal(t, []string{"mcp_search", "write_file"}, toolNames(m.Request(t, 2)))
	require.NoError(t, s.Tools().Register(rt.Tool("glob", nil)))
	_, err = s.Prompt(context.Background(), "once more")
	require.NoError(t, err)
	assert.Equal(t, []string{"glob", "mcp_search", "write_file"}, toolNames(m.Request(t, 3)))
	require.NoError(t, s.Tools().SetEnabled("mcp_search", false))
	_, err = s.Prompt(context.Background(), "and again")
	require.NoError(t, err)
	assert.Equal(t, []string{"glob", "write_file"}, toolNames(m.Request(t, 4)))
}

func TestScenario09_EventsCarrySourceAndSharedEntryIndex(t *testing.T) {
	m := newFakeModel(
		reply{Text: []string{"let me look"}, Calls: []llm.ToolCall{call("c1", "read", `{"path":"a"}`), call("c2", "missing", `{}`)}},
		says("done"),
	)
	s := newSession(t, m)
	require.NoError(t, s.Tools().Register((&recordingTool{}).Tool("read", nil)))
	_, err := s.Prompt(context.Background(), "look")
	require.NoError(t, err)

	type view struct {
		Type       string
		Index      int
		Role       string
		ToolCallID string
		Status     string
	}
	var got []view
	for _, ev := range s.Events() {
		require.Equal(t, agent.EventSourceTranscript, ev.Source)
		require.NotNil(t, ev.EntryIndex, "transcript events carry their entry index")
		got = append(got, view{ev.Type, *ev.EntryIndex, ev.Role, ev.ToolCallID, ev.Status})
	}
	assert.Equal(t, []view{
		{"message", 0, "user", "", ""},
		{"message", 1, "assistant", "", ""},
		{"tool_call", 2, "", "c1", ""},
		{"tool_execution_update", 2, "", "c1", "started"},
		{"tool_call", 2, "", "c2", ""},
		{"tool_execution_update", 2, "", "c2", "started"},
		{"tool_result", 3, "", "c1", ""},
		{"tool_execution_update", 3, "", "c1", "completed"},
		{"tool_result", 4, "", "c2", ""},
		{"tool_execution_update", 4, "", "c2", "failed"},
		{"message", 5, "assistant", "", ""},
	}, got)

	evs := s.Events()
	assert.Equal(t, `{"path":"a"}`, evs[2].Arguments)
	assert.Equal(t, "read", evs[2].ToolName)
	assert.Equal(t, `read:{"path":"a"}`, evs[6].Text)
	assert.Equal(t, "look", evs[0].Text)
	assert.Equal(t, "done", evs[10].Text)

	// The model saw the assistant text and its calls as one message.
	assert.Equal(t, []string{
		"user:look", "assistant:let me look[c1 read c2 missing]",
		`tool(c1):read:{"path":"a"}`, `tool(c2):Error: tool "missing" is not available.`,
	}, messageSummary(m.Request(t, 1)))
}

func TestScenario10_StatsMatchTranscript(t *testing.T) {
	m := newFakeModel(calls(call("c1", "echo", `{"a":1}`), call("c2", "echo", `{"a":2}`)), says("both done"))
	s := newSession(t, m)
	require.NoError(t, s.Tools().Register((&recordingTool{}).Tool("echo", nil)))

	empty := s.Stats()
	assert.Equal(t, agent.Stats{
		SessionID:        s.ID(),
		PendingBreakdown: map[agent.PendingSource]int{agent.SourcePromptFollowUp: 0, agent.SourceSteer: 0, agent.SourceFollowUp: 0},
	}, empty)
	assert.Nil(t, empty.LastUpdatedAt)

	start := time.Now()
	_, err := s.Prompt(context.Background(), "use tools")
	require.NoError(t, err)
	_, err = s.Prompt(context.Background(), "thanks")
	require.NoError(t, err)

	st := s.Stats()
	tr := s.Transcript()
	// 0 user, 1 tool calls (2), 2-3 outputs, 4 assistant, 5 user, 6 assistant
	assert.Equal(t, 2, st.UserMessages)
	assert.Equal(t, 2, st.AssistantMessages)
	assert.Equal(t, 2, st.ToolCalls)
	assert.Equal(t, 2, st.ToolResults)
	assert.Equal(t, 7, st.TotalEntries)
	assert.Equal(t, 0, st.PendingMessages)

	// Consistent with the transcript.
	var users, assistants, toolCalls, results int
	for _, e := range tr {
		switch e.Kind {
		case agent.EntryUser:
			users++
		case agent.EntryAssistant:
			assistants++
		case agent.EntryToolCalls:
			toolCalls += len(e.ToolCalls)
		case agent.EntryToolOutput:
			results++
		}
	}
	assert.Equal(t, [5]int{users, assistants, toolCalls, results, len(tr)},
		[5]int{st.UserMessages, st.AssistantMessages, st.ToolCalls, st.ToolResults, st.TotalEntries})
	require.NotNil(t, st.LastUpdatedAt)
	assert.True(t, st.LastUpdatedAt.Equal(tr[len(tr)-1].Time), "lastUpdatedAt is the newest entry's time")
	assert.False(t, st.LastUpdatedAt.Before(start))
}

func TestScenario11_PendingMessagesSnapshot(t *testing.T) {
	t.Run("queued in order, then resolved", func(t *testing.T) {
		m := newFakeModel()
		g := m.Gate()
		m.Push(reply{Gate: g})
		s := newSession(t, m)
		sub := s.Subscribe(64)
		a := goPrompt(s, "A")
		g.AwaitStarted(t)

		long := strings.Repeat("p", 150)
		p := goPrompt(s, long, agent.FollowUp)
		waitPending(t, s, 1)
		require.NoError(t, s.Steer("steer\r\nnow"))
		require.NoError(t, s.FollowUp("follow"))

		queued := s.PendingMessages(agent.DefaultPreviewLength, false)
		assert.Equal(t, []pendingView{
			{agent.SourcePromptFollowUp, agent.PendingQueued, strings.Repeat("p", 120) + "..."},
			{agent.SourceSteer, agent.PendingQueued, "steer\nnow"},
			{agent.SourceFollowUp, agent.PendingQueued, "follow"},
		}, pendingViews(queued))
		assert.Len(t, queued[0].Preview, 123)
		for i, q := range queued {
			assert.Nil(t, q.FinishedAt)
			assert.Empty(t, q.Error)
			if i > 0 {
				assert.Greater(t, q.ID, queued[i-1].ID)
				assert.False(t, q.EnqueuedAt.Before(queued[i-1].EnqueuedAt))
			}
		}
		assert.Equal(t, queued, s.PendingMessages(agent.DefaultPreviewLength, true), "no history yet")

		g.Release()
		require.NoError(t, await(t, a).Err)
		require.NoError(t, await(t, p).Err)
		waitResults(t, sub, 3) // A (with the steer), the follow-up prompt, the follow-up

		assert.Empty(t, s.PendingMessages(agent.DefaultPreviewLength, false))
		hist := s.PendingMessages(agent.DefaultPreviewLength, true)
		assert.Equal(t, []pendingView{
			{agent.SourceSteer, agent.PendingResolved, "steer\nnow"},
			{agent.SourcePromptFollowUp, agent.PendingResolved, strings.Repeat("p", 120) + "..."},
			{agent.SourceFollowUp, agent.PendingResolved, "follow"},
		}, pendingViews(hist))
		for _, h := range hist {
			require.NotNil(t, h.FinishedAt)
			assert.False(t, h.FinishedAt.Before(h.EnqueuedAt))
			assert.Empty(t, h.Error)
		}
		assert.Equal(t, queued[1].ID, hist[0].ID, "history keeps the queued message's id")
	})

	t.Run("preview policy", func(t *testing.T) {
		han := strings.Repeat("汉", 130)
		tests := []struct {
			text      string
			maxLength int
			want      string
		}{
			{strings.Repeat("x", 120), agent.DefaultPreviewLength, strings.Repeat("x", 120)},
			{strings.Repeat("x", 121), agent.DefaultPreviewLength, strings.Repeat("x", 120) + "..."},
			{han, agent.DefaultPreviewLength, strings.Repeat("汉", 120) + "..."},
			{"a\r\nb", agent.DefaultPreviewLength, "a\nb"},
			{"a\r\nb", 0, "a..."}, // clamped to 1, as the seed does
			{"a\r\nb", 2, "a\n..."},
			{"abcdef", 1, "a..."},
			{"abcdef", 6, "abcdef"},
		}
		m := newFakeModel()
		g := m.Gate()
		m.Push(reply{Gate: g})
		s := newSession(t, m)
		a := goPrompt(s, "busy")
		g.AwaitStarted(t)
		for i, tt := range tests {
			require.NoError(t, s.FollowUp(tt.text))
			got := s.PendingMessages(tt.maxLength, false)
			require.Len(t, got, i+1)
			assert.Equal(t, tt.want, got[i].Preview, "text %q, maxLength %d", tt.text, tt.maxLength)
		}
		assert.True(t, s.CancelActivePrompt())
		require.Error(t, await(t, a).Err)
	})
}

func TestScenario12_PendingBreakdownBySource(t *testing.T) {
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Gate: g})
	s := newSession(t, m)
	sub := s.Subscribe(64)

	a := goPrompt(s, "A")
	g.AwaitStarted(t)
	p1 := goPrompt(s, "p1", agent.FollowUp)
	waitPending(t, s, 1)
	p2 := goPrompt(s, "p2", agent.FollowUp)
	waitPending(t, s, 2)
	require.NoError(t, s.Steer("s"))
	for _, f := range []string{"f1", "f2", "f3"} {
		require.NoError(t, s.FollowUp(f))
	}

	st := s.Stats()
	assert.Equal(t, 6, st.PendingMessages)
	assert.Equal(t, map[agent.PendingSource]int{
		agent.SourcePromptFollowUp: 2, agent.SourceSteer: 1, agent.SourceFollowUp: 3,
	}, st.PendingBreakdown)
	assert.Equal(t, s.PendingMessageCount(), st.PendingMessages)

	g.Release()
	for _, ch := range []<-chan promptResult{a, p1, p2} {
		require.NoError(t, await(t, ch).Err)
	}
	waitResults(t, sub, 6) // A (with s), p1, p2, f1, f2, f3

	st = s.Stats()
	assert.Equal(t, 0, st.PendingMessages)
	assert.Equal(t, map[agent.PendingSource]int{
		agent.SourcePromptFollowUp: 0, agent.SourceSteer: 0, agent.SourceFollowUp: 0,
	}, st.PendingBreakdown)
	assert.Equal(t, 7, st.UserMessages)
}

func TestScenario13_ClearPendingState(t *testing.T) {
	// setup runs A (gated), a follow-up "p0" that resolves, then a
	// follow-up "f1" that is held at its model call: on return the history
	// holds p0 and the queue is empty.
	setup := func(t *testing.T) (*fakeModel, *agent.Session, *agent.Subscription, *gate) {
		m := newFakeModel()
		g1, g2 := m.Gate(), m.Gate()
		m.Push(reply{Gate: g1}, says("p0 done"), reply{Text: []string{"f1 done"}, Gate: g2})
		s := newSession(t, m)
		sub := s.Subscribe(64)
		a := goPrompt(s, "A")
		g1.AwaitStarted(t)
		require.NoError(t, s.FollowUp("p0"))
		require.NoError(t, s.FollowUp("f1"))
		g1.Release()
		require.NoError(t, await(t, a).Err)
		g2.AwaitStarted(t)
		require.Equal(t, []pendingView{{agent.SourceFollowUp, agent.PendingResolved, "p0"}}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, true)))
		return m, s, sub, g2
	}

	t.Run("ClearPendingHistory keeps the queue", func(t *testing.T) {
		_, s, sub, g2 := setup(t)
		require.NoError(t, s.FollowUp("f2"))

		assert.Equal(t, 1, s.ClearPendingHistory())
		assert.Equal(t, []pendingView{{agent.SourceFollowUp, agent.PendingQueued, "f2"}}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, true)))
		assert.Equal(t, 1, s.PendingMessageCount())
		assert.Equal(t, 0, s.ClearPendingHistory())

		g2.Release()
		waitResults(t, sub, 4) // A, p0, f1, f2
		assert.Equal(t, []pendingView{
			{agent.SourceFollowUp, agent.PendingResolved, "f1"},
			{agent.SourceFollowUp, agent.PendingResolved, "f2"},
		}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, true)))
	})

	t.Run("ClearPendingState drops queue and history, not the running turn", func(t *testing.T) {
		m, s, sub, g2 := setup(t)
		pf := goPrompt(s, "awaiting", agent.FollowUp)
		waitPending(t, s, 1)
		require.NoError(t, s.FollowUp("ff"))

		r := s.ClearPendingState(false)
		assert.Equal(t, agent.ClearPendingResult{QueuedRemoved: 2, ResolvedRemoved: 1, ActivePromptCancelled: false}, r)
		rpf := await(t, pf)
		assert.ErrorIs(t, rpf.Err, context.Canceled, "the waiting follow-up gets a cancellation error")
		assert.Empty(t, s.PendingMessages(agent.DefaultPreviewLength, true))
		assert.Equal(t, 0, s.PendingMessageCount())

		g2.Release()
		res := waitResults(t, sub, 3) // A, p0, f1
		assert.Empty(t, res[2].Err, "the running turn was not cancelled")
		assert.Equal(t, "f1 done", res[2].Text)
		require.NoError(t, s.Close())
		assert.Equal(t, []pendingView{{agent.SourceFollowUp, agent.PendingResolved, "f1"}}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, true)),
			"the dropped messages are not recorded as failed")
		assert.Equal(t, []string{"A", "p0", "f1"}, userTexts(s.Transcript()))
		assert.Len(t, m.Requests(), 3)
	})

	t.Run("ClearPendingState with cancelActivePrompt", func(t *testing.T) {
		m := newFakeModel()
		g := m.Gate()
		m.Push(reply{Gate: g})
		s := newSession(t, m)
		assert.Equal(t, agent.ClearPendingResult{}, s.ClearPendingState(true), "nothing to cancel when idle")

		a := goPrompt(s, "A")
		g.AwaitStarted(t)
		pf := goPrompt(s, "awaiting", agent.FollowUp)
		waitPending(t, s, 1)
		require.NoError(t, s.Steer("st"))

		r := s.ClearPendingState(true)
		assert.Equal(t, agent.ClearPendingResult{QueuedRemoved: 2, ResolvedRemoved: 0, ActivePromptCancelled: true}, r)
		assert.ErrorIs(t, await(t, a).Err, context.Canceled)
		assert.ErrorIs(t, await(t, pf).Err, context.Canceled)
		require.NoError(t, s.Close())
		assert.Empty(t, s.PendingMessages(agent.DefaultPreviewLength, true))
		assert.Len(t, m.Requests(), 1)
	})
}

func TestScenario14_IdleFollowUpRunsExactlyOnce(t *testing.T) {
	m := newFakeModel()
	s := newSession(t, m)
	sub := s.Subscribe(16)

	require.NoError(t, s.FollowUp("only once"))
	res := waitResults(t, sub, 1)
	assert.Equal(t, "re: only once", res[0].Text)
	require.NoError(t, s.Close()) // waits for the worker: nothing else can run

	assert.Len(t, m.Requests(), 1)
	tr := s.Transcript()
	assert.Equal(t, []string{"only once"}, userTexts(tr))
	assert.Equal(t, string(agent.SourceFollowUp), tr[0].Source)
	assert.Equal(t, []pendingView{{agent.SourceFollowUp, agent.PendingResolved, "only once"}}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, true)))
	assert.Equal(t, 0, s.PendingMessageCount())
}

func TestScenario15_UnregisterMCPToolIsNoLongerOffered(t *testing.T) {
	rt := &recordingTool{}
	m := newFakeModel()
	s := newSession(t, m)
	require.NoError(t, s.Tools().Register(rt.Tool("echo", nil)))
	mcpTool := rt.Tool("mcp__docs__search", nil)
	mcpTool.Source = agent.ToolSourceMCP
	require.NoError(t, s.Tools().Register(mcpTool))

	_, err := s.Prompt(context.Background(), "one")
	require.NoError(t, err)
	assert.Equal(t, []string{"echo", "mcp__docs__search"}, toolNames(m.Request(t, 0)))
	assert.Equal(t, []string{"echo", "mcp__docs__search"}, s.ActiveToolNames())

	assert.False(t, s.UnregisterMCP("echo"), "a native tool is not removed by UnregisterMCP")
	assert.Equal(t, []string{"echo", "mcp__docs__search"}, s.ActiveToolNames())
	assert.True(t, s.UnregisterMCP("mcp__docs__search"))
	assert.False(t, s.UnregisterMCP("mcp__docs__search"))
	assert.Equal(t, []string{"echo"}, s.ActiveToolNames())
	require.Len(t, s.ToolDescriptors(), 1)
	assert.Equal(t, "echo", s.ToolDescriptors()[0].Name)

	// The model is no longer offered it, and a call to it is refused.
	m.Push(calls(call("c1", "mcp__docs__search", `{"q":"x"}`)), says("after"))
	_, err = s.Prompt(context.Background(), "two")
	require.NoError(t, err)
	assert.Equal(t, []string{"echo"}, toolNames(m.Request(t, 1)))
	assert.Empty(t, rt.Calls())
	out := s.Transcript()[4]
	require.Equal(t, agent.EntryToolOutput, out.Kind)
	assert.True(t, out.IsError)
	assert.Contains(t, out.Text, "not available")
}

func TestScenario16_CancelActivePromptFailsQueuedItems(t *testing.T) {
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Gate: g})
	s := newSession(t, m)

	a := goPrompt(s, "A")
	g.AwaitStarted(t)
	pf := goPrompt(s, "awaiting", agent.FollowUp)
	waitPending(t, s, 1)
	require.NoError(t, s.Steer("steer"))
	require.NoError(t, s.FollowUp("fire"))

	require.True(t, s.CancelActivePrompt())
	ra, rpf := await(t, a), await(t, pf)
	assert.ErrorIs(t, ra.Err, context.Canceled)
	assert.ErrorIs(t, rpf.Err, context.Canceled)
	assert.ErrorIs(t, rpf.Err, agent.ErrPromptCancelled)

	hist := s.PendingMessages(agent.DefaultPreviewLength, true)
	assert.Equal(t, []pendingView{
		{agent.SourcePromptFollowUp, agent.PendingFailed, "awaiting"},
		{agent.SourceSteer, agent.PendingFailed, "steer"},
		{agent.SourceFollowUp, agent.PendingFailed, "fire"},
	}, pendingViews(hist))
	for _, h := range hist {
		assert.Contains(t, h.Error, "cancel")
		assert.NotNil(t, h.FinishedAt)
	}
	assert.Equal(t, 0, s.PendingMessageCount())
	require.NoError(t, s.Close())
	assert.Len(t, m.Requests(), 1, "no queued message reached the model")
	assert.Equal(t, []string{"A"}, userTexts(s.Transcript()))
}

func TestScenario17_FailedHistoryKeepsNewest20(t *testing.T) {
	m := newFakeModel()
	s := newSession(t, m)
	sub := s.Subscribe(64)

	// Round 1: a prompt with 15 queued follow-ups, cancelled.
	g1 := m.Gate()
	m.Push(reply{Gate: g1})
	a := goPrompt(s, "r1-active")
	g1.AwaitStarted(t)
	var want []string
	for i := range 15 {
		text := fmt.Sprintf("r1-%02d", i)
		require.NoError(t, s.FollowUp(text))
		want = append(want, text)
	}
	require.True(t, s.CancelActivePrompt())
	require.ErrorIs(t, await(t, a).Err, context.Canceled)
	waitResults(t, sub, 1)
	require.Len(t, s.PendingMessages(agent.DefaultPreviewLength, true), 15)

	// Round 2: a running follow-up (itself recorded) with 10 queued, cancelled.
	g2 := m.Gate()
	m.Push(reply{Gate: g2})
	require.NoError(t, s.FollowUp("r2-active"))
	g2.AwaitStarted(t)
	for i := range 10 {
		text := fmt.Sprintf("r2-%02d", i)
		require.NoError(t, s.FollowUp(text))
		want = append(want, text)
	}
	require.True(t, s.CancelActivePrompt())
	waitResults(t, sub, 1)
	want = append(want, "r2-active") // it ends after the queue was failed

	hist := s.PendingMessages(agent.DefaultPreviewLength, true)
	require.Len(t, hist, 20)
	var got []string
	for _, h := range hist {
		assert.Equal(t, agent.PendingFailed, h.Status)
		got = append(got, h.Preview)
	}
	assert.Equal(t, want[len(want)-20:], got, "the oldest are trimmed, order kept")
	assert.Equal(t, "r1-06", got[0])
}

func TestScenario18_CustomMaxLengthAppliesToQueuedAndResolved(t *testing.T) {
	m := newFakeModel()
	s := newSession(t, m)
	sub := s.Subscribe(64)
	resolved := strings.Repeat("r", 30)
	require.NoError(t, s.FollowUp(resolved))
	waitResults(t, sub, 1)

	g := m.Gate()
	m.Push(reply{Gate: g})
	require.NoError(t, s.FollowUp("running"))
	g.AwaitStarted(t)
	queued := strings.Repeat("q", 150)
	require.NoError(t, s.FollowUp(queued))

	tests := []struct {
		maxLength int
		want      []string
	}{
		{10, []string{"qqqqqqqqqq...", "rrrrrrrrrr..."}},
		{agent.DefaultPreviewLength, []string{strings.Repeat("q", 120) + "...", resolved}},
		// The seed clamps maxLength to at least 1 (issue 15.7).
		{0, []string{"q...", "r..."}},
		{-5, []string{"q...", "r..."}},
		{30, []string{strings.Repeat("q", 30) + "...", resolved}},
		{29, []string{strings.Repeat("q", 29) + "...", strings.Repeat("r", 29) + "..."}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("maxLength ", tt.maxLength), func(t *testing.T) {
			got := s.PendingMessages(tt.maxLength, true)
			require.Len(t, got, 2)
			assert.Equal(t, agent.PendingQueued, got[0].Status)
			assert.Equal(t, agent.PendingResolved, got[1].Status)
			assert.Equal(t, tt.want, []string{got[0].Preview, got[1].Preview})
		})
	}
}

func TestScenario19_IdleFireAndForgetHistory(t *testing.T) {
	send := map[agent.PendingSource]func(*agent.Session, string) error{
		agent.SourceFollowUp: (*agent.Session).FollowUp,
		agent.SourceSteer:    (*agent.Session).Steer,
	}
	for _, source := range []agent.PendingSource{agent.SourceFollowUp, agent.SourceSteer} {
		for _, fail := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s fails=%v", source, fail), func(t *testing.T) {
				m := newFakeModel()
				if fail {
					m.Push(reply{Text: []string{"partial"}, Err: errors.New("upstream exploded")})
				}
				s := newSession(t, m)
				sub := s.Subscribe(16)
				require.NoError(t, send[source](s, "msg"))
				res := waitResults(t, sub, 1)

				hist := s.PendingMessages(agent.DefaultPreviewLength, true)
				require.Len(t, hist, 1)
				assert.Equal(t, source, hist[0].Source)
				assert.Equal(t, "msg", hist[0].Preview)
				if fail {
					assert.Equal(t, agent.PendingFailed, hist[0].Status)
					assert.Contains(t, hist[0].Error, "upstream exploded")
					assert.Contains(t, res[0].Err, "upstream exploded")
				} else {
					assert.Equal(t, agent.PendingResolved, hist[0].Status)
					assert.Empty(t, hist[0].Error)
					assert.Empty(t, res[0].Err)
				}
				assert.Equal(t, []string{"msg"}, userTexts(s.Transcript()), "the message is recorded once")
			})
		}
	}

	t.Run("success then failure keeps both in order", func(t *testing.T) {
		m := newFakeModel(says("fine"), reply{Err: errors.New("boom")})
		s := newSession(t, m)
		sub := s.Subscribe(16)
		require.NoError(t, s.FollowUp("first"))
		waitResults(t, sub, 1)
		require.NoError(t, s.Steer("second"))
		waitResults(t, sub, 1)
		assert.Equal(t, []pendingView{
			{agent.SourceFollowUp, agent.PendingResolved, "first"},
			{agent.SourceSteer, agent.PendingFailed, "second"},
		}, pendingViews(s.PendingMessages(agent.DefaultPreviewLength, true)))
	})
}

func TestScenario20_ForkFromInvalidEntryIndexIsRefused(t *testing.T) {
	m := newFakeModel(calls(call("c1", "echo", `{}`)), says("done"))
	s := newSession(t, m)
	require.NoError(t, s.Tools().Register((&recordingTool{}).Tool("echo", nil)))
	for _, text := range []string{"one", "two"} {
		_, err := s.Prompt(context.Background(), text)
		require.NoError(t, err)
	}
	// 0 user, 1 tool calls, 2 tool output, 3 assistant, 4 user, 5 assistant
	before := s.Transcript()
	require.Len(t, before, 6)

	tests := []struct {
		name  string
		index int
	}{
		{"negative", -1},
		{"one past the end", 6},
		{"far past the end", 1000},
		{"tool calls entry", 1},
		{"tool output entry", 2},
		{"assistant entry", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, forkFn := range []func() (*agent.Session, error){
				func() (*agent.Session, error) { return s.ForkFromUserEntry(tt.index) },
				func() (*agent.Session, error) {
					i := tt.index
					return s.ForkWith(agent.ForkOptions{FromUserEntryIndex: &i})
				},
			} {
				f, err := forkFn()
				assert.Nil(t, f, "no fork is created")
				var bad *agent.InvalidForkEntryIndexError
				require.ErrorAs(t, err, &bad)
				assert.Equal(t, tt.index, bad.Index)
				assert.Contains(t, err.Error(), fmt.Sprint(tt.index))
			}
		})
	}
	assert.Equal(t, before, s.Transcript())

	// The user entries are valid.
	for _, i := range []int{0, 4} {
		f := fork(t, m, s, i)
		assert.Len(t, f.Transcript(), i)
	}
}

func TestScenario21_ForkDoesNotCopyPendingState(t *testing.T) {
	ctx := context.Background()
	m := newFakeModel()
	s := newSession(t, m)
	sub := s.Subscribe(64)
	require.NoError(t, s.FollowUp("resolved-one"))
	waitResults(t, sub, 1)

	g := m.Gate()
	m.Push(reply{Gate: g})
	a := goPrompt(s, "A", agent.FollowUp)
	g.AwaitStarted(t)
	pf := goPrompt(s, "queued-awaited", agent.FollowUp)
	waitPending(t, s, 1)
	require.NoError(t, s.Steer("st"))
	require.NoError(t, s.FollowUp("ff"))
	require.Equal(t, 3, s.PendingMessageCount())
	require.NotEmpty(t, s.PendingMessages(agent.DefaultPreviewLength, true)[3:], "the parent has history")

	f := fork(t, m, s)
	assert.Equal(t, s.Transcript(), f.Transcript(), "the transcript snapshot is copied")
	assert.Equal(t, 0, f.PendingMessageCount())
	assert.Empty(t, f.PendingMessages(agent.DefaultPreviewLength, true))
	st := f.Stats()
	assert.Equal(t, 0, st.PendingMessages)
	assert.Equal(t, map[agent.PendingSource]int{agent.SourcePromptFollowUp: 0, agent.SourceSteer: 0, agent.SourceFollowUp: 0}, st.PendingBreakdown)
	assert.False(t, f.CancelActivePrompt(), "the fork has no running prompt")

	// The fork is idle: a plain prompt is not rejected, and it does not
	// run the parent's queue.
	res, err := f.Prompt(ctx, "child")
	require.NoError(t, err)
	assert.Equal(t, "re: child", res.Text)
	assert.Equal(t, []string{"resolved-one", "A", "child"}, userTexts(f.Transcript()))
	assert.Equal(t, 3, s.PendingMessageCount(), "the parent's queue is untouched")

	g.Release()
	require.NoError(t, await(t, a).Err)
	require.NoError(t, await(t, pf).Err)
	require.NoError(t, f.Close())
	assert.Empty(t, f.PendingMessages(agent.DefaultPreviewLength, true))
	assert.NotContains(t, userTexts(f.Transcript()), "ff")
}

func TestScenario22_ForkToolRegistryIsolatedBothWays(t *testing.T) {
	ctx := context.Background()
	rt := &recordingTool{}
	m := newFakeModel()
	s := newSession(t, m)
	for _, n := range []string{"alpha", "beta", "gamma"} {
		require.NoError(t, s.Tools().Register(rt.Tool(n, nil)))
	}
	f := fork(t, m, s)
	require.NotSame(t, s.Tools(), f.Tools())

	names := func(x *agent.Session) []string {
		var out []string
		for _, d := range x.ToolDescriptors() {
			out = append(out, d.Name)
		}
		return out
	}

	require.True(t, s.Unregister("alpha"))
	assert.Equal(t, []string{"alpha", "beta", "gamma"}, names(f), "the parent's unregister does not reach the fork")
	assert.Equal(t, []string{"alpha", "beta", "gamma"}, f.ActiveToolNames())

	require.True(t, f.Unregister("beta"))
	assert.Equal(t, []string{"beta", "gamma"}, names(s), "the fork's unregister does not reach the parent")
	assert.Equal(t, []string{"beta", "gamma"}, s.ActiveToolNames())
	assert.Equal(t, []string{"alpha", "gamma"}, names(f))

	require.NoError(t, f.Tools().SetEnabled("gamma", false))
	assert.Equal(t, []string{"beta", "gamma"}, s.ActiveToolNames())
	require.NoError(t, s.Tools().Register(rt.Tool("delta", nil)))
	assert.Equal(t, []string{"alpha", "gamma"}, names(f))

	// What each model is offered follows its own registry.
	_, err := f.Prompt(ctx, "child")
	require.NoError(t, err)
	assert.Equal(t, []string{"alpha"}, toolNames(m.Request(t, 0)))
	_, err = s.Prompt(ctx, "parent")
	require.NoError(t, err)
	assert.Equal(t, []string{"beta", "delta", "gamma"}, toolNames(m.Request(t, 1)))
}

// Beyond the scenarios: the conversation stays valid for the model.

func TestCancelWhileToolsRunAnswersEveryToolCall(t *testing.T) {
	m := newFakeModel(calls(call("c1", "slow", `{}`), call("c2", "slow", `{}`), call("c3", "slow", `{}`)))
	hold := m.Gate()
	s := newSession(t, m)
	rt := &recordingTool{}
	require.NoError(t, s.Tools().Register(rt.Tool("slow", hold)))

	a := goPrompt(s, "run three")
	hold.AwaitStarted(t)
	require.True(t, s.CancelActivePrompt())
	require.ErrorIs(t, await(t, a).Err, context.Canceled)
	assert.Len(t, rt.Calls(), 1, "no tool starts after the cancellation")

	// Every call of the response has an output, so the next request is a
	// valid conversation.
	res, err := s.Prompt(context.Background(), "next", agent.FollowUp)
	require.NoError(t, err)
	assert.Equal(t, "re: next", res.Text)
	assert.Equal(t, []string{
		"user:run three", "assistant:[c1 slow c2 slow c3 slow]",
		"tool(c1):Error: cancelled.", "tool(c2):Error: cancelled.", "tool(c3):Error: cancelled.",
		"user:next",
	}, messageSummary(m.Request(t, 1)))
	assert.Equal(t, 3, s.Stats().ToolResults)
}

func TestToolCallWithoutIDGetsOneIDForCallAndOutput(t *testing.T) {
	m := newFakeModel(calls(call("", "echo", `{}`)), says("done"))
	s := newSession(t, m)
	require.NoError(t, s.Tools().Register((&recordingTool{}).Tool("echo", nil)))
	_, err := s.Prompt(context.Background(), "go")
	require.NoError(t, err)

	tr := s.Transcript()
	require.Equal(t, agent.EntryToolCalls, tr[1].Kind)
	require.Equal(t, agent.EntryToolOutput, tr[2].Kind)
	id := tr[1].ToolCalls[0].ID
	assert.NotEmpty(t, id)
	assert.Equal(t, id, tr[2].ToolCallID, "the output answers the recorded call")
	req := m.Request(t, 1)
	assert.Equal(t, id, req.Messages[1].ToolCalls[0].ID)
	assert.Equal(t, id, req.Messages[2].ToolCallID)
}

// A caller's next prompt, sent as soon as its previous one returned, must
// not be rejected because the worker is still finishing (delivering other
// results). The worker is held in the OnComplete of a steer that joined
// the first turn, after the first prompt has returned.
func TestPromptAfterThePreviousReturnedIsNotRejected(t *testing.T) {
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Gate: g})
	s := newSession(t, m)

	a := goPrompt(s, "A")
	g.AwaitStarted(t)
	holdWorker := make(chan struct{})
	steered := make(chan promptResult, 1)
	go func() {
		res, err := s.PromptContent(context.Background(), []llm.Part{llm.TextPart("S")}, agent.PromptOptions{
			Behavior:   agent.Steer,
			OnComplete: func(agent.PromptResult, error) { <-holdWorker },
		})
		steered <- promptResult{Res: res, Err: err}
	}()
	waitPending(t, s, 1)
	g.Release()
	require.NoError(t, await(t, a).Err)

	// The worker is blocked delivering S's result. A prompt whose context
	// is already done is accepted and then withdrawn (not rejected).
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Prompt(done, "B")
	assert.ErrorIs(t, err, agent.ErrPromptCancelled, "accepted, then withdrawn because its context is done")
	assert.NotErrorIs(t, err, agent.ErrPromptAlreadyRunning)

	// And a live one runs as soon as the worker is free.
	b := goPrompt(s, "C")
	close(holdWorker)
	require.NoError(t, await(t, steered).Err)
	rb := await(t, b)
	require.NoError(t, rb.Err)
	assert.Equal(t, "re: C", rb.Res.Text)
	assert.Equal(t, []string{"A", "S", "C"}, userTexts(s.Transcript()))
}
