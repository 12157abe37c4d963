package telemetry

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// ParseLevel parses a --log-level value: debug, info, warn, error or off.
func ParseLevel(s string) (slog.Level, bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, true, nil
	case "", "info":
		return slog.LevelInfo, true, nil
	case "warn", "warning":
		return slog.LevelWarn, true, nil
	case "error":
		return slog.LevelError, true, nil
	case "off", "none":
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("unknown log level %q (use debug, info, warn, error or off)", s)
}

// NewLogger returns a text logger writing to w at level; with enabled false
// it discards everything.
func NewLogger(w io.Writer, level slog.Level, enabled bool) *slog.Logger {
	if !enabled {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// OpenLogFile opens path for appending log lines (created 0600: logs can
// name files and prompts).
func OpenLogFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening log file: %w", err)
	}
	return f, nil
}
