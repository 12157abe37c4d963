package compact

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// Issue 26: the kept window is sized in tokens (one huge tool result is
// not "one of the last five messages"), the user's own messages of the
// summarized part stay verbatim in the summary message, and the summary
// request is bounded so an overflowing history can still be summarized.
func TestCompactKeepsATokenWindowAndTheUsersWords(t *testing.T) {
	big := strings.Repeat("x", 40_000) // 10,000 tokens
	msgs := []llm.Message{
		user("please fix the flaky parser test"),
		asst("", call("c1")), result("c1", big),
		user("check the lexer too"),
		asst("", call("c2")), result("c2", big),
		user("also keep the old API"),
		asst("", call("c3")), result("c3", "small"),
		asst("done"),
	}
	var prompts [][]llm.Message
	c := &Compactor{
		Summarize: func(_ context.Context, p []llm.Message) (string, error) {
			prompts = append(prompts, p)
			return "the summary", nil
		},
		KeepTokens: 1_000, UserTokens: 1_000, MaxInputTokens: 6_000,
	}
	res, err := c.Compact(context.Background(), msgs)
	require.NoError(t, err)
	require.Len(t, res.Messages, 5, "summary, then the newest messages within 1,000 tokens")
	summary := res.Messages[0].Text()
	assert.True(t, strings.HasPrefix(summary, CompressedHistoryPrefix+"the summary\n\n"+UserMessagesHeading))
	assert.Contains(t, summary, "<user_message>\nplease fix the flaky parser test\n</user_message>")
	assert.Contains(t, summary, "<user_message>\ncheck the lexer too\n</user_message>")
	assert.Less(t, strings.Index(summary, "flaky parser"), strings.Index(summary, "lexer"), "oldest first")
	assert.NotContains(t, summary, "old API", "a kept message is not repeated in the summary")
	assert.Equal(t, []llm.Message{user("also keep the old API"), asst("", call("c3")), result("c3", "small"), asst("done")}, res.Messages[1:])
	require.Len(t, prompts, 1)
	assert.LessOrEqual(t, EstimateTokens(prompts[0][1:]), 6_000+500, "the summary request was cut to fit")
	assert.Contains(t, prompts[0][1].Text(), "left out of the summary request")

	// A second compaction keeps the user messages the first one kept.
	res2, err := c.Compact(context.Background(), append(res.Messages, user("one more thing"), asst("ok"), user("last"), asst(strings.Repeat("y", 8_000))))
	require.NoError(t, err)
	s2 := res2.Messages[0].Text()
	for _, want := range []string{"flaky parser", "lexer", "old API", "one more thing", "last"} {
		assert.Contains(t, s2, want)
	}
	assert.Equal(t, 1, strings.Count(s2, CompressedHistoryPrefix), "an earlier summary is not a user message")
}
