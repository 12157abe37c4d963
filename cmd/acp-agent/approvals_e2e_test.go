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

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// promptModel is an OpenAI-format model server whose tool calls depend on
// the prompt: a user message containing a key of calls gets those calls,
// a tool result gets a closing answer.
func promptModel(t *testing.T, calls map[string][]modelCall) *scriptedModel {
	m := &scriptedModel{}
	m.Server = httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.bodies = append(m.bodies, string(data))
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if lastIsToolResult(data) {
			io.WriteString(w, openAIStream(nil, true))
			return
		}
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(data, &req)
		last := ""
		if n := len(req.Messages); n > 0 {
			last = string(req.Messages[n-1].Content)
		}
		for key, cs := range calls {
			if strings.Contains(last, key) {
				io.WriteString(w, openAIStream(cs, false))
				return
			}
		}
		io.WriteString(w, openAIStream(nil, true))
	}))
	t.Cleanup(m.Close)
	return m
}

// answeringClient is a toolClient whose permission answer the test
// changes between prompts.
type answeringClient struct {
	*toolClient
	mu     sync.Mutex
	answer string
}

func (c *answeringClient) setAnswer(a string) {
	c.mu.Lock()
	c.answer = a
	c.mu.Unlock()
}

func (c *answeringClient) RequestPermission(ctx context.Context, req sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.toolClient.answer = c.answer
	c.mu.Unlock()
	return c.toolClient.RequestPermission(ctx, req)
}

func (c *answeringClient) asked() int {
	c.toolClient.mu.Lock()
	defer c.toolClient.mu.Unlock()
	return len(c.toolClient.permissions)
}

