package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/internal/winetest"
)

// modelCall is one tool call a scripted model makes.
type modelCall struct {
	Name string
	Args map[string]any
}

// scriptedModel is an httptest server speaking one provider's streaming
// format: a request whose conversation has no tool result yet gets the
// tool calls, later requests get a closing answer. It records every
// request body.
type scriptedModel struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func (m *scriptedModel) body(t *testing.T, i int) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Greater(t, len(m.bodies), i, "model requests")
	return m.bodies[i]
}

func newScriptedModel(t *testing.T, provider string, calls ...modelCall) *scriptedModel {
	m := &scriptedModel{}
	m.Server = httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.bodies = append(m.bodies, string(data))
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		// A request answering tool calls gets the closing answer; a new
		// user message gets the tool calls.
		answered := lastIsToolResult(data)
		if provider == "anthropic" {
			io.WriteString(w, anthropicStream(calls, answered))
		} else {
			io.WriteString(w, openAIStream(calls, answered))
		}
	}))
	t.Cleanup(m.Close)
	return m
}

// lastIsToolResult reports whether a request's last message carries tool
// results (OpenAI: role "tool"; Anthropic: a tool_result block).
func lastIsToolResult(body []byte) bool {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return false
	}
	last := req.Messages[len(req.Messages)-1]
	// OpenAI: the images tools returned follow their tool messages in a
	// user message.
	return last.Role == "tool" || strings.Contains(string(last.Content), `"tool_result"`) ||
		strings.Contains(string(last.Content), "returned by tool call")
}

