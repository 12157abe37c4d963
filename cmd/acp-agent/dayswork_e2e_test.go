package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// longAnswerScript answers every prompt at length, so that a handful of
// turns gives a compaction something to summarize.
func longAnswerScript(t *testing.T) string {
	t.Helper()
	return writeScript(t, map[string]any{"turns": []any{
		map[string]any{"events": []any{map[string]any{"text": "Answer. " + strings.Repeat("A long answer that fills the context. ", 60)}}},
	}})
}

// TestBinaryRewindAfterACompactionSaysWhereItReaches: after a day's work
// and a /compact, /rewind lists only the messages since the compaction
// (the ones it summarized are no longer in the conversation). It used to
// list them without a word, so the morning's messages were simply
// missing; now the list, and an empty one, say that the earlier messages
// were compacted and a rewind reaches back only to the messages since.
// The same holds after the session is loaded in a new process.
func TestBinaryRewindAfterACompactionSaysWhereItReaches(t *testing.T) {
	script, sessions, cwd := longAnswerScript(t), t.TempDir(), t.TempDir()
	start := func() *proc {
		p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + sessions}, "--model", "replay/"+script)
		p.Initialize(nil)
		return p
	}
	const horizon = "Your earlier messages were compacted into a summary: a rewind reaches back only to the messages since."
	p := start()
	sid := p.NewSession(cwd)
	for i := 1; i <= 6; i++ {
		askText(t, p, sid, fmt.Sprintf("question %d", i))
	}
	before := askText(t, p, sid, "/rewind")
	assert.Contains(t, before, "/rewind 1  question 1")
	assert.NotContains(t, before, horizon, "no compaction yet")
	require.Contains(t, askText(t, p, sid, "/compact"), "Compacted")

	list := askText(t, p, sid, "/rewind")
	assert.NotContains(t, list, "question 1", "a summarized message is no point")
	assert.Contains(t, list, "/rewind 1  question ")
	assert.Contains(t, list, horizon)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 0))

	p = start()
	loadSession(t, p, sid, cwd)
	assert.Equal(t, list, askText(t, p, sid, "/rewind"), "the same points after a load in a new process")
	assert.Contains(t, askText(t, p, sid, "/rewind 1"), "Rewound")
	assert.Equal(t, "There is nothing to rewind to. "+horizon, askText(t, p, sid, "/rewind"))
	assert.Contains(t, askText(t, p, sid, "/rewind 1"), "there is nothing to rewind to. "+horizon)
}
