// Package sse reads Server-Sent Events (text/event-stream) as model
// providers send them.
//
// A Reader splits a stream into events: it strips the "\r" of CRLF line
// endings, skips comment lines (":" keep-alives such as OpenRouter's
// ": OPENROUTER PROCESSING"), joins the values of several "data:" lines
// with "\n" and dispatches an event at each blank line. It reads with
// bufio.Reader rather than bufio.Scanner, so a single data line may be as
// long as the configured limit (16 MiB by default) instead of 64 KiB.
//
// The end of the input is clean (io.EOF) only between events. An event that
// was started but not terminated by its blank line, or a final line without
// its newline, is reported as an error wrapping io.ErrUnexpectedEOF: a
// provider stream cut off mid-event is truncated, not complete.
//
// Fields other than "event" and "data" ("id", "retry", unknown names) are
// ignored, and a lone "\r" is not treated as a line break: no model
// provider sends either.
//
// A Reader is not safe for concurrent use; one goroutine owns it.
package sse
