// Command acp-demo shows the agent's main job, offline, as an editor would
// see it: in a fresh temporary Go project whose test fails, the agent
// reads the code, shows a plan, proposes an edit (its diff is shown, then
// approved), runs the test (confined by the sandbox where the kernel
// allows) and answers. Then the agent process is restarted, session/load
// replays the session, and /cost shows the same usage as before. The
// model is the replay model playing a script (docs/replay-script.md), so
// nothing leaves the machine. `make demo` runs it against bin/acp-agent.
//
// It is a small ACP client over real pipes: initialize, session/new,
// session/prompt, permission answers, session/load. Colour is used only
// on a terminal, and never with NO_COLOR set.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-agent/acp-agent/acp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "acp-demo:", err)
			os.Exit(1)
		}
	}
}

// The project the demo works on: Add subtracts, and its test says so.
var project = map[string]string{
	"go.mod": "module demo\n\ngo 1.21\n",
	"calc.go": `// Package calc does arithmetic.
package calc

// Add returns the sum of a and b.
func Add(a, b int) int {
	return a - b
}
`,
	"calc_test.go": `package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Fatalf("Add(2, 3) = %d, want 5", got)
	}
}
`,
}

const prompt = "The tests fail. Find the bug and fix it."

// script is what "the model" does: read, plan, edit, test, answer. Each
// request after tool results plays the next turn (docs/replay-script.md).
func script() string {
	plan := func(statuses ...string) map[string]any {
		names := []string{"Read the code and its test", "Fix the bug", "Run the tests"}
		var entries []any
		for i, s := range statuses {
			entries = append(entries, map[string]any{"content": names[i], "status": s, "priority": "high"})
		}
		return map[string]any{"entries": entries}
	}
	call := func(name string, args any) map[string]any {
		return map[string]any{"toolCall": map[string]any{"name": name, "arguments": args}}
	}
	text := func(s string) map[string]any { return map[string]any{"text": s, "delayMs": 15} }
	usage := func(in, out, cached int) map[string]any {
		return map[string]any{"usage": map[string]any{"inputTokens": in, "outputTokens": out, "cachedReadTokens": cached}}
	}
	turns := []any{
		map[string]any{"match": prompt, "events": []any{
			map[string]any{"reasoning": "A failing test: read the code and the test first.", "delayMs": 30},
			text("Let me look at the code and its test."),
			call("update_plan", plan("in_progress", "pending", "pending")),
			call("read_file", map[string]any{"path": "calc.go"}),
			call("read_file", map[string]any{"path": "calc_test.go"}),
			usage(1450, 96, 0)}},
		map[string]any{"events": []any{
			map[string]any{"reasoning": "Add returns a - b; the test wants the sum.", "delayMs": 30},
			text("`Add` subtracts instead of adding. I'll fix it."),
			call("update_plan", plan("completed", "in_progress", "pending")),
			call("edit_file", map[string]any{"path": "calc.go", "old_string": "return a - b", "new_string": "return a + b"}),
			usage(1820, 74, 1408)}},
		map[string]any{"events": []any{
			text("Now the tests."),
			call("update_plan", plan("completed", "completed", "in_progress")),
			call("run_command", map[string]any{"command": "go test ./..."}),
			usage(2010, 41, 1792)}},
		map[string]any{"events": []any{
			call("update_plan", plan("completed", "completed", "completed")),
			text("Fixed: `Add` in calc.go returned `a - b`; it now returns `a + b`, and `go test ./...` passes."),
			usage(2205, 38, 1984)}, "finish": "tool_calls"},
		map[string]any{"events": []any{text("Done.")}},
	}
	data, _ := json.Marshal(map[string]any{"turns": turns})
	return string(data)
}

