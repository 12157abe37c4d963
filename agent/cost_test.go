package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/pricing"
)

// Seed 003 /cost through a session: the exact seed strings, after real
// turns whose usage the model reported, cumulative over the turns; and
// seed 001's result event carries the session's cost and the turn's
// duration (issue 15.9).
func TestSeed003_CostReportAfterRealTurns(t *testing.T) {
	priced := &pricing.Model{Provider: "openai", ID: "m", InputPerMTok: 10, OutputPerMTok: 107, CacheReadPerMTok: 1, CacheWritePerMTok: 10}
	tests := []struct {
		name  string
		info  *pricing.Model
		turns []llm.Usage
		want  string
	}{
		{"no turns", priced, nil, "Token: 0 in / 0 out | Cache: 0 read / 0 write (0% hit) | Cost: $0.00"},
		{"priced, two turns add up", priced, []llm.Usage{
			{InputTokens: 10_000, OutputTokens: 3_000, CachedReadTokens: 8_000, CachedWriteTokens: 1_000},
			{InputTokens: 2_345, OutputTokens: 456, CachedReadTokens: 1_600, CachedWriteTokens: 200},
		}, "Token: 12,345 in / 3,456 out | Cache: 9,600 read / 1,200 write (78% hit) | Cost: $0.42"},
		{"unpriced", nil, []llm.Usage{{InputTokens: 500, OutputTokens: 50, CachedReadTokens: 300, CachedWriteTokens: 100}},
			"Token: 500 in / 50 out | Cache: 300 read / 100 write (60% hit) | Cost: N/A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var replies []reply
			for i, u := range tt.turns {
				replies = append(replies, reply{Text: []string{fmt.Sprint("answer ", i)}, Usage: &u})
			}
			m := newFakeModel(replies...)
			s := newSession(t, m, func(c *agent.SessionConfig) { c.ModelInfo = tt.info })
			sub := s.Subscribe(64)
			var results []agent.OutputEvent
			for i := range tt.turns {
				_, err := s.Prompt(context.Background(), fmt.Sprint("q", i))
				require.NoError(t, err)
				results = append(results, waitResults(t, sub, 1)...)
			}
			assert.Equal(t, tt.want, s.CostReport())
			if len(results) == 0 {
				return
			}
			last := results[len(results)-1]
			require.NotNil(t, last.DurationMS, "the result carries the turn's duration")
			if tt.info == nil {
				assert.Nil(t, last.TotalCost, "no pricing: no cost, not a cost of 0")
			} else {
				require.NotNil(t, last.TotalCost)
				assert.InDelta(t, 0.418842, *last.TotalCost, 1e-9, "the session's cost so far")
				assert.Less(t, *results[0].TotalCost, *last.TotalCost, "cumulative")
			}
		})
	}
}
