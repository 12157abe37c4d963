package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/telemetry"
)

// SkippedForSteerResult is the result given to the tool calls of a model
// response that were not run because a steer message arrived.
const SkippedForSteerResult = "Skipped due to queued user message."

// runTurn runs one turn for it: the user message, then model calls and
// tool calls until the model stops. Steer messages queued meanwhile are
// taken at each model-call boundary and returned, so the worker can give
// them the turn's result.
func (s *Session) runTurn(ctx context.Context, it *item) (PromptResult, []*item, error) {
	s.sanitizeHistory()
	s.workspaceNotices(ctx)
	if reason := s.promptHooks(ctx, it); reason != "" {
		// The model never sees a blocked prompt; the user is told why.
		text := "Blocked by a hook: " + reason
		s.update(ctx, Update{Kind: UpdateMessage, Text: text})
		return PromptResult{Text: text, StopReason: StopEndTurn}, nil, nil
	}
	s.mu.Lock()
	s.guard = nil
	s.mu.Unlock()
	saving, err := s.appendUser(ctx, it, s.reminder())
	if err != nil {
		// The session's file could not be created for its first message:
		// the turn's result could not be kept either.
		return PromptResult{}, nil, err
	}
	if saving != nil {
		// The first message is being saved beside the first model call;
		// every way out of the turn waits for the save (its goroutine's
		// owner). Settled twice is settled once.
		ps := saving
		defer func() {
			s.settleSave(ps)
			ps.cancel(nil) // the model call beside it has returned
		}()
	}
	var steered []*item
	var res PromptResult
	overflowRetried := false
	for requests := 0; ; requests++ {
		if requests == s.cfg.MaxTurnRequests {
			if saving != nil {
				if err := s.settleSave(saving); err != nil {
					return PromptResult{}, nil, err
				}
				saving = nil
			}
			s.finishAtLimit(ctx, &res)
			return res, steered, nil
		}
		// Errors are logged inside: the request goes on with the history
		// as it is.
		_ = s.keepWithinContext(ctx, compactAuto)
		resp, err := s.callModel(ctx, callOptions{saving: saving})
		if saving != nil {
			// callModel settled it before anything of the answer was
			// shown: a message that could not be saved fails the turn,
			// which recorded nothing (the model call was cancelled).
			if saving.err != nil {
				return PromptResult{}, nil, saving.err
			}
			saving = nil
		}
		if err != nil && !overflowRetried && llm.IsContextOverflow(err) && resp.text == "" && len(resp.calls) == 0 {
			// The provider refused the prompt as longer than the model's
			// window (the estimate was off, or the window smaller than
			// known): compact everything but the user's messages into a
			// summary and send it once more.
			overflowRetried = true
			s.log.Warn("the model's context window was exceeded; compacting and retrying once", "error", err)
			if cerr := s.keepWithinContext(ctx, compactOverflow); cerr == nil {
				continue
			}
		}
		res.Usage = addUsage(res.Usage, resp.usage)
		if err == nil {
			s.reportUsage(ctx, resp.info, resp.usage)
		}
		if resp.text != "" || resp.reasoning != "" || resp.signature != "" || len(resp.redacted) > 0 {
			s.appendEntry(Entry{Kind: EntryAssistant, Content: textContent(resp.text), Reasoning: resp.reasoning,
				ReasoningSignature: resp.signature, RedactedReasoning: resp.redacted, MessageID: resp.messageID})
			if resp.text != "" {
				res.Text = resp.text
			}
		}
		if err != nil {
			var tooLarge *llm.LimitError
			if errors.As(err, &tooLarge) && len(resp.calls) > 0 {
				s.refuseCalls(ctx, resp.calls, tooLarge)
			}
			if llm.IsContextOverflow(err) {
				// Compacting did not help (or there was nothing to
				// compact): say what the user can do.
				err = fmt.Errorf("%w (%s)", err, contextOverflowAdvice)
			}
			return res, steered, err
		}
		res.StopReason = stopReason(resp.finish)
		hadCalls := len(resp.calls) > 0
		if hadCalls {
			// Give every call its id, unique in the session, before
			// recording it, so the calls and their outputs match.
			s.uniqueToolCallIDs(resp.calls)
			s.redactCalls(resp.calls)
			var cut *llm.ToolCall
			if last := &resp.calls[len(resp.calls)-1]; resp.finish == llm.FinishLength &&
				strings.TrimSpace(last.Arguments) != "" && !isJSONObjectText(last.Arguments) {
				// The output-token limit cut the last call's arguments
				// off: it cannot run, and the model must hear why.
				last.Arguments = "{}"
				c := *last
				cut, resp.calls = &c, resp.calls[:len(resp.calls)-1]
			}
			calls := resp.calls
			if cut != nil {
				calls = append(slices.Clone(resp.calls), *cut)
			}
			s.appendEntry(Entry{Kind: EntryToolCalls, ToolCalls: calls})
			if cut != nil {
				s.cutOff(ctx, *cut)
			}
			// A tool may end the turn with something to say (a question
			// for the user, whose next prompt is the answer).
			var endWith []string
			for i := 0; i < len(resp.calls); {
				if i > 0 && s.steerQueued() {
					s.skipCalls(ctx, resp.calls[i:])
					break
				}
				// A run of concurrent calls goes at once; others one by one.
				j := i + 1
				if s.concurrent(resp.calls[i]) {
					for j < len(resp.calls) && s.concurrent(resp.calls[j]) {
						j++
					}
				}
				says, perr := s.runTools(ctx, it, resp.calls[i:j])
				endWith = append(endWith, says...)
				if perr != nil {
					// The user cancelled at the permission prompt: the
					// turn ends, and every call still gets an output.
					s.cancelCalls(resp.calls[j:])
					return res, steered, perr
				}
				if ctx.Err() != nil {
					// Every call needs an output, or the next request
					// of this conversation is invalid.
					s.cancelCalls(resp.calls[j:])
					return res, steered, context.Cause(ctx)
				}
				i = j
			}
			if len(endWith) > 0 {
				text := strings.Join(endWith, "\n\n")
				s.appendEntry(AssistantEntry(text))
				s.update(ctx, Update{Kind: UpdateMessage, Text: text})
				res.Text, res.StopReason = text, StopEndTurn
				return res, steered, nil
			}
		}
		// A model-call boundary: steer messages go to the model now.
		if st := s.takeSteer(); len(st) > 0 {
			for _, m := range st {
				_, _ = s.appendUser(ctx, m, "") // a steer: the session is saved by now (and recorded here)
			}
			steered = append(steered, st...)
			continue
		}
		if !hadCalls {
			return res, steered, nil
		}
	}
}

