package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

// runBin runs the binary with args in dir and returns stdout, stderr and
// the exit status.
func runBin(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(agentBin, args...)
	cmd.Dir = dir
	cmd.Env = append(agentEnv(t), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := startCmd(t, cmd, nil).Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return stdout.String(), stderr.String(), code
}

// Issue 25 item 10: --help (of acp-agent, exec and doctor) goes to stdout
// and exits 0, and no flag shows an internal default twice or a sentinel
// ("(default 2) (default -1)"); a bad flag says where the usage is.
func TestHelpGoesToStdoutWithoutSentinelDefaults(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"exec", "--help"}, {"doctor", "--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stdout, stderr, code := runBin(t, t.TempDir(), nil, args...)
			assert.Equal(t, 0, code)
			assert.Empty(t, stderr)
			assert.Contains(t, stdout, "Usage: acp-agent")
			assert.Contains(t, stdout, "-model string")
			assert.NotContains(t, stdout, "(default -1)")
			for _, line := range strings.Split(stdout, "\n") {
				said := strings.Count(line, "(default ") + strings.Count(line, "; default ")
				assert.LessOrEqual(t, said, 1, "a default said twice: %q", line)
			}
			assert.Contains(t, stdout, "default 2)", "the retries' default is said once, in its text")
		})
	}
	stdout, stderr, code := runBin(t, t.TempDir(), nil, "--bogus")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "flag provided but not defined: -bogus")
	assert.Contains(t, stderr, "Run acp-agent --help for the usage.")
	assert.NotContains(t, stderr, "-model string", "the whole usage is not dumped on a typo")
}

// Issue 25 item 10: exec --cwd takes a directory relative to where exec
// runs, as a command line does.
func TestExecCwdMayBeRelative(t *testing.T) {
	needsBash(t)
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	require.NoError(t, os.Mkdir(ws, 0o755))
	script := commandScript(t, map[string]string{"where": "pwd"})
	stdout, stderr, code := runExecBin(t, parent, "", nil, "--model", "replay/"+script, "--allow", "all", "--sandbox", "off", "--cwd", "ws", "where")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	real, err := filepath.EvalSymlinks(ws)
	require.NoError(t, err)
	assert.Contains(t, stdout, real)
	_, stderr, code = runExecBin(t, parent, "", nil, "--model", "replay/"+script, "--cwd", "nope", "where")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "is not a directory")
}

// Issue 25 item 10: running acp-agent by hand in a terminal says, in one
// line on stderr, what it waits for; from a pipe (an editor) it says
// nothing.
func TestTerminalStdinGetsAOneLineHint(t *testing.T) {
	master, tty := openPTY(t)
	defer master.Close()
	cmd := exec.Command(agentBin, "--model", "replay/default")
	cmd.Env = agentEnv(t)
	var stdout bytes.Buffer
	stderr := &syncWriter{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &stdout, stderr
	cmd = startCmd(t, cmd, nil)
	tty.Close()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "\n") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	master.Close() // the terminal goes away: the agent reads EOF and exits
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(waitBudget(t)):
		cmd.Process.Kill()
		<-done
		t.Fatal("the agent did not exit when its terminal closed")
	}
	lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
	require.NotEmpty(t, lines)
	assert.Contains(t, lines[0], "acp-agent speaks the Agent Client Protocol on stdin/stdout and is started by an editor")
	assert.Contains(t, lines[0], `acp-agent exec "PROMPT"`)
	assert.Empty(t, stdout.String(), "stdout stays the protocol's")
}

// Issue 25 item 10: doctor checks the setup an editor would start: the
// config file, the model's key and endpoint (one real request to a
// loopback server here; --offline skips it), the session directory, the
// sandbox and the tools on the PATH commands get; it exits 1 when
// something must be fixed.
func TestDoctorChecksTheSetup(t *testing.T) {
	needsBash(t) // it checks for go and git on the commands' PATH
	listing := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good-key" {
			http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
			return
		}
		jsonHandler(map[string]any{"data": []any{map[string]any{"id": "m1"}, map[string]any{"id": "m2"}}})(w, r)
	})
	srv := newFakeModelServer(t, map[string]http.HandlerFunc{"GET /v1/models": listing})
	base := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "ACP_AGENT_MODEL=openai/test-model"}
	dir := t.TempDir()

	stdout, stderr, code := runBin(t, dir, append(base, "OPENAI_API_KEY=good-key"), "doctor")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, want := range []string{"config     ok", "model      ok", "answered with its key (2 models listed", "sessions   ok", "sandbox", "PATH       ok", "tools      ok", "go " + mustLookPath(t, "go"), "git "} {
		assert.Contains(t, stdout, want)
	}
	assert.Contains(t, stdout, filepath.Dir(mustLookPath(t, "go")), "the PATH commands get")
	assert.Empty(t, stderr)

	stdout, _, code = runBin(t, dir, append(base, "OPENAI_API_KEY=bad-key"), "doctor")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "model      FAIL")
	assert.Contains(t, stdout, "401")

	stdout, _, code = runBin(t, dir, append(base, "OPENAI_API_KEY=bad-key"), "doctor", "--offline")
	assert.Equal(t, 0, code, "%s", stdout)
	assert.Contains(t, stdout, "model      skip")
	reqs := len(srv.requests())

	stdout, _, code = runBin(t, dir, base, "doctor")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "OPENAI_API_KEY is not set")
	assert.Equal(t, reqs, len(srv.requests()), "without a key nothing is sent")

	cfg := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(cfg, []byte("{\n  \"model\": \"replay/default\",\n}"), 0o600))
	stdout, _, code = runBin(t, dir, nil, "doctor", "--config", cfg)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "config     FAIL")
	assert.Contains(t, stdout, "line 3, column 1")

	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	stdout, _, code = runBin(t, dir, nil, "doctor", "--model", "replay/default", "--session-dir", notDir)
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "sessions   FAIL")
	assert.Contains(t, stdout, "model      ok     replay/default (offline")
}

