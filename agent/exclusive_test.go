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

// RunExclusive is refused at once while a model turn runs or waits;
// otherwise its calls run one after the other, with nothing else, in the
// order they were made; session/cancel does not fail them, and Close
// fails one still queued with ErrSessionClosed.
func TestRunExclusive(t *testing.T) {
	m := newFakeModel()
	g := m.Gate()
	m.Push(reply{Text: []string{"done"}, Gate: g})
	s := newSession(t, m)

	turn := goPrompt(s, "work")
	g.AwaitStarted(t)
	ran := false
	err := s.RunExclusive(context.Background(), func(context.Context) error { ran = true; return nil })
	require.ErrorIs(t, err, agent.ErrTurnRunning)
	assert.False(t, ran, "refused before it runs")
	g.Release()
	require.NoError(t, await(t, turn).Err)

	// Idle: calls made at once run one at a time, in order, none cut
	// short by a cancel.
	hold := make(chan struct{})
	var mu sync.Mutex
	var order []int
	running := 0
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() {
			errs[i] = s.RunExclusive(context.Background(), func(ctx context.Context) error {
				mu.Lock()
				running++
				assert.Equal(t, 1, running, "alone")
				order = append(order, i)
				mu.Unlock()
				if i == 0 {
					<-hold
				}
				mu.Lock()
				running--
				mu.Unlock()
				return ctx.Err()
			})
		})
		if i == 0 {
			require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == 1 }, waitTimeout, time.Millisecond)
		}
	}
	// A prompt now waits behind them, a cancel fails none of them.
	time.Sleep(20 * time.Millisecond)
	s.CancelActivePrompt()
	close(hold)
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "call %d", i)
	}
	assert.Len(t, order, 4)
	assert.Equal(t, 0, order[0])

	// Close fails a queued call with ErrSessionClosed, and it never runs.
	block, started := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.RunExclusive(context.Background(), func(context.Context) error { close(started); <-block; return nil })
	}()
	<-started
	queued := make(chan error, 1)
	go func() {
		queued <- s.RunExclusive(context.Background(), func(context.Context) error {
			t.Error("a call queued when the session closed ran")
			return nil
		})
	}()
	time.Sleep(20 * time.Millisecond)
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case err := <-queued:
		assert.ErrorIs(t, err, agent.ErrSessionClosed)
	case <-time.After(waitTimeout):
		t.Fatal("the queued call did not end")
	}
	close(block)
	require.NoError(t, <-first)
	<-closed
}
