package agent_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
)

// sinkFunc is a Go program's UpdateSink.
type sinkFunc func(ctx context.Context, u agent.Update) error

func (f sinkFunc) Update(ctx context.Context, u agent.Update) error { return f(ctx, u) }

// A Go sink that calls back into the session on every update (as a UI
// refreshing its counters would) must not deadlock a prompt with
// execution states on: no sink call happens under the session lock.
func TestExecutionStatesSinkMayCallBackIntoTheSession(t *testing.T) {
	m := newFakeModel(says("done"))
	var (
		s      *agent.Session
		mu     sync.Mutex
		states []agent.ExecState
	)
	s = newSession(t, m, func(c *agent.SessionConfig) {
		c.ExecutionStates = true
		c.Sink = sinkFunc(func(_ context.Context, u agent.Update) error {
			_ = s.Stats()
			_ = s.PendingMessages(10, true)
			_ = s.PendingMessageCount()
			if u.Kind == agent.UpdateExecutionState {
				mu.Lock()
				states = append(states, u.State.State)
				mu.Unlock()
			}
			return nil
		})
	})
	ch := goPrompt(s, "go")
	select {
	case r := <-ch:
		require.NoError(t, r.Err)
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt deadlocked on a sink that calls back into the session")
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []agent.ExecState{agent.ExecQueued, agent.ExecRunning, agent.ExecCompleted}, states, "in order")
}

// A sink that applies backpressure (blocks) holds up only the updates, not
// the session: while the sink is stuck on a follow-up's "queued" state,
// CancelActivePrompt and the read-only accessors return, and the states
// still arrive in order once the sink moves again.
func TestExecutionStatesBlockingSinkDoesNotBlockCancel(t *testing.T) {
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Text: []string{"working"}, Gate: g})
	release := make(chan struct{})
	stuck := make(chan struct{})
	var (
		once   sync.Once
		mu     sync.Mutex
		states []agent.ExecState
	)
	s := newSession(t, m, func(c *agent.SessionConfig) {
		c.ExecutionStates = true
		c.Sink = sinkFunc(func(ctx context.Context, u agent.Update) error {
			if u.Kind != agent.UpdateExecutionState {
				return nil
			}
			mu.Lock()
			n := len(states)
			states = append(states, u.State.State)
			mu.Unlock()
			if n == 2 { // the follow-up's "queued", after the first prompt's queued and running
				once.Do(func() { close(stuck) })
				<-release
			}
			return nil
		})
	})
	first := goPrompt(s, "first")
	g.AwaitStarted(t)
	second := goPrompt(s, "second", agent.FollowUp)
	<-stuck
	done := make(chan bool, 1)
	go func() {
		_ = s.Stats()
		_ = s.PendingMessages(10, true)
		done <- s.CancelActivePrompt()
	}()
	select {
	case running := <-done:
		assert.True(t, running)
	case <-time.After(10 * time.Second):
		t.Fatal("CancelActivePrompt blocked behind a sink applying backpressure")
	}
	close(release)
	assert.Error(t, await(t, second).Err)
	assert.Error(t, await(t, first).Err)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(states) == 5
	}, 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []agent.ExecState{agent.ExecQueued, agent.ExecRunning, agent.ExecQueued, agent.ExecCancelled, agent.ExecCancelled},
		states, "the follow-up's cancelled state waits for its queued one")
}
