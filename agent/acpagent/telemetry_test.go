package acpagent_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/telemetry"
)

func TestSessionEmitsThePromptLifecycle(t *testing.T) {
	mem := &telemetry.MemorySink{}
	rec := telemetry.NewRecorder(mem)
	m := newFakeModel(says("ok"), reply{Err: errors.New("model exploded")})
	g := m.Gate()
	m.Push(reply{Gate: g})
	s := newSession(t, m, func(c *agent.SessionConfig) { c.Telemetry = rec })

	_, err := s.Prompt(context.Background(), "one")
	require.NoError(t, err)
	_, err = s.Prompt(context.Background(), "two")
	require.Error(t, err)
	done := goPrompt(s, "three")
	g.AwaitStarted(t)
	s.CancelActivePrompt()
	assert.ErrorIs(t, await(t, done).Err, context.Canceled)

	assert.Equal(t, []string{
		"prompt_requested", "prompt_started", "prompt_completed",
		"prompt_requested", "prompt_started", "prompt_failed",
		"prompt_requested", "prompt_started", "prompt_cancelled",
	}, mem.Names())
	for _, ev := range mem.Events() {
		assert.Equal(t, s.ID(), ev.SessionID)
		if ev.Name == "prompt_failed" {
			assert.Contains(t, ev.Attributes["error"], "model exploded")
		}
	}
}

func TestPromptTimeoutEmitsTimedOutNotCancelled(t *testing.T) {
	mem := &telemetry.MemorySink{}
	m := newFakeModel()
	m.Push(reply{Gate: m.Gate()}) // never released: the turn outlives its timeout
	s := newSession(t, m, func(c *agent.SessionConfig) {
		c.Telemetry = telemetry.NewRecorder(mem)
		c.PromptTimeout = 50 * time.Millisecond
	})
	_, err := s.Prompt(context.Background(), "slow")
	require.ErrorIs(t, err, agent.ErrPromptTimedOut)
	assert.NotErrorIs(t, err, context.Canceled, "a timeout is not a cancellation")
	assert.Equal(t, []string{"prompt_requested", "prompt_started", "prompt_timed_out"}, mem.Names())
}

// Seed 002 names testPromptRetryEmitsTelemetryRetryEvent: a transient
// provider failure retried by the session emits prompt_retry with the
// attempt, the limit and the reason, then the prompt completes.
func TestPromptRetryEmitsTelemetryRetryEvent(t *testing.T) {
	mem := &telemetry.MemorySink{}
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			failWith(w, http.StatusServiceUnavailable, "busy")
			return
		}
		sse(w, []string{textChunk("ok"), finishChunk("stop")}, true)
	})
	c := client(t, srv, nil, fastRetry(3), func(cfg *acpagent.Config) { cfg.Telemetry = telemetry.NewRecorder(mem) })
	c.Initialize(nil)
	sid := c.NewSession(t.TempDir())
	resp, _ := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("hi")))
	acptest.MustResult(t, resp, nil)
	var retries []telemetry.Event
	for _, ev := range mem.Events() {
		if ev.Name == telemetry.EventPromptRetry {
			retries = append(retries, ev)
		}
	}
	require.Len(t, retries, 1)
	assert.Equal(t, sid, retries[0].SessionID)
	assert.Equal(t, "1", retries[0].Attributes["attempt"])
	assert.Equal(t, "4", retries[0].Attributes["maxAttempts"], "three retries: four attempts")
	assert.Contains(t, retries[0].Attributes["reason"], "503")
	assert.Equal(t, []string{"session_new", "prompt_requested", "prompt_started", "prompt_retry", "prompt_completed"}, mem.Names())
}

// session/load and session/delete emit their events; a tool call the user
// rejects emits prompt_permission_denied naming the tool and the reason.
func TestStoreAndPermissionTelemetryEvents(t *testing.T) {
	mem := &telemetry.MemorySink{}
	withTelemetry := func(cfg *acpagent.Config) { cfg.Telemetry = telemetry.NewRecorder(mem) }
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil, withTelemetry, func(cfg *acpagent.Config) { cfg.Mode = "default" })
	sid := c.NewSession(cwd)
	r := runPrompt(t, c, sid, "please write the file", answerPermission("reject_once"))
	require.Len(t, r.requests, 1, "the write asked")
	c.Stop()
	c2 := e.start(nil, withTelemetry)
	resp, _ := loadSession(t, c2, acp.MethodSessionLoad, sid, cwd)
	acptest.MustResult(t, resp, nil)
	resp, _ = c2.Call(acp.MethodSessionDelete, &acp.DeleteSessionRequest{SessionID: acp.SessionId(sid)})
	acptest.MustResult(t, resp, nil)

	find := func(name string) *telemetry.Event {
		for _, ev := range mem.Events() {
			if ev.Name == name {
				return &ev
			}
		}
		return nil
	}
	denied := find(telemetry.EventPromptPermissionDenied)
	require.NotNil(t, denied, "events: %v", mem.Names())
	assert.Equal(t, "write_file", denied.Attributes["tool"])
	assert.Equal(t, "rejected", denied.Attributes["reason"])
	for _, name := range []string{telemetry.EventSessionLoad, telemetry.EventSessionDelete} {
		ev := find(name)
		require.NotNil(t, ev, "%s in %v", name, mem.Names())
		assert.Equal(t, sid, ev.SessionID, name)
	}
	assert.Equal(t, cwd, find(telemetry.EventSessionLoad).Attributes["cwd"])
}
