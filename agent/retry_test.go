package agent_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/llm/openai"
)

// retrySession is a session on the OpenAI provider against srv, retrying
// with short delays, recording the retries it announces.
func retrySession(t *testing.T, srv *openAIServer, maxRetries int) (*agent.Session, func() []agent.RetryNotice) {
	t.Helper()
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	var mu sync.Mutex
	var notices []agent.RetryNotice
	s := agent.NewSession(agent.SessionConfig{CWD: "/tmp", ModelConfig: agent.ModelConfig{Model: openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: &http.Client{Transport: transport}}), ModelName: "test-model", Retry: agent.RetryPolicy{MaxRetries: maxRetries, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}}, HookConfig: agent.HookConfig{OnRetry: func(n agent.RetryNotice) {
		mu.Lock()
		notices = append(notices, n)
		mu.Unlock()
	}}})
	t.Cleanup(func() { s.Close() })
	return s, func() []agent.RetryNotice {
		mu.Lock()
		defer mu.Unlock()
		return append([]agent.RetryNotice(nil), notices...)
	}
}

func TestRetryTransientFailureThenSuccess(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header []string
	}{
		{"429 with retry-after-ms", http.StatusTooManyRequests, []string{"retry-after-ms", "20"}},
		{"503", http.StatusServiceUnavailable, nil},
		{"529 overloaded", 529, nil},
		{"408", http.StatusRequestTimeout, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					failWith(w, tt.status, "try again later", tt.header...)
					return
				}
				sse(w, []string{textChunk("recovered"), finishChunk("stop")}, true)
			})
			s, notices := retrySession(t, srv, 2)
			start := time.Now()
			res, err := s.Prompt(context.Background(), "hi")
			require.NoError(t, err)
			assert.Equal(t, "recovered", res.Text)
			require.Len(t, notices(), 1)
			n := notices()[0]
			assert.Equal(t, 1, n.Attempt)
			assert.Equal(t, 3, n.MaxAttempts)
			assert.Contains(t, n.Err.Error(), "try again later")
			if tt.header != nil {
				assert.Equal(t, 20*time.Millisecond, n.Delay, "retry-after-ms is honoured")
				assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
			}
			srv.Request(t, 1) // a second request was made
		})
	}
}

func TestRetriesExhaustedEndWithTheLastProviderMessage(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		failWith(w, http.StatusBadGateway, fmt.Sprintf("upstream down (attempt %d)", n))
	})
	s, notices := retrySession(t, srv, 2)
	_, err := s.Prompt(context.Background(), "hi")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "upstream down (attempt 3)")
	var pe *llm.ProviderError
	assert.True(t, errors.As(err, &pe))
	assert.Len(t, notices(), 2)
	assert.Equal(t, 3, srv.Count(), "1 call + 2 retries")
}

func TestNoRetryWhenNotTransientOrOutputStreamed(t *testing.T) {
	tests := []struct {
		name   string
		handle func(w http.ResponseWriter)
	}{
		{"400 is not transient", func(w http.ResponseWriter) { failWith(w, http.StatusBadRequest, "bad request") }},
		{"401 is not transient", func(w http.ResponseWriter) { failWith(w, http.StatusUnauthorized, "bad key") }},
		{"error after output", func(w http.ResponseWriter) {
			sse(w, []string{textChunk("partial"), `{"error":{"message":"overloaded","code":503},"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}`}, true)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { tt.handle(w) })
			s, notices := retrySession(t, srv, 2)
			_, err := s.Prompt(context.Background(), "hi")
			require.Error(t, err)
			assert.Empty(t, notices())
			assert.Equal(t, 1, srv.Count())
		})
	}
}

func TestCancelDuringBackOffEndsThePromptAtOnce(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		failWith(w, http.StatusTooManyRequests, "slow down", "retry-after", "60")
	})
	s, notices := retrySession(t, srv, 2)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := s.Prompt(ctx, "hi"); done <- err }()
	require.Eventually(t, func() bool { return len(notices()) == 1 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, 60*time.Second, notices()[0].Delay, "retry-after in seconds is honoured")
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(2 * time.Second):
		t.Fatal("the prompt did not end during the back-off")
	}
}