// Issue 25 item 2 (exec's side): acp-agent exec prints the diff of a
// change as a unified diff, in the permission request (before it is
// allowed) and in the tool call's result, for a changed and a new file.
func TestExecPrintsUnifiedDiffs(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("one\ntwo\nthree\nfour\n"), 0o644))
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "change", "events": []any{
			map[string]any{"toolCall": map[string]any{"name": "read_file", "arguments": map[string]any{"path": "hello.txt"}}},
			map[string]any{"toolCall": map[string]any{"name": "edit_file", "arguments": map[string]any{"path": "hello.txt", "old_string": "two", "new_string": "TWO"}}},
			map[string]any{"toolCall": map[string]any{"name": "write_file", "arguments": map[string]any{"path": "notes/new.txt", "content": "brand new\n"}}},
		}},
		map[string]any{"events": []any{map[string]any{"text": "changed"}}},
	}})
	stdout, stderr, code := runExecBin(t, ws, "", nil, "--model", "replay/"+script, "--allow", "edits", "change")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	wantChanged := "--- a/hello.txt\n    +++ b/hello.txt\n    @@ -1,4 +1,4 @@\n     one\n    -two\n    +TWO\n     three\n     four\n"
	wantNew := "--- /dev/null\n    +++ b/notes/new.txt\n    @@ -0,0 +1 @@\n    +brand new\n"
	assert.Contains(t, stderr, "[permission] Edit `hello.txt`: allowed by --allow edits\n    "+wantChanged, "the permission request's diff")
	// The title names the file as the OS spells it (notes\new.txt on
	// Windows); the diff, as git does, with slashes.
	assert.Contains(t, stderr, "[permission] Write `"+filepath.FromSlash("notes/new.txt")+"`: allowed by --allow edits\n    "+wantNew)
	assert.Contains(t, stdout, wantChanged, "the tool call's diff")
	assert.Contains(t, stdout, wantNew)
	assert.NotContains(t, stdout+stderr, "diff /")
}

// Issue 25 item 12: wording. --allow none says the flag rejected the call
// (to the reader and to the model), not "the user"; a one-edit multi_edit
// is "1 change"; a rewind sets back "1 file"; the replay model chosen on
// purpose does not claim no model is configured.
func TestWording(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o644))
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "edit", "events": []any{map[string]any{"toolCall": map[string]any{"name": "multi_edit",
			"arguments": map[string]any{"path": "a.txt", "edits": []any{map[string]any{"old_string": "alpha", "new_string": "beta"}}}}}}},
		map[string]any{"events": []any{map[string]any{"text": "ok"}}},
	}})
	stdout, stderr, code := runExecBin(t, ws, "", nil, "--model", "replay/"+script, "--allow", "none", "edit")
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, "▶ Edit `a.txt` (1 change)")
	assert.Contains(t, stdout, "not run: rejected by --allow none")
	assert.Contains(t, stderr, "rejected by --allow none")
	assert.NotContains(t, stdout+stderr, "user rejected")
	assert.NotContains(t, stdout+stderr, "(1 changes)")
	stdout, _, _ = runExecBin(t, ws, "", nil, "--model", "replay/"+script, "--allow", "none", "--json", "edit")
	assert.Contains(t, stdout, "acp-agent exec runs with --allow none", "the model is told who rejected the call")
	assert.NotContains(t, stdout, "The user rejected")

	// The rewind of that edit, allowed this time, in an editor session.
	p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/"+script, "--mode", "accept-edits")
	p.Initialize(nil)
	sid := p.NewSession(ws)
	turn(t, p, sid, "edit", nil)
	data, err := os.ReadFile(filepath.Join(ws, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "beta\n", string(data))
	_, updates, _ := turn(t, p, sid, "/rewind 1", nil)
	var text strings.Builder
	for _, u := range updates {
		if u.AgentMessageChunk != nil {
			text.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	assert.Contains(t, text.String(), "1 file set back")
	assert.Contains(t, text.String(), "has 0 messages")

	stdout, stderr, _ = runExecBin(t, ws, "", nil, "--model", "replay/default", "hi")
	assert.NotContains(t, stdout+stderr, "No model is configured")
	assert.Contains(t, stderr, "offline replay model")
}

// jsonLines decodes the JSON lines of s.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "%q", l)
		out = append(out, m)
	}
	return out
}

var _ = acp.MethodSessionNew

// --help of exec, doctor and serve lists -version ("print the version and
// exit"), and README says --version gives the version, commit and build
// date: each prints what acp-agent --version prints and does nothing
// else. doctor used to ignore it and run its checks; exec and serve
// printed the bare version without the commit, date or platform.
func TestVersionIsTheSameForEverySubcommand(t *testing.T) {
	want, stderr, code := runBin(t, t.TempDir(), nil, "--version")
	require.Equal(t, 0, code, "stderr: %s", stderr)
	require.Contains(t, want, "(commit ")
	require.Contains(t, want, "\nsandbox: ")
	for _, sub := range []string{"exec", "doctor", "serve"} {
		stdout, stderr, code := runBin(t, t.TempDir(), nil, sub, "--version", "--model", "replay/default")
		assert.Equal(t, 0, code, "%s: stderr: %s", sub, stderr)
		assert.Equal(t, want, stdout, "%s --version", sub)
		assert.Empty(t, stderr, sub)
	}
}
