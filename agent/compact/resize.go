package compact

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Kind is the kind of resize a Decision asks for.
type Kind string

const (
	// KindNone: leave the history alone.
	KindNone Kind = ""
	// KindLite: drop old messages (Lite, LiteChars).
	KindLite Kind = "lite"
	// KindDeep: summarize old messages (a Compactor).
	KindDeep Kind = "deep"
)

// Reasons the default policy gives, as Agently names them.
const (
	ReasonMaxMessagesTextLength = "max_messages_text_length"
	ReasonMaxKeepMessagesCount  = "max_keep_messages_count"
	ReasonEveryNTurns           = "every_n_turns"
	ReasonForce                 = "force"
)

// Decision is a resize policy's verdict. The zero value is "none".
type Decision struct {
	Kind   Kind
	Reason string
	// Severity ranks decisions as Agently does: 100 deep by text length,
	// 50 lite by count, 10 lite by turns, 1000 forced.
	Severity int
}

// Forced returns the decision for a user's explicit resize request: kind,
// or KindDeep when kind is KindNone, with reason "force".
func Forced(kind Kind) Decision {
	if kind == KindNone {
		kind = KindDeep
	}
	return Decision{Kind: kind, Reason: ReasonForce, Severity: 1000}
}

// Agently's defaults.
const (
	DefaultMaxMessagesTextLength = 12_000
	DefaultEveryNTurns           = 8
)

// ResizePolicy is Agently's default session resize policy
// (session.resize.*). A zero or negative field is disabled, so the zero
// value never resizes; DefaultResizePolicy has Agently's defaults.
type ResizePolicy struct {
	// MaxMessagesTextLength: a deep resize once TextLength(msgs) reaches
	// it.
	MaxMessagesTextLength int
	// MaxKeepMessagesCount: a lite resize once there are more messages
	// than this.
	MaxKeepMessagesCount int
	// EveryNTurns: a lite resize once this many turns have passed since
	// the last resize.
	EveryNTurns int
}

// DefaultResizePolicy returns Agently's defaults: text length 12,000,
// every 8 turns, no message count limit.
func DefaultResizePolicy() ResizePolicy {
	return ResizePolicy{MaxMessagesTextLength: DefaultMaxMessagesTextLength, EveryNTurns: DefaultEveryNTurns}
}

// Decide applies the policy to the current history msgs, turns being the
// number of turns (assistant replies) since the last resize. The first
// rule that holds wins:
//
//  1. MaxMessagesTextLength > 0 and TextLength(msgs) >= it: deep,
//     "max_messages_text_length";
//  2. MaxKeepMessagesCount > 0 and len(msgs) > it: lite,
//     "max_keep_messages_count";
//  3. EveryNTurns > 0 and turns >= it: lite, "every_n_turns";
//  4. otherwise none.
func (p ResizePolicy) Decide(msgs []llm.Message, turns int) Decision {
	if p.MaxMessagesTextLength > 0 && TextLength(msgs) >= p.MaxMessagesTextLength {
		return Decision{Kind: KindDeep, Reason: ReasonMaxMessagesTextLength, Severity: 100}
	}
	if p.MaxKeepMessagesCount > 0 && len(msgs) > p.MaxKeepMessagesCount {
		return Decision{Kind: KindLite, Reason: ReasonMaxKeepMessagesCount, Severity: 50}
	}
	if p.EveryNTurns > 0 && turns >= p.EveryNTurns {
		return Decision{Kind: KindLite, Reason: ReasonEveryNTurns, Severity: 10}
	}
	return Decision{}
}

// TextLength is Agently's measure of a history: for each message, the
// length of its role plus one plus its content's length in characters,
// where text parts count their text and other parts (images) their JSON
// form. Tool calls count their name and arguments, which is their share of
// an assistant message's content.
func TextLength(msgs []llm.Message) int {
	n := 0
	for i := range msgs {
		n += messageTextLength(&msgs[i])
	}
	return n
}

