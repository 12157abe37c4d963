package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSlogSinkLogsNameAndAttributes(t *testing.T) {
	tests := []struct {
		name      string
		sessionID string
		requestID string
		attrs     []string
		want      map[string]any
	}{
		{
			"all fields",
			"sess_1", "7", []string{AttrAttempt, "1", AttrMaxAttempts, "2", AttrReason, "transient"},
			map[string]any{
				"level": "INFO", "msg": "telemetry", "time": "2026-01-02T03:04:05.000000006Z",
				"name": EventPromptRetry, "sessionId": "sess_1", "requestId": "7",
				"attrs": map[string]any{"attempt": "1", "maxAttempts": "2", "reason": "transient"},
			},
		},
		{
			"no ids no attributes",
			"", "", nil,
			map[string]any{
				"level": "INFO", "msg": "telemetry", "time": "2026-01-02T03:04:05.000000006Z",
				"name": EventPromptRetry,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			r := NewRecorder(SlogSink{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
			r.Now = func() time.Time { return t0 }
			r.Emit(context.Background(), EventPromptRetry, tt.sessionID, tt.requestID, tt.attrs...)

			var got map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &got), buf.String())
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSlogSinkTextOutput(t *testing.T) {
	var buf bytes.Buffer
	s := SlogSink{Logger: NewLogger(&buf, slog.LevelInfo, true)}
	s.Emit(Event{Name: EventSessionNew, SessionID: "sess_1", Attributes: map[string]string{"cwd": "/w", "b": "2"}, Timestamp: t0})
	out := buf.String()
	assert.Contains(t, out, "msg=telemetry")
	assert.Contains(t, out, "name=session_new")
	assert.Contains(t, out, "sessionId=sess_1")
	assert.Contains(t, out, "attrs.b=2 attrs.cwd=/w") // sorted by key
}

func TestSlogSinkDropsEvents(t *testing.T) {
	var buf bytes.Buffer
	tests := []struct {
		name string
		sink SlogSink
	}{
		{"nil logger", SlogSink{}},
		{"level above info", SlogSink{Logger: NewLogger(&buf, slog.LevelWarn, true)}},
		{"logging off", SlogSink{Logger: NewLogger(&buf, 0, false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf.Reset()
			assert.NotPanics(t, func() { tt.sink.Emit(Event{Name: EventSessionNew}) })
			assert.Empty(t, buf.String())
		})
	}
}
