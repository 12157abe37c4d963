package compact

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Seed 004 §2 (Agently tests/test_cores/test_session.py): the default
// policy's decisions.
func TestSeed004_ResizeDecisions(t *testing.T) {
	chat := []llm.Message{user(strings.Repeat("a", 30)), asst(strings.Repeat("b", 30)), user("c"), asst("d")}
	// TextLength: (4+1+30) + (9+1+30) + (4+1+1) + (9+1+1) = 92.
	require.Equal(t, 92, TextLength(chat))
	for _, tc := range []struct {
		name   string
		policy ResizePolicy
		turns  int
		want   Decision
	}{
		{"max_messages_text_length small and exceeded → deep",
			ResizePolicy{MaxMessagesTextLength: 10}, 0,
			Decision{Kind: KindDeep, Reason: "max_messages_text_length", Severity: 100}},
		{"text length reached exactly → deep",
			ResizePolicy{MaxMessagesTextLength: 92}, 0,
			Decision{Kind: KindDeep, Reason: "max_messages_text_length", Severity: 100}},
		{"text length not reached → none",
			ResizePolicy{MaxMessagesTextLength: 93}, 0,
			Decision{}},
		{"max_keep_messages_count small and exceeded → lite",
			ResizePolicy{MaxKeepMessagesCount: 2}, 0,
			Decision{Kind: KindLite, Reason: "max_keep_messages_count", Severity: 50}},
		{"count equal to the limit → none",
			ResizePolicy{MaxKeepMessagesCount: 4}, 0,
			Decision{}},
		{"every_n_turns=1 after one turn → lite",
			ResizePolicy{EveryNTurns: 1}, 1,
			Decision{Kind: KindLite, Reason: "every_n_turns", Severity: 10}},
		{"every_n_turns not yet due → none",
			ResizePolicy{EveryNTurns: 3}, 2,
			Decision{}},
		{"all disabled (zero) → none",
			ResizePolicy{}, 100,
			Decision{}},
		{"all disabled (negative) → none",
			ResizePolicy{MaxMessagesTextLength: -1, MaxKeepMessagesCount: -1, EveryNTurns: -1}, 100,
			Decision{}},
		{"precedence: text length over count and turns",
			ResizePolicy{MaxMessagesTextLength: 10, MaxKeepMessagesCount: 2, EveryNTurns: 1}, 5,
			Decision{Kind: KindDeep, Reason: "max_messages_text_length", Severity: 100}},
		{"precedence: count over turns",
			ResizePolicy{MaxMessagesTextLength: 1000, MaxKeepMessagesCount: 2, EveryNTurns: 1}, 5,
			Decision{Kind: KindLite, Reason: "max_keep_messages_count", Severity: 50}},
		{"Agently defaults: short chat, 8 turns → lite",
			DefaultResizePolicy(), 8,
			Decision{Kind: KindLite, Reason: "every_n_turns", Severity: 10}},
		{"Agently defaults: short chat, 7 turns → none",
			DefaultResizePolicy(), 7,
			Decision{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.policy.Decide(chat, tc.turns))
			r := &Resizer{Policy: tc.policy}
			assert.Equal(t, tc.want, r.Judge(chat, tc.turns), "the Resizer's default policy is Decide")
		})
	}
	assert.Equal(t, Decision{}, DefaultResizePolicy().Decide(nil, 0))
	assert.Equal(t, KindNone, Decision{}.Kind)
}

// Seed 004 §2: the policy and the resize handlers can be overridden, and
// the overrides are what run.
func TestSeed004_PolicyAndHandlersOverridable(t *testing.T) {
	chat := history(4)
	var calls []string
	r := &Resizer{
		Policy: ResizePolicy{EveryNTurns: 1}, // would say lite; the override wins
		Decide: func(msgs []llm.Message, turns int) Decision {
			calls = append(calls, "decide")
			if turns > 5 {
				return Decision{Kind: KindDeep, Reason: "custom"}
			}
			return Decision{Kind: KindLite, Reason: "custom"}
		},
		Lite: func(_ context.Context, msgs []llm.Message) ([]llm.Message, error) {
			calls = append(calls, "lite")
			return msgs[len(msgs)-1:], nil
		},
		Deep: func(ctx context.Context, msgs []llm.Message) ([]llm.Message, error) {
			calls = append(calls, "deep")
			return []llm.Message{user("summary")}, nil
		},
	}
	out, d, err := r.Resize(context.Background(), chat, 1)
	require.NoError(t, err)
	assert.Equal(t, Decision{Kind: KindLite, Reason: "custom"}, d)
	assert.Equal(t, "t(c3)", shape(out))
	out, d, err = r.Resize(context.Background(), chat, 6)
	require.NoError(t, err)
	assert.Equal(t, KindDeep, d.Kind)
	assert.Equal(t, "u", shape(out))
	assert.Equal(t, []string{"decide", "lite", "decide", "deep"}, calls)

	// A policy function can be any func of the right shape, such as a
	// method value.
	r = &Resizer{Decide: ResizePolicy{MaxKeepMessagesCount: 1}.Decide}
	assert.Equal(t, ReasonMaxKeepMessagesCount, r.Judge(chat, 0).Reason)
}