// imagePartJSON is the length of {"type":"image","mimeType":"","data":""}:
// an image part counts as its JSON form, and base64 data is ASCII.
const imagePartJSON = len(`{"type":"image","mimeType":"","data":""}`)

func messageTextLength(m *llm.Message) int {
	n := len(m.Role) + 1
	for _, p := range m.Content {
		if p.Type == llm.PartImage {
			n += imagePartJSON + len(p.MIMEType) + len(p.Data)
			continue
		}
		n += utf8.RuneCountInString(p.Text)
	}
	for _, tc := range m.ToolCalls {
		n += utf8.RuneCountInString(tc.Name) + utf8.RuneCountInString(tc.Arguments)
	}
	return n
}

// DecideFunc is a resize policy: given the history and the turns since the
// last resize, what to do. ResizePolicy.Decide is one.
type DecideFunc func(msgs []llm.Message, turns int) Decision

// LiteFunc performs a lite resize and returns the new history. It must not
// modify msgs.
type LiteFunc func(ctx context.Context, msgs []llm.Message) ([]llm.Message, error)

// DeepFunc performs a deep resize (a summary) and returns the new history.
// It must not modify msgs. Compactor.Deep returns one.
type DeepFunc func(ctx context.Context, msgs []llm.Message) ([]llm.Message, error)

// ErrNoHandler is returned (wrapped) by Resizer.Apply for a decision kind
// it has no handler for.
var ErrNoHandler = errors.New("compact: no resize handler")

// Resizer runs a resize policy and its handlers. Each of Decide, Lite and
// Deep may be replaced; nil ones use the defaults documented on the field.
type Resizer struct {
	// Policy is used by the default Decide and Lite.
	Policy ResizePolicy
	// Decide replaces Policy.Decide.
	Decide DecideFunc
	// Lite replaces the default lite handler: Lite(msgs,
	// Policy.MaxKeepMessagesCount) when that is set, then
	// LiteChars(_, Policy.MaxMessagesTextLength), as Agently does.
	Lite LiteFunc
	// Deep is the deep handler. There is no default: a summary needs a
	// model (use Compactor.Deep), and a deep decision without one fails
	// with ErrNoHandler rather than silently dropping history.
	Deep DeepFunc
}

// Judge returns the policy's decision for msgs after turns turns since the
// last resize.
func (r *Resizer) Judge(msgs []llm.Message, turns int) Decision {
	if r.Decide != nil {
		return r.Decide(msgs, turns)
	}
	return r.Policy.Decide(msgs, turns)
}

// Apply runs the handler for d and returns the new history: msgs itself
// for KindNone. A handler's error is returned wrapped, with msgs, which the
// caller keeps.
func (r *Resizer) Apply(ctx context.Context, msgs []llm.Message, d Decision) ([]llm.Message, error) {
	var h func(context.Context, []llm.Message) ([]llm.Message, error)
	switch d.Kind {
	case KindNone:
		return msgs, nil
	case KindLite:
		h = r.Lite
		if h == nil {
			h = r.defaultLite
		}
	case KindDeep:
		h = r.Deep
	}
	if h == nil {
		return msgs, fmt.Errorf("%w for %q (reason %q)", ErrNoHandler, d.Kind, d.Reason)
	}
	out, err := h(ctx, msgs)
	if err != nil {
		return msgs, fmt.Errorf("compact: %s resize (%s): %w", d.Kind, d.Reason, err)
	}
	return out, nil
}

// Resize judges msgs and applies the decision. After a resize (a decision
// other than none, applied without error) the caller resets its turn
// count.
func (r *Resizer) Resize(ctx context.Context, msgs []llm.Message, turns int) ([]llm.Message, Decision, error) {
	d := r.Judge(msgs, turns)
	out, err := r.Apply(ctx, msgs, d)
	return out, d, err
}

func (r *Resizer) defaultLite(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
	out := Lite(msgs, r.Policy.MaxKeepMessagesCount)
	return LiteChars(out, r.Policy.MaxMessagesTextLength), nil
}
