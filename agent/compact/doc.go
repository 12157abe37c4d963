// Package compact keeps a session's model history inside the context
// window. It works on []llm.Message only and knows nothing of sessions,
// files other than its own, or providers; the agent calls it between
// steps. It has five parts.
//
// # Token accounting
//
// There is no tokenizer: providers tokenize differently, so exact counts
// are impossible anyway. [EstimateTokens] charges one token per 4 bytes of
// text (message text, reasoning, ids, tool names), one per 2 bytes of JSON
// (tool-call arguments, and tool results whose text is a JSON object or
// array) and [ImageTokens] per image. Bytes rather than characters are
// counted on purpose: for ASCII they are the same, and for CJK text, which
// real tokenizers split into about one token per character, bytes/4 is
// much closer than characters/4; erring high only makes offload and
// compaction start a little early. The estimate is additive: the estimate
// of a history is the sum of its messages' estimates ([MessageTokens]).
//
// [ContextSize] is what the agent should compare with thresholds: the
// prompt size the provider reported for the last model call plus the
// estimate of the messages appended since.
//
// # Offload
//
// [Offloader.OffloadIfNeeded] (Synapse's ContextManager.offloadIfNeeded)
// does nothing below its threshold. At or above it, every tool result in
// the first ScanRatio of the history whose text is longer than MinChars
// characters is written to a file in Dir and replaced by the single text
// part "Tool result is at: <absolute path>"; results already in that form
// are left alone, so running it twice changes nothing. File names are
// derived from the tool call id and the content, so the same result always
// lands in the same file. [Offloader.Restore] puts the contents back (the
// compactor summarizes real output, not paths) and [Offloader.Cleanup]
// deletes files the history no longer references.
//
// # Compaction
//
// [Compactor.ShouldCompact] is Synapse's rule: compact when offload left
// the context at or above the threshold, freed fewer than TriggerThreshold
// tokens, and at least CooldownSteps steps have passed since the last
// attempt, successful or not. The step counter lives in [State], a small
// value the caller keeps (and may persist) per session.
// [Compactor.Compact] summarizes everything but the last KeepLast messages
// through the caller's Summarize function and returns
//
//	[user "[Compressed History]\n\n" + summary, kept messages...]
//
// never separating an assistant's tool calls from their results. On error
// the caller keeps its original history: Compact never modifies its input.
// [Compactor.CompactIfNeeded] combines the two and takes the forced flag
// of the /compact command.
//
// # Sanitizer
//
// [Sanitize] repairs the tool protocol of a history before it is replayed
// to a model: assistant tool calls without all their results (a turn
// killed mid-tool), calls with arguments that are not a JSON object, and
// tool results that answer no call are removed, by the exact rules of
// Synapse's sanitizeToolProtocolHistory (see Sanitize).
//
// # Resize policy
//
// [ResizePolicy] is Agently's default session policy (seed 004): a "deep"
// resize when the history text reaches MaxMessagesTextLength, a "lite"
// one when there are more than MaxKeepMessagesCount messages or
// EveryNTurns turns have passed, in that order of precedence. A
// [Resizer] runs the decision and its handler; the policy ([DecideFunc])
// and both handlers ([LiteFunc], [DeepFunc]) can be replaced.
//
// # Concurrency
//
// Every function here is safe for concurrent use on distinct inputs; none
// modifies the slices or messages it is given. [Offloader], [Compactor],
// [ResizePolicy] and [Resizer] are configuration values: do not change
// their fields while a call is running. An Offloader's Dir belongs to one
// session, and that session must not run OffloadIfNeeded and Cleanup on it
// at the same time (Cleanup could delete a file OffloadIfNeeded has just
// written but not yet returned a reference to); the agent already runs one
// step of a session at a time. [State] is a plain value and not safe for
// concurrent use; it belongs to its session. Summarize is called from the
// goroutine that called Compact, and Compact returns only after its last
// call has returned, so no goroutine outlives a call.
package compact
