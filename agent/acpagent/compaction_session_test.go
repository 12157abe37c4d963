package acpagent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// Seed 003 "Context compaction" (compact 成功后应更新历史并发出 compact 事件)
// in the session: /compact replaces the history, rewrites the session
// file to match (a restart loads the compacted history), and a client that
// advertises compaction gets compaction_update in_progress, the summary
// and completed. The compact package's test of the same name covers the
// compactor; this is the integrator's half.
func TestSeed003_ForcedCompactSuccessReplacesHistoryInTheSession(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	caps := &acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Compaction: &acp.CompactionCapabilities{}}}
	c := e.start(caps)
	sid := c.NewSession(cwd)
	for _, q := range []string{"first question", "second question", "third question", "fourth question", "fifth question", "sixth question"} {
		say(t, c, sid, q)
	}
	file := filepath.Join(e.dir, sid+".jsonl")
	before, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(before), "first question")

	_, updates := say(t, c, sid, "/compact")
	var seen []string
	for _, u := range updates {
		switch {
		case u.CompactionUpdate != nil:
			seen = append(seen, "compaction:"+string(u.CompactionUpdate.Status))
		case u.CompactionSummaryChunk != nil:
			seen = append(seen, "summary")
		}
	}
	assert.Equal(t, []string{"compaction:" + string(acp.CompactionStatusInProgress), "summary", "compaction:" + string(acp.CompactionStatusCompleted)}, seen)

	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(after), "[Compressed History]", "the file was rewritten with the summary")
	for _, line := range strings.Split(string(after), "\n") {
		if strings.Contains(line, `"type":"entry"`) && !strings.Contains(line, "[Compressed History]") {
			assert.NotContains(t, line, "first question", "the summarized messages left the file")
		}
	}
	// Issue 26: the user's own words are not left to the summary: the
	// summary message keeps them verbatim.
	assert.Contains(t, string(after), compact.UserMessagesHeading)

	text, _ := say(t, c, sid, "after compaction")
	n := e.model.Count()
	body := fmt.Sprint(e.model.Request(t, n-1).Body["messages"])
	assert.Contains(t, body, "[Compressed History]", "the next request carries the summary")
	assert.Equal(t, 1, strings.Count(body, "first question"), "only in the summary's verbatim user messages")
	assert.NotEqual(t, "8 user messages so far", text)
	c.Stop()

	c2 := e.start(nil)
	resp, replay := loadSession(t, c2, acp.MethodSessionLoad, sid, cwd)
	acptest.MustResult(t, resp, nil)
	var users []string
	for _, u := range replay {
		if u.UserMessageChunk != nil {
			users = append(users, u.UserMessageChunk.Content.Text.Text)
		}
	}
	require.NotEmpty(t, users)
	for _, u := range users {
		assert.NotContains(t, u, "[Compressed History]", "the summary is not replayed as the user's message")
	}
	// A restart loads the compacted history: the summary comes first, as
	// the agent's message saying what it is (this client shows no
	// compactions).
	require.NotEmpty(t, replay)
	first := replay[0].AgentMessageChunk
	require.NotNil(t, first, "the summary comes first")
	assert.True(t, strings.HasPrefix(first.Content.Text.Text, acpagent.SummaryHeading), "%q", first.Content.Text.Text)
	assert.Contains(t, first.Content.Text.Text, compact.UserMessagesHeading)
}

// The session's own compaction trigger (seed 003): before each model
// request, when the context is over the threshold and offload freed too
// little, it compacts, then not again until the cooldown (5 requests) has
// passed; under the threshold it never does.
func TestSeed003_SessionCompactsOverThresholdWithCooldown(t *testing.T) {
	run := func(threshold int) (summaries []int, requests int) {
		m := newFakeModel()
		s := newSession(t, m, func(c *agent.SessionConfig) { c.History.OffloadThreshold = threshold })
		for i := range 12 {
			_, err := s.Prompt(context.Background(), fmt.Sprintf("question %d with some words in it", i))
			require.NoError(t, err)
		}
		for i, r := range m.Requests() {
			if strings.Contains(r.System, "You compress the history") || (len(r.Messages) > 0 && r.Messages[0].Role == llm.RoleSystem && strings.Contains(r.Messages[0].Text(), "You compress")) {
				summaries = append(summaries, i)
			}
		}
		return summaries, len(m.Requests())
	}
	summaries, n := run(1) // always over
	require.GreaterOrEqual(t, len(summaries), 2, "compacted more than once over %d requests: %v", n, summaries)
	for i := 1; i < len(summaries); i++ {
		// Steps are model requests of turns; each summary request sits
		// between them, so summaries are at least 5 turns (6 requests) apart.
		assert.GreaterOrEqual(t, summaries[i]-summaries[i-1], 6, "cooldown between compactions: %v", summaries)
	}
	summaries, _ = run(1_000_000)
	assert.Empty(t, summaries, "under the threshold nothing is compacted")
}

// The sanitizer runs before each turn, not only at load: a history that
// providers would refuse (here a tool call left without its result, as a
// resumed snapshot or a killed turn leaves it) is repaired before the
// next model request.
func TestSanitizeRunsBeforeEachTurn(t *testing.T) {
	m := newFakeModel(says("fine"))
	s := newSession(t, m)
	require.NoError(t, s.Resume([]agent.Entry{
		agent.UserEntry("earlier"),
		{Kind: agent.EntryToolCalls, ToolCalls: []llm.ToolCall{call("call_dangling", "read_file", `{"path":"x"}`)}},
	}))
	_, err := s.Prompt(context.Background(), "now")
	require.NoError(t, err)
	for _, msg := range m.Request(t, 0).Messages {
		for _, c := range msg.ToolCalls {
			assert.NotEqual(t, "call_dangling", c.ID, "a call without a result reached the provider")
		}
	}
	assert.Equal(t, []string{"user:earlier", "user:now"}, messageSummary(m.Request(t, 0)))
}

// A resize that changes nothing (the policy fires every turn but there is
// nothing to drop) does not rewrite the session file: appends keep going
// to the same file, whose inode a rewrite would replace.
func TestNoOpResizeDoesNotRewriteTheFile(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil, func(cfg *acpagent.Config) { cfg.Resize = &compact.ResizePolicy{EveryNTurns: 1} })
	sid := c.NewSession(cwd)
	say(t, c, sid, "one")
	file := filepath.Join(e.dir, sid+".jsonl")
	// A second name for the file's inode: appends show through it, a
	// rewrite (a new file renamed over the old) leaves it behind.
	probe := filepath.Join(t.TempDir(), "probe")
	require.NoError(t, os.Link(file, probe))
	say(t, c, sid, "two")
	say(t, c, sid, "three")
	st, err := os.Stat(file)
	require.NoError(t, err)
	pst, err := os.Stat(probe)
	require.NoError(t, err)
	assert.True(t, os.SameFile(st, pst), "the file was rewritten by a resize that changed nothing")
}
