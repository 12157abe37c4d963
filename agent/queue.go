package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/telemetry"
)

// This file holds a session's input: prompts and queued messages
// (Prompt, Submit, Steer, FollowUp, Send, Queue), the one worker that
// runs them in order, and the pending queue's state.

// Prompt sends text and waits for the turn's result. While another turn
// runs, behavior decides: Reject (default) fails, Steer and FollowUp queue
// the message and wait until it has run.
func (s *Session) Prompt(ctx context.Context, text string, behavior ...StreamingBehavior) (PromptResult, error) {
	opts := PromptOptions{}
	if len(behavior) > 0 {
		opts.Behavior = behavior[0]
	}
	return s.PromptContent(ctx, []llm.Part{llm.TextPart(text)}, opts)
}

// PromptContent is Prompt with content parts and options. It returns when
// this prompt's own turn has ended (a queued follow-up runs after it on the
// session's worker), or when ctx is done while the message is still queued.
// A cancelled turn returns an error for which errors.Is(err,
// context.Canceled) holds, with the partial result.
func (s *Session) PromptContent(ctx context.Context, content []llm.Part, opts PromptOptions) (PromptResult, error) {
	it, err := s.submit(ctx, content, opts, true)
	if err != nil {
		return PromptResult{}, err
	}
	out := <-it.done
	return out.res, out.err
}

// Submit queues content like PromptContent but returns at once; the result
// goes to opts.OnComplete, which is called exactly once unless Submit
// returns an error. If ctx is done while the message is still queued, it
// is withdrawn and completes with a cancellation error.
func (s *Session) Submit(ctx context.Context, content []llm.Part, opts PromptOptions) error {
	_, err := s.submit(ctx, content, opts, false)
	return err
}

func (s *Session) submit(ctx context.Context, content []llm.Part, opts PromptOptions, await bool) (*item, error) {
	it := &item{content: content, text: partsText(content), ctx: ctx, onComplete: opts.OnComplete, states: s.cfg.ExecutionStates, run: opts.Run,
		messageID: opts.MessageID, title: opts.Title}
	if await {
		it.done = make(chan promptOutcome, 1)
	}
	// Before it is queued: once queued, the worker may start it (and say
	// prompt_started) at once.
	s.telemetryEvent(it, telemetry.EventPromptRequested)
	if err := s.queueSubmitted(it, opts); err != nil {
		return nil, err
	}
	return it, nil
}

func (s *Session) queueSubmitted(it *item, opts PromptOptions) error {
	ctx := it.ctx
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrSessionClosed
	}
	if s.busyLocked() {
		switch opts.Behavior {
		case Steer:
			it.source = SourceSteer
		case FollowUp:
			it.source = SourcePromptFollowUp
		default:
			s.mu.Unlock()
			return ErrPromptAlreadyRunning
		}
	}
	if it.states {
		it.queuedSent = make(chan struct{})
	}
	s.enqueueLocked(it)
	// A queued message whose caller gives up is withdrawn; once it runs,
	// the turn's context (derived from ctx) ends the turn instead.
	it.stopWatch = context.AfterFunc(ctx, func() { s.withdraw(it) })
	s.mu.Unlock()
	// Never under s.mu: a Go sink may call back into the session or make
	// us wait (backpressure). The worker waits for this before "running".
	s.queuedDone(it)
	return nil
}

// withdraw removes it from the queue, if it is still there, and completes
// it with its context's cancellation.
func (s *Session) withdraw(it *item) {
	s.mu.Lock()
	i := slices.Index(s.queue, it)
	if i >= 0 {
		s.queue = slices.Delete(s.queue, i, i+1)
	}
	s.mu.Unlock()
	if i >= 0 {
		s.complete(it, PromptResult{}, cancelled(it.ctx))
	}
}

// Steer queues text to be delivered inside the running turn at its next
// model-call boundary (fire and forget). When idle it starts a turn at once.
func (s *Session) Steer(text string) error {
	return s.Queue(SourceSteer, []llm.Part{llm.TextPart(text)})
}