func run(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("acp-demo", flag.ContinueOnError)
	fs.SetOutput(out)
	agentPath := fs.String("agent", "bin/acp-agent", "path of the agent binary")
	workspace := fs.String("workspace", "", "where to create the demo project (default: a new temporary directory, removed afterwards)")
	keep := fs.Bool("keep", false, "keep the temporary directory (project, session and log) to look at afterwards")
	color := fs.String("color", "auto", "colour: auto (only on a terminal, never with NO_COLOR), always or never")
	if err := fs.Parse(args); err != nil {
		return err
	}
	agent, err := filepath.Abs(*agentPath)
	if err != nil {
		return err
	}
	if _, err := os.Stat(agent); err != nil {
		return fmt.Errorf("no agent binary at %s (run `make build` first): %w", agent, err)
	}
	tmp, err := os.MkdirTemp("", "acp-demo-")
	if err != nil {
		return err
	}
	if *keep {
		defer fmt.Fprintf(out, "\n(kept %s)\n", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	ws := *workspace
	if ws == "" {
		ws = filepath.Join(tmp, "project")
	}
	if err := writeProject(ws); err != nil {
		return err
	}
	scriptPath := filepath.Join(tmp, "script.json")
	configPath := filepath.Join(tmp, "config.json")
	model := "replay/" + scriptPath
	cfg, _ := json.Marshal(map[string]any{"models": []any{map[string]any{"model": model, "name": "Demo script", "contextWindow": 32768}}})
	if err := os.WriteFile(scriptPath, []byte(script()), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(configPath, cfg, 0o600); err != nil {
		return err
	}
	agentArgs := []string{"--model", model, "--config", configPath, "--session-dir", filepath.Join(tmp, "sessions"),
		"--log-file", filepath.Join(tmp, "agent.log"), "--mode", "default", "--discover-models=false"}

	p := newPrinter(out, useColor(out, *color), ws)
	start := time.Now()
	version, _ := exec.CommandContext(ctx, agent, "--version").Output()
	p.section("A coding task, offline")
	p.line("%s", strings.ReplaceAll(strings.TrimSpace(string(version)), "\n", " · "))
	p.sandboxed = strings.Contains(string(version), "sandbox: available")
	p.line("project: %s (a Go module whose test fails)", ws)

	// First agent process: the task.
	a, err := startAgent(ctx, agent, agentArgs, p)
	if err != nil {
		return err
	}
	var sess acp.NewSessionResponse
	if err := a.call(ctx, acp.MethodSessionNew, &acp.NewSessionRequest{CWD: ws, MCPServers: []acp.McpServer{}}, &sess); err != nil {
		a.close()
		return fmt.Errorf("session/new: %w", err)
	}
	p.line("session %s", sess.SessionID)
	p.section("You")
	p.line("%s", prompt)
	p.section("The agent")
	var resp acp.PromptResponse
	err = a.call(ctx, acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sess.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}, &resp)
	p.endLine()
	if err != nil {
		a.close()
		return fmt.Errorf("session/prompt: %w", err)
	}
	p.line("%s", p.dim("(turn ended: "+string(resp.StopReason)+")"))
	cost1, err := a.slash(ctx, sess.SessionID, "/cost")
	if err != nil {
		a.close()
		return err
	}
	p.section("/cost")
	p.line("%s", cost1)
	if err := a.close(); err != nil {
		return err
	}

	fixed, _ := os.ReadFile(filepath.Join(ws, "calc.go"))
	if !strings.Contains(string(fixed), "return a + b") {
		return errors.New("the edit did not reach calc.go")
	}
	if !p.testPassed {
		return errors.New("the test run did not pass")
	}

	// Second agent process: the session comes back.
	p.section("The agent restarts; session/load replays the session")
	b, err := startAgent(ctx, agent, agentArgs, p)
	if err != nil {
		return err
	}
	defer b.close()
	p.replaying = true
	var loaded acp.LoadSessionResponse
	if err := b.call(ctx, acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: sess.SessionID, CWD: ws, MCPServers: []acp.McpServer{}}, &loaded); err != nil {
		return fmt.Errorf("session/load: %w", err)
	}
	p.endLine()
	p.replaying = false
	cost2, err := b.slash(ctx, sess.SessionID, "/cost")
	if err != nil {
		return err
	}
	p.section("/cost after the restart")
	p.line("%s", cost2)
	if cost1 != cost2 {
		return fmt.Errorf("/cost differs after the restart: %q, then %q", cost1, cost2)
	}
	p.line("%s", p.green("✓ the same usage, the same cost"))
	p.section("Done")
	p.line("The test fails, the agent reads, plans, edits (approved), tests and answers; a restart loses nothing. %s", p.dim("("+time.Since(start).Round(100*time.Millisecond).String()+")"))
	return nil
}

func writeProject(dir string) error {
	for name, text := range project {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// useColor says whether to colour: always, never, or (auto) when out is a
// terminal, NO_COLOR is unset and TERM is not dumb.
func useColor(out io.Writer, mode string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// agentProc is a running agent and the connection to it.
type agentProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	conn  *jsonrpc2.Conn
	p     *printer
}

func startAgent(ctx context.Context, path string, args []string, p *printer) (*agentProc, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stderr = os.Stderr // warnings and errors only
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the agent: %w", err)
	}
	a := &agentProc{cmd: cmd, stdin: stdin, p: p}
	a.conn = jsonrpc2.NewConn(ctx, jsonrpc2.NewPlainObjectStream(rwc{stdout, stdin}), p)
	var init acp.InitializeResponse
	caps := acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Notices: &acp.NoticeCapabilities{}}}
	if err := a.call(ctx, acp.MethodInitialize, &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionV1,
		ClientCapabilities: caps, ClientInfo: &acp.Implementation{Name: "acp-demo", Version: "1"}}, &init); err != nil {
		a.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return a, nil
}

func (a *agentProc) call(ctx context.Context, method string, params, result any) error {
	return a.conn.Call(ctx, method, params, result)
}

// slash runs a slash command and returns what the agent answered.
func (a *agentProc) slash(ctx context.Context, sid acp.SessionId, command string) (string, error) {
	p := a.p
	p.capture()
	var resp acp.PromptResponse
	err := a.call(ctx, acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(command)}}, &resp)
	text := strings.TrimSpace(p.captured())
	if err != nil {
		return "", fmt.Errorf("%s: %w", command, err)
	}
	return text, nil
}

// close ends the agent: stdin closed, the process waited for.
func (a *agentProc) close() error {
	a.stdin.Close()
	a.conn.Close()
	err := a.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("the agent exited with %v", err)
	}
	return nil
}

type rwc struct {
	io.Reader
	io.WriteCloser
}
