package agent

import (
	"context"
	"errors"
	"sync"
)

// ToolCancelledByUserResult is what the model gets for a tool call the
// user cancelled (CancelToolCall) while the turn went on.
const ToolCancelledByUserResult = "Error: cancelled by the user. The tool call was stopped before it finished; do not run it again unless the user asks."

// ErrToolCallNotRunning is CancelToolCall's error for a tool call that is
// not running: unknown, not started (waiting for permission) or finished.
var ErrToolCallNotRunning = errors.New("agent: the tool call is not running")

// errCancelledByUser is the cause of a tool call's context that
// CancelToolCall ended.
var errCancelledByUser = errors.New("agent: tool call cancelled by the user")

// runningCalls are a session's running tool calls, by id, each with what
// ends its context.
type runningCalls struct {
	mu    sync.Mutex
	calls map[string]context.CancelCauseFunc
}

// start registers tool call id as running, on a context of its own, and
// returns that context and finished, which unregisters it and reports
// whether CancelToolCall ended it. The context ends with the turn's (ctx),
// not when the call returns: what a tool leaves running on it (a confined
// command's helper, its process group's reaping) lives as long as it did
// on the turn's context.
func (r *runningCalls) start(ctx context.Context, id string) (context.Context, func() bool) {
	tctx, cancel := context.WithCancelCause(ctx)
	r.mu.Lock()
	if r.calls == nil {
		r.calls = make(map[string]context.CancelCauseFunc)
	}
	r.calls[id] = cancel
	r.mu.Unlock()
	return tctx, func() bool {
		r.mu.Lock()
		delete(r.calls, id)
		r.mu.Unlock()
		return errors.Is(context.Cause(tctx), errCancelledByUser)
	}
}

// CancelToolCall stops one running tool call without ending the turn: its
// Run's context ends, and the model gets ToolCancelledByUserResult as its
// result (the call's final update has status failed). A call that is not
// running is ErrToolCallNotRunning. It does not wait for the tool to
// stop.
func (s *Session) CancelToolCall(id string) error {
	s.running.mu.Lock()
	cancel, ok := s.running.calls[id]
	s.running.mu.Unlock()
	if !ok {
		return ErrToolCallNotRunning
	}
	cancel(errCancelledByUser)
	return nil
}
