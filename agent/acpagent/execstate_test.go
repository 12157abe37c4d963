package acpagent_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
)

// optIn is the client capabilities that ask for execution states.
var optIn = &acp.ClientCapabilities{Meta: json.RawMessage(`{"acp-agent":{"executionState":true}}`)}

// fastRetry retries with millisecond back-off.
func fastRetry(max int) func(*acpagent.Config) {
	return func(c *acpagent.Config) {
		c.Retry = agent.RetryPolicy{MaxRetries: max, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
	}
}

// describe renders updates compactly, one string per update, so a test can
// assert an exact sequence: "state:queued", "retry:1/3", "text:Hi", ...
func describe(t *testing.T, msgs []acptest.Message) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		u := m.Update(t).Update
		switch {
		case u.ExecutionStateUpdate != nil:
			es := u.ExecutionStateUpdate.ExecutionState
			s := "state:" + string(es.State)
			if es.Attempt != nil {
				s += fmt.Sprintf("#%d", *es.Attempt)
			}
			out = append(out, s)
		case u.RetryUpdate != nil:
			out = append(out, fmt.Sprintf("retry:%d/%d", u.RetryUpdate.Retry.Attempt, u.RetryUpdate.Retry.MaxAttempts))
		case u.AgentMessageChunk != nil:
			out = append(out, "text:"+u.AgentMessageChunk.Content.Text.Text)
		case u.SessionInfoUpdate != nil:
			out = append(out, "title")
		default:
			out = append(out, u.Tag())
		}
	}
	return out
}

// Seed 002 "ACP Prompt 执行状态机" and "ACP Prompt 重试策略": a 429 with
// retry-after-ms, then success; the exact update sequence with the
// extension on (two ways) and off.
func TestSeed002_RetryAfter429ExactUpdateSequence(t *testing.T) {
	tests := []struct {
		name      string
		caps      *acp.ClientCapabilities
		configure []func(*acpagent.Config)
		want      []string
	}{
		{"off by default", nil, nil, []string{"title", "text:recovered"}},
		{"client opts in with _meta", optIn, nil,
			[]string{"state:queued", "state:running", "title", "state:retrying#1", "retry:1/3", "text:recovered", "state:completed"}},
		{"operator turns it on", nil, []func(*acpagent.Config){func(c *acpagent.Config) { c.ExecutionStates = true }},
			[]string{"state:queued", "state:running", "title", "state:retrying#1", "retry:1/3", "text:recovered", "state:completed"}},
		{"client _meta of another shape does not opt in", &acp.ClientCapabilities{Meta: json.RawMessage(`{"acp-agent":"yes"}`)}, nil,
			[]string{"title", "text:recovered"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					failWith(w, http.StatusTooManyRequests, "rate limited", "retry-after-ms", "20")
					return
				}
				sse(w, []string{textChunk("recovered"), finishChunk("stop"), usageChunk}, true)
			})
			c := client(t, srv, nil, append(tt.configure, fastRetry(2))...)
			c.Initialize(tt.caps)
			sid := c.NewSession("/tmp")
			start := time.Now()
			resp, updates := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("hi")))
			var r acp.PromptResponse
			acptest.MustResult(t, resp, &r)
			assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond, "retry-after-ms is honoured")
			assert.Equal(t, acp.StopReasonEndTurn, r.StopReason)
			assert.Equal(t, tt.want, describe(t, updates))
			for _, m := range updates {
				u := m.Update(t).Update
				if u.RetryUpdate != nil {
					assert.Contains(t, u.RetryUpdate.Retry.Reason, "rate limited")
				}
				if es := u.ExecutionStateUpdate; es != nil && es.ExecutionState.State == acp.ExecStateRetrying {
					assert.Contains(t, es.ExecutionState.Message, "rate limited")
				}
			}
			require.NotNil(t, r.Usage, "PromptResponse.usage carries the turn's tokens")
			assert.Equal(t, acp.Usage{TotalTokens: 17, InputTokens: 12, OutputTokens: 5}, *r.Usage)
		})
	}
}

func TestSeed002_RetriesExhaustedEndFailedWithTheLastProviderMessage(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		t.Run(fmt.Sprintf("states=%v", enabled), func(t *testing.T) {
			srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				failWith(w, http.StatusBadGateway, fmt.Sprintf("upstream down (attempt %d)", n))
			})
			c := client(t, srv, nil, fastRetry(2), func(c *acpagent.Config) { c.ExecutionStates = enabled })
			c.Initialize(nil)
			sid := c.NewSession("/tmp")
			resp, updates := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("hi")))
			require.NotNil(t, resp.Error)
			assert.Equal(t, int64(acp.CodeInternalError), resp.Error.Code)
			assert.Contains(t, resp.Error.Message, "upstream down (attempt 3)")
			if !enabled {
				assert.Equal(t, []string{"title"}, describe(t, updates), "nothing but the title without the extension")
				return
			}
			assert.Equal(t, []string{"state:queued", "state:running", "title", "state:retrying#1", "retry:1/3",
				"state:retrying#2", "retry:2/3", "state:failed"}, describe(t, updates))
			last := updates[len(updates)-1].Update(t).Update.ExecutionStateUpdate.ExecutionState
			assert.Contains(t, last.Message, "upstream down (attempt 3)")
		})
	}
}

