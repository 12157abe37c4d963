package compact

import (
	"encoding/json"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Sanitize returns msgs with its tool protocol repaired, so that it can be
// replayed to any provider, and whether anything was removed. It makes one
// pass from the start, by the rules of Synapse's
// sanitizeToolProtocolHistory:
//
//  1. An assistant message with tool calls, any of whose Arguments is not
//     a JSON object (empty, invalid, an array, a string, a number, null),
//     is removed together with every RoleTool message directly after it.
//  2. Otherwise the RoleTool messages directly after it are matched to its
//     calls, in any order, until every call has a result. Each must answer
//     a call of this message that has not been answered yet. The assistant
//     message and its results are kept only if every call was answered
//     without a stray result; if not (a turn killed mid-tool leaves calls
//     without results), the assistant message and every RoleTool message
//     directly after it are removed.
//  3. Any other RoleTool message (one that answers no call) is removed.
//  4. Every other message is kept as it is.
//
// One deviation: an assistant message that gives two calls the same id is
// treated as in rule 2's failure case (Synapse's id set would pair one
// result with both calls; providers reject duplicate ids).
//
// Removing a whole assistant message loses its text too; that is the
// price of never replaying half a protocol exchange. msgs is not modified.
// When nothing changed, out is msgs itself; otherwise a new slice holding
// the same messages (their Content and ToolCalls are shared, not copied).
func Sanitize(msgs []llm.Message) (out []llm.Message, changed bool) {
	// The common case is a clean history: find the first problem before
	// allocating anything.
	i := 0
	for i < len(msgs) {
		n, ok := step(msgs, i)
		if !ok {
			break
		}
		i += n
	}
	if i == len(msgs) {
		return msgs, false
	}
	out = make([]llm.Message, i, len(msgs))
	copy(out, msgs[:i])
	for i < len(msgs) {
		n, ok := step(msgs, i)
		if ok {
			out = append(out, msgs[i:i+n]...)
		}
		i += n
	}
	return out, true
}

// step examines the message at i and returns how many messages it spans
// (an assistant message with its results, or the messages a removal
// consumes) and whether they are kept.
func step(msgs []llm.Message, i int) (n int, keep bool) {
	m := &msgs[i]
	switch {
	case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
		if !argumentsValid(m.ToolCalls) || duplicateIDs(m.ToolCalls) {
			return 1 + toolRun(msgs, i+1), false
		}
		// answered[k] tells whether call k has a result; calls are few,
		// so a linear search beats a map and allocates nothing for up to
		// 16 calls.
		var small [16]bool
		var answered []bool
		if len(m.ToolCalls) <= len(small) {
			answered = small[:len(m.ToolCalls)]
		} else {
			answered = make([]bool, len(m.ToolCalls))
		}
		matched := 0
		j := i + 1
		for j < len(msgs) && msgs[j].Role == llm.RoleTool && matched < len(m.ToolCalls) {
			k := callIndex(m.ToolCalls, msgs[j].ToolCallID)
			if k < 0 || answered[k] {
				break // a stray result: the sequence is invalid
			}
			answered[k] = true
			matched++
			j++
		}
		if matched == len(m.ToolCalls) {
			return j - i, true
		}
		return 1 + toolRun(msgs, i+1), false
	case m.Role == llm.RoleTool:
		return 1, false
	}
	return 1, true
}

// toolRun returns how many RoleTool messages start at msgs[i].
func toolRun(msgs []llm.Message, i int) int {
	n := 0
	for i+n < len(msgs) && msgs[i+n].Role == llm.RoleTool {
		n++
	}
	return n
}

func callIndex(calls []llm.ToolCall, id string) int {
	if id == "" {
		return -1
	}
	for k := range calls {
		if calls[k].ID == id {
			return k
		}
	}
	return -1
}

func duplicateIDs(calls []llm.ToolCall) bool {
	for a := 1; a < len(calls); a++ {
		for b := 0; b < a; b++ {
			if calls[a].ID == calls[b].ID {
				return true
			}
		}
	}
	return false
}

// argumentsValid reports whether every call's Arguments is a JSON object.
func argumentsValid(calls []llm.ToolCall) bool {
	for _, c := range calls {
		if !isJSONObject(c.Arguments) {
			return false
		}
	}
	return true
}

// isJSONObject reports whether s, trimmed of JSON white space, is one JSON
// object. json.Valid rejects trailing data, and a valid text starting with
// '{' can only be an object.
func isJSONObject(s string) bool {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i < len(s) && s[i] == '{' && json.Valid([]byte(s[i:]))
}
