// Package acphttp serves ACP over HTTP: the Streamable HTTP and WebSocket
// transport of ACP's RFD "Streamable HTTP & WebSocket transport", as the
// official TypeScript SDK (@agentclientprotocol/sdk 2.4.0) implements it,
// with the resumption of the follow-up RFD "durable resumable HTTP
// transport" (docs/remote.md says where the RFD and the SDK differ and
// which one this follows).
//
// A Handler is an http.Handler for the endpoint (/acp) and an
// acp.Listener: each connection it opens is an acp.Stream that an
// acp.Server serves (Server.Serve(ctx, handler)). The Stream does the
// framing and routing only; the acp.Server checks every message.
//
//   - POST initialize (no Acp-Connection-Id) opens a connection and
//     answers 200 with the JSON response and the Acp-Connection-Id header;
//     every other POST answers 202 once the message is queued for the
//     server, and its answer travels on an event stream.
//   - GET (Accept: text/event-stream) opens an event stream: the
//     connection's (Acp-Connection-Id) carries connection-level answers
//     (session/new, session/load, ...), a session's (plus Acp-Session-Id)
//     that session's updates, its requests to the client and its prompt
//     answers. Each event's SSE id is its cursor; Last-Event-ID resumes a
//     stream within its retention window (advertised in initialize as
//     agentCapabilities._meta.transport.resumable), else 409.
//   - GET with Upgrade: websocket makes the connection one WebSocket, one
//     JSON-RPC message per text frame.
//   - DELETE ends the connection.
//
// Security: every request carries the bearer token (compared in constant
// time, refused in the URL); requests with an Origin header not allowed
// are refused (a browser page cannot reach the agent, WebSocket or not).
// Limits, each refused with a clear status: connections, open event
// streams, session streams per connection, message size (413; on a
// WebSocket the message is skipped and answered -32600).
//
// Backpressure: an event stream holds at most MaxBufferedBytes its client
// has not taken; a writer (the session's outbox) waits for room, which
// slows the model stream, not the other sessions. A client that takes
// nothing for StallTimeout while output waits has the stream dropped:
// what was pending is discarded, the session's writes fail, its requests
// are answered 409 until it is re-attached with session/load or
// session/resume. A dropped connection stream, or a WebSocket whose
// client stops reading, ends the connection. HTTP connections with no
// request and no open event stream for IdleTimeout are ended.
//
// Concurrency: the acp.Server's goroutines call a connection's Read (one
// at a time) and Write (concurrently); HTTP handler goroutines feed Read
// (POST) and drain event streams (GET); each stream has its own lock, and
// a connection's lock is taken before a stream's, never after. The
// Handler owns one goroutine, the reaper, which Close ends and waits for;
// a WebSocket connection owns one pinger, which its Close waits for.
//
// Client is a Go client of both profiles (used by the tests and the load
// benchmark of acp-agent serve). Over Streamable HTTP its event streams
// (long-lived GETs, each holding an HTTP/1.1 connection) use a clone of
// the caller's *http.Transport that the Client owns and closes, so that a
// stream never takes the connection a POST left idle: requests reuse
// warm connections instead of dialing.
package acphttp
