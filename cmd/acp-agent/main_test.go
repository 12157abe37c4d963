package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/internal/winetest"
	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// agentBin is the acp-agent binary built once for the end-to-end tests.
var agentBin string

// goraceEnv goes into every agent's environment: the race runtime of the
// race-enabled test build otherwise sleeps a second at each exit (the
// agent's and its sandbox helpers').
const goraceEnv = "GORACE=atexit_sleep_ms=0"

// sleeperArg makes this test binary a command that writes its process id
// to a file and sleeps (sleeperLine).
const sleeperArg = "-acp-agent-test-sleeper"

// sleeperLine is a command line (for bash and cmd.exe alike) that runs
// this test binary as a process that writes its pid to file, relative to
// the command's directory, and sleeps five minutes: a long command whose
// process can be watched where the shell has no $$ (cmd.exe).
func sleeperLine(file string) string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return `"` + exe + `" ` + sleeperArg + " " + file
}

func TestMain(m *testing.M) {
	// The tests that call run in this process start sandbox helpers as
	// the agent does, from its own executable: this test binary, which
	// must then be one (and, race-enabled, not sleep at its exit).
	sandbox.Main(os.Args)
	os.Setenv("GORACE", strings.TrimPrefix(goraceEnv, "GORACE="))
	if len(os.Args) == 3 && os.Args[1] == sleeperArg {
		if err := os.WriteFile(os.Args[2], []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil {
			os.Exit(1)
		}
		time.Sleep(5 * time.Minute)
		os.Exit(0)
	}
	if winetest.Active {
		// Wine's powershell.exe is a stub that runs nothing and exits 0:
		// with it off PATH the agents run their commands with cmd.exe
		// (the default where there is no PowerShell), and they run.
		var keep []string
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			if !strings.Contains(strings.ToLower(d), "powershell") {
				keep = append(keep, d)
			}
		}
		os.Setenv("PATH", strings.Join(keep, string(filepath.ListSeparator)))
	}
	dir, err := os.MkdirTemp("", "acp-agent-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Others may run it: the sandbox tests run the agent as nobody too.
	_ = os.Chmod(dir, 0o755)
	agentBin = filepath.Join(dir, "acp-agent")
	if bin := os.Getenv("ACP_AGENT_TEST_BIN"); bin != "" {
		// A binary built beforehand: where this test binary runs without
		// a Go toolchain (Windows test binaries under Wine).
		agentBin = bin
	} else {
		args := []string{"build", "-o", agentBin}
		if raceEnabled {
			args = append(args, "-race") // catch races in the real process too
		}
		build := exec.Command("go", append(args, ".")...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building acp-agent:", err)
			os.Exit(1)
		}
	}
	code := 0
	if err := goleak.Find(); err == nil {
		code = m.Run()
		if code == 0 {
			if err := goleak.Find(); err != nil {
				fmt.Fprintln(os.Stderr, "goleak:", err)
				code = 1
			}
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running acp-agent with an acptest client on its pipes.
type proc struct {
	*acptest.Client
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncWriter
	exited chan error
}

// startAgent runs the binary with args and env (added to a minimal
// environment: the real API keys of the machine never reach tests).
func startAgent(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startAgentCmd(t, exec.Command(agentBin, args...), env)
}

// startAgentCmd is startAgent with the command that runs the binary (in
// a namespace, say).
func startAgentCmd(t *testing.T, cmd *exec.Cmd, env []string) *proc {
	t.Helper()
	cmd.Env = append(agentEnv(t), env...)
	stderr := &syncWriter{}
	cmd, stdin, stdout := startPiped(t, cmd, stderr)
	p := &proc{cmd: cmd, stdin: stdin, stderr: stderr, exited: make(chan error, 1)}
	p.Client = acptest.New(t, stdin, stdout)
	p.Client.Timeout = waitBudget(t) // also what Wine on a loaded machine needs
	p.Client.AnnouncesCommands = true
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case err := <-p.exited:
			// A test may kill the agent on purpose; anything else but a
			// clean exit (a panic at shutdown exits 2) is a failure.
			var ee *exec.ExitError
			if errors.As(err, &ee) && !killedByTest(ee) {
				t.Errorf("agent exited with %v after stdin EOF", err)
			}
		case <-time.After(waitBudget(t)):
			_ = cmd.Process.Kill()
			<-p.exited
			t.Errorf("agent did not exit within %s of stdin EOF", waitBudget(t))
		}
		if t.Failed() {
			t.Logf("agent stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// startCmd starts cmd, after pipes (may be nil) has set its pipes. Where
// Wine could not start it (winetest.Start) it starts a copy instead, with
// pipes of its own, and returns the command that runs: an exec.Cmd
// starts once, and a failed Start closes the pipes it was given. The copy
// keeps the path, arguments, environment, directory, streams and
// SysProcAttr; cmd must not come from exec.CommandContext.
func startCmd(t testing.TB, cmd *exec.Cmd, pipes func(*exec.Cmd) error) *exec.Cmd {
	t.Helper()
	if cmd.Cancel != nil {
		panic("startCmd cannot copy a command made by exec.CommandContext")
	}
	tmpl := copyCmd(cmd) // before pipes sets cmd's streams
	next := cmd
	require.NoError(t, winetest.Start(t.Logf, func() error {
		cmd, next = next, copyCmd(tmpl)
		if pipes != nil {
			if err := pipes(cmd); err != nil {
				return err
			}
		}
		return cmd.Start()
	}))
	return cmd
}

// startPiped starts cmd (startCmd) with pipes to its stdin and from its
// stdout, and its stderr to stderr.
func startPiped(t testing.TB, cmd *exec.Cmd, stderr io.Writer) (*exec.Cmd, io.WriteCloser, io.Reader) {
	t.Helper()
	var stdin io.WriteCloser
	var stdout io.Reader
	cmd = startCmd(t, cmd, func(cmd *exec.Cmd) (err error) {
		if stdin, err = cmd.StdinPipe(); err != nil {
			return err
		}
		stdout, err = cmd.StdoutPipe()
		cmd.Stderr = stderr
		return err
	})
	return cmd, stdin, stdout
}

// copyCmd is a command that has not started, made from c's settings.
func copyCmd(c *exec.Cmd) *exec.Cmd {
	return &exec.Cmd{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir,
		Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr, ExtraFiles: c.ExtraFiles,
		SysProcAttr: c.SysProcAttr, WaitDelay: c.WaitDelay}
}

// waitExit waits for the process to exit and returns its exit error,
// failing the test after d or waitBudget, whichever is longer: a test
// asserts that the agent exits, not how fast on a busy machine.
func (p *proc) waitExit(t *testing.T, d time.Duration) error {
	t.Helper()
	d = max(d, waitBudget(t))
	select {
	case err := <-p.exited:
		p.exited <- err // for Cleanup
		return err
	case <-time.After(d):
		t.Fatalf("agent did not exit within %s", d)
		return nil
	}
}

// writeScript writes a replay script and returns its path.
func writeScript(t *testing.T, script any) string {
	t.Helper()
	data, err := json.Marshal(script)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

func textOf(t *testing.T, msgs []acptest.Message) string {
	t.Helper()
	var b strings.Builder
	for _, m := range msgs {
		if u := m.Update(t).Update; u.AgentMessageChunk != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func TestBinaryReplayExchange(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/default", "--log-level", "debug")
	init := p.Initialize(nil)
	assert.Equal(t, acp.ProtocolVersionV1, init.ProtocolVersion)
	assert.Equal(t, "acp-agent", init.AgentInfo.Name)
	sid := p.NewSession(t.TempDir())
	resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
	var r acp.PromptResponse
	acptest.MustResult(t, resp, &r)
	assert.Equal(t, acp.StopReasonEndTurn, r.StopReason)
	assert.NotEmpty(t, textOf(t, updates))
	// With debug logging on, logs went to stderr: stdout held only the
	// protocol (acptest fails on any other line).
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 2*time.Second))
	assert.Contains(t, p.stderr.String(), "session created")
}

// TestBinaryStreamsChunksInOrder streams 10,000 numbered chunks from a
// replay script through the real binary and pipes: the text arrives whole
// and in order (in fewer notifications when chunks waited for the pipe and
// were merged).
func TestBinaryStreamsChunksInOrder(t *testing.T) {
	t.Parallel()
	const n = 10000
	events := make([]map[string]any, n)
	for i := range events {
		events[i] = map[string]any{"text": fmt.Sprintf("%d,", i)}
	}
	script := writeScript(t, map[string]any{"turns": []any{map[string]any{"events": events}}})
	p := startAgent(t, nil, "--model", "replay/"+script)
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	acptest.MustResult(t, resp, nil)
	require.GreaterOrEqual(t, len(updates), 2)
	require.LessOrEqual(t, len(updates), n+1)
	require.NotNil(t, updates[0].Update(t).Update.SessionInfoUpdate, "the title comes first")
	var want, got strings.Builder
	for i := range n {
		fmt.Fprintf(&want, "%d,", i)
	}
	for _, m := range updates[1:] {
		got.WriteString(m.Update(t).Update.AgentMessageChunk.Content.Text.Text)
	}
	require.Equal(t, want.String(), got.String())
	if m, ok := p.NextWithin(100 * time.Millisecond); ok {
		t.Fatalf("message after the prompt response: %s", m.Raw)
	}
}

func hangingScript(t *testing.T) string {
	return writeScript(t, map[string]any{"turns": []any{map[string]any{"events": []any{
		map[string]any{"text": "working"}, map[string]any{"hang": true},
	}}}})
}

func TestBinaryCancel(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+hangingScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	assert.Equal(t, "working", textOf(t, []acptest.Message{p.Next(), p.Next()}), "the title, then the text")
	p.Notify(acp.MethodSessionCancel, &acp.CancelNotification{SessionID: sid})
	resp, before := p.Await(id)
	assert.Empty(t, before)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
}

// TestBinaryExitsOnEOF: closing stdin during a turn cancels it and the
// process exits 0 within 2 s.
func TestBinaryExitsOnEOF(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+hangingScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	p.Next() // the turn is running
	start := time.Now()
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 2*time.Second))
	t.Logf("exited %s after EOF", time.Since(start))
}

// TestBinaryExitsOnSIGTERM: SIGTERM during a turn answers the turn with
// "cancelled" and exits 0 within 2 s.
func TestBinaryExitsOnSIGTERM(t *testing.T) {
	needsSignals(t)
	p := startAgent(t, nil, "--model", "replay/"+hangingScript(t))
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("go")}})
	p.Next()
	start := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	resp, _ := p.Await(id)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(resp.Result))
	require.NoError(t, p.waitExit(t, 2*time.Second))
	t.Logf("exited %s after SIGTERM", time.Since(start))
}

func TestBinaryWithoutKeyNeedsConfiguration(t *testing.T) {
	p := startAgent(t, nil, "--model", "openai/gpt-4.1")
	init := p.Initialize(nil)
	require.Len(t, init.AuthMethods, 1)
	resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "OPENAI_API_KEY")
}

