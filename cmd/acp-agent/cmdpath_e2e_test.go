package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// commandScript is a replay script whose turn matching each key runs its
// command line with run_command, then answers "done".
func commandScript(t *testing.T, commands map[string]string) string {
	t.Helper()
	var turns []any
	for match, line := range commands {
		turns = append(turns, map[string]any{"match": match, "events": []any{
			map[string]any{"toolCall": map[string]any{"name": "run_command", "arguments": map[string]any{"command": line}}}}})
	}
	turns = append(turns, map[string]any{"events": []any{map[string]any{"text": "done"}}})
	return writeScript(t, map[string]any{"turns": turns})
}

// exe writes an executable shell script.
func exe(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
}

// turn sends a prompt and answers the agent's requests with answer (nil:
// none expected); it returns the response, the updates and the requests.
func turn(t *testing.T, p *proc, sid, text string, answer func(acptest.Message) any) (acptest.Message, []acp.SessionUpdate, []acptest.Message) {
	t.Helper()
	id := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: acp.SessionId(sid), Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	var updates []acp.SessionUpdate
	var requests []acptest.Message
	for {
		m := p.Next()
		switch {
		case m.IsResponse() && string(m.ID) == id:
			return m, updates, requests
		case m.Method == acp.MethodSessionUpdate:
			updates = append(updates, m.Update(t).Update)
		case m.Method != "" && m.ID != nil:
			requests = append(requests, m)
			require.NotNil(t, answer, "unexpected request %s", m.Raw)
			p.Respond(m.ID, answer(m))
		}
	}
}

// selectOption answers a permission request with optionID.
func selectOption(optionID string) func(acptest.Message) any {
	return func(acptest.Message) any {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": optionID}}
	}
}

// toolOutput is the text of the finished tool calls among updates.
func toolOutput(updates []acp.SessionUpdate) string {
	var b strings.Builder
	for _, u := range updates {
		if tu := u.ToolCallUpdate; tu != nil && (tu.Status == acp.ToolCallStatusCompleted || tu.Status == acp.ToolCallStatusFailed) {
			for _, c := range tu.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					b.WriteString(c.Content.Content.Text.Text)
				}
			}
		}
	}
	return b.String()
}

// Issue 25 item 1: `acp-agent exec --allow all "run go version"` finds Go
// where an ordinary install puts it (/usr/local/go/bin here), confined
// by the sandbox and not: commands get the PATH the agent was started
// with, and the sandbox lets them read and run what lies on it.
func TestExecRunsGoVersionWithTheUsersPath(t *testing.T) {
	needsBash(t)
	goBin, err := exec.LookPath("go")
	require.NoError(t, err)
	if filepath.Dir(goBin) == "/usr/bin" || filepath.Dir(goBin) == "/bin" || filepath.Dir(goBin) == "/usr/local/bin" {
		t.Logf("go is in a default directory here (%s): the test still runs it", goBin)
	}
	script := commandScript(t, map[string]string{"run go version": "go version"})
	modes := []string{"off"}
	if sandbox.Probe().Available {
		modes = append(modes, "on")
	} else {
		t.Log("no sandbox on this kernel: only --sandbox off is run")
	}
	for _, mode := range modes {
		t.Run("sandbox "+mode, func(t *testing.T) {
			stdout, stderr, code := runExecBin(t, t.TempDir(), "", []string{"PATH=" + os.Getenv("PATH")},
				"--model", "replay/"+script, "--allow", "all", "--sandbox", mode, "run go version")
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, "go version go1.", "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.NotContains(t, stdout, "command not found")
			assert.NotContains(t, stdout, "```", "exec shows a code block's text, not its fences")
		})
	}
}

// Issue 25 item 1: the PATH commands get leaves out what a workspace could
// plant programs in (its bin/, relative and empty entries), also when the
// policy resolves the program: a workspace's own "go" never runs for "go".
func TestCommandPathLeavesOutWorkspaceAndRelativeEntries(t *testing.T) {
	needsBash(t)
	ws := t.TempDir()
	for _, p := range []string{filepath.Join(ws, "bin", "go"), filepath.Join(ws, "go"), filepath.Join(ws, "rel", "go")} {
		exe(t, p, "echo PLANTED")
	}
	userPath := strings.Join([]string{filepath.Join(ws, "bin"), ".", "rel", "", os.Getenv("PATH")}, ":")
	script := commandScript(t, map[string]string{"version": "go version", "path": `echo "PATH=$PATH"`})
	p := startAgent(t, []string{"PATH=" + userPath}, "--model", "replay/"+script, "--mode", "full-access", "--sandbox", "off")
	p.Initialize(nil)
	sid := p.NewSession(ws)
	_, updates, _ := turn(t, p, sid, "version", nil)
	out := toolOutput(updates)
	assert.Contains(t, out, "go version go1.")
	assert.NotContains(t, out, "PLANTED")
	_, updates, _ = turn(t, p, sid, "path", nil)
	out = toolOutput(updates)
	require.Contains(t, out, "PATH=")
	line := strings.TrimSpace(strings.SplitN(out[strings.Index(out, "PATH=")+5:], "\n", 2)[0])
	for _, e := range filepath.SplitList(line) {
		assert.True(t, filepath.IsAbs(e), "entry %q of %q", e, line)
		assert.False(t, strings.HasPrefix(e, ws), "workspace entry %q of %q", e, line)
	}
	assert.Contains(t, line, filepath.Dir(mustLookPath(t, "go")))
}

func mustLookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	require.NoError(t, err)
	return p
}

// Issue 25 item 1: launched with a minimal PATH (as from the macOS Dock),
// the agent asks the login shell for the user's PATH, once; with
// "terminal.loginShell": "never" it does not. The fake shell prints a
// greeting, as start-up files do, around the PATH.
func TestLoginShellGivesTheUsersPathWhenLaunchedMinimal(t *testing.T) {
	needsBash(t)
	home := t.TempDir()
	tools := filepath.Join(home, "tools")
	exe(t, filepath.Join(tools, "mytool"), "echo MYTOOL RAN")
	shell := filepath.Join(t.TempDir(), "fakesh")
	// -l -i -c CMD: $4 is the command.
	exe(t, shell, "echo 'Welcome back!'\nPATH="+tools+":$PATH; export PATH\nexec /bin/sh -c \"$4\"")
	script := commandScript(t, map[string]string{"tool": "mytool"})
	run := func(t *testing.T, args ...string) string {
		p := startAgent(t, []string{"PATH=/usr/bin:/bin", "SHELL=" + shell, "HOME=" + home},
			append([]string{"--model", "replay/" + script, "--mode", "full-access"}, args...)...)
		p.Initialize(nil)
		sid := p.NewSession(t.TempDir())
		_, updates, _ := turn(t, p, sid, "tool", nil)
		return toolOutput(updates)
	}
	assert.Contains(t, run(t), "MYTOOL RAN")
	if sandbox.Probe().Available {
		assert.Contains(t, run(t, "--sandbox", "on"), "MYTOOL RAN", "a PATH directory outside the workspace is readable and runnable when confined")
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"terminal": {"loginShell": "never"}}`), 0o600))
	assert.NotContains(t, run(t, "--config", cfg), "MYTOOL RAN")
}

// Issue 25 item 1: terminal.path and terminal.env in the config choose the
// commands' PATH ("~/" and "$PATH" expand) and add variables.
func TestConfigTerminalPathAndEnv(t *testing.T) {
	needsBash(t)
	home := t.TempDir()
	exe(t, filepath.Join(home, "tools", "mytool"), `echo "MYTOOL RAN with $GREETING"`)
	cfg := filepath.Join(t.TempDir(), "config.json")
	data, err := json.Marshal(map[string]any{"terminal": map[string]any{"path": []string{"~/tools", "$PATH"}, "env": map[string]string{"GREETING": "hello"}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, data, 0o600))
	script := commandScript(t, map[string]string{"tool": "mytool", "go": "go version"})
	p := startAgent(t, []string{"HOME=" + home}, "--model", "replay/"+script, "--mode", "full-access", "--config", cfg)
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	_, updates, _ := turn(t, p, sid, "tool", nil)
	assert.Contains(t, toolOutput(updates), "MYTOOL RAN with hello")
	_, updates, _ = turn(t, p, sid, "go", nil)
	assert.Contains(t, toolOutput(updates), "go version go1.", "$PATH keeps the inherited entries")
}

// Issue 25 item 1: an approval of a program that is a symlink in a user
// directory of the PATH holds for the file it led to. Swapped for a link
// to another program, the next run asks again.
func TestApprovalOfASymlinkedProgramEndsWhenTheLinkIsSwapped(t *testing.T) {
	needsBash(t)
	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	exe(t, filepath.Join(home, "real", "tool"), "echo REAL TOOL")
	exe(t, filepath.Join(home, "evil", "tool"), "echo SWAPPED TOOL")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	link := filepath.Join(bin, "tool")
	require.NoError(t, os.Symlink(filepath.Join(home, "real", "tool"), link))
	script := commandScript(t, map[string]string{"tool": "tool"})
	p := startAgent(t, []string{"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH")},
		"--model", "replay/"+script, "--mode", "default", "--sandbox", "off")
	p.Initialize(nil)
	sid := p.NewSession(t.TempDir())
	_, updates, reqs := turn(t, p, sid, "tool", selectOption("allow_always"))
	require.Len(t, reqs, 1)
	assert.Contains(t, toolOutput(updates), "REAL TOOL")
	_, updates, reqs = turn(t, p, sid, "tool", nil)
	assert.Empty(t, reqs, "remembered")
	assert.Contains(t, toolOutput(updates), "REAL TOOL")

	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(filepath.Join(home, "evil", "tool"), link))
	_, updates, reqs = turn(t, p, sid, "tool", selectOption("reject_once"))
	assert.Len(t, reqs, 1, "a swapped link is another program: asked again")
	assert.NotContains(t, toolOutput(updates), "SWAPPED TOOL")
}