// finishAtLimit ends a turn that used all its model requests: one more
// request, which may not call tools, asks the model to tell the user where
// the work stands, so the turn ends with a summary rather than mid-step.
func (s *Session) finishAtLimit(ctx context.Context, res *PromptResult) {
	n := s.cfg.MaxTurnRequests
	note := llm.Message{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart(fmt.Sprintf(ReminderPrefix+"\n"+
		"This turn has used all %d model requests it may make (the maxTurnRequests setting), so this is its last response and no tool can be called. "+
		"Tell the user where the work stands: what you did, what remains to be done and what you would do next, and what you did not verify. "+
		"The user can send another message to let you continue.\n</system-reminder>", n))}}
	resp, err := s.callModel(ctx, callOptions{extra: []llm.Message{note}, noTools: true})
	res.Usage = addUsage(res.Usage, resp.usage)
	if err == nil {
		s.reportUsage(ctx, resp.info, resp.usage)
	} else {
		s.log.Warn("the summary request at the request limit failed", "error", err)
	}
	text := strings.TrimSpace(resp.text)
	if err != nil || text == "" {
		text = fmt.Sprintf("I stopped: this turn reached its limit of %d model requests before the work was done. Send another message to let me continue.", n)
		s.update(ctx, Update{Kind: UpdateMessage, Text: text})
	}
	// Tool calls the model made anyway are dropped: they cannot run.
	s.appendEntry(AssistantEntry(text))
	res.Text, res.StopReason = text, StopMaxTurnRequests
}

// cutOff records the result of a call whose arguments the output-token
// limit cut off: it was not run, and the model is told why.
func (s *Session) cutOff(ctx context.Context, c llm.ToolCall) {
	text := "Error: not run: your response reached the output-token limit while writing this call's arguments, so they were cut off. " +
		"Send less in one call: write a large file in parts (create it, then add to it with edits), or split the change into several smaller calls."
	s.update(ctx, Update{Kind: UpdateToolCall, ToolCall: &ToolCallUpdate{
		ID: c.ID, Title: c.Name, Name: c.Name, Kind: ToolKindOther, Status: ToolFailed,
		Content: []ToolContent{TextContent(text)},
	}})
	s.appendEntry(Entry{Kind: EntryToolOutput, ToolCallID: c.ID, ToolName: c.Name, Text: text, IsError: true})
}

func textContent(text string) []llm.Part {
	if text == "" {
		return nil
	}
	return []llm.Part{llm.TextPart(text)}
}

