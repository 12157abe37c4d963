package agent_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
)

// TestEventsIncludeSessionEventsOfThePendingQueue: a follow-up queued
// during a turn shows up as session events (queued, then resolved), with
// no entry index, in time order with the transcript's events.
func TestEventsIncludeSessionEventsOfThePendingQueue(t *testing.T) {
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Text: []string{"first"}, Gate: g})
	s := newSession(t, m)
	sub := s.Subscribe(16)

	a := goPrompt(s, "one")
	g.AwaitStarted(t)
	require.NoError(t, s.FollowUp("two"))
	g.Release()
	require.NoError(t, await(t, a).Err)
	waitResults(t, sub, 2)

	type view struct {
		Type, Role, Text, Status string
		Source                   agent.EventSource
		HasIndex                 bool
	}
	var got []view
	for _, e := range s.Events() {
		got = append(got, view{e.Type, e.Role, e.Text, e.Status, e.Source, e.EntryIndex != nil})
	}
	assert.Equal(t, []view{
		{"message", "user", "one", "", agent.EventSourceTranscript, true},
		{"pending_message", "", "two", "queued", agent.EventSourceSession, false},
		{"message", "assistant", "first", "", agent.EventSourceTranscript, true},
		{"message", "user", "two", "", agent.EventSourceTranscript, true},
		{"message", "assistant", "re: two", "", agent.EventSourceTranscript, true},
		{"pending_message", "", "two", "resolved", agent.EventSourceSession, false},
	}, got)
	for _, e := range s.Events() {
		if e.Source == agent.EventSourceSession {
			assert.Equal(t, agent.SourceFollowUp, e.PendingSource)
		}
	}
}