func TestSeed002_CancelDuringBackOffEndsCancelled(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		failWith(w, http.StatusTooManyRequests, "slow down", "retry-after", "60")
	})
	c := client(t, srv, nil)
	c.Initialize(optIn)
	sid := c.NewSession("/tmp")
	id := c.Request(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("hi")))
	var seen []acptest.Message
	for {
		m := c.Next()
		seen = append(seen, m)
		if m.Update(t).Update.RetryUpdate != nil {
			break
		}
	}
	start := time.Now()
	c.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sid})
	resp, rest := c.Await(id)
	assert.Less(t, time.Since(start), 2*time.Second, "the 60 s back-off is abandoned at once")
	var r acp.PromptResponse
	acptest.MustResult(t, resp, &r)
	assert.Equal(t, acp.StopReasonCancelled, r.StopReason)
	assert.Equal(t, []string{"state:queued", "state:running", "title", "state:retrying#1", "retry:1/3", "state:cancelled"},
		describe(t, append(seen, rest...)))
}

func TestSeed002_PromptTimeoutEndsTimedOutWithInternalError(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		t.Run(fmt.Sprintf("states=%v", enabled), func(t *testing.T) {
			release := make(chan struct{})
			srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n > 1 {
					sse(w, []string{textChunk("fine"), finishChunk("stop")}, true)
					return
				}
				// A model that starts answering and then stalls.
				sse(w, []string{textChunk("thinking")}, false)
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-release:
				}
			})
			defer close(release)
			c := client(t, srv, nil, func(c *acpagent.Config) {
				c.PromptTimeout = 150 * time.Millisecond
				c.ExecutionStates = enabled
			})
			c.Initialize(nil)
			sid := c.NewSession("/tmp")
			start := time.Now()
			resp, updates := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("hi")))
			assert.Less(t, time.Since(start), 3*time.Second)
			require.NotNil(t, resp.Error, "a timed-out prompt is an error, not a stop reason")
			assert.Equal(t, int64(acp.CodeInternalError), resp.Error.Code)
			assert.Contains(t, resp.Error.Message, "timed out")
			want := []string{"title", "text:thinking"}
			if enabled {
				want = []string{"state:queued", "state:running", "title", "text:thinking", "state:timed_out"}
			}
			assert.Equal(t, want, describe(t, updates))

			// The timeout ended only that turn: the session goes on.
			resp, _ = c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("again")))
			var r acp.PromptResponse
			acptest.MustResult(t, resp, &r)
			assert.Equal(t, acp.StopReasonEndTurn, r.StopReason)
		})
	}
}

// A prompt queued behind a running one gets its own queued state at once,
// and its own terminal state; session/cancel ends both. The queued prompt
// is answered as soon as it is dropped, the running one when its turn has
// stopped.
func TestSeed002_QueuedPromptCancelledBeforeItRuns(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		sse(w, []string{textChunk("working")}, false)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	c := client(t, srv, nil)
	c.Initialize(optIn)
	sid := c.NewSession("/tmp")
	first := c.Request(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("one")))
	var seen []acptest.Message
	next := func() acptest.Message {
		m := c.Next()
		if !m.IsResponse() {
			seen = append(seen, m)
		}
		return m
	}
	for next().Update(t).Update.AgentMessageChunk == nil {
	}
	second := c.Request(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("two")))
	for next().Update(t).Update.ExecutionStateUpdate == nil {
	}
	c.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sid})
	answered := map[string]acp.StopReason{}
	for len(answered) < 2 {
		if m := next(); m.IsResponse() {
			var pr acp.PromptResponse
			acptest.MustResult(t, m, &pr)
			answered[string(m.ID)] = pr.StopReason
		}
	}
	assert.Equal(t, map[string]acp.StopReason{first: acp.StopReasonCancelled, second: acp.StopReasonCancelled}, answered)
	assert.Equal(t, []string{"state:queued", "state:running", "title", "text:working", "state:queued", "state:cancelled", "state:cancelled"},
		describe(t, seen))
}

// With the extension off, no session/update line of a failing, retrying,
// timing-out session ever names an extension variant.
func TestExecutionStatesNeverSentWhenDisabled(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n%2 == 1 {
			failWith(w, http.StatusServiceUnavailable, "busy")
			return
		}
		sse(w, []string{textChunk("ok"), finishChunk("stop")}, true)
	})
	c := client(t, srv, nil, fastRetry(1))
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	for range 3 {
		_, updates := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("hi")))
		for _, m := range updates {
			assert.False(t, strings.Contains(string(m.Raw), "execution_state_update") || strings.Contains(string(m.Raw), "retry_update"), "%s", m.Raw)
		}
	}
}
