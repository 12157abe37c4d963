// Package acp implements the agent side of the Agent Client Protocol (ACP)
// v1 and v2: the v1 protocol types (v2's are package acpv2's), the method
// tables, JSON-RPC 2.0 over any message transport (Stream), the stdio
// transport (LineStream), and Server, which serves any number of client
// connections on behalf of one Agent (v1) and one AgentV2 (v2,
// Options.V2). AgentService is a Server with one stdio connection.
//
// # Versions
//
// A connection's first initialize chooses its protocol: with an AgentV2,
// a protocolVersion of 2 or more makes it v2 (answered 2); anything
// lower, or no AgentV2, keeps it v1, which answers 1 as it always has. A
// connection never changes version. Everything below that is not a
// version's own (the transport, the read loop, in-flight requests,
// outboxes, session limits, which connection a session is live on,
// shutdown) serves both; the v2 method table (MethodsV2), handlers and
// agent interfaces (AgentV2, SessionV2, ...) are in the _v2 files.
//
// v2's turn model: session/prompt is answered when the session has
// inserted the message (SessionV2.Prompt's inserted), and the work it
// starts is reported with state_update updates; a prompt held while
// another turn runs is withdrawn (-32800) by session/cancel,
// $/cancel_request or session/close. session/resume replays (when asked),
// sends the session's current state_update, then answers; session/close
// cancels the session's requests to the client before it answers.
//
// # Types
//
// Every ACP schema definition has a Go type of the same name. Discriminated
// unions (SessionUpdate, ContentBlock, ToolCallContent, McpServer, ...) are
// structs with one pointer per variant; they decode by their tag and keep
// unknown variants in Unknown, re-encoded verbatim. Every object keeps its
// _meta. Absent optionals are omitted, required arrays are never null, and
// empty results encode as {}.
//
// # Methods
//
// One table per version (methods.go, methods_v2.go) lists every method:
// the ones the agent serves,
// with their handler, the optional Agent interface that serves them and
// the capability that advertises them, and the ones the agent calls.
// Dispatch, the known-method check, the capabilities set in the
// initialize response (exactly when the agent serves the method; see
// MethodGate) and acptest's schema checks (Methods) all come from it, as
// do the extension names (ExtensionMethods). Adding a method is one row,
// its types with Validate, and its handler: docs/architecture.md shows it
// with logout.
//
// # Transport
//
// A Stream carries one connection's messages in some framing and does
// nothing else; everything else is the connection's, whatever the
// transport. LineStream is one JSON-RPC message per line: blank lines are
// skipped, and a line longer than the limit is skipped and reported. The
// connection answers a message that is not JSON with -32700 and id null,
// and valid JSON that is not one request or response (an array, a number,
// a wrong "jsonrpc", an id that is not a string or a non-negative
// integer, case-folded or duplicate envelope keys) or was skipped with
// -32600. The connection stays up in every case. Outgoing messages are
// kept valid UTF-8. Each outgoing Message names the session it belongs to
// (Message.SessionID), so a transport with one stream per session can
// route it without reading it.
//
// # Connections
//
// Each connection (Server.ServeConn, or one accepted by Server.Serve) has
// its own protocol version and client capabilities (from its initialize,
// handed to its sessions' ClientConns or ClientConnV2s), its own requests
// in flight, calls to the client and live sessions, and its own
// logged-out state. The Agent and what it
// shares (sessions table, store) serve all of them. Methods that name a
// session see only the sessions live on their connection; a session is
// live on one connection at a time, and session/load, session/resume,
// session/delete and session/archive of one live elsewhere close it there
// first.
//
// # Concurrency
//
// Each connection reads messages on one goroutine and handles each one
// there. Handling never blocks: it decodes and validates params,
// registers state and either starts one goroutine for the work, which
// replies itself, or, for session/prompt, queues the turn with
// Session.Prompt right there, so prompts queue in the order they arrived;
// the turn is answered from its completion callback. Because state is
// registered before the next message is read, a session/cancel always
// finds the turns it targets; session/cancel and $/cancel_request are
// handled inline.
//
// Each session has exactly one goroutine, its outbox, that writes its
// session/update notifications and prompt responses in the order they were
// queued. A prompt's response is queued by the session after the turn's
// last update, so it is written after every update of the turn and nothing
// of the turn follows it. Updates are bounded (a client that reads slowly
// slows the model stream, not the read loop); responses never wait.
// Updates queued together are handed to the Stream in one Write (one
// system call on a pipe). A plain text agent_message_chunk or
// agent_thought_chunk queued right behind one of the same kind and message
// (the same non-empty messageId) that the outbox has not taken yet is
// merged into it (the same text, in order, in fewer notifications), so a
// client that falls behind gets fewer and longer chunks; nothing waits for
// a merge, and merged chunks count against the bound as before.
//
// Requests to the client (ClientConn.Call, RequestPermission) may be made
// from inside a running prompt: their responses are read by the same
// never-blocking read loop. A cancelled call is followed by $/cancel_request.
//
// When a connection's input ends or its context is cancelled, every turn
// of that connection is cancelled and answers stopReason "cancelled" (v2:
// held prompts answer -32800, and each session's work is cancelled and
// the session closed, so that its last state_update is written), its
// outboxes flush, its sessions are closed, the stream is closed and
// ServeConn returns; every goroutine it started has finished by then. The
// end of input does not close the stream: the last responses are still
// written. Other connections go on.
//
// Errors become wire errors in one place, WireError: errors wrapping the
// sentinels (ErrInvalidParams, ErrResourceNotFound, ErrAuthRequired, ...)
// carry their code; anything else is -32603 with the error's text.
package acp