// FollowUp queues text to run after the running turn (fire and forget).
// When idle it starts a turn at once; the message runs exactly once.
func (s *Session) FollowUp(text string) error {
	return s.Queue(SourceFollowUp, []llm.Part{llm.TextPart(text)})
}

// Send is the streaming-input mode of seed 001: content is pushed to the
// session's FIFO queue and consumed by the agent loop in order; results
// reach the subscribers (Subscribe). It fails once the session is closed.
func (s *Session) Send(content ...llm.Part) error {
	if len(content) == 0 {
		return errors.New("agent: Send: no content")
	}
	return s.Queue(SourceFollowUp, content)
}

// Queue queues a message without waiting for it: SourceSteer joins the
// running turn at its next model-call boundary, SourceFollowUp runs after
// it (as Steer, FollowUp and Send do with text).
func (s *Session) Queue(source PendingSource, content []llm.Part) error {
	it := &item{source: source, content: content, text: partsText(content), ctx: s.lifetime}
	// Before it is queued (the worker may then say prompt_started at once)
	// and not under s.mu: no callback runs under the session lock.
	s.telemetryEvent(it, telemetry.EventPromptRequested, "source", string(source))
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrSessionClosed
	}
	s.enqueueLocked(it)
	s.mu.Unlock()
	return nil
}

// QueueIfBusy queues content as source only while a turn runs or
// messages wait, and reports whether it did: a steer for a turn that has
// already ended is the caller's to send as a prompt.
func (s *Session) QueueIfBusy(source PendingSource, content []llm.Part) (bool, error) {
	it := &item{source: source, content: content, text: partsText(content), ctx: s.lifetime}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return false, ErrSessionClosed
	case !s.busyLocked():
		s.mu.Unlock()
		return false, nil
	}
	s.enqueueLocked(it)
	s.mu.Unlock()
	// After the lock (no callback runs under it); the turn it joins is
	// already running, so this cannot follow its prompt_started.
	s.telemetryEvent(it, telemetry.EventPromptRequested, "source", string(source))
	return true, nil
}

// enqueueLocked queues it and starts the worker if it is not running.
func (s *Session) enqueueLocked(it *item) {
	s.nextID++
	it.id = s.nextID
	it.enqueued = time.Now()
	s.queue = append(s.queue, it)
	if it.pending() {
		s.sessionEventLocked(it, PendingQueued, "")
	}
	if !s.working {
		s.working = true
		s.worker.Add(1)
		go s.work()
	}
}

// busyLocked reports whether a turn runs or messages wait. The worker
// goroutine may still be finishing after the last prompt has returned
// (publishing its result, exiting); that is not busy, or a caller's next
// Prompt right after the previous one returned could be rejected.
func (s *Session) busyLocked() bool { return s.active != nil || len(s.queue) > 0 }