// Issue 13 item 1 through the built binary: "Always allow" of
// `cat README.md` covers cat on workspace files, never
// `cat README.md ~/.ssh/id_rsa`; the option named that scope.
func TestBinaryRememberedApprovalCoversOnlyWhatWasShown(t *testing.T) {
	needsBash(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("readme\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "docs.md"), []byte("docs\n"), 0o644))
	model := promptModel(t, map[string][]modelCall{
		"first":  {{"run_command", map[string]any{"command": "cat README.md"}}},
		"second": {{"run_command", map[string]any{"command": "cat README.md ~/.ssh/id_rsa"}}},
		"third":  {{"run_command", map[string]any{"command": "cat docs.md"}}},
	})
	client := &answeringClient{toolClient: newToolClient(dir, "")}
	conn2, sid2 := e2eSessionWith(t, model, client)

	client.setAnswer("allow_always")
	promptE2E(t, conn2, sid2, "first")
	require.Equal(t, 1, client.asked())
	client.toolClient.mu.Lock()
	req := client.toolClient.permissions[0]
	client.toolClient.mu.Unlock()
	assert.Equal(t, "`cat README.md`", *req.ToolCall.Title)
	var names []string
	for _, o := range req.Options {
		names = append(names, o.Name)
	}
	assert.Contains(t, names, "Always allow `cat` (any files in the workspace)")

	client.setAnswer("reject_once")
	promptE2E(t, conn2, sid2, "second")
	assert.Equal(t, 2, client.asked(), "a file outside the workspace asks again")
	promptE2E(t, conn2, sid2, "third")
	assert.Equal(t, 2, client.asked(), "cat of another workspace file is covered")
}

// e2eSessionWith starts the binary like e2eSession, with client (which
// overrides the permission answers) serving the connection.
func e2eSessionWith(t *testing.T, model *scriptedModel, client sdk.Client, args ...string) (*sdk.ClientSideConnection, sdk.SessionId) {
	t.Helper()
	return e2eSessionWithCaps(t, model, client, sdk.ClientCapabilities{}, args...)
}

// e2eSessionWithCaps is e2eSessionWith for a client advertising caps.
func e2eSessionWithCaps(t *testing.T, model *scriptedModel, client sdk.Client, caps sdk.ClientCapabilities, args ...string) (*sdk.ClientSideConnection, sdk.SessionId) {
	t.Helper()
	var dir string
	switch c := client.(type) {
	case *answeringClient:
		dir = c.dir
	case *diskEditor:
		dir = c.dir
	}
	cmd := exec.Command(agentBin, append(args, "--model", "openai/test-model")...)
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=k", "OPENAI_BASE_URL="+model.URL+"/v1")
	return startE2EWith(t, cmd, client, dir, caps)
}

// Issue 13 item 5 through the built binary: with deniedCommands in the
// config file and --mode full-access (nothing asks), trampolines to rm
// are refused with a reason and the file survives.
func TestBinaryDeniedCommandsRefuseTrampolines(t *testing.T) {
	needsBash(t)
	rm, err := exec.LookPath("rm")
	require.NoError(t, err)
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("x"), 0o644))
	require.NoError(t, os.Symlink(rm, filepath.Join(dir, "rmlink")))
	config := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"deniedCommands":["rm"]}`), 0o600))
	// GNU tools take any unambiguous prefix of a long option:
	// sed --expression, awk --exec, tar --to-command; and a short
	// option's value from the rest of a cluster (tar -xvIprog).
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("line\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.awk"), []byte(`BEGIN { system("rm victim") }`), 0o644))
	// man-db runs the programs a configuration file DEFINEs (its pager,
	// tbl, nroff, ...): man -C names one.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "man.conf"), []byte("MANDATORY_MANPATH /usr/share/man\nDEFINE tbl rm -f victim\nDEFINE pager rm -f victim\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.1"), []byte(".TH X 1\n.SH NAME\nx \\- y\n"), 0o644))
	// sort feeds its temporary data to the compressor: with a small
	// buffer, --compress-program=sh runs the sorted lines.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cmds.txt"), []byte(strings.Repeat("rm -f victim\n", 30000)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "init.sql"), []byte(".shell rm victim\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sy.tr"), []byte(".sy rm victim\n"), 0o644))
	tarball := exec.Command("tar", "-cf", "x.tar", "a.txt")
	tarball.Dir = dir
	require.NoError(t, tarball.Run())
	lines := []string{"env rm victim", "bash -c 'rm victim'", "$(echo rm) victim", "x=rm; $x victim", "./rmlink victim", "command rm victim",
		"sed -n --expr='1e rm victim' a.txt", "awk --exe=p.awk", "tar -xf x.tar --to-comm='rm victim'",
		// A short option's value from the rest of its cluster.
		"tar -xvI'rm victim' -f x.tar",
		"man -C man.conf -l x.1", "man --conf=man.conf -l x.1", "man -lCman.conf x.1",
		// Programs that run a program or command given in an option or
		// an argument, or read editing commands from stdin.
		"sort -S 64K --compress-prog=sh cmds.txt", "split --filter='rm victim' a.txt", "sdiff --diff-program=rm a.txt victim",
		"sqlite3 :memory: '.shell rm victim'", "printf '!rm victim\\nq\\n' | ed a.txt", "psql -c '\\! rm victim'",
		"wget -e use_askpass=rm http://127.0.0.1:1/", "zip -qT --unzip-comm='rm victim' x.zip a.txt",
		// A runner's command is any program on the PATH.
		"npm exec --offline -- rm victim", "npx --offline rm victim",
		// The sqlite3 shell reads dot-commands from stdin with no SQL in
		// its arguments, and from an -init file.
		"printf '.shell rm victim\\n' | sqlite3 :memory:", "sqlite3 -init init.sql :memory: 'select 1'",
		// A runner's own option with a value before its subcommand.
		"npm --loglevel silent exec --offline -- rm victim",
		// psql and the mysql clients read their commands from stdin
		// without -c or -e, and run \! and system wherever they read
		// them; psql -Xc is -X -c, and -o '|cmd' pipes to a program.
		"printf '\\\\! rm victim\\n' | psql", "psql -Xc '\\! rm victim'", "psql -c 'select 1' -o '|rm victim'",
		"mysql -e 'system rm victim'", "printf 'system rm victim\\n' | mysql db", "mariadb --execute='\\! rm victim'",
		// groff's unsafe mode runs a document's .sy requests.
		"groff -U -Tutf8 sy.tr", "printf '.sy rm victim\\n' | nroff -U"}
	// The mysql clients are not installed here: these do what they do
	// with a client command (system and \! run a shell command; no
	// server is needed for that), from -e or stdin.
	fakeBin := t.TempDir()
	for _, name := range []string{"mysql", "mariadb"} {
		require.NoError(t, os.WriteFile(filepath.Join(fakeBin, name), []byte(`#!/bin/bash
