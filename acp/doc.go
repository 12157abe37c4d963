// Package acp implements the agent side of the Agent Client Protocol (ACP)
// v1: the protocol types, a newline-delimited JSON-RPC 2.0 transport on
// github.com/sourcegraph/jsonrpc2, and AgentService, which serves one client
// connection on behalf of an Agent.
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
// # Transport
//
// One JSON-RPC message per line. A line that is not JSON is answered with
// -32700 and id null; valid JSON that is not one request or response (an
// array, a number, a wrong "jsonrpc", an id that is not a string or a
// non-negative integer, case-folded or duplicate envelope keys), and a line
// longer than Options.MaxMessageBytes, are answered with -32600. The
// connection stays up in every case. Blank lines are skipped.
//
// # Concurrency
//
// jsonrpc2 reads messages on one goroutine and calls AgentService.Handle
// for each. Handle never blocks: it decodes and validates params, registers
// state and either starts one goroutine for the work, which replies itself,
// or, for session/prompt, queues the turn with Session.Prompt right there,
// so prompts queue in the order they arrived; the turn is answered from its
// completion callback. Because state is registered before the next message
// is read, a session/cancel always finds the turns it targets;
// session/cancel and $/cancel_request are handled inline.
//
// Each session has exactly one goroutine, its outbox, that writes its
// session/update notifications and prompt responses in the order they were
// queued. A prompt's response is queued by the session after the turn's
// last update, so it is written after every update of the turn and nothing
// of the turn follows it. Updates are bounded (a client that reads slowly
// slows the model stream, not the read loop); responses never wait.
// Updates queued together are written with one system call.
//
// Requests to the client (ClientConn.Call, RequestPermission) may be made
// from inside a running prompt: their responses are read by the same
// never-blocking read loop. A cancelled call is followed by $/cancel_request.
//
// On end of input or cancellation of Serve's context, every turn is
// cancelled and answers stopReason "cancelled", the outboxes flush, the
// sessions are closed and Serve returns; every goroutine the service
// started has finished by then.
//
// Errors become wire errors in one place, WireError: errors wrapping the
// sentinels (ErrInvalidParams, ErrResourceNotFound, ErrAuthRequired, ...)
// carry their code; anything else is -32603 with the error's text.
package acp
