package compact

import (
	"strings"
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/stretchr/testify/assert"
)

func TestMessageTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    llm.Message
		want int
	}{
		{"empty", llm.Message{Role: llm.RoleUser}, 0},
		{"text: bytes/4 rounded up", user("12345"), 2},
		{"text: exact", user("12345678"), 2},
		{"CJK counts bytes", user("你好世界"), 3}, // 12 bytes
		{"tool call: id and name as text, arguments as JSON", asst("", llm.ToolCall{ID: "c1", Name: "read", Arguments: `{"p":"a.go"}`}), 2 + 6},
		{"JSON tool result: /2", toolText(` {"a": [1, 2, 3]} `), 9}, // 18 bytes
		{"JSON array tool result", toolText(`[1,2,3,4]`), 5},
		{"prose tool result: /4", toolText(`{ not json at the end`), 6},
		{"JSON-looking user text is prose", user(`{"a":1}`), 2},
		{"tool call id and name of a result", llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "ls"}, 2},
		{"reasoning counts, signature does not", llm.Message{Role: llm.RoleAssistant, Reasoning: "12345678", ReasoningSignature: strings.Repeat("s", 400), RedactedReasoning: []string{strings.Repeat("r", 400)}}, 2},
		{"image", llm.Message{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, Data: strings.Repeat("A", 100_000)}, llm.TextPart("abcd")}}, ImageTokens + 1},
	} {
		assert.Equal(t, tc.want, MessageTokens(tc.m), tc.name)
	}
}

func toolText(s string) llm.Message {
	return llm.Message{Role: llm.RoleTool, Content: []llm.Part{llm.TextPart(s)}}
}

func TestEstimateTokensIsAdditive(t *testing.T) {
	msgs := history(10)
	sum := 0
	for _, m := range msgs {
		sum += MessageTokens(m)
	}
	assert.Equal(t, sum, EstimateTokens(msgs))
	assert.Equal(t, EstimateTokens(msgs[:7])+EstimateTokens(msgs[7:]), EstimateTokens(msgs))
	assert.Zero(t, EstimateTokens(nil))
}

func TestContextSize(t *testing.T) {
	since := []llm.Message{asst("12345678"), toolText("1234")} // 2 + 1
	assert.Equal(t, 1003, ContextSize(1000, since))
	assert.Equal(t, 3, ContextSize(-5, since))
	assert.Equal(t, 1000, ContextSize(1000, nil))
	assert.Equal(t, 1200, ReportedTokens(llm.Usage{InputTokens: 1200, CachedReadTokens: 1000, OutputTokens: 50}))
	assert.Equal(t, 0, ReportedTokens(llm.Usage{InputTokens: -1}))
}

func TestLooksLikeJSON(t *testing.T) {
	for s, want := range map[string]bool{
		`{}`: true, ` [ ] `: true, "\n{\"a\":1}\n": true, `{`: false, `}`: false, `[}`: false,
		``: false, `   `: false, `text`: false, `{"a":1} and more`: false, `"s"`: false,
	} {
		assert.Equal(t, want, looksLikeJSON(s), "%q", s)
	}
}
