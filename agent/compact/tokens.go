package compact

import "github.com/acp-agent/acp-agent/agent/llm"

const (
	// TextBytesPerToken is the estimate's bytes of text per token. Peers
	// (pi, codex, Claude Code) use 4.
	TextBytesPerToken = 4
	// JSONBytesPerToken is the estimate's bytes of JSON per token: JSON is
	// dense in punctuation, which tokenizers split finely (measured about
	// 3 here; Claude Code uses 2, which errs high).
	JSONBytesPerToken = 2
	// ImageTokens is the estimate for one image part. Providers charge
	// 1,000-2,000 tokens for a typical screenshot; the high end is used so
	// that the context is never underestimated.
	ImageTokens = 2000
)

// EstimateTokens returns the estimated token count of msgs: the sum of
// [MessageTokens]. It never fails and allocates nothing.
func EstimateTokens(msgs []llm.Message) int {
	n := 0
	for i := range msgs {
		n += MessageTokens(msgs[i])
	}
	return n
}

// MessageTokens returns the estimated token count of one message:
//
//	ceil(text/4) + ceil(json/2) + 2000·images
//
// where text is the byte length of the text parts, the reasoning text and
// the ids and names of tool calls, and json is the byte length of the
// tool-call arguments plus, for a RoleTool message, text parts that look
// like a JSON object or array (structured content). The opaque reasoning
// signature and redacted reasoning are not counted: providers do not bill
// them as prompt text.
func MessageTokens(m llm.Message) int {
	text := len(m.Reasoning) + len(m.ToolCallID) + len(m.ToolName)
	js := 0
	images := 0
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartImage:
			images++
		default:
			if m.Role == llm.RoleTool && looksLikeJSON(p.Text) {
				js += len(p.Text)
			} else {
				text += len(p.Text)
			}
		}
	}
	for _, tc := range m.ToolCalls {
		text += len(tc.ID) + len(tc.Name)
		js += len(tc.Arguments)
	}
	return ceilDiv(text, TextBytesPerToken) + ceilDiv(js, JSONBytesPerToken) + images*ImageTokens
}

// ContextSize returns the estimated size of the next prompt: lastReported,
// the prompt size the provider reported for the last model call, plus the
// estimate of the messages appended to the history since that call.
//
// Pass [ReportedTokens] of the last call's usage as lastReported and the
// messages after its prompt (its own answer included) as since. With no
// report yet (a new or resumed session), pass 0 and the whole history.
// A negative lastReported counts as 0.
func ContextSize(lastReported int, since []llm.Message) int {
	return max(lastReported, 0) + EstimateTokens(since)
}

// ReportedTokens returns the prompt size a provider reported in u:
// InputTokens, which in this repository's providers already includes
// cached reads and writes (see pricing.Dialect). Negative values count as
// 0.
func ReportedTokens(u llm.Usage) int {
	return int(max(u.InputTokens, 0))
}

func ceilDiv(n, d int) int { return (n + d - 1) / d }

// looksLikeJSON reports whether s, trimmed of ASCII space, starts with '{'
// or '[' and ends with the matching bracket. It does not validate: the
// estimate runs over whole histories on every step and only needs to tell
// structured output from prose.
func looksLikeJSON(s string) bool {
	i, j := 0, len(s)-1
	for i <= j && isSpace(s[i]) {
		i++
	}
	for j >= i && isSpace(s[j]) {
		j--
	}
	if i >= j {
		return false
	}
	return (s[i] == '{' && s[j] == '}') || (s[i] == '[' && s[j] == ']')
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
