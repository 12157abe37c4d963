package compact

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// script is a Summarize that answers from a list: an error fails that
// call, a string is the summary. It records the prompts it got.
type script struct {
	mu      sync.Mutex
	answers []any
	prompts [][]llm.Message
}

func (s *script) summarize(ctx context.Context, prompt []llm.Message) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prompts = append(s.prompts, prompt)
	if len(s.answers) == 0 {
		return "", errors.New("script: no more answers")
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	if err, ok := a.(error); ok {
		return "", err
	}
	return a.(string), nil
}

func (s *script) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.prompts)
}

func noDelay(int) time.Duration { return 0 }

func testCompactor(s *script) *Compactor {
	return &Compactor{Summarize: s.summarize, KeepLast: 3, TriggerThreshold: 500, CooldownSteps: 2, Retries: 2, RetryDelay: noDelay, TargetTokens: 1000}
}

// runStep is one agent step as the session is expected to run it: advance
// the counter, offload, maybe compact.
func runStep(t *testing.T, st *State, o *Offloader, c *Compactor, msgs []llm.Message, tokens int) (OffloadResult, bool) {
	t.Helper()
	st.Advance()
	off, err := o.OffloadIfNeeded(msgs, tokens)
	require.NoError(t, err)
	_, attempted, _ := c.CompactIfNeeded(context.Background(), st, off, false)
	return off, attempted
}

// Seed 003, Context compaction: offload 后仍超阈值且释放不足时触发 compact.
func TestSeed003_CompactTriggeredWhenStillOverAndFreedTooLittle(t *testing.T) {
	s := &script{answers: []any{"summary"}}
	c := testCompactor(s)
	o := testOffloader(t)
	var st State
	msgs := history(4)
	off, attempted := runStep(t, &st, o, c, msgs, 1_000_000)
	require.True(t, off.StillExceedsThreshold)
	require.Less(t, off.FreedTokens, c.TriggerThreshold)
	assert.True(t, attempted)
	assert.Equal(t, 1, s.calls(), "compact called")
	assert.Equal(t, State{Step: 1, LastAttemptStep: 1, Attempted: true}, st)
}

// Seed 003, Context compaction: offload 释放已足够时不触发 compact.
func TestSeed003_NoCompactWhenOffloadFreedEnough(t *testing.T) {
	s := &script{answers: []any{"summary"}}
	c := testCompactor(s)
	o := testOffloader(t)
	var st State
	msgs := history(4)
	off, _ := o.OffloadIfNeeded(msgs, 1_000_000)
	c.TriggerThreshold = off.FreedTokens // freed >= threshold
	off, attempted := runStep(t, &st, testOffloader(t), c, msgs, 1_000_000)
	require.True(t, off.StillExceedsThreshold)
	assert.False(t, attempted)
	assert.Equal(t, 0, s.calls())
	assert.False(t, st.Attempted)

	assert.False(t, c.ShouldCompact(State{}, OffloadResult{StillExceedsThreshold: true, FreedTokens: c.TriggerThreshold}))
	assert.True(t, c.ShouldCompact(State{}, OffloadResult{StillExceedsThreshold: true, FreedTokens: c.TriggerThreshold - 1}))
}

// Seed 003, Context compaction: 已不超阈值时不触发 compact.
func TestSeed003_NoCompactWhenNoLongerOverThreshold(t *testing.T) {
	s := &script{answers: []any{"summary"}}
	c := testCompactor(s)
	o := testOffloader(t)
	var st State
	// Below the threshold: no offload, not over.
	off, attempted := runStep(t, &st, o, c, history(4), o.Threshold-1)
	assert.False(t, off.StillExceedsThreshold)
	assert.False(t, attempted)
	// Over it, but offload brings it under.
	off, attempted = runStep(t, &st, o, c, history(4), o.Threshold+10)
	require.Positive(t, off.OffloadedCount)
	assert.False(t, off.StillExceedsThreshold)
	assert.False(t, attempted)
	assert.Equal(t, 0, s.calls())
	assert.False(t, c.ShouldCompact(State{}, OffloadResult{StillExceedsThreshold: false}))
}

