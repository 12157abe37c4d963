package compact

import (
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Seed 003, 工具协议历史清洗: 恢复会话时清除悬空 assistant toolCalls; 后续请求可正常完成.
func TestSeed003_SanitizeRemovesDanglingToolCallsOnResume(t *testing.T) {
	// A resumed session whose last turn was killed while its second tool
	// was running: c2 has no result.
	history := []llm.Message{
		user("fix the bug"),
		asst("looking", call("c1"), call("c2")),
		result("c1", "package a"),
	}
	require.Error(t, protocolError(history))
	before := snapshot(history)

	out, changed := Sanitize(history)
	assert.True(t, changed)
	assert.Equal(t, "u", shape(out))
	assert.Equal(t, before, history, "input untouched")

	// The next request can be made: the history with the new prompt, and
	// a complete tool exchange after it, is valid.
	next := append(out, user("go on"), asst("", call("c3")), result("c3", "ok"), asst("done"))
	require.NoError(t, protocolError(next))
	again, changed := Sanitize(next)
	assert.False(t, changed, "a valid history is left alone")
	assert.Equal(t, shape(next), shape(again))
}

// Seed 003, 工具协议历史清洗: tool arguments 非法 JSON 时整段工具序列被清理.
func TestSeed003_SanitizeDropsSequenceWithInvalidArguments(t *testing.T) {
	for _, args := range []string{``, `   `, `{"path":`, `[1,2]`, `"a"`, `42`, `null`, `true`, `{} {}`, `{"a":1}x`} {
		history := []llm.Message{
			user("q"),
			asst("", call("ok1"), callArgs("bad", args)),
			result("ok1", "r1"),
			result("bad", "error: the arguments are not valid JSON"),
			asst("answer"),
		}
		out, changed := Sanitize(history)
		assert.True(t, changed, "args %q", args)
		assert.Equal(t, "u a", shape(out), "args %q: the whole assistant/tool sequence goes", args)
		assert.NoError(t, protocolError(out))
	}
	// Valid objects, with white space around them, stay.
	for _, args := range []string{`{}`, ` {"a":[1,{"b":null}]} `, "\n{\"x\":\"}\"}\t"} {
		history := []llm.Message{user("q"), asst("", callArgs("c", args)), result("c", "r")}
		_, changed := Sanitize(history)
		assert.False(t, changed, "args %q", args)
	}
}

// Seed 003, 工具协议历史清洗: 孤立 tool 消息应被删除.
func TestSeed003_SanitizeDropsOrphanToolMessage(t *testing.T) {
	history := []llm.Message{
		result("x", "orphan at the start"),
		user("q"),
		result("y", "orphan after a user message"),
		asst("", call("c1")),
		result("c1", "r"),
		result("c1", "a second result for an answered call"),
		asst("text only"),
		result("z", "orphan after a plain assistant message"),
	}
	out, changed := Sanitize(history)
	assert.True(t, changed)
	assert.Equal(t, "u a(c1) t(c1) a", shape(out))
	assert.NoError(t, protocolError(out))
}

func TestSanitizeTable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []llm.Message
		want    string
		changed bool
	}{
		{"empty", nil, "", false},
		{"plain conversation", []llm.Message{sys("s"), user("q"), asst("a")}, "s u a", false},
		{"complete exchange", []llm.Message{user("q"), asst("", call("c1"), call("c2")), result("c1", ""), result("c2", ""), asst("a")}, "u a(c1,c2) t(c1) t(c2) a", false},
		{"results out of order", []llm.Message{user("q"), asst("", call("c1"), call("c2")), result("c2", ""), result("c1", "")}, "u a(c1,c2) t(c2) t(c1)", false},
		{"two exchanges in a row", []llm.Message{user("q"), asst("", call("c1")), result("c1", ""), asst("", call("c2")), result("c2", "")}, "u a(c1) t(c1) a(c2) t(c2)", false},
		{"killed mid-tool: no results at all, at the end", []llm.Message{user("q"), asst("", call("c1"))}, "u", true},
		{"killed mid-tool: partial results, at the end", []llm.Message{user("q"), asst("", call("c1"), call("c2"), call("c3")), result("c1", ""), result("c2", "")}, "u", true},
		{"killed mid-tool, then the session went on", []llm.Message{user("q"), asst("", call("c1"), call("c2")), result("c1", ""), user("again"), asst("", call("c3")), result("c3", ""), asst("a")}, "u u a(c3) t(c3) a", true},
		{"result for another call interleaved", []llm.Message{user("q"), asst("", call("c1"), call("c2")), result("c1", ""), result("zz", ""), result("c2", "")}, "u", true},
		{"duplicate result before the others", []llm.Message{user("q"), asst("", call("c1"), call("c2")), result("c1", ""), result("c1", ""), result("c2", "")}, "u", true},
		{"empty result id", []llm.Message{user("q"), asst("", call("c1")), result("", "")}, "u", true},
		{"empty call id", []llm.Message{user("q"), asst("", call("")), result("", "")}, "u", true},
		{"duplicate call ids", []llm.Message{user("q"), asst("", call("c1"), call("c1")), result("c1", ""), result("c1", "")}, "u", true},
		{"extra result after a complete exchange is an orphan", []llm.Message{user("q"), asst("", call("c1")), result("c1", ""), result("c9", ""), asst("a")}, "u a(c1) t(c1) a", true},
		{"invalid args drop only the following tool run", []llm.Message{user("q"), asst("", callArgs("c1", "nope")), result("c1", ""), user("q2"), asst("", call("c2")), result("c2", "")}, "u u a(c2) t(c2)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(tc.in)
			out, changed := Sanitize(tc.in)
			assert.Equal(t, tc.changed, changed)
			assert.Equal(t, tc.want, shape(out))
			assert.NoError(t, protocolError(out))
			assert.Equal(t, before, snapshot(tc.in), "input untouched")
			if !changed {
				assert.Equal(t, len(tc.in), len(out))
			}
			again, changed := Sanitize(out)
			assert.False(t, changed, "idempotent")
			assert.Equal(t, shape(out), shape(again))
		})
	}
}

func TestSanitizeManyCalls(t *testing.T) {
	// More calls than the stack buffer holds.
	var calls []llm.ToolCall
	var results []llm.Message
	for i := 0; i < 40; i++ {
		id := "c" + string(rune('A'+i))
		calls = append(calls, call(id))
		results = append(results, result(id, ""))
	}
	history := append([]llm.Message{user("q"), asst("", calls...)}, results...)
	_, changed := Sanitize(history)
	assert.False(t, changed)
	_, changed = Sanitize(history[:len(history)-1])
	assert.True(t, changed)
}

func TestSanitizeKeepsMessagesAsTheyAre(t *testing.T) {
	a := asst("thinking aloud", call("c1"))
	a.Reasoning, a.ReasoningSignature, a.RedactedReasoning = "r", "sig", []string{"x"}
	r := result("c1", "out")
	r.IsError = true
	history := []llm.Message{result("o", ""), user("q"), a, r}
	out, changed := Sanitize(history)
	require.True(t, changed)
	assert.Equal(t, []llm.Message{history[1], a, r}, out)
}