func TestResizerDefaultsAndErrors(t *testing.T) {
	chat := history(4) // 12 messages
	ctx := context.Background()

	// Default lite: keep MaxKeepMessagesCount, tool pairs intact.
	r := &Resizer{Policy: ResizePolicy{MaxKeepMessagesCount: 4}}
	out, d, err := r.Resize(ctx, chat, 0)
	require.NoError(t, err)
	assert.Equal(t, KindLite, d.Kind)
	assert.Equal(t, "a(c2) t(c2) u a(c3) t(c3)", shape(out), "the cut moved back to the assistant")

	// No deep handler: an error, and the history back unchanged.
	r = &Resizer{Policy: ResizePolicy{MaxMessagesTextLength: 10}}
	out, d, err = r.Resize(ctx, chat, 0)
	assert.ErrorIs(t, err, ErrNoHandler)
	assert.Equal(t, KindDeep, d.Kind)
	assert.Equal(t, chat, out)

	// A handler's error is wrapped and the history kept.
	boom := errors.New("boom")
	r.Deep = func(context.Context, []llm.Message) ([]llm.Message, error) { return nil, boom }
	out, _, err = r.Resize(ctx, chat, 0)
	assert.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "deep resize (max_messages_text_length)")
	assert.Equal(t, chat, out)

	// A deep resize through a Compactor.
	r.Deep = testCompactor(&script{answers: []any{"sum"}}).Deep()
	out, _, err = r.Resize(ctx, chat, 0)
	require.NoError(t, err)
	assert.Equal(t, "u u a(c3) t(c3)", shape(out))

	// None: the input itself; an unknown kind has no handler.
	out, err = r.Apply(ctx, chat, Decision{})
	require.NoError(t, err)
	assert.Equal(t, chat, out)
	_, err = r.Apply(ctx, chat, Decision{Kind: "archive"})
	assert.ErrorIs(t, err, ErrNoHandler)

	assert.Equal(t, Decision{Kind: KindDeep, Reason: "force", Severity: 1000}, Forced(KindNone))
	assert.Equal(t, Decision{Kind: KindLite, Reason: "force", Severity: 1000}, Forced(KindLite))
}

func TestLite(t *testing.T) {
	chat := []llm.Message{
		sys("rules"), user("q"), asst("", call("c1"), call("c2")), result("c1", ""), result("c2", ""), asst("a"), user("q2"), asst("b"),
	}
	before := snapshot(chat)
	for keep, want := range map[int]string{
		0:  "s u a(c1,c2) t(c1) t(c2) a u a", // disabled
		-1: "s u a(c1,c2) t(c1) t(c2) a u a",
		1:  "s a",
		3:  "s a u a",
		4:  "s a(c1,c2) t(c1) t(c2) a u a", // the cut on t(c2) moves back
		5:  "s a(c1,c2) t(c1) t(c2) a u a",
		6:  "s a(c1,c2) t(c1) t(c2) a u a",
		7:  "s u a(c1,c2) t(c1) t(c2) a u a",
		99: "s u a(c1,c2) t(c1) t(c2) a u a",
	} {
		out := Lite(chat, keep)
		assert.Equal(t, want, shape(out), "keep %d", keep)
		assert.NoError(t, protocolError(out))
	}
	assert.Equal(t, before, chat, "input untouched")
	// Everything is one tool exchange: nothing can go.
	one := []llm.Message{asst("", call("c1"), call("c2")), result("c1", ""), result("c2", "")}
	assert.Equal(t, one, Lite(one, 1))
}

func TestLiteChars(t *testing.T) {
	// Each user("xxxxx") is 4+1+5 = 10 characters.
	chat := []llm.Message{sys("r"), user("xxxxx"), user("xxxxx"), user("xxxxx"), user("xxxxx")}
	for maxChars, want := range map[int]string{
		0:   "s u u u u",
		10:  "s u",
		19:  "s u",
		20:  "s u u",
		1:   "s u", // at least the newest message
		40:  "s u u u u",
		400: "s u u u u",
	} {
		assert.Equal(t, want, shape(LiteChars(chat, maxChars)), "max %d", maxChars)
	}
	tools := []llm.Message{user("q"), asst("", call("c1")), result("c1", strings.Repeat("x", 100))}
	assert.Equal(t, "a(c1) t(c1)", shape(LiteChars(tools, 10)), "a big result keeps its call")
	assert.Empty(t, LiteChars(nil, 10))
}

func TestTextLength(t *testing.T) {
	assert.Equal(t, len("user")+1+2, TextLength([]llm.Message{user("你好")}), "characters, not bytes")
	img := llm.Message{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartImage, MIMEType: "image/png", Data: "AAAA"}}}
	assert.Equal(t, len("user")+1+len(`{"type":"image","mimeType":"image/png","data":"AAAA"}`), TextLength([]llm.Message{img}), "an image counts as its JSON")
	a := asst("x", llm.ToolCall{ID: "c1", Name: "ls", Arguments: `{}`})
	assert.Equal(t, len("assistant")+1+1+2+2, TextLength([]llm.Message{a}))
}
