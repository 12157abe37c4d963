// Package replay is an offline model provider that plays a JSON script of
// model turns, so the agent runs without a network or a key and tests and
// benchmarks can script exactly what "the model" does.
//
// The script format is documented in docs/replay-script.md. In short: a
// script is a list of turns; each turn is a list of events (text,
// reasoning, tool calls, usage, delays, errors, a hang) and a finish
// reason. Default returns the embedded demo script, which answers any
// prompt with a streamed explanation of how to configure a real model.
//
// # Turn selection
//
// For each request, the first turn whose "match" is a substring of the
// last user message's text is played. Otherwise, and always when the
// request ends with a tool result, the next turn without "match" is played,
// in script order, cycling; the position in that sequence belongs to the
// Provider. A script whose turns all have "match" fails a request that
// matches none of them.
//
// # Stream contract
//
// Stream yields the turn's events in order and then exactly one
// llm.EventFinish. An "error" event ends the stream with a
// *llm.ProviderError instead. The context is checked before every event
// and during every delay or hang, so cancelling it ends the stream
// promptly with an error wrapping context.Cause(ctx).
//
// # Concurrency
//
// A Provider is immutable after loading except for its turn counter, which
// is atomic, so it is safe for concurrent use by multiple sessions. The
// order in which concurrent requests take unmatched turns is the order in
// which their iterations start.
package replay