// Seed 003, Context compaction: 冷却期内禁止重复 compact.
func TestSeed003_NoCompactDuringCooldown(t *testing.T) {
	s := &script{answers: []any{errors.New("model down"), errors.New("model down"), errors.New("model down"), "summary", "summary"}}
	c := testCompactor(s)
	c.CooldownSteps = 3
	var st State
	over := OffloadResult{Messages: history(4), StillExceedsThreshold: true}
	var attemptedAt []int
	for i := 1; i <= 8; i++ {
		st.Advance()
		_, attempted, err := c.CompactIfNeeded(context.Background(), &st, over, false)
		if attempted {
			attemptedAt = append(attemptedAt, st.Step)
			if len(attemptedAt) == 1 {
				require.Error(t, err, "the first attempt fails (three calls)")
			}
		}
	}
	// Step 1 fails; a failure starts the cooldown too: steps 2 and 3 wait.
	assert.Equal(t, []int{1, 4, 7}, attemptedAt)
	assert.Equal(t, 5, s.calls(), "3 calls for the failed attempt, 1 each after")
	assert.True(t, State{}.CooledDown(100), "a fresh state may compact at once")
	assert.False(t, State{Step: 5, LastAttemptStep: 4, Attempted: true}.CooledDown(2))
	assert.True(t, State{Step: 6, LastAttemptStep: 4, Attempted: true}.CooledDown(2))
}

// Seed 003, Context compaction: compact 成功后应更新历史并发出 compact 事件.
// The runner's part (rewrite the session file, emit the event) is tested
// in the session by agent's TestSeed003_ForcedCompactSuccessReplacesHistoryInTheSession;
// this checks that a forced compaction gives it the new history and the
// event's figures, and that cleanup after the rewrite deletes the files
// the new history no longer needs.
func TestSeed003_ForcedCompactSuccessReplacesHistory(t *testing.T) {
	s := &script{answers: []any{"the summary"}}
	o := testOffloader(t)
	o.ScanRatio = 1
	c := testCompactor(s)
	c.Offloader = o
	c.CooldownSteps = 100
	st := State{Step: 7, LastAttemptStep: 7, Attempted: true} // inside the cooldown
	msgs := history(4)
	off, err := o.OffloadIfNeeded(msgs, 5000)
	require.NoError(t, err)
	require.Equal(t, 4, off.OffloadedCount)
	history := off.Messages

	// Under the threshold and cooling down: only a forced run compacts.
	_, attempted, _ := c.CompactIfNeeded(context.Background(), &st, OffloadResult{Messages: history}, false)
	require.False(t, attempted)
	res, attempted, err := c.CompactIfNeeded(context.Background(), &st, OffloadResult{Messages: history}, true)
	require.NoError(t, err)
	require.True(t, attempted)

	assert.Equal(t, "u u a(c3) t(c3)", shape(res.Messages))
	assert.Equal(t, "[Compressed History]\n\nthe summary", res.Messages[0].Text())
	assert.Equal(t, history[len(history)-3:], res.Messages[1:], "the kept messages verbatim")
	assert.Equal(t, 9, res.SummarizedCount)
	assert.Equal(t, 3, res.KeptCount)
	assert.Equal(t, EstimateTokens(history), res.PreviousTokens)
	assert.Equal(t, EstimateTokens(res.Messages), res.CurrentTokens)
	assert.Equal(t, res.PreviousTokens-res.CurrentTokens, res.FreedTokens)
	assert.Equal(t, 1, res.Attempts)
	assert.NoError(t, protocolError(res.Messages))

	// The summary was written from the real tool output, not paths.
	prompt := s.prompts[0][1].Text()
	assert.Contains(t, prompt, "0:"+long)
	assert.NotContains(t, prompt, ReferencePrefix)

	// After the session file is rewritten: the files of the summarized
	// results go, the kept result's stays.
	deleted, err := o.Cleanup(res.Messages)
	require.NoError(t, err)
	assert.ElementsMatch(t, off.Paths[:3], deleted)
	assert.FileExists(t, off.Paths[3])
}