// appendUser records a user message, with a reminder for the model of
// what changed since its system prompt ("" for none). Messages that did
// not come with a session/prompt (steer, follow-up, Send) are also shown
// to the client. It fails, recording nothing, when the session's file
// cannot be created for the message (the journal tries again at the
// next one).
//
// A prompt that is the session's first message (its journal has no file
// yet, firstSaver) is not recorded here: its save, the file's creation
// with the message in it (fsyncs, a rename, the directory's fsync), is
// started on a goroutine and returned, to run beside the model call that
// answers it (callOptions.saving) rather than before it; settleSave ends
// it, and the message joins the transcript only once it is durable.
func (s *Session) appendUser(ctx context.Context, it *item, reminder string) (*pendingSave, error) {
	source := string(it.source)
	if source == "" {
		source = "prompt"
	}
	id := it.messageID
	if id == "" {
		id = uuid.NewString()
	}
	// The title before the message: a store creates a session's file at
	// its first message, and puts a title it knows by then in the file's
	// header rather than rewriting the file for it.
	s.setTitleFrom(ctx, cmp.Or(it.title, it.text))
	e := Entry{Kind: EntryUser, Content: it.content, Source: source, Reminder: reminder, MessageID: id, Typed: it.title}
	echo := it.source == SourceSteer || it.source == SourceFollowUp
	if fs, ok := s.cfg.Journal.(firstSaver); ok && !echo && !fs.Saved() {
		return s.startSave(ctx, fs, e), nil
	}
	if err := s.saveJournal(); err != nil {
		return nil, err
	}
	s.appendEntry(e)
	if echo {
		for _, p := range it.content {
			if p.Type == llm.PartText {
				s.update(ctx, Update{Kind: UpdateUserMessage, Text: p.Text, MessageID: id})
			}
		}
	}
	return nil, nil
}

// pendingSave is a session's first message being saved with the session's
// file, beside the model call that answers it. The session's worker owns
// it: it started the save (startSave) and settles it (settleSave) before
// anything of the model's answer is shown, run or recorded.
type pendingSave struct {
	entry    Entry
	messages []llm.Message // the entry as the model is sent it
	// ctx is the model call's: the turn's, and cancelled by a save that
	// fails, at once, whatever the call is waiting for.
	ctx     context.Context
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed when the save returned
	err     error         // the save's error, set before done closes
	settled bool          // settleSave has seen done
	// inTranscript: the save succeeded and the entry joined the
	// transcript (under the session's mu).
	inTranscript bool
}

// startSave saves e, the session's first message, with the session's
// file on a goroutine settleSave waits for.
func (s *Session) startSave(ctx context.Context, fs firstSaver, e Entry) *pendingSave {
	// As the transcript will hold it, and the file with the same time.
	var one transcript
	one.append(e)
	ps := &pendingSave{entry: *one.entries[0], messages: one.messages(), done: make(chan struct{})}
	ps.ctx, ps.cancel = context.WithCancelCause(ctx)
	go func() {
		defer close(ps.done)
		if ps.err = fs.SaveWith(ps.entry); ps.err != nil {
			ps.cancel(ps.err)
			return
		}
		// Saved, the message is acknowledged: it joins the transcript now
		// (its record is in the file already), so that a fork or a look
		// at the session while the model is slow to answer holds it.
		s.appendMu.Lock()
		s.mu.Lock()
		s.tr.append(ps.entry)
		ps.inTranscript = true
		s.mu.Unlock()
		s.appendMu.Unlock()
	}()
	return ps
}

// settleSave waits for ps's save. Saved, the message has joined the
// transcript (startSave's goroutine put it there); not saved, nothing is
// recorded and the model call beside the save is cancelled. It returns
// the save's error, the same at every call.
func (s *Session) settleSave(ps *pendingSave) error {
	if ps.settled {
		return ps.err
	}
	<-ps.done
	ps.settled = true
	return ps.err
}

// setTitleFrom gives an untitled session its title: the first line of its
// first message, cut to 80 characters. The client hears of it.
func (s *Session) setTitleFrom(ctx context.Context, text string) {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > 80 {
		line = string(r[:79]) + "…"
	}
	s.mu.Lock()
	if s.cfg.Title != "" || line == "" {
		s.mu.Unlock()
		return
	}
	s.cfg.Title = line
	s.mu.Unlock()
	if j := s.cfg.Journal; j != nil {
		j.SetTitle(line, false)
	}
	s.update(ctx, Update{Kind: UpdateTitle, Title: &TitleChange{Title: line, UpdatedAt: time.Now().UTC()}})
}