// work runs queued items in FIFO order until the queue is empty.
func (s *Session) work() {
	defer s.worker.Done()
	for {
		s.mu.Lock()
		if len(s.queue) == 0 {
			s.working = false
			s.mu.Unlock()
			return
		}
		it := s.queue[0]
		s.queue = s.queue[1:]
		if err := it.ctx.Err(); err != nil {
			s.mu.Unlock()
			s.complete(it, PromptResult{}, cancelled(it.ctx))
			continue
		}
		ctx, cancel := context.WithCancelCause(it.ctx)
		s.active = &activeTurn{it: it, cancel: cancel}
		s.mu.Unlock()

		s.sendState(it, ExecRunning, 0, "")
		if !it.quiet {
			s.telemetryEvent(it, telemetry.EventPromptStarted)
		}
		started := time.Now()
		turnCtx, stopTimer := ctx, context.CancelFunc(func() {})
		if s.cfg.PromptTimeout > 0 {
			turnCtx, stopTimer = context.WithTimeoutCause(ctx, s.cfg.PromptTimeout, ErrPromptTimedOut)
		}
		var (
			res     PromptResult
			steered []*item
			err     error
		)
		if it.run != nil {
			res, err = it.run(turnCtx)
		} else {
			res, steered, err = s.runTurn(turnCtx, it)
			if err == nil && turnCtx.Err() == nil {
				s.runStopHooks(turnCtx, &res)
				s.resizeAfterTurn(turnCtx)
			}
		}
		if err == nil && turnCtx.Err() != nil {
			err = context.Cause(turnCtx)
		}
		switch {
		case err != nil && errors.Is(context.Cause(turnCtx), ErrPromptTimedOut) && ctx.Err() == nil:
			err = fmt.Errorf("%w after %v", ErrPromptTimedOut, s.cfg.PromptTimeout)
		case err != nil && turnCtx.Err() != nil:
			err = cancelled(turnCtx)
		}
		stopTimer()
		cancel(nil)
		s.mu.Lock()
		s.active = nil
		s.mu.Unlock()
		// Steer messages that joined the turn are recorded before the
		// prompt they joined returns, so its caller sees a complete history.
		s.mu.Lock()
		for _, st := range steered {
			if st.pending() {
				s.recordLocked(st, err)
			}
		}
		s.mu.Unlock()
		s.complete(it, res, err)
		if s.cfg.ModelTitles && err == nil && it.run == nil && !s.modelTitled && !s.titledByUser() {
			// After the response: the title costs the next prompt, not
			// this one.
			s.modelTitled = true
			s.titleFromModel(context.WithoutCancel(it.ctx))
		}
		for _, st := range steered {
			s.deliver(st, res, err, false)
		}
		if it.quiet {
			continue
		}
		end := &TurnEnd{StopReason: res.StopReason, Text: res.Text, Usage: res.Usage, Err: errString(err), Duration: time.Since(started)}
		s.mu.Lock()
		end.TotalCost = s.hist.usage.Totals().Cost // the /cost figure
		s.mu.Unlock()
		s.update(context.WithoutCancel(it.ctx), Update{Kind: UpdateTurnEnded, Turn: end})
	}
}

// complete delivers an item's result, recording pending items in the
// resolved/failed history.
func (s *Session) complete(it *item, res PromptResult, err error) {
	s.deliver(it, res, err, true)
}

// deliver hands an item's result to its completion callback and waiting
// caller; with record, pending items also go to the history.
func (s *Session) deliver(it *item, res PromptResult, err error, record bool) {
	if it.stopWatch != nil {
		it.stopWatch()
	}
	if s.cfg.Journal != nil && record {
		// Durable before the response that depends on it.
		if serr := s.cfg.Journal.Sync(); serr != nil && err == nil {
			err = serr
		}
	}
	state, message := finalState(err)
	s.sendState(it, state, 0, message)
	switch {
	case it.quiet:
	case err == nil:
		s.telemetryEvent(it, telemetry.EventPromptCompleted, "stopReason", string(res.StopReason))
	case errors.Is(err, ErrPromptTimedOut):
		s.telemetryEvent(it, telemetry.EventPromptTimedOut, "error", err.Error())
	case errors.Is(err, context.Canceled) || errors.Is(err, ErrSessionClosed):
		s.telemetryEvent(it, telemetry.EventPromptCancelled)
	default:
		s.telemetryEvent(it, telemetry.EventPromptFailed, "error", err.Error())
	}
	if record && it.pending() {
		s.mu.Lock()
		s.recordLocked(it, err)
		s.mu.Unlock()
	}
	if it.onComplete != nil {
		it.onComplete(res, err)
	}
	if it.done != nil {
		it.done <- promptOutcome{res, err}
	}
}

// recordLocked adds a finished pending item to the history.
func (s *Session) recordLocked(it *item, err error) {
	f := finished{it: it, status: PendingResolved, at: time.Now()}
	if err != nil {
		f.status, f.err = PendingFailed, err.Error()
	}
	s.history = append(s.history, f)
	if n := len(s.history) - maxPendingHistory; n > 0 {
		s.history = slices.Delete(s.history, 0, n)
	}
	s.sessionEventLocked(it, f.status, f.err)
}