run() { case "$1" in system\ *|\\!\ *) sh -c "${1#* }";; esac; }
while [ $# -gt 0 ]; do case "$1" in -e) run "$2"; exit;; --execute=*) run "${1#*=}"; exit;; esac; shift; done
while IFS= read -r l; do run "$l"; done
`), 0o755))
	}
	t.Setenv("PATH", fakeBin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	calls := map[string][]modelCall{}
	for i, l := range lines {
		calls[fmt.Sprintf("[t%d]", i)] = []modelCall{{"run_command", map[string]any{"command": l}}}
	}
	model := promptModel(t, calls)
	client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "allow_once"}
	conn, sid := e2eSessionWith(t, model, client, "--config", config, "--mode", "full-access")
	for i, l := range lines {
		assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, fmt.Sprintf("[t%d]", i)))
		_, err := os.Stat(victim)
		require.NoError(t, err, "%q removed the file", l)
		// This call's result: the request holds the earlier ones too.
		assert.Contains(t, lastToolResult(t, model.body(t, 2*i+1)), "Command denied", "the model is told %q was refused", l)
	}
	assert.Zero(t, client.asked(), "full-access asks nothing")
}

// Issue 13 item 5 and issue 15 through the built binary: --permission
// allow runs what would ask but asks about chained and risky lines;
// --permission deny cancels without asking.
func TestBinaryPermissionPolicyAllowAndDeny(t *testing.T) {
	needsBash(t)
	calls := map[string][]modelCall{
		"[plain]":   {{"run_command", map[string]any{"command": "touch made"}}},
		"[chained]": {{"run_command", map[string]any{"command": "touch one; touch two"}}},
		"[subst]":   {{"run_command", map[string]any{"command": "touch $(echo three)"}}},
		"[redir]":   {{"run_command", map[string]any{"command": "echo x > four"}}},
	}
	t.Run("allow", func(t *testing.T) {
		dir := t.TempDir()
		client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "reject_once"}
		conn, sid := e2eSessionWith(t, promptModel(t, calls), client, "--permission", "allow")
		promptE2E(t, conn, sid, "[plain]")
		assert.Zero(t, client.asked(), "a plain line is allowed without asking")
		assert.FileExists(t, filepath.Join(dir, "made"))
		for i, tag := range []string{"[chained]", "[subst]", "[redir]"} {
			promptE2E(t, conn, sid, tag)
			assert.Equal(t, i+1, client.asked(), "%s asks", tag)
		}
		for _, f := range []string{"one", "two", "three", "four"} {
			assert.NoFileExists(t, filepath.Join(dir, f))
		}
	})
	t.Run("deny", func(t *testing.T) {
		dir := t.TempDir()
		client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "allow_once"}
		conn, sid := e2eSessionWith(t, promptModel(t, calls), client, "--permission", "deny")
		assert.Equal(t, sdk.StopReasonCancelled, promptE2E(t, conn, sid, "[plain]"))
		assert.Zero(t, client.asked())
		assert.NoFileExists(t, filepath.Join(dir, "made"))
	})
}

// allowedCommands entries that name a runner's command allow it: a
// project's prettier, in node_modules/.bin and on no PATH, runs through
// "npx prettier" (the runner's command is a command of the line, which
// no entry of its own could name); "npx" alone and another command
// through the same runner stay refused.
func TestBinaryAllowedCommandsNameARunnersCommand(t *testing.T) {
	needsBash(t)
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx not installed")
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "node_modules", ".bin", "prettier"), []byte("#!/bin/sh\ntouch ran-prettier\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package.json"), []byte("{}"), 0o644))
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("x"), 0o644))
	config := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"allowedCommands":["npx --offline prettier"]}`), 0o600))
	lines := []string{"npx --offline prettier --write .", "npx --offline rm victim"}
	calls := map[string][]modelCall{}
	for i, l := range lines {
		calls[fmt.Sprintf("[t%d]", i)] = []modelCall{{"run_command", map[string]any{"command": l}}}
	}
	model := promptModel(t, calls)
	client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "allow_once"}
	conn, sid := e2eSessionWith(t, model, client, "--config", config, "--mode", "full-access")
	for i := range lines {
		assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, fmt.Sprintf("[t%d]", i)))
	}
	assert.FileExists(t, filepath.Join(dir, "ran-prettier"), "npx prettier ran")
	assert.False(t, strings.Contains(model.body(t, 1), "Command denied"), "npx prettier was refused")
	assert.FileExists(t, victim)
	assert.True(t, strings.Contains(model.body(t, 3), "Command denied: npx"), "npx rm was not refused")
}