func (s *Session) appendEntry(e Entry) {
	s.appendMu.Lock()
	defer s.appendMu.Unlock()
	s.mu.Lock()
	s.tr.append(e)
	last := s.tr.entries[len(s.tr.entries)-1]
	s.mu.Unlock()
	if j := s.cfg.Journal; j != nil {
		j.AppendEntry(*last)
	}
}

func (s *Session) steerQueued() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range s.queue {
		if it.source == SourceSteer {
			return true
		}
	}
	return false
}

// takeSteer removes the queued steer messages, in order.
func (s *Session) takeSteer() []*item {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st []*item
	rest := s.queue[:0]
	for _, it := range s.queue {
		if it.source == SourceSteer {
			st = append(st, it)
		} else {
			rest = append(rest, it)
		}
	}
	clear(s.queue[len(rest):])
	s.queue = rest
	return st
}

// update hands an update to the sink, if any, and then to the output
// stream's subscribers: one path for every update.
func (s *Session) update(ctx context.Context, u Update) {
	if s.cfg.Sink != nil {
		if err := s.cfg.Sink.Update(ctx, u); err != nil && ctx.Err() == nil {
			s.log.Debug("sending update", "error", err)
		}
	}
	s.publishUpdate(u)
}

// modelResponse is one model call's outcome.
type modelResponse struct {
	text, reasoning string
	signature       string
	redacted        []string
	calls           []llm.ToolCall
	usage           llm.Usage
	info            *pricing.Model // the answering model's entry, for reportUsage
	finish          llm.FinishReason
	messageID       string // the id its updates and its entry carry
}

// callOptions change one model request: messages added after the
// conversation (not recorded), and no tool calls. saving is the
// session's first message while it is being saved (appendUser): it ends
// the conversation sent, and nothing of the answer is handled before the
// save is settled; a save that fails cancels the request, and callModel
// returns the save's error.
type callOptions struct {
	extra   []llm.Message
	noTools bool
	saving  *pendingSave
}

func (s *Session) callModel(ctx context.Context, opt callOptions) (resp modelResponse, err error) {
	sys := s.systemPrompt()
	ps := opt.saving
	if ps != nil && ps.settled {
		ps = nil // in the transcript, or failed and never sent
	}
	s.mu.Lock()
	msgs := s.tr.messages()
	model := s.model
	saved := ps != nil && ps.inTranscript // then msgs hold its message
	s.mu.Unlock()
	onRetry := s.onRetry
	if ps != nil {
		if !saved {
			msgs = append(msgs, ps.messages...)
		}
		ctx = ps.ctx
		// A retry notice is the model's too: shown once the message is
		// saved, never for a request the failed save cancelled.
		onRetry = func(n RetryNotice) {
			if s.settleSave(ps) == nil {
				s.onRetry(n)
			}
		}
		// Run last: a failed save is the call's outcome, whatever the
		// model did meanwhile (nothing of it was handled).
		defer func() {
			if serr := s.settleSave(ps); serr != nil {
				resp, err = modelResponse{messageID: resp.messageID}, serr
			}
		}()
	}
	msgs = append(msgs, opt.extra...)
	if !model.AcceptsImages() {
		msgs = withoutImages(msgs, model.ID)
	}
	req := &llm.Request{Model: model.Name, System: sys, Messages: msgs, ReasoningEffort: model.ReasoningEffort, NoToolCalls: opt.noTools}
	if specs := s.tools.specs(s.offeredNow()); len(specs) > 0 {
		req.Tools = make([]llm.ToolSpec, 0, len(specs))
		for _, t := range specs {
			req.Tools = append(req.Tools, llm.ToolSpec{Name: t.name, Description: t.description, Parameters: t.parameters})
		}
	}
	// acc collects the response in linear time and within the stream
	// limits; a response past them ends here (breaking the range stops the
	// provider's stream) with a *llm.LimitError.
	acc := llm.NewAccumulator(s.cfg.StreamLimits)
	messageID := uuid.NewString()
	resp.messageID = messageID
	// Fill resp on every return, so a failed stream still records what
	// the user saw.
	defer func() {
		resp.text, resp.reasoning, resp.calls = acc.Text(), acc.Reasoning(), acc.ToolCalls()
	}()
	named := map[int]bool{} // the calls whose tool's Coming was called
	for ev, err := range s.cfg.Retry.withRetries(ctx, model.Model, req, onRetry) {
		if ps != nil {
			// The answer's first event, or its error, waits here, held
			// (the stream is not read meanwhile), until the message it
			// answers is saved.
			if serr := s.settleSave(ps); serr != nil {
				return resp, serr
			}
		}
		if err != nil {
			return resp, err
		}
		if err := acc.Add(ev); err != nil {
			return resp, err
		}
		switch ev.Kind {
		case llm.EventTextDelta:
			s.update(ctx, Update{Kind: UpdateMessage, Text: ev.Text, MessageID: messageID})
		case llm.EventReasoningDelta:
			s.update(ctx, Update{Kind: UpdateThought, Text: ev.Text, MessageID: messageID})
		case llm.EventReasoningSignature:
			resp.signature = ev.Text
		case llm.EventRedactedReasoning:
			resp.redacted = append(resp.redacted, ev.Text)
		case llm.EventUsage:
			resp.usage = *ev.Usage
			resp.info = model.Info
		case llm.EventFinish:
			resp.finish = ev.Finish
		case llm.EventToolCallDelta:
			// A call's first fragment names its tool: what the tool
			// needs can start while the rest streams. Some servers name
			// it in every fragment; Coming is called once per call.
			if tc := ev.ToolCall; tc != nil && tc.Name != "" && !named[tc.Index] {
				named[tc.Index] = true
				if coming := s.tools.coming(tc.Name, s.offered); coming != nil {
					coming()
				}
			}
		}
	}
	if resp.finish == "" {
		return resp, llm.ErrTruncatedStream
	}
	return resp, nil
}

