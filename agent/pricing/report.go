package pricing

import (
	"math"
	"math/big"
	"strconv"
	"sync"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// DefaultMaxRoundsKept is how many rounds a UsageReport keeps
// (Synapse's MAX_ROUNDS_KEPT).
const DefaultMaxRoundsKept = 50

// UsageRound is one model call of a session.
type UsageRound struct {
	// Model is the model that answered, as the caller names it.
	Model string
	// Usage is the call's token counts, as the provider reported them.
	Usage llm.Usage
	// Cost is the call's cost in USD; nil when the model has no price.
	Cost *float64
}

// UsageTotals are a session's cumulative counts over every round, also
// those UsageReport no longer keeps.
//
// The prompt is split as Synapse splits it: InputOther (uncached) +
// CacheRead + CacheWrite = the whole prompt. llm.Usage.InputTokens is the
// whole prompt in both dialects (see Dialect; OpenAI-dialect servers
// report no cache writes), so InputOther is InputTokens -
// CachedReadTokens - CachedWriteTokens, clamped at zero.
type UsageTotals struct {
	InputOther int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
	// Reasoning counts reasoning tokens, which are part of Output.
	Reasoning int64
	// Rounds is the number of rounds added; UnpricedRounds how many of
	// them had no cost.
	Rounds, UnpricedRounds int
	// Cost is the sum of the priced rounds' costs in USD, nil while no
	// round was priced (Synapse's totalCost: null).
	Cost *float64
	// Model is the model of the last round.
	Model string
}

// Input is the whole prompt: InputOther + CacheRead + CacheWrite.
func (t UsageTotals) Input() int64 { return t.InputOther + t.CacheRead + t.CacheWrite }

// UsageReport accumulates a session's token usage and cost
// (Synapse's SessionUsage). It keeps the last rounds up to a cap while its
// totals count every round. The zero value is ready to use with the
// default cap. A UsageReport is safe for concurrent use.
type UsageReport struct {
	mu        sync.Mutex
	maxRounds int
	rounds    []UsageRound
	totals    UsageTotals
	cost      float64 // totals.Cost's value, kept here so Totals can copy it
	priced    bool
}

// NewUsageReport returns a report that keeps the last maxRounds rounds;
// maxRounds <= 0 means DefaultMaxRoundsKept.
func NewUsageReport(maxRounds int) *UsageReport {
	return &UsageReport{maxRounds: maxRounds}
}

func (r *UsageReport) limit() int {
	if r.maxRounds > 0 {
		return r.maxRounds
	}
	return DefaultMaxRoundsKept
}

// Add records one model call: model answered with usage u at cost (USD,
// nil when the model has no price: RoundCost gives it). Negative counts
// read as zero. The totals' cost grows only by priced rounds, as
// Synapse's accumulateUsage does.
func (r *UsageReport) Add(model string, u llm.Usage, cost *float64) {
	in, read, write := max(u.InputTokens, 0), max(u.CachedReadTokens, 0), max(u.CachedWriteTokens, 0)
	round := UsageRound{Model: model, Usage: u}
	if cost != nil {
		c := *cost
		round.Cost = &c
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	t := &r.totals
	t.InputOther += max(in-read-write, 0)
	t.CacheRead += read
	t.CacheWrite += write
	t.Output += max(u.OutputTokens, 0)
	t.Reasoning += max(u.ReasoningTokens, 0)
	t.Rounds++
	t.Model = model
	if cost != nil {
		r.cost += *cost
		r.priced = true
	} else {
		t.UnpricedRounds++
	}
	if n := r.limit(); len(r.rounds) >= n {
		// Shift rather than reslice, so the backing array stays at the cap
		// instead of growing with the session.
		drop := len(r.rounds) - n + 1
		r.rounds = append(r.rounds[:0], r.rounds[drop:]...)
	}
	r.rounds = append(r.rounds, round)
}

// Totals returns the cumulative counts over every round added.
func (r *UsageReport) Totals() UsageTotals {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.totals
	if r.priced {
		c := r.cost
		t.Cost = &c
	}
	return t
}

// Rounds returns a copy of the rounds kept, oldest first: the last
// min(Totals().Rounds, cap) of them.
func (r *UsageReport) Rounds() []UsageRound {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]UsageRound, len(r.rounds))
	for i, rd := range r.rounds {
		if rd.Cost != nil {
			c := *rd.Cost
			rd.Cost = &c
		}
		out[i] = rd
	}
	return out
}

