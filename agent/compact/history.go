package compact

import "github.com/acp-agent/acp-agent/agent/llm"

// pairSafeCut moves a cut index earlier until msgs[cut:] does not begin
// with tool results, so that an assistant's tool calls and their results
// stay on the same side: providers reject results whose call is missing.
// The returned index is in [0, cut].
func pairSafeCut(msgs []llm.Message, cut int) int {
	for cut > 0 && cut < len(msgs) && msgs[cut].Role == llm.RoleTool {
		cut--
	}
	return cut
}

// leadingSystem returns how many RoleSystem messages start msgs. They hold
// instructions, not conversation, so trimming keeps them in place.
func leadingSystem(msgs []llm.Message) int {
	n := 0
	for n < len(msgs) && msgs[n].Role == llm.RoleSystem {
		n++
	}
	return n
}

// Lite keeps the newest keep messages of msgs (and any RoleSystem messages
// that start it) and drops the rest, without separating tool calls from
// their results: when the cut would fall between an assistant message and
// its results, it moves earlier to keep the assistant message, so more
// than keep messages may remain. keep <= 0, or a history of at most keep
// messages, returns msgs unchanged. Otherwise the result is a new slice;
// msgs is not modified.
func Lite(msgs []llm.Message, keep int) []llm.Message {
	sys := leadingSystem(msgs)
	body := msgs[sys:]
	if keep <= 0 || len(body) <= keep {
		return msgs
	}
	cut := pairSafeCut(body, len(body)-keep)
	if cut == 0 {
		return msgs
	}
	out := make([]llm.Message, 0, sys+len(body)-cut)
	out = append(out, msgs[:sys]...)
	return append(out, body[cut:]...)
}

// LiteChars keeps the newest messages of msgs whose [TextLength] adds up
// to at most maxChars (always at least the newest message), plus any
// RoleSystem messages that start msgs, moving the cut earlier as Lite
// does so that tool calls keep their results. maxChars <= 0 returns msgs
// unchanged; so does a history that already fits. msgs is not modified.
func LiteChars(msgs []llm.Message, maxChars int) []llm.Message {
	sys := leadingSystem(msgs)
	body := msgs[sys:]
	if maxChars <= 0 || len(body) == 0 {
		return msgs
	}
	total, cut := 0, len(body)
	for cut > 0 {
		n := messageTextLength(&body[cut-1])
		if cut < len(body) && total+n > maxChars {
			break
		}
		total += n
		cut--
	}
	cut = pairSafeCut(body, cut)
	if cut == 0 {
		return msgs
	}
	out := make([]llm.Message, 0, sys+len(body)-cut)
	out = append(out, msgs[:sys]...)
	return append(out, body[cut:]...)
}