func (s *Session) onRetry(n RetryNotice) {
	s.log.Info("retrying model call", "attempt", n.Attempt, "maxAttempts", n.MaxAttempts, "delay", n.Delay, "error", n.Err)
	s.mu.Lock()
	var it *item
	if s.active != nil {
		it = s.active.it
	}
	s.mu.Unlock()
	s.sendRetry(it, n)
	s.telemetryEvent(it, telemetry.EventPromptRetry, "attempt", strconv.Itoa(n.Attempt), "maxAttempts", strconv.Itoa(n.MaxAttempts), "reason", n.Err.Error())
	if s.cfg.OnRetry != nil {
		s.cfg.OnRetry(n)
	}
}

// reportUsage sends usage_update after a model response: the context used
// (this request's prompt plus its answer), the model's context window, and
// the session's cumulative cost when the model is priced. Without a known
// context window nothing is sent (size is required).
func (s *Session) reportUsage(ctx context.Context, info *pricing.Model, u llm.Usage) {
	s.mu.Lock()
	s.hist.reported, s.hist.reportedAt = int(u.InputTokens+u.OutputTokens), len(s.tr.entries)
	round := pricing.UsageRound{Model: s.model.ID, Usage: u, Cost: pricing.RoundCost(info, u)}
	s.hist.usage.Add(round.Model, u, round.Cost)
	shown := info != nil && info.ContextWindow() > 0 && (u.InputTokens != 0 || u.OutputTokens != 0)
	if shown {
		s.hist.shown = usedTokens(u)
	}
	s.mu.Unlock()
	// Stored, so /cost and the meter come back after a restart.
	rec := UsageRecord{Round: &round}
	if shown {
		rec.Used = usedTokens(u)
	}
	s.journalUsage(rec)
	if !shown {
		return
	}
	update := &ContextUsage{Used: uint64(max(u.InputTokens+u.OutputTokens, 0)), Size: uint64(info.ContextWindow())}
	if c, ok := info.Cost(u, pricing.DialectFor(info.Provider)); ok {
		s.mu.Lock()
		s.cost += c.Amount
		total := s.cost
		s.mu.Unlock()
		update.Cost = &Cost{Amount: total, Currency: c.Currency}
	}
	s.update(ctx, Update{Kind: UpdateUsage, Usage: update})
}

// concurrent reports whether call's tool may run beside its neighbours.
func (s *Session) concurrent(call llm.ToolCall) bool {
	rt, ok := s.tools.active(call.Name, s.offered)
	return ok && rt.tool.Concurrent
}

// runTools runs calls, at the same time when there are several (each
// goroutine is waited for here), and returns what they asked to end the
// turn with and the first permission cancellation.
func (s *Session) runTools(ctx context.Context, it *item, calls []llm.ToolCall) ([]string, error) {
	says := make([]string, len(calls))
	errs := make([]error, len(calls))
	if len(calls) == 1 {
		says[0], errs[0] = s.runTool(ctx, it, calls[0])
	} else {
		var wg sync.WaitGroup
		for k, call := range calls {
			wg.Go(func() { says[k], errs[k] = s.runTool(ctx, it, call) })
		}
		wg.Wait()
	}
	var out []string
	for _, say := range says {
		if say != "" {
			out = append(out, say)
		}
	}
	return out, errors.Join(errs...)
}

