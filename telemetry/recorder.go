package telemetry

import (
	"context"
	"time"
)

// Sink receives events. Emit must not block the caller for long and must
// never panic; a Sink is safe for concurrent use.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to a Sink. The function must itself be safe
// for concurrent use.
type SinkFunc func(Event)

// Emit calls f(e).
func (f SinkFunc) Emit(e Event) { f(e) }

// Emitter is what code that reports telemetry needs; *Recorder implements
// it, including a nil *Recorder.
type Emitter interface {
	Emit(ctx context.Context, name, sessionID, requestID string, attrs ...string)
}

var _ Emitter = (*Recorder)(nil)

// Recorder stamps events and hands each one to all of its sinks. It is safe
// for concurrent use. A nil *Recorder is valid and does nothing, so callers
// can call Emit unconditionally.
type Recorder struct {
	// Now is the clock used for Event.Timestamp (time.Now when nil). Tests
	// replace it; set it before the Recorder is shared.
	Now func() time.Time

	sinks []Sink
}

// NewRecorder returns a Recorder fanning out to sinks (nil sinks are skipped).
func NewRecorder(sinks ...Sink) *Recorder {
	r := &Recorder{}
	for _, s := range sinks {
		if s != nil {
			r.sinks = append(r.sinks, s)
		}
	}
	return r
}

// Emit records an event. attrs are key, value pairs; a trailing value with
// no key is recorded under [BadKey], as log/slog does. A later duplicate
// key wins. The event is recorded even if ctx is done (prompt_cancelled is
// emitted from a cancelled context); ctx is not passed to sinks.
//
// A sink that panics despite the Sink contract is isolated: the panic is
// swallowed and the remaining sinks still receive the event.
func (r *Recorder) Emit(ctx context.Context, name, sessionID, requestID string, attrs ...string) {
	if r == nil || len(r.sinks) == 0 {
		return
	}
	now := r.Now
	if now == nil {
		now = time.Now
	}
	e := Event{
		Name:       name,
		SessionID:  sessionID,
		RequestID:  requestID,
		Attributes: attrMap(attrs),
		Timestamp:  now().UTC(), // UTC also drops the monotonic reading
	}
	for _, s := range r.sinks {
		emitSafely(s, e)
	}
}

func emitSafely(s Sink, e Event) {
	defer func() { _ = recover() }()
	s.Emit(e)
}

// attrMap turns key, value pairs into a map (nil when there are none).
func attrMap(kv []string) map[string]string {
	if len(kv) == 0 {
		return nil
	}
	m := make(map[string]string, (len(kv)+1)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	if len(kv)%2 == 1 {
		m[BadKey] = kv[len(kv)-1]
	}
	return m
}
