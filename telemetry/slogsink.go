package telemetry

import (
	"context"
	"log/slog"
	"slices"
)

// SlogSink logs each event at Info with the message "telemetry": attributes
// name, sessionId and requestId (the last two only when set) and a group
// "attrs" with the event's attributes, sorted by key. The record's time is
// the event's Timestamp. A nil Logger drops events. Give it the agent's
// logger (stderr or --log-file), never one writing to stdout.
type SlogSink struct {
	Logger *slog.Logger
}

// Emit logs e.
func (s SlogSink) Emit(e Event) {
	if s.Logger == nil {
		return
	}
	ctx := context.Background()
	h := s.Logger.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	r := slog.NewRecord(e.Timestamp, slog.LevelInfo, "telemetry", 0)
	r.AddAttrs(slog.String("name", e.Name))
	if e.SessionID != "" {
		r.AddAttrs(slog.String("sessionId", e.SessionID))
	}
	if e.RequestID != "" {
		r.AddAttrs(slog.String("requestId", e.RequestID))
	}
	if len(e.Attributes) > 0 {
		keys := make([]string, 0, len(e.Attributes))
		for k := range e.Attributes {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		group := make([]any, 0, len(keys))
		for _, k := range keys {
			group = append(group, slog.String(k, e.Attributes[k]))
		}
		r.AddAttrs(slog.Group("attrs", group...))
	}
	_ = h.Handle(ctx, r)
}