// runTool runs one tool call and records its output. A tool that does not
// exist, is disabled or not allowed, has invalid arguments, is refused or
// fails gives an error result for the model; the turn goes on. The only
// error returned is ErrPermissionCancelled, which ends the turn. say is
// what a tool asked to end the turn with (ToolResult.EndTurn).
func (s *Session) runTool(ctx context.Context, it *item, call llm.ToolCall) (say string, err error) {
	view := toolCallView{id: call.ID, name: call.Name, rawInput: rawJSON(call.Arguments)}
	rt, info, result, ok := s.prepareTool(call)
	if ok {
		if o := s.runHooks(ctx, HookInput{Event: HookBeforeTool, Tool: call.Name, Arguments: view.rawInput}); o.Block {
			result, ok = ToolResult{Text: "Error: a hook blocked this tool call: " + o.Reason, IsError: true}, false
		}
	}
	// The client hears of the call before anything is asked or run.
	s.update(ctx, Update{Kind: UpdateToolCall, ToolCall: &ToolCallUpdate{
		ID: call.ID, Title: info.Title, Name: call.Name, Kind: info.Kind,
		Status: ToolPending, Locations: info.Locations, RawInput: view.rawInput, Arguments: call.Arguments,
		Content: info.Preview,
	}})
	if ok {
		switch why, msg := s.authorize(ctx, view, info); why {
		case permitted:
			// Cancellable (CancelToolCall) before the client hears it runs.
			tctx, finished := s.running.start(ctx, call.ID)
			s.update(ctx, Update{Kind: UpdateToolCallProgress, ToolCall: &ToolCallUpdate{ID: call.ID, Status: ToolInProgress}})
			result = s.execTool(withToolCall(tctx, s, call.ID), rt, call)
			// A tool that finished despite the cancellation keeps its result.
			if finished() && ctx.Err() == nil && result.IsError {
				result = ToolResult{Text: ToolCancelledByUserResult, IsError: true}
			}
			o := s.runHooks(ctx, HookInput{Event: HookAfterTool, Tool: call.Name, Arguments: view.rawInput, Result: result.Text, IsError: result.IsError})
			if note := strings.TrimSpace(o.Context + "\n" + o.Reason); note != "" {
				result.Text += "\n\n[hook] " + note
			}
		case permissionCancelled:
			s.denied(it, call.Name, why)
			if msg == "" {
				msg = cancelledToolResult
			}
			result, err = ToolResult{Text: msg, IsError: true}, ErrPermissionCancelled
		default:
			s.denied(it, call.Name, why)
			result = ToolResult{Text: msg, IsError: true}
		}
	}
	status := ToolCompleted
	if result.IsError {
		status = ToolFailed
	}
	// The client is shown what the model gets (a long output cut, with
	// where the rest is), unless the tool has its own content (a diff);
	// a file's, a search's, a command's or a page's as a code block.
	text := s.sizeForModel(call.ID, result)
	content := result.Content
	if content == nil {
		shown := text
		if shownLiterally(info.Kind) {
			shown = markdown.CodeBlock(text)
		}
		content = []ToolContent{TextContent(shown)}
	}
	s.update(ctx, Update{Kind: UpdateToolCallProgress, ToolCall: &ToolCallUpdate{
		ID: call.ID, Name: call.Name, Status: status, Content: content, Result: text}})
	if result.Context != "" {
		text += "\n\n" + result.Context
	}
	note, stop := s.guardCall(call, result.IsError, result.Text)
	text += note
	var parts []llm.Part
	if images := toolImages(result.Images); len(images) > 0 {
		parts = append([]llm.Part{llm.TextPart(text)}, images...)
	}
	s.appendEntry(Entry{Kind: EntryToolOutput, ToolCallID: call.ID, ToolName: call.Name, Text: text, Content: parts, IsError: result.IsError,
		Display: &ToolDisplay{Title: info.Title, Kind: info.Kind, Locations: info.Locations, RawInput: view.rawInput, Content: content}})
	// A tool may have met something to tell the user (a rules file cut).
	s.workspaceNotices(ctx)
	// A tool may end the turn with a failed call too (a plan the user
	// did not approve).
	say = result.EndTurn
	if stop != "" {
		say = stop
	}
	return say, err
}

