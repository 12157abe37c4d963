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
	"go.uber.org/goleak"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/pricing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// client starts an agent (model openai/test-model against srv) behind an
// in-process ACP service.
func client(t *testing.T, srv *openAIServer, env map[string]string, configure ...func(*acpagent.Config)) *acptest.Client {
	t.Helper()
	if env == nil {
		env = map[string]string{"OPENAI_API_KEY": testKey}
	}
	if srv != nil {
		env["OPENAI_BASE_URL"] = srv.URL + "/v1"
	}
	model := env["MODEL"]
	if model == "" {
		model = "openai/test-model"
	}
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	cfg := acpagent.Config{Config: host.Config{
		Model:      model,
		Getenv:     func(k string) string { return env[k] },
		HTTPClient: &http.Client{Transport: transport},
		Version:    "test",
	}}
	for _, f := range configure {
		f(&cfg)
	}
	a := acpagent.New(cfg)
	c := acptest.Pipe(t, acp.NewAgentService(a, acp.Options{}))
	c.AnnouncesCommands = true
	return c
}

func prompt(sid string, blocks ...acp.ContentBlock) *acp.PromptRequest {
	return &acp.PromptRequest{SessionID: sid, Prompt: blocks}
}

func TestPromptStreamsTextAndReasoning(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		sse(w, []string{
			reasoningChunk("reasoning_content", "Think"), reasoningChunk("reasoning", "ing."),
			textChunk("Hello"), textChunk(", "), textChunk("world"),
			finishChunk("stop"), usageChunk,
		}, true)
	})
	c := client(t, srv, nil)
	init := c.Initialize(nil)
	assert.Equal(t, "acp-agent", init.AgentInfo.Name)
	// A usable model needs no authentication (the session below is made
	// without it); the method is listed to log in again after logout.
	require.Len(t, init.AuthMethods, 1)
	assert.Equal(t, "configure-model", init.AuthMethods[0].Agent.ID)
	project := t.TempDir()
	sid := c.NewSession(project)

	resp, updates := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("Say hello")))
	var r acp.PromptResponse
	acptest.MustResult(t, resp, &r)
	assert.Equal(t, acp.StopReasonEndTurn, r.StopReason)

	var thoughts, text []string
	messageIDs := map[string]bool{}
	for _, m := range updates {
		u := m.Update(t).Update
		switch {
		case u.AgentThoughtChunk != nil:
			require.Empty(t, text, "thoughts come before the answer here")
			thoughts = append(thoughts, u.AgentThoughtChunk.Content.Text.Text)
			messageIDs[u.AgentThoughtChunk.MessageID] = true
		case u.AgentMessageChunk != nil:
			text = append(text, u.AgentMessageChunk.Content.Text.Text)
			messageIDs[u.AgentMessageChunk.MessageID] = true
		case u.SessionInfoUpdate != nil:
			require.Empty(t, thoughts, "the title comes first")
			assert.Equal(t, "Say hello", u.SessionInfoUpdate.Title.Value, "the first prompt names the session")
		default:
			t.Fatalf("unexpected update %s", m.Raw)
		}
	}
	// In order; chunks that waited for the client may come merged.
	assert.Equal(t, "Thinking.", strings.Join(thoughts, ""))
	assert.Equal(t, "Hello, world", strings.Join(text, ""))
	assert.Len(t, messageIDs, 1, "all chunks of one answer share a messageId")
	assert.NotContains(t, messageIDs, "")

	got := srv.Request(t, 0)
	assert.Equal(t, "Bearer "+testKey, got.Auth)
	assert.Equal(t, "test-model", got.Body["model"])
	assert.Equal(t, true, got.Body["stream"])
	msgs := got.Body["messages"].([]any)
	require.Len(t, msgs, 2)
	assert.Equal(t, "system", msgs[0].(map[string]any)["role"])
	assert.Contains(t, msgs[0].(map[string]any)["content"], project, "the system prompt names the workspace")
	assert.Equal(t, map[string]any{"role": "user", "content": "Say hello"}, msgs[1])
}

func TestHistoryIsSentWithTheNextPrompt(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(w, []string{textChunk(fmt.Sprintf("answer %d", n)), finishChunk("stop")}, true)
	})
	c := client(t, srv, nil)
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	for _, q := range []string{"first", "second"} {
		resp, _ := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock(q)))
		acptest.MustResult(t, resp, nil)
	}
	msgs := srv.Request(t, 1).Body["messages"].([]any)
	require.Len(t, msgs, 4)
	assert.Equal(t, map[string]any{"role": "user", "content": "first"}, msgs[1])
	assert.Equal(t, "assistant", msgs[2].(map[string]any)["role"])
	assert.Equal(t, "answer 1", msgs[2].(map[string]any)["content"])
	assert.Equal(t, map[string]any{"role": "user", "content": "second"}, msgs[3])
}