func TestBinaryModelFromEnvironment(t *testing.T) {
	p := startAgent(t, []string{"ACP_AGENT_MODEL=replay/default"})
	p.Initialize(nil)
	assert.NotEmpty(t, p.NewSession(t.TempDir()))
}

func TestRunFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantErr    error
		wantErrMsg string
		wantStdout string
		wantStderr string
	}{
		{name: "version", args: []string{"--version"}, wantStdout: versionLine() + "\nsandbox: " + sandbox.Probe().String() + "\n"},
		{name: "unknown flag", args: []string{"--bogus"}, wantErrMsg: "bogus", wantStderr: "Run acp-agent --help for the usage."},
		{name: "bad log level", args: []string{"--log-level", "loud"}, wantErrMsg: "unknown log level"},
		{name: "stray argument", args: []string{"extra"}, wantErrMsg: "unexpected argument"},
		{name: "missing models file", args: []string{"--models-file", "/nonexistent/models.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), strings.NewReader(""), &stdout, &stderr, tt.args)
			switch {
			case tt.wantErr != nil:
				assert.True(t, errors.Is(err, tt.wantErr), "got %v", err)
			case tt.wantErrMsg != "":
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErrMsg)
			default:
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantStdout, stdout.String())
			assert.Contains(t, stderr.String(), tt.wantStderr)
		})
	}
}

