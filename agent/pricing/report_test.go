package pricing

import (
	"fmt"
	"sync"
	"testing"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr(f float64) *float64 { return &f }

// Seed 003, Session Usage: 空会话 cost 输出应显示 0 值.
func TestSeed003_EmptySessionCostOutputShowsZero(t *testing.T) {
	var r UsageReport // the zero value is ready to use
	assert.Equal(t, "Token: 0 in / 0 out | Cache: 0 read / 0 write (0% hit) | Cost: $0.00", r.FormatCostOutput())
	assert.Empty(t, r.Rounds())
	tot := r.Totals()
	assert.Nil(t, tot.Cost)
	assert.Zero(t, tot.Rounds)
}

// Seed 003, Session Usage: 未配置定价时 cost 输出为 N/A.
func TestSeed003_NoPricingCostIsNA(t *testing.T) {
	r := NewUsageReport(0)
	// inputOther 100 + cacheRead 300 + cacheWrite 100 = 500 in.
	r.Add("local/llama", llm.Usage{InputTokens: 500, OutputTokens: 50, CachedReadTokens: 300, CachedWriteTokens: 100}, nil)
	assert.Equal(t, "Token: 500 in / 50 out | Cache: 300 read / 100 write (60% hit) | Cost: N/A", r.FormatCostOutput())
	assert.Nil(t, r.Totals().Cost)
	assert.Equal(t, 1, r.Totals().UnpricedRounds)
}

// Seed 003, Session Usage: usage rounds 超过上限时仅保留最近 N 轮, totals keep
// everything.
func TestSeed003_RoundsTruncatedToCapTotalsKept(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *UsageReport
		cap  int
	}{
		{"default cap", &UsageReport{}, DefaultMaxRoundsKept},
		{"custom cap", NewUsageReport(7), 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 123
			for i := 1; i <= n; i++ {
				tc.r.Add(fmt.Sprintf("m%d", i), llm.Usage{InputTokens: 10, OutputTokens: 2, CachedReadTokens: 4, CachedWriteTokens: 1, ReasoningTokens: 1}, ptr(0.01))
			}
			rounds := tc.r.Rounds()
			require.Len(t, rounds, tc.cap)
			assert.Equal(t, fmt.Sprintf("m%d", n-tc.cap+1), rounds[0].Model, "oldest kept")
			assert.Equal(t, fmt.Sprintf("m%d", n), rounds[len(rounds)-1].Model, "newest last")
			tot := tc.r.Totals()
			assert.Equal(t, n, tot.Rounds)
			assert.Equal(t, int64(5*n), tot.InputOther)
			assert.Equal(t, int64(4*n), tot.CacheRead)
			assert.Equal(t, int64(1*n), tot.CacheWrite)
			assert.Equal(t, int64(10*n), tot.Input())
			assert.Equal(t, int64(2*n), tot.Output)
			assert.Equal(t, int64(n), tot.Reasoning)
			require.NotNil(t, tot.Cost)
			assert.InDelta(t, 0.01*n, *tot.Cost, 1e-9)
			assert.Equal(t, fmt.Sprintf("m%d", n), tot.Model)
			assert.LessOrEqual(t, cap(tc.r.rounds), 2*tc.cap, "the kept rounds do not grow with the session")
		})
	}
}

func TestFormatCostOutputSeedStrings(t *testing.T) {
	r := NewUsageReport(0)
	// 12,345 in = 1,545 uncached + 9,600 read + 1,200 write; 78% hit.
	r.Add("anthropic/claude-sonnet-4-5", llm.Usage{InputTokens: 12345, OutputTokens: 3456, CachedReadTokens: 9600, CachedWriteTokens: 1200}, ptr(0.42))
	assert.Equal(t, "Token: 12,345 in / 3,456 out | Cache: 9,600 read / 1,200 write (78% hit) | Cost: $0.42", r.FormatCostOutput())
}

func TestFormatCostOutputMixedPricedAndUnpriced(t *testing.T) {
	r := NewUsageReport(0)
	r.Add("local", llm.Usage{InputTokens: 1000, OutputTokens: 10}, nil)
	r.Add("openai/gpt-4.1", llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_234_567}, ptr(1.5))
	// Synapse: the total is the priced rounds' sum, shown as soon as one
	// round was priced.
	assert.Equal(t, "Token: 1,001,000 in / 1,234,577 out | Cache: 0 read / 0 write (0% hit) | Cost: $1.50", r.FormatCostOutput())
	assert.Equal(t, 1, r.Totals().UnpricedRounds)
}