func TestResourceBlocksBecomeModelInput(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		sse(w, []string{textChunk("ok"), finishChunk("stop")}, true)
	})
	c := client(t, srv, nil)
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	resp, _ := c.Call(acp.MethodSessionPrompt, prompt(sid,
		acp.TextBlock("Review these"),
		acp.ContentBlock{ResourceLink: &acp.ResourceLink{URI: "file:///tmp/a.go", Name: "a.go", MimeType: "text/x-go"}},
		acp.ContentBlock{Resource: &acp.EmbeddedResource{Resource: acp.EmbeddedResourceResource{
			Text: &acp.TextResourceContents{URI: "file:///tmp/b.go", Text: "package b\n"},
		}}},
	))
	acptest.MustResult(t, resp, nil)
	user := srv.Request(t, 0).Body["messages"].([]any)[1].(map[string]any)
	data, _ := json.Marshal(user["content"])
	content := string(data)
	assert.Contains(t, content, "Review these")
	assert.Contains(t, content, "file:///tmp/a.go")
	assert.Contains(t, content, "file:///tmp/b.go")
	assert.Contains(t, content, `package b\n`)
}

func TestAudioPromptIsInvalidParams(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		t.Error("the model must not be called")
	})
	c := client(t, srv, nil)
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	resp, _ := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("listen"),
		acp.ContentBlock{Audio: &acp.AudioContent{Data: "AAAA", MimeType: "audio/wav"}}))
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "prompt[1]")
}

func TestFinishReasonsMapToStopReasons(t *testing.T) {
	tests := []struct {
		finish string
		want   acp.StopReason
	}{
		{"stop", acp.StopReasonEndTurn},
		{"length", acp.StopReasonMaxTokens},
		{"content_filter", acp.StopReasonRefusal},
	}
	for _, tt := range tests {
		t.Run(tt.finish, func(t *testing.T) {
			srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
				sse(w, []string{textChunk("x"), finishChunk(tt.finish)}, true)
			})
			c := client(t, srv, nil)
			c.Initialize(nil)
			sid := c.NewSession("/tmp")
			resp, _ := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("q")))
			var r acp.PromptResponse
			acptest.MustResult(t, resp, &r)
			assert.Equal(t, tt.want, r.StopReason)
		})
	}
}