// prepareTool finds the tool, validates the arguments and describes the
// call. When the call cannot run, ok is false and result says why.
func (s *Session) prepareTool(call llm.ToolCall) (rt registeredTool, info ToolCallInfo, result ToolResult, ok bool) {
	info = ToolCallInfo{Kind: ToolKindOther, Title: call.Name}
	rt, found := s.tools.active(call.Name, s.offered)
	if !found {
		return rt, info, ToolResult{Text: fmt.Sprintf("Error: tool %q is not available.", call.Name), IsError: true}, false
	}
	args := toolArgs(call)
	// Arguments are untrusted: a tool only ever runs on arguments that
	// match its schema; anything else goes back to the model as an error.
	schema, err := rt.compiled()
	if err != nil {
		return rt, info, ToolResult{Text: fmt.Sprintf("Error: tool %s cannot be called: %v", call.Name, err), IsError: true}, false
	}
	if err := checkToolArgs(schema, args); err != nil {
		// The user sees which tool it was and why nothing ran, under the
		// tool's usual kind; the model gets the error.
		return rt, ToolCallInfo{Kind: rt.tool.usualKind(), Title: visibleLine(call.Name + ": invalid arguments")},
			ToolResult{Text: fmt.Sprintf("Error: invalid arguments for %s: %v", call.Name, err), IsError: true}, false
	}
	info, err = rt.tool.describe(args)
	info.Title = visibleLine(info.Title)
	if note := hiddenNote(info.Preview); note != "" {
		info.Preview = append(info.Preview, TextContent(note))
	}
	if err != nil {
		return rt, ToolCallInfo{Kind: cmp.Or(info.Kind, ToolKindOther), Title: cmp.Or(info.Title, call.Name)},
			ToolResult{Text: "Error: " + err.Error(), IsError: true}, false
	}
	return rt, info, ToolResult{}, true
}

func toolArgs(call llm.ToolCall) json.RawMessage {
	if strings.TrimSpace(call.Arguments) == "" {
		return json.RawMessage("{}")
	}
	return json.RawMessage(call.Arguments)
}

func (s *Session) execTool(ctx context.Context, rt registeredTool, call llm.ToolCall) ToolResult {
	res, err := rt.tool.Run(ctx, toolArgs(call))
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return ToolResult{Text: cancelledToolResult, IsError: true}
		}
		return ToolResult{Text: "Error: " + err.Error(), IsError: true}
	}
	return res
}

// toolCallKey is the context key of the running tool call.
type toolCallKey struct{}

type runningToolCall struct {
	s  *Session
	id string
}

func withToolCall(ctx context.Context, s *Session, id string) context.Context {
	return context.WithValue(ctx, toolCallKey{}, runningToolCall{s, id})
}

// ToolProgress shows content (a terminal, partial output) on the running
// tool call's entry in the client, from inside a Tool's Run. Outside a
// session's tool call it does nothing.
func ToolProgress(ctx context.Context, content []ToolContent) {
	tc, ok := ctx.Value(toolCallKey{}).(runningToolCall)
	if !ok {
		return
	}
	tc.s.update(ctx, Update{Kind: UpdateToolCallProgress, ToolCall: &ToolCallUpdate{ID: tc.id, Content: content}})
}

// RunningToolCallID is the id of the tool call ctx belongs to ("" outside
// one), for a tool's Run that asks the user about it.
func RunningToolCallID(ctx context.Context) string {
	if tc, ok := ctx.Value(toolCallKey{}).(runningToolCall); ok {
		return tc.id
	}
	return ""
}

// RunningMode is the mode of the session running the tool call ctx
// belongs to ("" outside one), for a tool's Run.
func RunningMode(ctx context.Context) policy.Mode {
	if tc, ok := ctx.Value(toolCallKey{}).(runningToolCall); ok {
		return tc.s.Mode()
	}
	return ""
}

// SendPlan shows the plan of the session running the tool, from inside a
// Tool's Run. Outside a session's tool call it does nothing.
func SendPlan(ctx context.Context, p Plan) {
	if tc, ok := ctx.Value(toolCallKey{}).(runningToolCall); ok {
		tc.s.update(ctx, Update{Kind: UpdatePlan, Plan: &p})
		// session/load shows the last plan again.
		tc.s.mu.Lock()
		tc.s.lastPlan = &p
		tc.s.mu.Unlock()
		if j := tc.s.cfg.Journal; j != nil {
			j.SetPlan(p)
		}
	}
}

