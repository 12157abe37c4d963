// Package agent runs conversations with a model: Session is the session
// core that Go programs and protocol adapters drive. It knows no protocol:
// a session reports what it does as agent.Update values (one stream: the
// UpdateSink gets every update, and the Go output stream of Subscribe is
// derived from the same ones), asks for permission with a
// PermissionRequest, and stores itself through a Journal. Package
// agent/host builds the product on it (stored sessions, subagents, MCP
// servers, commands), and agent/acpagent maps that onto the Agent Client
// Protocol.
//
// # Sessions
//
// A Session keeps a transcript of immutable entries (user and assistant
// messages, tool calls, tool outputs) and runs turns: the model is called,
// the tool calls it makes are run through the session's ToolRegistry, and
// their results go back to the model until it stops. Prompt runs one turn
// and returns the assistant's final text. A Go program's own tool is
// NewTool of a TypedTool: its argument schema is inferred from a struct.
//
// Messages that arrive while a turn runs are queued (Prompt with Steer or
// FollowUp, or fire-and-forget Steer, FollowUp and Send). A steer message
// joins the running turn at its next model-call boundary: the tool calls of
// the current model response that have not run yet get the result
// SkippedForSteerResult, and the steer text goes to the model. Follow-ups
// run after the turn, in FIFO order. PendingMessages shows the queue and
// the newest 20 resolved or failed messages; CancelActivePrompt cancels the
// turn and fails what is queued.
//
// RunExclusive runs a function on the worker, alone (a rewind): it is
// refused at once while a model turn runs or waits, waits behind other
// such calls and commands, and prompts that come after it wait for it;
// a cancel does not fail it (it is no prompt), and ReplaceTranscript
// from it always succeeds.
//
// Fork copies a session (all of it, or the entries before a user message)
// without copying entry payloads; the fork has its own id, its own copy of
// the tool registry and no pending state. Stats is O(1).
//
// # Concurrency
//
// Every Session method is safe for concurrent use. A session runs its
// turns on one worker goroutine that it starts when work is queued and
// that ends when the queue is empty, so an idle session holds no goroutine;
// Close and Delete wait for it. Updates for the client are handed to the
// session's UpdateSink by that goroutine, in order, and a prompt's
// completion callback (PromptOptions.OnComplete) is called by it after the
// turn's last update and before any update of a later turn. Subscribers
// (Subscribe) get the output stream through their own buffers; the session
// never waits for a subscriber, and one that falls behind is dropped. A
// session's first message is saved (a Journal with SaveWith: the file made
// with the message in it) on a goroutine the worker starts beside the
// model call that answers it and waits for before it handles anything of
// the answer (the stream is not read meanwhile): nothing of it is shown,
// run or recorded before the message is durable, and a save that fails
// cancels the call and fails the turn, recording nothing. That goroutine
// puts the message in the transcript as soon as it is saved (under the
// session's locks), so a fork or a listing taken while the model is slow
// to answer holds it; the request the worker builds holds it once,
// whether it was in the transcript by then or not.
//
// Models are providers registered with package llm (llm.RegisterProvider;
// importing agent/llm/providers registers the built-in openai, anthropic
// and replay), chosen with a "PROVIDER/MODEL" spec (OpenModel). What the
// session needs to know of a provider (image input, how its usage is
// priced) it asks the registration; it imports no provider. A turn's
// model request is aborted with its context.
//
// # What the model is told and given back
//
// The system prompt (prompt.go) is built at a session's first model
// request and kept until the history is rewritten (compaction, /clear,
// rewind) or the model changes, so providers' prompt caches hold; a change
// of mode or of the workspace's skills reaches the model as a reminder
// before the next user message (Entry.Reminder), a nested rules file in the
// result of the tool that reached it (ToolResult.Context). A tool result
// is cut for the model to MaxToolResultBytes and MaxToolResultLines, the
// whole kept in the offload directory, its path given (results.go). A turn
// that reaches MaxTurnRequests ends with one more, tool-free request for a
// summary; the same call failing LoopGuardWarnAt times gets a note, and
// LoopGuardStopAt times ends the turn; a provider's "context too long"
// compacts and retries once; a call cut off by the output-token limit is
// answered with why it did not run (loop.go). docs/agent.md has the
// reasons and the peers' choices.
package agent
