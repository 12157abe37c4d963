package telemetry

import (
	"encoding/json"
	"fmt"
	"time"
)

// Event names. A prompt that arrives for an existing session gives
// prompt_requested; once its turn starts running, prompt_started, then zero
// or more prompt_retry and exactly one of prompt_completed,
// prompt_cancelled, prompt_timed_out or prompt_failed. A prompt refused
// before it starts gives prompt_permission_denied (permission refused) or
// nothing more (another prompt is running). docs/telemetry.md says when each
// event is emitted.
const (
	EventSessionNew             = "session_new"  // attrs: cwd
	EventSessionLoad            = "session_load" // attrs: cwd
	EventSessionDelete          = "session_delete"
	EventPromptRequested        = "prompt_requested"
	EventPromptStarted          = "prompt_started"
	EventPromptCompleted        = "prompt_completed"
	EventPromptCancelled        = "prompt_cancelled"
	EventPromptTimedOut         = "prompt_timed_out"
	EventPromptFailed           = "prompt_failed" // attrs: error
	EventPromptRetry            = "prompt_retry"  // attrs: attempt, maxAttempts, reason
	EventPromptPermissionDenied = "prompt_permission_denied"
)

// Attribute keys used by the events above.
const (
	AttrCwd         = "cwd"
	AttrError       = "error"
	AttrAttempt     = "attempt"
	AttrMaxAttempts = "maxAttempts"
	AttrReason      = "reason"
)

// BadKey is the attribute key given to a value without a key (an odd
// number of attrs passed to [Recorder.Emit]), as log/slog does.
const BadKey = "!BADKEY"

// EventNames returns the names of all defined events, in lifecycle order.
// The slice is fresh on every call.
func EventNames() []string {
	return []string{
		EventSessionNew, EventSessionLoad, EventSessionDelete,
		EventPromptRequested, EventPromptStarted,
		EventPromptCompleted, EventPromptCancelled, EventPromptTimedOut, EventPromptFailed,
		EventPromptRetry, EventPromptPermissionDenied,
	}
}

// TimestampLayout is how Event.Timestamp is written in JSON: RFC 3339 in
// UTC with nine fractional digits, so the strings sort in time order.
const TimestampLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Event is one telemetry record. Sinks must treat Attributes as read-only:
// the same map is handed to every sink of a [Recorder].
//
// Its JSON form is
//
//	{"name":"prompt_retry","sessionId":"sess_…","requestId":"7","attributes":{"attempt":"1"},"timestamp":"2026-01-02T03:04:05.000000006Z"}
//
// with sessionId, requestId and attributes left out when empty.
type Event struct {
	Name       string            `json:"name"`
	SessionID  string            `json:"sessionId,omitempty"`
	RequestID  string            `json:"requestId,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
	Timestamp  time.Time         `json:"timestamp"`
}

// eventJSON is Event with the timestamp as a string in TimestampLayout.
type eventJSON struct {
	Name       string            `json:"name"`
	SessionID  string            `json:"sessionId,omitempty"`
	RequestID  string            `json:"requestId,omitempty"`
	Attributes map[string]string `json:"attributes,omitempty"`
	Timestamp  string            `json:"timestamp"`
}

// MarshalJSON writes the event with its timestamp in UTC, in TimestampLayout.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(eventJSON{
		Name:       e.Name,
		SessionID:  e.SessionID,
		RequestID:  e.RequestID,
		Attributes: e.Attributes,
		Timestamp:  e.Timestamp.UTC().Format(TimestampLayout),
	})
}

// UnmarshalJSON reads what MarshalJSON writes (any RFC 3339 timestamp is
// accepted); the timestamp comes back in UTC.
func (e *Event) UnmarshalJSON(data []byte) error {
	var j eventJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	ts, err := time.Parse(time.RFC3339Nano, j.Timestamp)
	if err != nil {
		return fmt.Errorf("telemetry event timestamp: %w", err)
	}
	*e = Event{
		Name:       j.Name,
		SessionID:  j.SessionID,
		RequestID:  j.RequestID,
		Attributes: j.Attributes,
		Timestamp:  ts.UTC(),
	}
	return nil
}
