// Package telemetry sets up the agent's diagnostics: structured logs
// (log/slog) that go to stderr or a log file, never to stdout, which carries
// the protocol. A Logger is safe for concurrent use.
//
// It also records lifecycle events (see docs/telemetry.md): an [Event] has
// a name (session_new, prompt_started, prompt_failed, …), optional session
// and request ids, string attributes and a UTC timestamp. A [Recorder]
// stamps events and fans them out to [Sink]s: [SlogSink] (the log),
// [JSONLSink] (--telemetry-file, one JSON object per line) and [MemorySink]
// (tests). A nil *Recorder does nothing. Telemetry never reaches stdout.
package telemetry
