package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// StreamingBehavior says what Prompt does when the session is busy.
type StreamingBehavior int

const (
	// Reject (the default) fails with ErrPromptAlreadyRunning.
	Reject StreamingBehavior = iota
	// Steer delivers the message inside the running turn, at its next
	// model-call boundary; the remaining tool calls of the current model
	// response are skipped.
	Steer
	// FollowUp runs the message after the running turn (and anything
	// queued before it) has finished.
	FollowUp
)

// PendingSource says how a queued message arrived.
type PendingSource string

const (
	// SourcePromptFollowUp is Prompt(..., FollowUp) while busy.
	SourcePromptFollowUp PendingSource = "prompt_follow_up"
	// SourceSteer is Steer() or Prompt(..., Steer) while busy.
	SourceSteer PendingSource = "steer"
	// SourceFollowUp is FollowUp() or Send().
	SourceFollowUp PendingSource = "follow_up"
)

// PendingStatus is the state of a pending message.
type PendingStatus string

const (
	PendingQueued   PendingStatus = "queued"
	PendingResolved PendingStatus = "resolved"
	PendingFailed   PendingStatus = "failed"
)

// PendingMessage is a snapshot of a queued or recently finished message.
type PendingMessage struct {
	ID         int64         `json:"id"`
	Source     PendingSource `json:"source"`
	Status     PendingStatus `json:"status"`
	Preview    string        `json:"preview"`
	EnqueuedAt time.Time     `json:"enqueuedAt"`
	FinishedAt *time.Time    `json:"finishedAt,omitempty"`
	Error      string        `json:"error,omitempty"`
}

// DefaultPreviewLength is the preview length of PendingMessages.
const DefaultPreviewLength = 120

// maxPendingHistory is how many resolved/failed messages are kept.
const maxPendingHistory = 20

// Errors of the session facade.
var (
	ErrPromptAlreadyRunning = errors.New("agent: a prompt is already running; pass Steer or FollowUp to queue the message")
	ErrSessionClosed        = errors.New("agent: session is closed")
	// ErrPromptCancelled is the error of a cancelled prompt or of a queued
	// message dropped by a cancellation; errors.Is(err, context.Canceled)
	// holds for it.
	ErrPromptCancelled = fmt.Errorf("agent: prompt cancelled: %w", context.Canceled)
)

// InvalidForkEntryIndexError is returned when a fork names an entry that
// does not exist or is not a user message. Nothing is created.
type InvalidForkEntryIndexError struct{ Index int }

func (e *InvalidForkEntryIndexError) Error() string {
	return fmt.Sprintf("agent: transcript entry %d is not a user message that can be forked from", e.Index)
}

// ClearPendingResult reports what ClearPendingState removed.
type ClearPendingResult struct {
	QueuedRemoved         int  `json:"queuedRemoved"`
	ResolvedRemoved       int  `json:"resolvedRemoved"`
	ActivePromptCancelled bool `json:"activePromptCancelled"`
}

// item is one unit of work for the session's worker: a prompt or a
// queued message.
type item struct {
	id      int64
	source  PendingSource // "" for a prompt that did not queue
	content []llm.Part
	text    string
	title   string // PromptOptions.Title
	// messageID is the user message's id (PromptOptions.MessageID), or
	// "" for one the session gives it.
	messageID string
	ctx       context.Context // the caller's, or the session's for fire-and-forget
	enqueued  time.Time
	// done receives the result of an awaited item (buffered, 1).
	done chan promptOutcome
	// onComplete, if set, is called by the worker with the result, in
	// order with the session's updates.
	onComplete func(PromptResult, error)
	// stopWatch stops watching ctx for withdrawal (context.AfterFunc).
	stopWatch func() bool
	// states: the turn reports execution states (SessionConfig.
	// ExecutionStates; prompts only, not detached messages).
	states bool
	// queuedSent is closed once the "queued" execution state has been
	// sent (outside the session lock): "running" waits for it (on the
	// worker), and a final state sent before it (a cancellation while the
	// sink is slow) is left in deferredState for the sender of "queued",
	// so states stay in order and a cancel never waits for the sink.
	queuedSent    chan struct{}
	stateMu       sync.Mutex
	deferredState *Update
	// run replaces the model turn (a slash command).
	run func(ctx context.Context) (PromptResult, error)
	// quiet: not a prompt (RunExclusive); no prompt events, no turn end.
	quiet bool
}

type promptOutcome struct {
	res PromptResult
	err error
}

func (it *item) pending() bool { return it.source != "" }

// preview cuts text to maxLength characters plus "...", after turning
// CRLF into LF.
func preview(text string, maxLength int) string {
	if maxLength < 1 {
		maxLength = 1
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if utf8.RuneCountInString(text) <= maxLength {
		return text
	}
	n := 0
	for i := range text {
		if n == maxLength {
			return text[:i] + "..."
		}
		n++
	}
	return text
}

func (it *item) snapshot(status PendingStatus, maxLength int) PendingMessage {
	return PendingMessage{ID: it.id, Source: it.source, Status: status, Preview: preview(it.text, maxLength), EnqueuedAt: it.enqueued}
}

// finished is a pending message that ran (or failed), kept for history.
type finished struct {
	it     *item
	status PendingStatus
	at     time.Time
	err    string
}