func TestProviderErrorsReachTheClientWithoutTheKey(t *testing.T) {
	tests := []struct {
		name    string
		handle  func(w http.ResponseWriter)
		wantMsg string
		code    int64 // a refused key asks to log in (-32000)
	}{
		{"HTTP 401", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s.","type":"invalid_request_error","code":"invalid_api_key"}}`, testKey)
		}, "Incorrect API key provided", acp.CodeAuthRequired},
		{"HTTP 400", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"model does not exist","type":"invalid_request_error"}}`)
		}, "model does not exist", acp.CodeInternalError},
		{"error inside the stream", func(w http.ResponseWriter) {
			sse(w, []string{textChunk("partial"), `{"error":{"message":"upstream overloaded","code":502},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`}, true)
		}, "upstream overloaded", acp.CodeInternalError},
		{"stream ends without [DONE]", func(w http.ResponseWriter) {
			sse(w, []string{textChunk("partial")}, false)
		}, "ended", acp.CodeInternalError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) { tt.handle(w) })
			c := client(t, srv, nil)
			c.Initialize(nil)
			sid := c.NewSession("/tmp")
			resp, _ := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("q")))
			require.NotNil(t, resp.Error, "got %s", resp.Raw)
			assert.Equal(t, tt.code, resp.Error.Code)
			assert.Contains(t, resp.Error.Message, tt.wantMsg)
			assert.NotContains(t, string(resp.Raw), testKey)
		})
	}
}

// TestCancelAbortsTheProviderStream: a provider stream that never ends is
// cancelled by session/cancel; the turn answers "cancelled", the HTTP
// request to the provider is closed, and nothing of the turn follows.
func TestCancelAbortsTheProviderStream(t *testing.T) {
	requestDone := make(chan struct{})
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		defer close(requestDone)
		w.Header().Set("Content-Type", "text/event-stream")
		flusher := w.(http.Flusher)
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(w, "data: %s\n\n", textChunk(fmt.Sprintf("%d ", i))); err != nil {
				return
			}
			flusher.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	})
	c := client(t, srv, nil)
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	id := c.Request(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("count forever")))
	require.NotNil(t, c.Next().Update(t).Update.SessionInfoUpdate, "the title")
	// The stream is under way: "0 " to "4 " at least, in order (chunks
	// that wait for the connection may arrive merged).
	var streamed strings.Builder
	for streamed.Len() < len("0 1 2 3 4 ") {
		streamed.WriteString(c.Next().Update(t).Update.AgentMessageChunk.Content.Text.Text)
	}
	require.True(t, strings.HasPrefix(streamed.String(), "0 1 2 3 4 "), streamed.String())
	c.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sid})
	resp, _ := c.Await(id)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
	select {
	case <-requestDone:
	case <-time.After(2 * time.Second):
		t.Fatal("the provider request was not closed after cancel")
	}
	if m, ok := c.NextWithin(100 * time.Millisecond); ok {
		t.Fatalf("message after the cancelled response: %s", m.Raw)
	}
}

func TestNoUsableModelNeedsConfiguration(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		wantMsg string
	}{
		{"no API key", map[string]string{}, "OPENAI_API_KEY"},
		{"unknown provider", map[string]string{"MODEL": "acme/model-1"}, `unknown provider "acme"`},
		{"no slash", map[string]string{"MODEL": "gpt-4.1"}, "PROVIDER/MODEL"},
		{"missing replay script", map[string]string{"MODEL": "replay/" + "/nonexistent/script.json"}, "replay script"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := client(t, nil, tt.env)
			init := c.Initialize(nil)
			require.Len(t, init.AuthMethods, 1)
			require.NotNil(t, init.AuthMethods[0].Agent)
			assert.Contains(t, init.AuthMethods[0].Agent.Description, tt.wantMsg)

			resp, _ := c.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: "/tmp", MCPServers: []acp.McpServer{}})
			require.NotNil(t, resp.Error)
			assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code)
			assert.Contains(t, resp.Error.Message, tt.wantMsg)

			resp, _ = c.Call(acp.MethodAuthenticate, &acp.AuthenticateRequest{MethodID: init.AuthMethods[0].Agent.ID})
			require.NotNil(t, resp.Error)
			assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code)
		})
	}
}

func TestAuthenticateUnknownMethodIsInvalidParams(t *testing.T) {
	c := client(t, nil, map[string]string{"MODEL": "replay/default"})
	c.Initialize(nil)
	resp, _ := c.Call(acp.MethodAuthenticate, &acp.AuthenticateRequest{MethodID: "nope"})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "methodId")
}

func TestReplayDefaultModelAnswersOffline(t *testing.T) {
	c := client(t, nil, map[string]string{"MODEL": "replay/default"})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	resp, updates := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("hello")))
	var r acp.PromptResponse
	acptest.MustResult(t, resp, &r)
	assert.Equal(t, acp.StopReasonEndTurn, r.StopReason)
	var text strings.Builder
	for _, m := range updates {
		if u := m.Update(t).Update; u.AgentMessageChunk != nil {
			text.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	assert.Contains(t, text.String(), "OPENAI_API_KEY", "the demo answer explains how to configure a real model")
}

func TestParseModelSpec(t *testing.T) {
	tests := []struct {
		in       string
		provider string
		model    string
		wantErr  bool
	}{
		{"openai/gpt-4.1", "openai", "gpt-4.1", false},
		{"openai/meta-llama/Llama-3.3-70B", "openai", "meta-llama/Llama-3.3-70B", false},
		{" replay/default ", "replay", "default", false},
		{"gpt-4.1", "", "", true},
		{"/gpt", "", "", true},
		{"openai/", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := agent.ParseModelSpec(tt.in)
			if tt.wantErr {
				assert.ErrorIs(t, err, agent.ErrNoModel)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.provider, got.Provider)
			assert.Equal(t, tt.model, got.Model)
		})
	}
}

// TestUsageUpdateReportsContextAndCumulativeCost: with a model the pricing
// table knows, each model response is followed by usage_update with the
// context used, the model's window and the session's cumulative cost.
func TestUsageUpdateReportsContextAndCumulativeCost(t *testing.T) {
	srv := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		sse(w, []string{textChunk("hi"), finishChunk("stop"), usageChunk}, true)
	})
	info, ok := pricing.Default().Lookup("openai", "gpt-4.1")
	require.True(t, ok, "the embedded table knows gpt-4.1")
	c := client(t, srv, map[string]string{"OPENAI_API_KEY": testKey, "MODEL": "openai/gpt-4.1"})
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	perTurn := (12*info.InputPerMTok + 5*info.OutputPerMTok) / 1e6 // usageChunk: 12 in, 5 out
	for turn := 1; turn <= 2; turn++ {
		resp, updates := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("q")))
		acptest.MustResult(t, resp, nil)
		last := updates[len(updates)-1].Update(t).Update
		require.NotNil(t, last.UsageUpdate, "usage_update follows the model response")
		assert.EqualValues(t, 17, last.UsageUpdate.Used)
		assert.EqualValues(t, info.ContextWindow(), last.UsageUpdate.Size)
		require.NotNil(t, last.UsageUpdate.Cost)
		assert.Equal(t, "USD", last.UsageUpdate.Cost.Currency)
		assert.InDelta(t, float64(turn)*perTurn, last.UsageUpdate.Cost.Amount, 1e-12, "the cost is cumulative")
	}
}
