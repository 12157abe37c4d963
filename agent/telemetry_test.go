package agent_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/telemetry"
)

func TestSessionEmitsThePromptLifecycle(t *testing.T) {
	mem := &telemetry.MemorySink{}
	rec := telemetry.NewRecorder(mem)
	m := newFakeModel(says("ok"), reply{Err: errors.New("model exploded")})
	g := m.gate()
	m.push(reply{Gate: g})
	s := newSession(t, m, func(c *agent.SessionConfig) { c.Telemetry = rec })

	_, err := s.Prompt(context.Background(), "one")
	require.NoError(t, err)
	_, err = s.Prompt(context.Background(), "two")
	require.Error(t, err)
	done := goPrompt(s, "three")
	g.awaitStarted(t)
	s.CancelActivePrompt()
	assert.ErrorIs(t, await(t, done).err, context.Canceled)

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
	m.push(reply{Gate: m.gate()}) // never released: the turn outlives its timeout
	s := newSession(t, m, func(c *agent.SessionConfig) {
		c.Telemetry = telemetry.NewRecorder(mem)
		c.PromptTimeout = 50 * time.Millisecond
	})
	_, err := s.Prompt(context.Background(), "slow")
	require.ErrorIs(t, err, agent.ErrPromptTimedOut)
	assert.NotErrorIs(t, err, context.Canceled, "a timeout is not a cancellation")
	assert.Equal(t, []string{"prompt_requested", "prompt_started", "prompt_timed_out"}, mem.Names())
}