func TestCompactFailureKeepsOriginal(t *testing.T) {
	boom := errors.New("provider: HTTP 500")
	s := &script{answers: []any{boom, boom, boom, "too late"}}
	c := testCompactor(s)
	msgs := history(4)
	before := snapshot(msgs)
	res, err := c.Compact(context.Background(), msgs)
	require.Error(t, err)
	assert.ErrorIs(t, err, boom, "the last attempt's error is wrapped")
	assert.Contains(t, err.Error(), "3 attempts")
	assert.Zero(t, res)
	assert.Equal(t, 3, s.calls(), "1 + Retries")
	assert.Equal(t, before, msgs, "input untouched")
}

func TestCompactRetries(t *testing.T) {
	s := &script{answers: []any{errors.New("overloaded"), "  \n", "summary"}}
	c := testCompactor(s)
	var delays []int
	c.RetryDelay = func(n int) time.Duration { delays = append(delays, n); return time.Millisecond }
	res, err := c.Compact(context.Background(), history(4))
	require.NoError(t, err)
	assert.Equal(t, 3, res.Attempts, "an error and an empty summary both fail an attempt")
	assert.Equal(t, []int{1, 2}, delays)
	assert.Equal(t, "summary", res.Summary)
	for _, p := range s.prompts[1:] {
		assert.Equal(t, s.prompts[0], p, "each attempt sends the same prompt")
	}

	s = &script{answers: []any{" ", " "}}
	c = testCompactor(s)
	c.Retries = 1
	_, err = c.Compact(context.Background(), history(4))
	assert.ErrorIs(t, err, ErrEmptySummary)

	s = &script{answers: []any{errors.New("once")}}
	c = testCompactor(s)
	c.Retries = -1 // no retries
	_, err = c.Compact(context.Background(), history(4))
	assert.Error(t, err)
	assert.Equal(t, 1, s.calls())
}

func TestCompactRetryDelayHonoursContext(t *testing.T) {
	assert.Equal(t, 100*time.Millisecond, (&Compactor{}).retryDelay(1), "Synapse's 100ms·n by default")
	assert.Equal(t, 300*time.Millisecond, (&Compactor{}).retryDelay(3))

	s := &script{answers: []any{errors.New("fail")}}
	c := testCompactor(s)
	c.RetryDelay = func(int) time.Duration { return time.Hour }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Compact(ctx, history(4))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "fail", "the last attempt's error is kept")
	assert.Less(t, time.Since(start), 10*time.Second, "the wait ends with the context")
	assert.Equal(t, 1, s.calls())
}

func TestCompactStopsWhenSummarizeSeesCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	c := testCompactor(nil)
	c.Summarize = func(ctx context.Context, _ []llm.Message) (string, error) {
		calls++
		cancel()
		return "", ctx.Err()
	}
	_, err := c.Compact(ctx, history(4))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls, "no retry after cancellation")
}

func TestCompactNeverSplitsToolPairs(t *testing.T) {
	s := &script{answers: []any{"s1", "s2", "s3"}}
	c := testCompactor(s)
	// u a(c1,c2) t(c1) t(c2) a u a(c3,c4,c5) t(c3) t(c4) t(c5)
	msgs := []llm.Message{
		user("q"), asst("", call("c1"), call("c2")), result("c1", ""), result("c2", ""), asst("a"),
		user("q2"), asst("", call("c3"), call("c4"), call("c5")), result("c3", ""), result("c4", ""), result("c5", ""),
	}
	for keep, want := range map[int]string{
		3: "u a(c3,c4,c5) t(c3) t(c4) t(c5)", // cut on t(c3) moves back to a(c3,c4,c5)
		4: "u a(c3,c4,c5) t(c3) t(c4) t(c5)", // the cut is on the assistant: nothing to move
		5: "u u a(c3,c4,c5) t(c3) t(c4) t(c5)",
	} {
		c.KeepLast = keep
		res, err := c.Compact(context.Background(), msgs)
		require.NoError(t, err, "keep %d", keep)
		assert.Equal(t, want, shape(res.Messages), "keep %d", keep)
		assert.NoError(t, protocolError(res.Messages))
	}
}

func TestCompactNeverSplitsToolPairsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		msgs := randomHistory(r, 1+r.IntN(30))
		require.NoError(t, protocolError(msgs))
		c := testCompactor(&script{answers: []any{"s"}})
		c.KeepLast = r.IntN(12)
		res, err := c.Compact(context.Background(), msgs)
		if errors.Is(err, ErrNothingToCompact) {
			continue
		}
		require.NoError(t, err)
		require.NoError(t, protocolError(res.Messages), "keep %d of %s → %s", c.KeepLast, shape(msgs), shape(res.Messages))
		assert.GreaterOrEqual(t, res.KeptCount, min(c.KeepLast, len(msgs)))
		assert.Equal(t, msgs[len(msgs)-res.KeptCount:], res.Messages[1:])

		lite := Lite(msgs, c.KeepLast)
		require.NoError(t, protocolError(lite), "lite %d of %s → %s", c.KeepLast, shape(msgs), shape(lite))
	}
}

// randomHistory returns a valid history of n exchanges: user prompts,
// plain answers, and tool calls with 1-4 results in random order.
func randomHistory(r *rand.Rand, n int) []llm.Message {
	var msgs []llm.Message
	id := 0
	for i := 0; i < n; i++ {
		switch r.IntN(3) {
		case 0:
			msgs = append(msgs, user("q"))
		case 1:
			msgs = append(msgs, asst("a"))
		default:
			k := 1 + r.IntN(4)
			var calls []llm.ToolCall
			var results []llm.Message
			for j := 0; j < k; j++ {
				id++
				cid := fmt.Sprintf("c%d", id)
				calls = append(calls, call(cid))
				results = append(results, result(cid, "r"))
			}
			r.Shuffle(len(results), func(a, b int) { results[a], results[b] = results[b], results[a] })
			msgs = append(msgs, asst("", calls...))
			msgs = append(msgs, results...)
		}
	}
	return msgs
}

func TestCompactNothingToCompact(t *testing.T) {
	s := &script{answers: []any{"s"}}
	c := testCompactor(s)
	for _, msgs := range [][]llm.Message{
		nil,
		{user("q"), asst("a")},
		{user("q"), asst("a"), user("q")}, // exactly KeepLast
		// The cut falls inside the only tool exchange, which starts the history.
		{asst("", call("c1"), call("c2"), call("c3")), result("c1", ""), result("c2", ""), result("c3", "")},
		{sys("rules"), user("q"), asst("a"), user("q")}, // system messages do not count
	} {
		_, err := c.Compact(context.Background(), msgs)
		assert.ErrorIs(t, err, ErrNothingToCompact, shape(msgs))
	}
	assert.Equal(t, 0, s.calls())

	_, err := (&Compactor{}).Compact(context.Background(), history(3))
	assert.ErrorIs(t, err, ErrNoSummarizer)
}

func TestCompactKeepsLeadingSystemAndKeepZero(t *testing.T) {
	s := &script{answers: []any{"s", "s"}}
	c := testCompactor(s)
	msgs := append([]llm.Message{sys("rules")}, history(3)...)
	res, err := c.Compact(context.Background(), msgs)
	require.NoError(t, err)
	assert.Equal(t, "s u u a(c2) t(c2)", shape(res.Messages))
	assert.Equal(t, "rules", res.Messages[0].Text())
	assert.NotContains(t, s.prompts[0][1].Text(), "rules", "system messages are not summarized")

	c.KeepLast = 0
	res, err = c.Compact(context.Background(), msgs)
	require.NoError(t, err)
	assert.Equal(t, "s u", shape(res.Messages), "KeepLast 0 summarizes everything")
}

