package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sdkClient is an ACP client built on github.com/coder/acp-go-sdk, an
// implementation independent of ours. It collects the agent's text.
type sdkClient struct {
	mu      sync.Mutex
	text    map[string]*strings.Builder // by session
	updates chan struct{}
}

func (c *sdkClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u := n.Update.AgentMessageChunk; u != nil && u.Content.Text != nil {
		b := c.text[string(n.SessionId)]
		if b == nil {
			b = &strings.Builder{}
			c.text[string(n.SessionId)] = b
		}
		b.WriteString(u.Content.Text.Text)
	}
	select {
	case c.updates <- struct{}{}:
	default:
	}
	return nil
}

func (c *sdkClient) textOf(id sdk.SessionId) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.text[string(id)]; b != nil {
		return b.String()
	}
	return ""
}

var errNotOffered = errors.New("not offered by this client")

func (c *sdkClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{}, errNotOffered
}
func (c *sdkClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errNotOffered
}
func (c *sdkClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errNotOffered
}
func (c *sdkClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errNotOffered
}
func (c *sdkClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errNotOffered
}
func (c *sdkClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errNotOffered
}
func (c *sdkClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errNotOffered
}
func (c *sdkClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errNotOffered
}

// TestInteropCoderSDK drives the built binary with an independent ACP
// client over real pipes: initialize, session/new, a prompt streamed from
// an OpenAI-compatible httptest server, and a cancelled prompt.
func TestInteropCoderSDK(t *testing.T) {
	var mu sync.Mutex
	providerClosed := make(chan struct{}, 1)
	srv := httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &body)
		last := string(body.Messages[len(body.Messages)-1].Content)
		w.Header().Set("Content-Type", "text/event-stream")
		flusher := w.(http.Flusher)
		chunk := func(s string) string {
			b, _ := json.Marshal(s)
			return `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}` + "\n\n"
		}
		if strings.Contains(last, "forever") {
			defer func() { providerClosed <- struct{}{} }()
			for i := 0; ; i++ {
				if _, err := io.WriteString(w, chunk(fmt.Sprint(i, " "))); err != nil {
					return
				}
				flusher.Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		for _, part := range []string{"Interop ", "works", "."} {
			io.WriteString(w, chunk(part))
			flusher.Flush()
		}
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()

	cmd := exec.Command(agentBin, "--model", "openai/interop-model")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "OPENAI_API_KEY=sk-interop", "OPENAI_BASE_URL=" + srv.URL + "/v1"}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncWriter
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer func() {
		stdin.Close()
		assert.NoError(t, cmd.Wait(), "agent exit")
		if t.Failed() {
			t.Logf("agent stderr:\n%s", stderr.String())
		}
	}()

	client := &sdkClient{text: map[string]*strings.Builder{}, updates: make(chan struct{}, 1)}
	conn := sdk.NewClientSideConnection(client, stdin, stdout)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()

	init, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientInfo: &sdk.Implementation{Name: "coder-sdk", Version: "0.13.5"}})
	require.NoError(t, err)
	assert.EqualValues(t, 1, init.ProtocolVersion)
	require.NotNil(t, init.AgentInfo)
	assert.Equal(t, "acp-agent", init.AgentInfo.Name)

	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: t.TempDir(), McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	require.NotEmpty(t, sess.SessionId)

	resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("hello")}})
	require.NoError(t, err)
	assert.Equal(t, sdk.StopReasonEndTurn, resp.StopReason)
	assert.Equal(t, "Interop works.", client.textOf(sess.SessionId), "all chunks reached the client before the response")

	// A cancelled prompt: the provider streams forever until cancelled.
	type result struct {
		resp sdk.PromptResponse
		err  error
	}
	done := make(chan result, 1)
	before := client.textOf(sess.SessionId)
	go func() {
		r, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("count forever")}})
		done <- result{r, err}
	}()
	require.Eventually(t, func() bool { return len(client.textOf(sess.SessionId)) > len(before)+10 }, waitBudget(t), 5*time.Millisecond)
	require.NoError(t, conn.Cancel(ctx, sdk.CancelNotification{SessionId: sess.SessionId}))
	select {
	case r := <-done:
		require.NoError(t, r.err)
		assert.Equal(t, sdk.StopReasonCancelled, r.resp.StopReason)
	case <-time.After(waitBudget(t)):
		t.Fatal("cancelled prompt did not return")
	}
	select {
	case <-providerClosed:
	case <-time.After(waitBudget(t)):
		t.Fatal("the provider request was not closed")
	}
}