// FormatCostOutput renders the report as Synapse's formatCostOutput does:
//
//	Token: {in} in / {out} out | Cache: {read} read / {write} write ({hit}% hit) | Cost: {cost}
//
// Counts have en-US thousands separators; in is the whole prompt
// (Totals().Input()). hit is CacheRead/in·100 rounded half up, 0 when in
// is 0. cost is "$" and the total rounded to two decimals as JavaScript's
// toFixed(2) does (exact halves away from zero) when any round was priced,
// "$0.00" when no round was added, and "N/A" when rounds were added but
// none was priced. An empty report gives
//
//	Token: 0 in / 0 out | Cache: 0 read / 0 write (0% hit) | Cost: $0.00
func (r *UsageReport) FormatCostOutput() string {
	t := r.Totals()
	in := t.Input()
	hit := int64(0)
	if in > 0 {
		hit = int64(math.Floor(float64(t.CacheRead)/float64(in)*100 + 0.5))
	}
	cost := "$0.00"
	switch {
	case t.Cost != nil:
		cost = "$" + toFixed2(*t.Cost)
	case t.Rounds > 0:
		cost = "N/A"
	}
	b := make([]byte, 0, 96)
	b = append(b, "Token: "...)
	b = appendGrouped(b, in)
	b = append(b, " in / "...)
	b = appendGrouped(b, t.Output)
	b = append(b, " out | Cache: "...)
	b = appendGrouped(b, t.CacheRead)
	b = append(b, " read / "...)
	b = appendGrouped(b, t.CacheWrite)
	b = append(b, " write ("...)
	b = strconv.AppendInt(b, hit, 10)
	b = append(b, "% hit) | Cost: "...)
	b = append(b, cost...)
	return string(b)
}

// RoundCost returns the cost of one call in the form Add takes: nil when
// m is nil (an unknown model) or not priced.
func RoundCost(m *Model, u llm.Usage) *float64 {
	if m == nil {
		return nil
	}
	c, ok := m.Cost(u, DialectFor(m.Provider))
	if !ok {
		return nil
	}
	return &c.Amount
}

// appendGrouped appends n with a comma every three digits (en-US).
func appendGrouped(b []byte, n int64) []byte {
	if n < 0 {
		b = append(b, '-')
		if n == math.MinInt64 {
			// -n overflows; the value is far beyond any token count.
			return append(b, "9,223,372,036,854,775,808"...)
		}
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	lead := len(s) % 3
	if lead == 0 {
		lead = 3
	}
	b = append(b, s[:lead]...)
	for i := lead; i < len(s); i += 3 {
		b = append(b, ',')
		b = append(b, s[i:i+3]...)
	}
	return b
}

// toFixed2 formats x with two decimals as JavaScript's Number.toFixed(2):
// the nearest decimal to the exact binary value, an exact half rounded
// away from zero (Go's 'f' format rounds an exact half to even: 0.125
// gives 0.12 where JavaScript gives 0.13). NaN and infinities format as
// Go does.
func toFixed2(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	// x·100 is an exact half only when its exact value has denominator 2.
	r := new(big.Rat).SetFloat64(x)
	r.Mul(r, big.NewRat(100, 1))
	if r.Denom().Cmp(big.NewInt(2)) == 0 {
		// Round half away from zero: (2·num ± denom) / (2·denom) truncated.
		num := new(big.Int).Set(r.Num()) // odd
		if num.Sign() >= 0 {
			num.Add(num, big.NewInt(1))
		} else {
			num.Sub(num, big.NewInt(1))
		}
		num.Quo(num, big.NewInt(2)) // exact: num is even now
		return new(big.Rat).SetFrac(num, big.NewInt(100)).FloatString(2)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}