func TestSummaryPrompt(t *testing.T) {
	c := &Compactor{TargetTokens: 1234}
	msgs := []llm.Message{
		user("please fix a.go"),
		asst("I will read it", llm.ToolCall{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}),
		{Role: llm.RoleTool, ToolCallID: "c1", ToolName: "read_file", IsError: true, Content: []llm.Part{llm.TextPart("no such file")}},
		{Role: llm.RoleUser, Content: []llm.Part{llm.TextPart("see"), {Type: llm.PartImage, MIMEType: "image/png", Data: "AAAA"}}},
	}
	p := c.SummaryPrompt(msgs)
	require.Len(t, p, 2)
	assert.Equal(t, llm.RoleSystem, p[0].Role)
	assert.Equal(t, llm.RoleUser, p[1].Role)
	sysText := p[0].Text()
	last := -1
	for _, sec := range []string{"Technical Context", "Project Overview", "Code Changes", "Debugging & Issues", "Current Status", "Pending Tasks", "User Preferences", "Key Decisions"} {
		i := strings.Index(sysText, "## "+sec)
		require.GreaterOrEqual(t, i, 0, sec)
		assert.Greater(t, i, last, "%s in order", sec)
		last = i
	}
	assert.True(t, strings.HasSuffix(sysText, "Target length: approximately 1234 tokens."))
	assert.Equal(t, "Summarize this conversation.\n\n<conversation>\n"+
		"[user]\nplease fix a.go\n\n"+
		"[assistant]\nI will read it\n[tool call read_file id=c1] {\"path\":\"a.go\"}\n\n"+
		"[tool result read_file id=c1 (error)]\nno such file\n\n"+
		"[user]\nsee\n(image image/png)\n\n"+
		"</conversation>", p[1].Text())
	assert.NotContains(t, p[1].Text(), "AAAA", "image data is not sent")

	assert.Equal(t, 1481, c.SummaryMaxTokens(), "ceil(1234·1.2)")
	assert.Equal(t, 9600, (&Compactor{}).SummaryMaxTokens(), "default target 8000")
	assert.Contains(t, (&Compactor{}).SummaryPrompt(nil)[0].Text(), "approximately 8000 tokens")
}

func TestCompactorDeep(t *testing.T) {
	s := &script{answers: []any{"s", errors.New("down")}}
	c := testCompactor(s)
	c.Retries = 0
	deep := c.Deep()
	out, err := deep(context.Background(), history(3))
	require.NoError(t, err)
	assert.Equal(t, "u u a(c2) t(c2)", shape(out))
	_, err = deep(context.Background(), history(3))
	assert.Error(t, err)
	short := []llm.Message{user("q")}
	out, err = deep(context.Background(), short)
	require.NoError(t, err, "nothing to compact is no failure for a resize")
	assert.Equal(t, short, out)
}

func TestNewConstructorsDefaults(t *testing.T) {
	o := NewOffloader("/d")
	assert.Equal(t, Offloader{Dir: "/d", Threshold: 150_000, ScanRatio: 0.5, MinChars: 50}, *o)
	c := NewCompactor(nil, o)
	assert.Equal(t, 5, c.KeepLast)
	assert.Equal(t, 15_000, c.TriggerThreshold)
	assert.Equal(t, 5, c.CooldownSteps)
	assert.Equal(t, 2, c.Retries, "3 attempts")
	assert.Equal(t, 8_000, c.TargetTokens)
	assert.Same(t, o, c.Offloader)
}

func TestConcurrentSessions(t *testing.T) {
	// Distinct sessions share nothing: run several full cycles at once
	// under the race detector.
	var wg sync.WaitGroup
	base := t.TempDir()
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &Offloader{Dir: fmt.Sprintf("%s/s%d/offloaded", base, g), Threshold: 10, ScanRatio: 1, MinChars: 10}
			c := NewCompactor(func(context.Context, []llm.Message) (string, error) { return "s", nil }, o)
			c.KeepLast = 3
			msgs := history(5)
			off, err := o.OffloadIfNeeded(msgs, 100)
			if err != nil {
				t.Error(err)
				return
			}
			res, err := c.Compact(context.Background(), off.Messages)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := o.Cleanup(res.Messages); err != nil {
				t.Error(err)
			}
			if out, _ := Sanitize(res.Messages); len(out) != 4 {
				t.Errorf("session %d: %s", g, shape(out))
			}
		}()
	}
	wg.Wait()
	entries, err := os.ReadDir(base)
	require.NoError(t, err)
	assert.Len(t, entries, 4)
}