func TestFormatCostOutputHitRounding(t *testing.T) {
	for _, tc := range []struct {
		read, in int64
		want     string
	}{
		{1, 8, "13%"},   // 12.5 rounds half up (JS Math.round)
		{1, 200, "1%"},  // 0.5 rounds up
		{1, 201, "0%"},  // 0.497
		{2, 3, "67%"},   // 66.67
		{0, 0, "0%"},    // no input
		{5, 5, "100%"},  // all cached
		{1, 400, "0%"},  // 0.25
		{3, 400, "1%"},  // 0.75
		{7, 8, "88%"},   // 87.5
		{0, 10, "0% h"}, // no cache
	} {
		r := NewUsageReport(0)
		r.Add("m", llm.Usage{InputTokens: tc.in, CachedReadTokens: tc.read}, nil)
		assert.Contains(t, r.FormatCostOutput(), "("+tc.want, "read %d of %d", tc.read, tc.in)
	}
}

func TestToFixed2MatchesJavaScript(t *testing.T) {
	// Expected values are what JavaScript's Number.prototype.toFixed(2)
	// returns for the same doubles.
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{0, "0.00"},
		{0.42, "0.42"},
		{0.125, "0.13"}, // exact half: JS rounds up, Go's %.2f gives 0.12
		{0.375, "0.38"},
		{2.5, "2.50"},
		{1.005, "1.00"}, // 1.005 is 1.00499999999999989... in binary
		{1.015, "1.01"}, // 1.01499999999999990...
		{0.045, "0.04"}, // 0.04499999999999999...
		{1234.5678, "1234.57"},
		{0.001, "0.00"},
		{0.005, "0.01"},   // 0.005000000000000000104...
		{-0.125, "-0.13"}, // JS: sign, then the magnitude's rounding
		{1e-7, "0.00"},
		{19.999, "20.00"},
	} {
		assert.Equal(t, tc.want, toFixed2(tc.x), "toFixed2(%v)", tc.x)
	}
}

func TestAppendGrouped(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", 123456: "123,456",
		1234567: "1,234,567", -1234: "-1,234", 1_000_000_000: "1,000,000,000",
	} {
		assert.Equal(t, want, string(appendGrouped(nil, n)))
	}
}

func TestUsageReportAddClampsAndCopies(t *testing.T) {
	r := NewUsageReport(0)
	c := 0.5
	// OpenAI dialect: InputTokens includes the cached reads; negative
	// counts are provider bugs and read as zero.
	r.Add("m", llm.Usage{InputTokens: 100, CachedReadTokens: 150, OutputTokens: -3}, &c)
	c = 99 // the report keeps its own copy
	tot := r.Totals()
	assert.Equal(t, int64(0), tot.InputOther, "clamped")
	assert.Equal(t, int64(150), tot.CacheRead)
	assert.Equal(t, int64(0), tot.Output)
	require.NotNil(t, tot.Cost)
	assert.Equal(t, 0.5, *tot.Cost)
	*tot.Cost = 7 // nor can a caller change it through Totals or Rounds
	*r.Rounds()[0].Cost = 7
	assert.Equal(t, 0.5, *r.Totals().Cost)
	assert.Equal(t, 0.5, *r.Rounds()[0].Cost)
}

func TestRoundCost(t *testing.T) {
	assert.Nil(t, RoundCost(nil, llm.Usage{InputTokens: 10}))
	assert.Nil(t, RoundCost(&Model{Provider: "openai", ID: "x", InputPerMTok: 1}, llm.Usage{InputTokens: 10}), "no output price")
	m := &Model{Provider: "openai", ID: "x", InputPerMTok: 2, OutputPerMTok: 8}
	c := RoundCost(m, llm.Usage{InputTokens: 1_000_000, OutputTokens: 500_000})
	require.NotNil(t, c)
	assert.InDelta(t, 6.0, *c, 1e-12)
}

func TestUsageReportConcurrent(t *testing.T) {
	r := NewUsageReport(10)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				r.Add("m", llm.Usage{InputTokens: 3, OutputTokens: 1}, ptr(0.25))
				_ = r.FormatCostOutput()
				_ = r.Rounds()
			}
		}()
	}
	wg.Wait()
	tot := r.Totals()
	assert.Equal(t, 1600, tot.Rounds)
	assert.Equal(t, int64(4800), tot.Input())
	assert.Equal(t, 400.0, *tot.Cost) // quarters add exactly
	assert.Len(t, r.Rounds(), 10)
	assert.Equal(t, "Token: 4,800 in / 1,600 out | Cache: 0 read / 0 write (0% hit) | Cost: $400.00", r.FormatCostOutput())
}