// TestRunServesUntilEOF runs the whole program in-process on pipes.
func TestRunServesUntilEOF(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncWriter
	done := make(chan error, 1)
	t.Setenv("ACP_AGENT_MODEL", "replay/default")
	go func() {
		done <- run(context.Background(), inR, outW, &stderr, []string{"--log-level", "off", "--sandbox", "off"})
		outW.Close()
	}()
	c := acptest.New(t, inW, outR)
	c.Initialize(nil)
	c.NewSession(t.TempDir())
	inW.Close()
	require.NoError(t, <-done)
	c.ExpectEOF(waitBudget(t))
	assert.Empty(t, stderr.String(), "--log-level off writes nothing")
}

// TestBinaryTelemetryGoesToItsFileNeverToStdout: with --telemetry-file the
// prompt lifecycle is written there, in order, and no event name ever
// appears in a protocol message.
func TestBinaryTelemetryGoesToItsFileNeverToStdout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telemetry.jsonl")
	p := startAgent(t, nil, "--model", "replay/default", "--telemetry-file", path, "--log-level", "debug")
	var seen []acptest.Message
	resp, _ := p.Call(acp.MethodInitialize, &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionV1})
	seen = append(seen, resp)
	sid := p.NewSession(t.TempDir())
	resp, updates := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
	acptest.MustResult(t, resp, nil)
	seen = append(append(seen, updates...), resp)
	p.stdin.Close()
	require.NoError(t, p.waitExit(t, 2*time.Second))

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var names []string
	attrs := map[string]map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Name       string            `json:"name"`
			SessionID  string            `json:"sessionId"`
			RequestID  string            `json:"requestId"`
			Attributes map[string]string `json:"attributes"`
			Timestamp  string            `json:"timestamp"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &ev), "line %q", line)
		assert.Equal(t, sid, ev.SessionID)
		// docs/telemetry.md: RFC 3339 in UTC with nine fractional digits,
		// so that the strings sort in time order.
		assert.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$`, ev.Timestamp)
		names = append(names, ev.Name)
		attrs[ev.Name] = ev.Attributes
	}
	assert.Equal(t, []string{"session_new", "prompt_requested", "prompt_started", "prompt_completed"}, names)
	// docs/telemetry.md's table of attributes.
	assert.NotEmpty(t, attrs["session_new"]["cwd"])
	assert.Equal(t, map[string]string{"stopReason": "end_turn"}, attrs["prompt_completed"])
	assert.Empty(t, attrs["prompt_requested"], "a session/prompt has no source attribute")
	if !onWindows {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "events name directories and carry error text")
	}
	for _, m := range seen {
		for _, name := range names {
			assert.NotContains(t, string(m.Raw), name, "telemetry leaked into the protocol")
		}
	}
	assert.Contains(t, p.stderr.String(), "prompt_completed", "the log sink gets the events")
}

// chatOnly serves h for chat requests (POST) and answers anything else
// as a server without a model list does (404): the agent's model
// discovery (GET /v1/models) then fails quietly, and h sees, and
// records, only the model requests a test is about.
func chatOnly(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	})
}
