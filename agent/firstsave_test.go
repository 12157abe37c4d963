package agent_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/policy"
)

// instantSaver is a Journal that saves a session's first message with
// its file (the session's first-save path) at once, as a fast disk would.
type instantSaver struct {
	mu    sync.Mutex
	saved bool
}

func (j *instantSaver) AppendEntry(agent.Entry)                   {}
func (j *instantSaver) SetMode(policy.Mode)                       {}
func (j *instantSaver) SetModel(string, string)                   {}
func (j *instantSaver) Remember(agent.RememberedDecision)         {}
func (j *instantSaver) SetPlan(agent.Plan)                        {}
func (j *instantSaver) Clear()                                    {}
func (j *instantSaver) SetTitle(string, bool)                     {}
func (j *instantSaver) Rewrite(agent.JournalState, []agent.Entry) {}
func (j *instantSaver) Sync() error                               { return nil }
func (j *instantSaver) Close() error                              { return nil }
func (j *instantSaver) Save() error                               { return nil }
func (j *instantSaver) SaveWith(agent.Entry) error {
	j.mu.Lock()
	j.saved = true
	j.mu.Unlock()
	return nil
}
func (j *instantSaver) Saved() bool { j.mu.Lock(); defer j.mu.Unlock(); return j.saved }

// slowWorkspace is a workspace whose description (in the first system
// prompt, built when the first request is) waits for release.
type slowWorkspace struct{ release chan struct{} }

func (w *slowWorkspace) Tools() []agent.Tool                  { return nil }
func (w *slowWorkspace) Describe(policy.Mode) string          { <-w.release; return "" }
func (w *slowWorkspace) SandboxMissing() string               { return "" }
func (w *slowWorkspace) SandboxAutoApproves(policy.Mode) bool { return false }
func (w *slowWorkspace) Close() error                         { return nil }

// A first message whose save ends before the first request is built (a
// fast disk, a slow system prompt) is in the transcript by then, and the
// request holds it once, not twice.
func TestAFirstMessageSavedBeforeTheRequestIsSentOnce(t *testing.T) {
	m := newFakeModel(says("hi"))
	ws := &slowWorkspace{release: make(chan struct{})}
	s := newSession(t, m, func(c *agent.SessionConfig) {
		c.Journal = &instantSaver{}
		c.Workspace = ws
	})
	done := goPrompt(s, "hello")
	// The save ends and the message joins the transcript while the
	// request waits for the system prompt.
	deadline := time.Now().Add(waitTimeout)
	for len(s.Transcript()) == 0 {
		require.True(t, time.Now().Before(deadline), "the saved message never joined the transcript")
		time.Sleep(time.Millisecond)
	}
	close(ws.release)
	res := await(t, done)
	require.NoError(t, res.Err)
	reqs := m.Requests()
	require.Len(t, reqs, 1)
	users := 0
	for _, msg := range reqs[0].Messages {
		if msg.Role == llm.RoleUser {
			users++
		}
	}
	assert.Equal(t, 1, users, "the message is sent once")
	assert.Equal(t, []string{"hello"}, userTexts(s.Transcript()))
}
