package acpagent_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// /cost as an ACP client types it answers with the session's report.
func TestSlashCostAnswersTheSessionsReport(t *testing.T) {
	e := newStoreEnv(t)
	e.model = newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		sse(w, []string{textChunk("hi"), finishChunk("stop"), usageChunk}, true)
	})
	c, a := e.startWithAgent()
	sid := c.NewSession(t.TempDir())
	say(t, c, sid, "one")
	say(t, c, sid, "two")
	text, _ := say(t, c, sid, "/cost")
	s, ok := a.Session(sid)
	require.True(t, ok)
	assert.Equal(t, s.CostReport(), text)
	assert.Contains(t, text, "Token: 24 in / 10 out", "both turns' usage (12 in, 5 out each)")
}