// dropQueued removes every queued item and returns them.
func (s *Session) dropQueuedLocked() []*item {
	q := s.queue
	s.queue = nil
	return q
}

// CancelActivePrompt cancels the running turn; the prompt returns a
// cancellation error, and every queued message fails with one too (and is
// recorded as failed). RunExclusive calls are no prompts: they run. It
// reports whether a turn was running.
func (s *Session) CancelActivePrompt() bool {
	s.mu.Lock()
	active := s.active
	if active != nil && active.it.quiet {
		active = nil // a RunExclusive call is no prompt: it finishes
	}
	queued := s.dropQueuedLocked()
	// RunExclusive calls stay queued, in order.
	s.queue = slices.DeleteFunc(slices.Clone(queued), func(it *item) bool { return !it.quiet })
	queued = slices.DeleteFunc(queued, func(it *item) bool { return it.quiet })
	for _, it := range queued {
		if it.pending() {
			s.recordLocked(it, ErrPromptCancelled)
		}
	}
	if active != nil {
		active.cancel(ErrPromptCancelled)
	}
	s.mu.Unlock()
	for _, it := range queued {
		s.deliver(it, PromptResult{}, ErrPromptCancelled, false)
	}
	return active != nil
}

// PendingMessageCount is the number of queued messages.
func (s *Session) PendingMessageCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingCountLocked()
}

func (s *Session) pendingCountLocked() int {
	n := 0
	for _, it := range s.queue {
		if it.pending() {
			n++
		}
	}
	return n
}

// PendingMessages returns the queued messages in order, then (with
// includeResolved) the newest resolved/failed ones, oldest first. Previews
// are cut at maxLength characters plus "..."; maxLength is clamped to at
// least 1, as seed 000's pendingMessages does (pass DefaultPreviewLength
// for the seed's default of 120).
func (s *Session) PendingMessages(maxLength int, includeResolved bool) []PendingMessage {
	maxLength = max(maxLength, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PendingMessage
	for _, it := range s.queue {
		if it.pending() {
			out = append(out, it.snapshot(PendingQueued, maxLength))
		}
	}
	if includeResolved {
		for _, f := range s.history {
			m := f.it.snapshot(f.status, maxLength)
			at := f.at
			m.FinishedAt, m.Error = &at, f.err
			out = append(out, m)
		}
	}
	return out
}

// ClearPendingHistory forgets resolved/failed messages and returns how
// many; the queue is untouched.
func (s *Session) ClearPendingHistory() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.history)
	s.history = nil
	return n
}

// ClearPendingState drops the queue (waiting callers get a cancellation
// error; nothing is recorded as failed) and the history, and with
// cancelActivePrompt also cancels the running turn.
func (s *Session) ClearPendingState(cancelActivePrompt bool) ClearPendingResult {
	s.mu.Lock()
	queued := s.dropQueuedLocked()
	// RunExclusive calls are no prompts: they stay queued and finish.
	s.queue = slices.DeleteFunc(slices.Clone(queued), func(it *item) bool { return !it.quiet })
	queued = slices.DeleteFunc(queued, func(it *item) bool { return it.quiet })
	r := ClearPendingResult{QueuedRemoved: 0, ResolvedRemoved: len(s.history)}
	s.history = nil
	if cancelActivePrompt && s.active != nil && !s.active.it.quiet {
		s.active.cancel(ErrPromptCancelled)
		r.ActivePromptCancelled = true
	}
	s.mu.Unlock()
	for _, it := range queued {
		if it.pending() {
			r.QueuedRemoved++
		}
		// Not recorded: ClearPendingState clears history too.
		s.deliver(it, PromptResult{}, ErrPromptCancelled, false)
	}
	return r
}

// cancelled is the error of work stopped because ctx was cancelled: it
// wraps ErrPromptCancelled (so context.Canceled) and the cause, once.
func cancelled(ctx context.Context) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrPromptCancelled) {
		return cause
	}
	return fmt.Errorf("%w: %w", ErrPromptCancelled, cause)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
