package agent_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
)

// sinkFunc is a Go program's UpdateSink.
type sinkFunc func(ctx context.Context, u acp.SessionUpdate) error

func (f sinkFunc) Update(ctx context.Context, u acp.SessionUpdate) error { return f(ctx, u) }

// A Go sink that calls back into the session on every update (as a UI
// refreshing its counters would) must not deadlock a prompt with
// execution states on: no sink call happens under the session lock.
func TestExecutionStatesSinkMayCallBackIntoTheSession(t *testing.T) {
	m := newFakeModel(says("done"))
	var (
		s      *agent.Session
		mu     sync.Mutex
		states []acp.ExecState
	)
	s = newSession(t, m, func(c *agent.SessionConfig) {
		c.ExecutionStates = true
		c.Sink = sinkFunc(func(_ context.Context, u acp.SessionUpdate) error {
			_ = s.Stats()
			_ = s.PendingMessages(10, true)
			_ = s.PendingMessageCount()
			if u.ExecutionStateUpdate != nil {
				mu.Lock()
				states = append(states, u.ExecutionStateUpdate.ExecutionState.State)
				mu.Unlock()
			}
			return nil
		})
	})
	ch := goPrompt(s, "go")
	select {
	case r := <-ch:
		require.NoError(t, r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt deadlocked on a sink that calls back into the session")
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []acp.ExecState{acp.ExecStateQueued, acp.ExecStateRunning, acp.ExecStateCompleted}, states, "in order")
}

// A sink that applies backpressure (blocks) holds up only the updates, not
// the session: CancelActivePrompt and the read-only accessors return while
// the sink is stuck.
func TestExecutionStatesBlockingSinkDoesNotBlockCancel(t *testing.T) {
	m := newFakeModel(says("never"))
	release := make(chan struct{})
	stuck := make(chan struct{})
	var once sync.Once
	s := newSession(t, m, func(c *agent.SessionConfig) {
		c.ExecutionStates = true
		c.Sink = sinkFunc(func(ctx context.Context, u acp.SessionUpdate) error {
			if u.ExecutionStateUpdate != nil && u.ExecutionStateUpdate.ExecutionState.State == acp.ExecStateQueued {
				once.Do(func() { close(stuck) })
				<-release
			}
			return nil
		})
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := make(chan error, 1)
	go func() {
		_, err := s.Prompt(ctx, "go")
		ch <- err
	}()
	<-stuck
	done := make(chan bool, 1)
	go func() {
		_ = s.Stats()
		_ = s.PendingMessages(10, true)
		done <- s.CancelActivePrompt()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("CancelActivePrompt blocked behind a sink applying backpressure")
	}
	close(release)
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt never returned")
	}
}