// skipCalls gives the not-run tool calls their "skipped" result. The
// client has not been told about them yet, so each is announced as a tool
// call that already failed (a tool_call_update would name an unknown call).
func (s *Session) skipCalls(ctx context.Context, calls []llm.ToolCall) {
	for _, c := range calls {
		s.update(ctx, Update{Kind: UpdateToolCall, ToolCall: &ToolCallUpdate{
			ID: c.ID, Title: c.Name, Name: c.Name, Kind: ToolKindOther,
			Status: ToolFailed, RawInput: rawJSON(c.Arguments), Arguments: c.Arguments,
			Content: []ToolContent{TextContent(SkippedForSteerResult)},
		}})
		s.appendEntry(Entry{Kind: EntryToolOutput, ToolCallID: c.ID, ToolName: c.Name, Text: SkippedForSteerResult, IsError: true})
	}
}

// refuseCalls records the tool calls of a response cut off at a stream
// limit, each with an error result, so the model learns on the next turn
// why nothing ran. The call being streamed when the limit was passed keeps
// no arguments (they were cut off, so not JSON); the others were complete
// but are not run either: the response as a whole was refused.
func (s *Session) refuseCalls(ctx context.Context, calls []llm.ToolCall, tooLarge *llm.LimitError) {
	cut := -1 // the text passed its limit: every call was complete
	if tooLarge.ToolCall != nil {
		cut = tooLarge.Position // the call streaming when the limit was passed
	}
	s.uniqueToolCallIDs(calls)
	for i := range calls {
		if i == cut || !isJSONObjectText(calls[i].Arguments) {
			// Cut off (or, if the text passed its cap first, unfinished):
			// not JSON, which would make the sanitizer drop the step.
			calls[i].Arguments = "{}"
		}
	}
	s.redactCalls(calls)
	s.appendEntry(Entry{Kind: EntryToolCalls, ToolCalls: calls})
	for i, c := range calls {
		text := fmt.Sprintf("Error: not run: the response was cut off because it passed a size limit (%v).", tooLarge)
		if i == cut {
			text = fmt.Sprintf("Error: not run: the arguments of this call passed the limit of %d bytes for one response (setting %s) and were cut off. "+
				"Send large content in smaller pieces, over several calls.", tooLarge.Limit, tooLarge.Setting)
		}
		s.update(ctx, Update{Kind: UpdateToolCall, ToolCall: &ToolCallUpdate{
			ID: c.ID, Title: c.Name, Name: c.Name, Kind: ToolKindOther, Status: ToolFailed,
			Content: []ToolContent{TextContent(text)},
		}})
		s.appendEntry(Entry{Kind: EntryToolOutput, ToolCallID: c.ID, ToolName: c.Name, Text: text, IsError: true})
	}
}

// redactCalls takes the secrets out of calls' arguments, in place, for
// the tools that know theirs (Tool.Redact), before anything records or
// shows them.
func (s *Session) redactCalls(calls []llm.ToolCall) {
	for i := range calls {
		redact := s.tools.redactor(calls[i].Name)
		if redact == nil || !isJSONObjectText(calls[i].Arguments) {
			continue
		}
		calls[i].Arguments = string(redact(json.RawMessage(calls[i].Arguments)))
	}
}

// cancelCalls records a "cancelled" result for the calls a cancelled turn
// did not run. The turn is over, so the client is not told.
func (s *Session) cancelCalls(calls []llm.ToolCall) {
	for _, c := range calls {
		s.appendEntry(Entry{Kind: EntryToolOutput, ToolCallID: c.ID, ToolName: c.Name, Text: cancelledToolResult, IsError: true})
	}
}

// contextOverflowAdvice ends the error of a turn whose prompt the model
// refused as too long even after compacting.
const contextOverflowAdvice = "the conversation does not fit the model's context window, even compacted: /clear starts a new context, " +
	"or choose a model with a larger window; a local server's is its own setting, such as Ollama's num_ctx"

// cancelledToolResult is the result of a tool call cut short (or never
// run) because its turn was cancelled.
const cancelledToolResult = "Error: cancelled."

func rawJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// stopReason maps a model's finish reason to the turn's.
func stopReason(f llm.FinishReason) StopReason {
	switch f {
	case llm.FinishLength:
		return StopMaxTokens
	case llm.FinishContentFilter:
		return StopRefusal
	}
	return StopEndTurn
}

func addUsage(a, b llm.Usage) llm.Usage {
	a.InputTokens += b.InputTokens
	a.OutputTokens += b.OutputTokens
	a.CachedReadTokens += b.CachedReadTokens
	a.CachedWriteTokens += b.CachedWriteTokens
	a.ReasoningTokens += b.ReasoningTokens
	return a
}

// isJSONObjectText is compact's test of arguments: a JSON object, leading
// white space allowed.
func isJSONObjectText(s string) bool {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i < len(s) && s[i] == '{' && json.Valid([]byte(s[i:]))
}
