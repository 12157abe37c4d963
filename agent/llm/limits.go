package llm

import (
	"errors"
	"fmt"
	"strings"
)

// Default caps of one model response (Limits). A model's output limit is
// far below them (128k tokens are about 0.5 MiB); they stop a broken or
// hostile server from growing the agent's memory without end.
const (
	DefaultMaxToolArgumentBytes = 8 << 20
	DefaultMaxTextBytes         = 8 << 20
	// DefaultMaxToolCalls caps the tool calls of one response: their
	// arguments' bytes alone do not bound them (a call of read_file takes
	// 20 bytes of arguments and gives up to 28 KiB; one with no
	// arguments takes none), and a model asks for a few at a time, tens
	// at most.
	DefaultMaxToolCalls = 256
)

// Limits caps what one streamed model response may hold. Zero fields take
// the defaults; a negative field means no limit.
type Limits struct {
	// MaxToolArgumentBytes caps the arguments of all the response's tool
	// calls together.
	MaxToolArgumentBytes int
	// MaxTextBytes caps the response's text and reasoning together.
	MaxTextBytes int
	// MaxToolCalls caps the number of the response's tool calls.
	MaxToolCalls int
}

func (l Limits) args() int  { return limit(l.MaxToolArgumentBytes, DefaultMaxToolArgumentBytes) }
func (l Limits) text() int  { return limit(l.MaxTextBytes, DefaultMaxTextBytes) }
func (l Limits) calls() int { return limit(l.MaxToolCalls, DefaultMaxToolCalls) }

func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return int(^uint(0) >> 1)
	}
	return v
}

// ErrResponseTooLarge is wrapped by a *LimitError.
var ErrResponseTooLarge = errors.New("model response too large")

// LimitError reports a response cut off at a limit of Limits.
type LimitError struct {
	// Setting names the limit's setting ("maxToolArgumentBytes").
	Setting string
	Limit   int
	// ToolCall is the call whose arguments passed the limit (ID and Name
	// as far as they arrived), nil for text; Position is its index in
	// Accumulator.ToolCalls.
	ToolCall *ToolCall
	Position int
	// Calls: the number of tool calls passed Limit (ToolCall is nil).
	Calls bool
}

func (e *LimitError) Error() string {
	if e.Calls {
		return fmt.Sprintf("%v: its tool calls passed the limit of %d calls in one response; the response was cut off there",
			ErrResponseTooLarge, e.Limit)
	}
	what := "its text"
	if e.ToolCall != nil {
		what = fmt.Sprintf("the arguments of its tool call %q", e.ToolCall.Name)
	}
	return fmt.Sprintf("%v: %s passed the limit of %d bytes (setting %s); the response was cut off there",
		ErrResponseTooLarge, what, e.Limit, e.Setting)
}

func (e *LimitError) Unwrap() error { return ErrResponseTooLarge }

// Accumulator collects one streamed response within Limits, in time
// linear in its size (strings.Builder, where += on strings was quadratic:
// 1 MB of arguments in 16-byte pieces took 12 s). It is not safe for
// concurrent use.
type Accumulator struct {
	limits        Limits
	text, reason  strings.Builder
	calls         []*callBuffer
	byIndex       map[int]*callBuffer
	argBytes      int
	limitExceeded bool
}

type callBuffer struct {
	pos      int // in calls
	id, name string
	args     strings.Builder
}

// NewAccumulator returns an empty Accumulator enforcing l.
func NewAccumulator(l Limits) *Accumulator {
	return &Accumulator{limits: l, byIndex: map[int]*callBuffer{}}
}

// Add adds the text, reasoning or tool-call fragment of ev; other kinds
// are ignored. When ev would take the response past a limit nothing of it
// is added and a *LimitError is returned; so is every later Add.
func (a *Accumulator) Add(ev Event) error {
	if a.limitExceeded {
		return errors.New("llm: Accumulator.Add after a limit error")
	}
	switch ev.Kind {
	case EventTextDelta, EventReasoningDelta:
		if a.text.Len()+a.reason.Len()+len(ev.Text) > a.limits.text() {
			a.limitExceeded = true
			return &LimitError{Setting: "maxResponseTextBytes", Limit: a.limits.text()}
		}
		if ev.Kind == EventTextDelta {
			a.text.WriteString(ev.Text)
		} else {
			a.reason.WriteString(ev.Text)
		}
	case EventToolCallDelta:
		d := ev.ToolCall
		c := a.byIndex[d.Index]
		if c == nil {
			if len(a.calls) >= a.limits.calls() {
				a.limitExceeded = true
				return &LimitError{Limit: a.limits.calls(), Calls: true}
			}
			c = &callBuffer{pos: len(a.calls)}
			a.byIndex[d.Index] = c
			a.calls = append(a.calls, c)
		}
		if d.ID != "" {
			c.id = d.ID
		}
		if d.Name != "" {
			c.name = d.Name
		}
		if a.argBytes+len(d.ArgumentsDelta) > a.limits.args() {
			a.limitExceeded = true
			return &LimitError{Setting: "maxToolArgumentBytes", Limit: a.limits.args(),
				ToolCall: &ToolCall{ID: c.id, Name: c.name}, Position: c.pos}
		}
		a.argBytes += len(d.ArgumentsDelta)
		c.args.WriteString(d.ArgumentsDelta)
	}
	return nil
}

// Text returns the text collected so far.
func (a *Accumulator) Text() string { return a.text.String() }

// Reasoning returns the reasoning collected so far.
func (a *Accumulator) Reasoning() string { return a.reason.String() }

// ToolCalls returns the tool calls collected so far, in the order their
// first fragments arrived.
func (a *Accumulator) ToolCalls() []ToolCall {
	out := make([]ToolCall, 0, len(a.calls))
	for _, c := range a.calls {
		out = append(out, ToolCall{ID: c.id, Name: c.name, Arguments: c.args.String()})
	}
	return out
}
