package agent

import (
	"context"
	"errors"
)

// ErrPromptTimedOut is the error of a prompt whose turn ran longer than
// SessionConfig.PromptTimeout. It is not a cancellation: the ACP service
// answers it with -32603, not with stopReason "cancelled".
var ErrPromptTimedOut = errors.New("agent: prompt timed out")

// sendState sends an execution_state_update for it, if its session reports
// execution states. It never blocks when the sink can post, and it is
// never called with s.mu held: a Go sink may call back into the session.
func (s *Session) sendState(it *item, st ExecState, attempt int, message string) {
	if !it.states || s.cfg.Sink == nil {
		return
	}
	es := &ExecutionState{State: st, Message: message}
	if attempt > 0 {
		es.Attempt = &attempt
	}
	u := Update{Kind: UpdateExecutionState, State: es}
	switch {
	case st == ExecQueued || it.queuedSent == nil:
	case st == ExecRunning || st == ExecRetrying:
		<-it.queuedSent // on the worker: waiting for the sink is backpressure
	default:
		it.stateMu.Lock()
		select {
		case <-it.queuedSent:
		default:
			it.deferredState = &u // sent by queuedDone, right after "queued"
			it.stateMu.Unlock()
			return
		}
		it.stateMu.Unlock()
	}
	s.postUpdate(it.ctx, u)
}

// queuedDone sends the "queued" state of a just-queued item (never under
// s.mu) and then a final state that arrived meanwhile.
func (s *Session) queuedDone(it *item) {
	s.sendState(it, ExecQueued, 0, "")
	if it.queuedSent == nil {
		return
	}
	it.stateMu.Lock()
	close(it.queuedSent)
	d := it.deferredState
	it.stateMu.Unlock()
	if d != nil {
		s.postUpdate(it.ctx, *d)
	}
}

// postUpdate queues u without blocking when the sink allows it, else sends
// it with Update (Go programs' sinks).
func (s *Session) postUpdate(ctx context.Context, u Update) {
	var err error
	if p, ok := s.cfg.Sink.(PostSink); ok {
		err = p.Post(u)
	} else {
		err = s.cfg.Sink.Update(context.WithoutCancel(ctx), u)
	}
	if err != nil {
		s.log.Debug("sending execution state", "error", err)
	}
}

// sendRetry reports a retry of it: the retrying state and retry_update.
// Both are part of the opt-in extension, so neither is sent without it.
func (s *Session) sendRetry(it *item, n RetryNotice) {
	if it == nil || !it.states {
		return
	}
	reason := ""
	if n.Err != nil {
		reason = n.Err.Error()
	}
	s.sendState(it, ExecRetrying, n.Attempt, reason)
	s.postUpdate(it.ctx, Update{Kind: UpdateRetry, Retry: &RetryInfo{Attempt: n.Attempt, MaxAttempts: n.MaxAttempts, Reason: reason}})
}

// finalState is the terminal execution state of a turn that ended with
// err, and its message.
func finalState(err error) (ExecState, string) {
	switch {
	case err == nil:
		return ExecCompleted, ""
	case errors.Is(err, ErrPromptTimedOut):
		return ExecTimedOut, "Prompt timed out"
	case errors.Is(err, context.Canceled) || errors.Is(err, ErrSessionClosed):
		return ExecCancelled, ""
	}
	return ExecFailed, err.Error()
}