func openAIStream(calls []modelCall, answered bool) string {
	var b strings.Builder
	chunk := func(delta string, finish string) {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		fmt.Fprintf(&b, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, f)
	}
	if answered || len(calls) == 0 {
		chunk(`{"content":"All done."}`, "")
		chunk(`{}`, "stop")
	} else {
		for i, c := range calls {
			args, _ := json.Marshal(c.Args)
			argStr, _ := json.Marshal(string(args))
			chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":%q,"arguments":%s}}]}`, i, i, c.Name, argStr), "")
		}
		chunk(`{}`, "tool_calls")
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func anthropicStream(calls []modelCall, answered bool) string {
	var b strings.Builder
	ev := func(typ, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":10,"output_tokens":1}}}`)
	stop := "end_turn"
	if answered || len(calls) == 0 {
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"All done."}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	} else {
		stop = "tool_use"
		for i, c := range calls {
			args, _ := json.Marshal(c.Args)
			partial, _ := json.Marshal(string(args))
			ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_%d","name":%q,"input":{}}}`, i, i, c.Name))
			ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, partial))
			ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		}
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`"},"usage":{"output_tokens":5}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return b.String()
}

// toolClient is an ACP client on github.com/coder/acp-go-sdk that serves
// fs/* and terminal/* for real (in its own "editor buffers" and with
// os/exec), answers permission requests with a fixed option, and records
// what the agent asked and the tool call updates.
type toolClient struct {
	dir    string
	answer string // permission option id, or "cancelled"

	mu          sync.Mutex
	methods     []string
	permissions []sdk.RequestPermissionRequest
	finals      map[string]sdk.SessionToolCallUpdate
	titles      map[string]string
	buffers     map[string]string // path -> content the editor holds
	terminals   map[string]*exec.Cmd
	outputs     map[string]*strings.Builder
}

func newToolClient(dir, answer string) *toolClient {
	return &toolClient{dir: dir, answer: answer, finals: map[string]sdk.SessionToolCallUpdate{}, titles: map[string]string{},
		buffers: map[string]string{}, terminals: map[string]*exec.Cmd{}, outputs: map[string]*strings.Builder{}}
}

func (c *toolClient) record(method string) {
	c.mu.Lock()
	c.methods = append(c.methods, method)
	c.mu.Unlock()
}

func (c *toolClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if tc := n.Update.ToolCall; tc != nil {
		c.titles[string(tc.ToolCallId)] = tc.Title
	}
	if u := n.Update.ToolCallUpdate; u != nil && u.Status != nil && (*u.Status == sdk.ToolCallStatusCompleted || *u.Status == sdk.ToolCallStatusFailed) {
		c.finals[string(u.ToolCallId)] = *u
	}
	return nil
}

func (c *toolClient) RequestPermission(_ context.Context, req sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.record("session/request_permission")
	c.mu.Lock()
	c.permissions = append(c.permissions, req)
	c.mu.Unlock()
	if c.answer == "cancelled" {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(c.answer))}, nil
}

func (c *toolClient) ReadTextFile(_ context.Context, req sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.record("fs/read_text_file")
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.buffers[req.Path]; ok {
		return sdk.ReadTextFileResponse{Content: s}, nil
	}
	data, err := os.ReadFile(req.Path)
	return sdk.ReadTextFileResponse{Content: string(data)}, err
}

func (c *toolClient) WriteTextFile(_ context.Context, req sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.record("fs/write_text_file")
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buffers[req.Path] = req.Content // an unsaved editor buffer
	return sdk.WriteTextFileResponse{}, nil
}

func (c *toolClient) CreateTerminal(_ context.Context, req sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	c.record("terminal/create")
	cmd := exec.Command(req.Command, req.Args...)
	if req.Cwd != nil {
		cmd.Dir = *req.Cwd
	}
	// Like an editor: its own environment plus what the agent asked for.
	cmd.Env = os.Environ()
	for _, e := range req.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	// An editor would not try again; Wine's failure to start is not the
	// agent's (winetest.Start).
	tmpl := cmd
	if err := winetest.Start(nil, func() error { cmd = copyCmd(tmpl); return cmd.Start() }); err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id := fmt.Sprintf("term-%d", len(c.terminals)+1)
	c.terminals[id], c.outputs[id] = cmd, out
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *toolClient) WaitForTerminalExit(_ context.Context, req sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	c.record("terminal/wait_for_exit")
	c.mu.Lock()
	cmd := c.terminals[req.TerminalId]
	c.mu.Unlock()
	_ = cmd.Wait()
	code := cmd.ProcessState.ExitCode()
	return sdk.WaitForTerminalExitResponse{ExitCode: &code}, nil
}

func (c *toolClient) TerminalOutput(_ context.Context, req sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	c.record("terminal/output")
	c.mu.Lock()
	defer c.mu.Unlock()
	code := c.terminals[req.TerminalId].ProcessState.ExitCode()
	return sdk.TerminalOutputResponse{Output: c.outputs[req.TerminalId].String(), ExitStatus: &sdk.TerminalExitStatus{ExitCode: &code}}, nil
}

func (c *toolClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	c.record("terminal/kill")
	return sdk.KillTerminalResponse{}, nil
}

func (c *toolClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	c.record("terminal/release")
	return sdk.ReleaseTerminalResponse{}, nil
}

func (c *toolClient) recorded() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.methods...)
}

func (c *toolClient) final(id string) (sdk.SessionToolCallUpdate, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	u, ok := c.finals[id]
	return u, ok
}

// e2eSession starts the binary on a scripted model, connects the client
// with caps, and opens a session in dir.
func e2eSession(t *testing.T, provider string, model *scriptedModel, client *toolClient, caps sdk.ClientCapabilities, args ...string) (*sdk.ClientSideConnection, sdk.SessionId) {
	t.Helper()
	env := agentEnv(t)
	switch provider {
	case "anthropic":
		env = append(env, "ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL="+model.URL)
		args = append(args, "--model", "anthropic/claude-test")
	default:
		env = append(env, "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
		args = append(args, "--model", "openai/test-model")
	}
	cmd := exec.Command(agentBin, args...)
	cmd.Env = env
	var stderr syncWriter
	log := sdkLog(t)
	cmd, stdin, stdout := startPiped(t, cmd, &stderr)
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			assert.NoError(t, err, "agent exit")
		case <-time.After(waitBudget(t)):
			_ = cmd.Process.Kill()
			<-done
			t.Error("agent did not exit after stdin EOF")
		}
		if t.Failed() {
			t.Logf("agent stderr:\n%s", stderr.String())
		}
	})
	conn := sdk.NewClientSideConnection(client, stdin, stdout)
	conn.SetLogger(log)
	ctx := waitCtx(t)
	_, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
	require.NoError(t, err)
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: client.dir, McpServers: []sdk.McpServer{}})
	require.NoError(t, err)
	return conn, sess.SessionId
}

func promptE2E(t *testing.T, conn *sdk.ClientSideConnection, sid sdk.SessionId, text string) sdk.StopReason {
	t.Helper()
	return promptE2EWithin(t, conn, sid, text, waitBudget(t))
}

// promptE2EWithin is promptE2E for a turn that may take up to d (a long
// command on a loaded machine).
func promptE2EWithin(t *testing.T, conn *sdk.ClientSideConnection, sid sdk.SessionId, text string, d time.Duration) sdk.StopReason {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sid, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	require.NoError(t, err)
	return resp.StopReason
}

func toolText(u sdk.SessionToolCallUpdate) string {
	var b strings.Builder
	for _, c := range u.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(unfenced(c.Content.Content.Text.Text))
		}
	}
	return b.String()
}

// unfenced is the text inside a Markdown code block the agent put a
// tool's output in, with the line break the block's fence took, or text
// as it is when it is none.
func unfenced(text string) string {
	if inner, ok := markdown.CodeBlockText(text); ok {
		return inner + "\n"
	}
	return text
}

// Issue 4: a two-step tool loop through the built binary, against each
// provider's wire format: the model calls read_file, the agent runs it,
// and the second request carries the result.
func TestBinaryTwoStepToolLoopEachProvider(t *testing.T) {
	for _, provider := range []string{"openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from disk"), 0o600))
			model := newScriptedModel(t, provider, modelCall{"read_file", map[string]any{"path": "hello.txt"}})
			client := newToolClient(dir, "allow_once")
			conn, sid := e2eSession(t, provider, model, client, sdk.ClientCapabilities{})
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "what does hello.txt say?"))
			id := map[string]string{"openai": "call_0", "anthropic": "toolu_0"}[provider]
			u, ok := client.final(id)
			require.True(t, ok)
			assert.Equal(t, sdk.ToolCallStatusCompleted, *u.Status)
			assert.Equal(t, "     1\thello from disk\n", toolText(u))
			assert.Contains(t, model.body(t, 1), "hello from disk", "the tool result went back to the model")
			assert.Empty(t, client.recorded(), "a read needs no permission and the client offered no fs")
		})
	}
}

// Issue 5: with fs and terminal advertised, the agent uses the editor's;
// without, it works locally and never calls them.
func TestBinaryToolsUseTheEditorOnlyWhenAdvertised(t *testing.T) {
	needsBash(t)
	calls := []modelCall{
		{"write_file", map[string]any{"path": "note.txt", "content": "written by the agent"}},
		{"read_file", map[string]any{"path": "note.txt"}},
		{"run_command", map[string]any{"command": "echo ran in $PWD"}},
	}
	t.Run("advertised", func(t *testing.T) {
		dir := t.TempDir()
		model := newScriptedModel(t, "openai", calls...)
		client := newToolClient(dir, "allow_once")
		conn, sid := e2eSession(t, "openai", model, client,
			sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}, "--mode", "full-access")
		assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "go"))
		assert.Equal(t, []string{"fs/write_text_file", "fs/read_text_file", "terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"},
			client.recorded())
		_, err := os.Stat(filepath.Join(dir, "note.txt"))
		assert.True(t, os.IsNotExist(err), "the editor holds the write, the agent did not touch the disk")
		read, _ := client.final("call_1")
		assert.Equal(t, "     1\twritten by the agent\n", toolText(read), "the read saw the editor's buffer")
		run, _ := client.final("call_2")
		require.NotEmpty(t, run.Content)
		require.NotNil(t, run.Content[0].Terminal, "the editor's terminal is embedded in the tool call")
		assert.Contains(t, model.body(t, 1), "ran in "+dir)
	})
	t.Run("not advertised", func(t *testing.T) {
		dir := t.TempDir()
		model := newScriptedModel(t, "openai", calls...)
		client := newToolClient(dir, "allow_once")
		conn, sid := e2eSession(t, "openai", model, client, sdk.ClientCapabilities{}, "--mode", "full-access")
		assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "go"))
		assert.Empty(t, client.recorded())
		data, err := os.ReadFile(filepath.Join(dir, "note.txt"))
		require.NoError(t, err)
		assert.Equal(t, "written by the agent", string(data))
		run, _ := client.final("call_2")
		assert.Contains(t, toolText(run), "ran in "+dir)
		assert.Contains(t, toolText(run), "[exit code 0]")
	})
}

// Issue 5: the permission round trip with each option, through the
// binary; the model is told about a rejection.
func TestBinaryPermissionRoundTrip(t *testing.T) {
	needsBash(t)
	tests := []struct {
		answer   string
		wantRun  bool
		wantStop sdk.StopReason
	}{
		{"allow_once", true, sdk.StopReasonEndTurn},
		{"allow_always", true, sdk.StopReasonEndTurn},
		{"reject_once", false, sdk.StopReasonEndTurn},
		{"reject_always", false, sdk.StopReasonEndTurn},
		{"cancelled", false, sdk.StopReasonCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.answer, func(t *testing.T) {
			dir := t.TempDir()
			model := newScriptedModel(t, "openai", modelCall{"run_command", map[string]any{"command": "touch made"}})
			client := newToolClient(dir, tt.answer)
			conn, sid := e2eSession(t, "openai", model, client, sdk.ClientCapabilities{})
			assert.Equal(t, tt.wantStop, promptE2E(t, conn, sid, "make it"))
			require.Len(t, client.permissions, 1)
			req := client.permissions[0]
			require.NotNil(t, req.ToolCall.Title)
			assert.Equal(t, "`touch made`", *req.ToolCall.Title)
			require.Len(t, req.Options, 4)
			_, err := os.Stat(filepath.Join(dir, "made"))
			assert.Equal(t, tt.wantRun, err == nil)
			if tt.answer == "reject_once" || tt.answer == "reject_always" {
				assert.Contains(t, model.body(t, 1), "The user rejected this tool call", "the model sees the rejection")
			}
			// The same call again: remembered answers are not asked.
			stop := promptE2E(t, conn, sid, "make it again")
			switch tt.answer {
			case "allow_always":
				assert.Len(t, client.permissions, 1, "allow_always is remembered")
				assert.Equal(t, sdk.StopReasonEndTurn, stop)
			case "reject_always":
				assert.Len(t, client.permissions, 1, "reject_always is remembered")
				assert.Equal(t, sdk.StopReasonCancelled, stop, "and answers cancelled")
			default:
				assert.Len(t, client.permissions, 2, "a _once answer is not remembered")
			}
		})
	}
}
