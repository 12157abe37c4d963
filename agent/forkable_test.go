package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// Seed 000 S5/S20 with issue 15.5: only user messages with text the user
// wrote are forkable; blank, whitespace-only and image-only messages and
// the compaction summary are not, forking from them is refused, the
// summary is not a user message in Stats, and a rewrite keeps each user
// entry's source.
func TestSeed000_S5S20_OnlyRealUserTextIsForkable(t *testing.T) {
	ctx := context.Background()
	m := newFakeModel()
	s := newSession(t, m)
	_, err := s.Prompt(ctx, "one")
	require.NoError(t, err)
	_, err = s.Prompt(ctx, "")
	require.NoError(t, err)
	_, err = s.Prompt(ctx, " \n\t ")
	require.NoError(t, err)
	_, err = s.PromptContent(ctx, []llm.Part{{Type: llm.PartImage, MIMEType: "image/png", Data: "iVBORw0KGgo="}}, agent.PromptOptions{})
	require.NoError(t, err)
	done := make(chan struct{})
	_, err = s.PromptContent(ctx, []llm.Part{llm.TextPart("two")}, agent.PromptOptions{OnComplete: func(agent.PromptResult, error) { close(done) }})
	require.NoError(t, err)
	<-done

	var texts []string
	for _, f := range s.ForkableUserMessages() {
		texts = append(texts, f.Text)
	}
	assert.Equal(t, []string{"one", "two"}, texts)
	tr := s.Transcript()
	for i, e := range tr {
		if e.Kind == agent.EntryUser && (e.Text == "" || e.Text == " \n\t ") {
			_, err := s.ForkFromUserEntry(i)
			var bad *agent.InvalidForkEntryIndexError
			assert.True(t, errors.As(err, &bad), "entry %d (%q) is not forkable: %v", i, e.Text, err)
		}
	}
	assert.Equal(t, 5, s.Stats().UserMessages, "blank and image messages are still user messages")

	// Compaction: the summary is a user-role message, but not the user's.
	m.Push(says("Summary of one and two."))
	require.NoError(t, s.Compact(ctx))
	tr = s.Transcript()
	require.NotEmpty(t, tr)
	require.Equal(t, agent.EntryUser, tr[0].Kind)
	require.Contains(t, tr[0].Text, "[Compressed History]")
	_, err = s.ForkFromUserEntry(0)
	var bad *agent.InvalidForkEntryIndexError
	assert.True(t, errors.As(err, &bad), "the summary is not forkable: %v", err)
	for _, f := range s.ForkableUserMessages() {
		assert.NotContains(t, f.Text, "[Compressed History]")
	}
	users := 0
	for _, e := range tr {
		if e.Kind == agent.EntryUser && e.Source != agent.SourceSummary {
			users++
		}
	}
	assert.Equal(t, users, s.Stats().UserMessages, "the summary does not count as a user message")
}

// A history rewrite keeps each surviving user entry's source and time.
func TestHistoryRewriteKeepsEachUserEntrysSource(t *testing.T) {
	ctx := context.Background()
	m := newFakeModel()
	s := newSession(t, m)
	for _, q := range []string{"q1", "q2", "q3"} {
		_, err := s.Prompt(ctx, q)
		require.NoError(t, err)
	}
	done := make(chan struct{})
	_, err := s.PromptContent(ctx, []llm.Part{llm.TextPart("steered")}, agent.PromptOptions{Behavior: agent.FollowUp, OnComplete: func(agent.PromptResult, error) { close(done) }})
	require.NoError(t, err)
	<-done
	require.NoError(t, s.FollowUp("followed"))
	require.Eventually(t, func() bool { return len(s.Transcript()) == 10 }, waitTimeout, 5e6)
	before := s.Transcript()
	m.Push(says("Summary."))
	require.NoError(t, s.Compact(ctx))
	after := s.Transcript()
	require.Less(t, len(after), len(before))
	kept := 0
	for _, e := range after {
		if e.Kind != agent.EntryUser || e.Source == agent.SourceSummary {
			continue
		}
		for _, b := range before {
			if b.Kind == agent.EntryUser && b.Text == e.Text {
				assert.Equal(t, b.Source, e.Source, "source of %q", e.Text)
				assert.True(t, b.Time.Equal(e.Time), "time of %q", e.Text)
				kept++
			}
		}
	}
	assert.Positive(t, kept, "the compaction kept some user messages")
	t.Logf("kept %d user entries; sources before: %v", kept, sources(before))
}

func sources(es []agent.Entry) []string {
	var out []string
	for _, e := range es {
		if e.Kind == agent.EntryUser {
			out = append(out, e.Text+"="+e.Source)
		}
	}
	return out
}
