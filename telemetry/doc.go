// Package telemetry sets up the agent's diagnostics: structured logs
// (log/slog) that go to stderr or a log file, never to stdout, which carries
// the protocol. A Logger is safe for concurrent use.
package telemetry
