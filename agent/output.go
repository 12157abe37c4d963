package agent

import (
	"errors"
	"sync"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// OutputType is the kind of an OutputEvent.
type OutputType string

const (
	OutputText       OutputType = "text"        // assistant text delta
	OutputReasoning  OutputType = "reasoning"   // reasoning delta
	OutputToolCall   OutputType = "tool_call"   // a tool call is about to run
	OutputToolResult OutputType = "tool_result" // a tool call's result
	OutputResult     OutputType = "result"      // a turn ended (Err set if it failed)
	OutputDeleted    OutputType = "deleted"     // the session was deleted; the stream ends
)

// OutputEvent is one item of a session's output stream (seed 001).
type OutputEvent struct {
	Type       OutputType `json:"type"`
	Text       string     `json:"text,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	ToolName   string     `json:"toolName,omitempty"`
	Arguments  string     `json:"arguments,omitempty"`
	IsError    bool       `json:"isError,omitempty"`
	StopReason StopReason `json:"stopReason,omitempty"`
	Usage      *llm.Usage `json:"usage,omitempty"`
	Err        string     `json:"error,omitempty"`
	// TotalCost (result events) is the session's cost so far in USD (what
	// /cost shows), as seed 001's result carries the SDK's total_cost_usd;
	// nil while no model call of the session was priced.
	TotalCost *float64 `json:"totalCost,omitempty"`
	// DurationMS (result events) is how long the turn ran, from its start
	// to its end, in milliseconds (seed 001's duration_ms).
	DurationMS *int64 `json:"durationMs,omitempty"`
}

// ErrSubscriberLagged ends the stream of a subscriber that fell more than
// its buffer behind.
var ErrSubscriberLagged = errors.New("agent: subscriber fell too far behind and was dropped")

// Subscription is one subscriber to a session's output stream.
//
// Policy for slow subscribers: each subscription has its own buffer; the
// session never waits for a subscriber. A subscriber whose buffer is full
// when an event is published is dropped: its channel is closed and Err
// returns ErrSubscriberLagged. So a slow subscriber cannot stall the agent
// loop or the other subscribers, and a subscriber that reads to the end
// without an error has seen every event, in order.
type Subscription struct {
	ch   chan OutputEvent
	once sync.Once
	mu   sync.Mutex
	err  error
	s    *Session
}

// C is the stream of events; it is closed when the session closes, when
// the subscriber lags, or after Unsubscribe.
func (sub *Subscription) C() <-chan OutputEvent { return sub.ch }

// Err tells why the stream ended: nil (session closed or Unsubscribe) or
// ErrSubscriberLagged.
func (sub *Subscription) Err() error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	return sub.err
}

// Unsubscribe ends the subscription.
func (sub *Subscription) Unsubscribe() {
	sub.s.mu.Lock()
	sub.s.removeSubLocked(sub)
	sub.s.mu.Unlock()
	sub.end(nil)
}

func (sub *Subscription) end(err error) {
	sub.once.Do(func() {
		sub.mu.Lock()
		sub.err = err
		sub.mu.Unlock()
		close(sub.ch)
	})
}

// Subscribe returns a new subscriber to the session's output stream with
// room for buffer events (at least 1). It sees events published from now
// on. On a closed session the stream is already closed.
func (s *Session) Subscribe(buffer int) *Subscription {
	if buffer < 1 {
		buffer = 1
	}
	sub := &Subscription{ch: make(chan OutputEvent, buffer), s: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		sub.end(nil)
		return sub
	}
	s.subs = append(s.subs, sub)
	return sub
}

func (s *Session) removeSubLocked(sub *Subscription) {
	for i, x := range s.subs {
		if x == sub {
			s.subs = append(s.subs[:i], s.subs[i+1:]...)
			return
		}
	}
}

// publish sends ev to every subscriber without ever blocking.
// publishUpdate derives the output stream from the session's updates:
// text and reasoning deltas, each tool call about to run (announced
// pending) and its result, the end of each turn, and the deletion.
func (s *Session) publishUpdate(u Update) {
	switch u.Kind {
	case UpdateMessage:
		s.publish(OutputEvent{Type: OutputText, Text: u.Text})
	case UpdateThought:
		s.publish(OutputEvent{Type: OutputReasoning, Text: u.Text})
	case UpdateToolCall:
		if c := u.ToolCall; c.Status == ToolPending {
			s.publish(OutputEvent{Type: OutputToolCall, ToolCallID: c.ID, ToolName: c.Name, Arguments: c.Arguments})
		}
	case UpdateToolCallProgress:
		if c := u.ToolCall; c.Status == ToolCompleted || c.Status == ToolFailed {
			s.publish(OutputEvent{Type: OutputToolResult, ToolCallID: c.ID, ToolName: c.Name, Text: c.Result, IsError: c.Status == ToolFailed})
		}
	case UpdateTurnEnded:
		t := u.Turn
		ms := t.Duration.Milliseconds()
		usage := t.Usage
		s.publish(OutputEvent{Type: OutputResult, StopReason: t.StopReason, Text: t.Text, Usage: &usage, Err: t.Err,
			TotalCost: t.TotalCost, DurationMS: &ms})
	case UpdateDeleted:
		s.publish(OutputEvent{Type: OutputDeleted})
	}
}

func (s *Session) publish(ev OutputEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.subs) == 0 {
		return
	}
	kept := s.subs[:0]
	for _, sub := range s.subs {
		select {
		case sub.ch <- ev:
			kept = append(kept, sub)
		default:
			sub.end(ErrSubscriberLagged)
		}
	}
	clear(s.subs[len(kept):])
	s.subs = kept
}

func (s *Session) closeSubscribers() {
	s.mu.Lock()
	subs := s.subs
	s.subs = nil
	s.mu.Unlock()
	for _, sub := range subs {
		sub.end(nil)
	}
}
