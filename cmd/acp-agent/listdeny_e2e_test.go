//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With the home directory as the workspace and --sandbox off (nothing but
// the approval keeps a command out of ~/.ssh), a remembered "Always allow
// `ls`/`find`/`cat`/`head`/`wc` (any files in the workspace)" never
// covers a line that lists or walks a directory holding a denied path
// (ls -R ~, ls alone in ~, find ~, find -name x in ~, ls ~/.local/state,
// a workspace symlink to ~)
// nor one that names a file under a denied path (as written, through
// "..", a case variant, a workspace symlink, ~ or $HOME): each asks, as
// every line a remembered approval does not cover does, and the answer
// "reject" means it never runs, so nothing under ~/.ssh or the state
// directory reaches the model. Controls: the same approvals do cover a
// listing of a project directory under the home directory, and in a
// plain project workspace `ls -R .` and `find .` run without a question.
func TestBinaryRememberedListingsNeverReachTheDeniedPaths(t *testing.T) {
	needsBash(t)
	home := testHome(t)
	w := func(rel, content string) {
		p := filepath.Join(home, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	w(".ssh/id_rsa", "SSH_KEY_SECRET\n")
	w(".ssh/authorized_keys_SECRETNAME", "x\n")
	w(".local/state/acp-agent/serve-token", "SERVE_TOKEN_SECRET\n")
	w(".local/state/acp-agent/hooks/TRUST_SECRETNAME", "x\n")
	w("proj/readme.md", "ORDINARY_OK\n")
	w("proj/sub/inner.txt", "INNER_OK\n")
	require.NoError(t, os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, "proj", "key")))
	require.NoError(t, os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "proj", "sshdir")))
	require.NoError(t, os.Symlink("..", filepath.Join(home, "proj", "up"))) // the home directory again

	w("proj/names", filepath.Join(home, ".ssh", "id_rsa")+"\x00")
	approve := []string{"ls proj", "find proj -name '*.md'", "cat proj/readme.md", "head -n 1 proj/readme.md", "wc -c proj/readme.md",
		"grep -n ORDINARY proj/readme.md", "egrep -c ORDINARY proj/readme.md", "fgrep -c ORDINARY proj/readme.md", "file proj/readme.md"}
	covered := []string{"ls -la proj/sub", "ls -R proj", "find proj -type f", "cat proj/sub/inner.txt", "wc -l proj/sub/inner.txt",
		"grep --count INNER proj/sub/inner.txt", "grep --ignore-case inner proj/sub/inner.txt"}
	base := filepath.Base(home)
	asks := []struct{ line, cwd string }{
		{line: "ls -R " + home},
		{line: "ls -R"},
		{line: "ls -a"},
		{line: "ls -R proj/.."},
		{line: "ls -R .."}, {line: "ls -aR ..", cwd: "proj"},
		{line: "ls -R -I x"},
		{line: "ls .local/state"},
		{line: "ls -R proj/sshdir"},
		{line: "ls -R proj/up/"},
		{line: "find proj/up/ -name 'id_*'"},
		{line: "find " + home},
		{line: "find . -name 'id_*'"},
		{line: "find -name 'id_*'"},
		{line: "find .. -name 'id_*'", cwd: "proj"},
		{line: "find .local -type f"},
		{line: "cat .ssh/id_rsa"},
		{line: "cat proj/../.ssh/id_rsa"},
		{line: "cat ../" + base + "/.ssh/id_rsa"},
		{line: "cat " + filepath.Join(home, ".SSH", "id_rsa")},
		{line: "cat proj/key"},
		{line: "cat proj/sshdir/id_rsa"},
		{line: "cat ~/.ssh/id_rsa"},
		{line: "cat $HOME/.ssh/id_rsa"},
		{line: "head -n 1 .ssh/id_rsa"},
		{line: "wc -c .ssh/id_rsa"},
		{line: "cat .local/state/acp-agent/serve-token"},
		{line: "head -c 100 ../sshdir/id_rsa", cwd: "proj/sub"},
		// GNU getopt_long takes any unambiguous prefix of a long option:
		// these are --recursive, --directories=recurse,
		// --dereference-recursive and --files0-from, which read every
		// file below the working directory or the files a list names.
		{line: "grep --recurs SSH_KEY"},
		{line: "grep --recursiv -n SSH_KEY"},
		{line: "grep --dir=recurse SSH_KEY"},
		{line: "grep --deref SSH_KEY"},
		{line: "egrep --recu SSH_KEY"},
		{line: "fgrep --dereference-r SSH_KEY"},
		{line: "wc --files0=proj/names"},
		// What bash expands when the line runs: globs, braces, ~+.
		{line: "cat .ss?/id_rsa"},
		{line: "cat .[s]sh/id_rsa"},
		{line: "head .ssh*/id_rsa"},
		{line: "cat {.ssh,proj}/id_rsa"},
		{line: "cat ~+/.ssh/id_rsa"},
		{line: "cat proj/../.ss*/id_rsa"},
		{line: "cat */../.ssh/id_rsa"},
		{line: "file --files-f proj/names"},
	}
	calls := map[string][]modelCall{}
	tag := func(kind string, i int) string { return fmt.Sprintf("[%s%d]", kind, i) }
	for i, l := range approve {
		calls[tag("a", i)] = []modelCall{{"run_command", map[string]any{"command": l}}}
	}
	for i, l := range covered {
		calls[tag("c", i)] = []modelCall{{"run_command", map[string]any{"command": l}}}
	}
	for i, a := range asks {
		args := map[string]any{"command": a.line}
		if a.cwd != "" {
			args["cwd"] = a.cwd
		}
		calls[tag("b", i)] = []modelCall{{"run_command", args}}
	}
	model := promptModel(t, calls)
	client := &answeringClient{toolClient: newToolClient(home, "")}
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--sandbox", "off")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, sid := startE2EWith(t, cmd, client, home, sdk.ClientCapabilities{})

	client.setAnswer("allow_always")
	for i, l := range approve {
		promptE2E(t, conn, sid, tag("a", i))
		require.Equal(t, i+1, client.asked(), "%q asks the first time", l)
	}
	client.setAnswer("reject_once")
	for i, l := range covered {
		promptE2E(t, conn, sid, tag("c", i))
		assert.Equal(t, len(approve), client.asked(), "%q is covered by the approvals (control)", l)
	}
	for i, a := range asks {
		before := client.asked()
		promptE2E(t, conn, sid, tag("b", i))
		if assert.Equal(t, before+1, client.asked(), "%q (cwd %q) ran without asking", a.line, a.cwd) {
			client.toolClient.mu.Lock()
			title := *client.toolClient.permissions[before].ToolCall.Title
			client.toolClient.mu.Unlock()
			assert.Contains(t, title, a.line)
		}
	}

	// What the agent sent the model (not the model's own calls).
	var results strings.Builder
	for _, b := range model.all() {
		for _, m := range chatMessages(t, b) {
			if m.Role == "assistant" {
				continue
			}
			text, _ := m.Content.(string)
			for _, s := range []string{"SSH_KEY_SECRET", "SECRETNAME", "SERVE_TOKEN_SECRET"} {
				if strings.Contains(text, s) {
					t.Errorf("the model saw %s (a denied path's name or content) in a %s message", s, m.Role)
				}
			}
			if m.Role == "tool" {
				results.WriteString(text)
			}
		}
	}
	assert.Contains(t, results.String(), "INNER_OK", "covered lines ran (control)")
	assert.Contains(t, results.String(), "inner.txt", "ls -R proj ran (control)")

	t.Run("plain project", func(t *testing.T) {
		dir := t.TempDir()
		for _, f := range []string{"main.go", "internal/server/handler.go", ".git/HEAD"} {
			p := filepath.Join(dir, f)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte("package x\n"), 0o644))
		}
		model := promptModel(t, map[string][]modelCall{
			"[ls]":   {{"run_command", map[string]any{"command": "ls"}}},
			"[find]": {{"run_command", map[string]any{"command": "find . -name main.go"}}},
			"[ls-R]": {{"run_command", map[string]any{"command": "ls -R ."}}},
			"[walk]": {{"run_command", map[string]any{"command": "find . -name '*.go'"}}},
			"[bare]": {{"run_command", map[string]any{"command": "find -type f -name '*.go'"}}},
		})
		client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "allow_always"}
		conn, sid := e2eSessionWith(t, model, client, "--sandbox", "off")
		promptE2E(t, conn, sid, "[ls]")
		promptE2E(t, conn, sid, "[find]")
		require.Equal(t, 2, client.asked())
		client.setAnswer("reject_once")
		for _, tag := range []string{"[ls-R]", "[walk]", "[bare]"} {
			promptE2E(t, conn, sid, tag)
			assert.Equal(t, 2, client.asked(), "%s runs without a question", tag)
		}
		bodies := model.all()
		out := strings.Join(toolMessages(t, bodies[len(bodies)-1]), "\n")
		assert.Contains(t, out, "handler.go", "the walks ran")
	})
}

// With the home directory as a git repository (and as the workspace,
// --sandbox off), a remembered "git status" is exact: git status -uall,
// which lists every untracked name under ~/.ssh, asks, also from a
// project directory below the home directory without a repository of its
// own; the approved line itself runs. Control: in a project repository
// the approval covers git status -uall.
func TestBinaryRememberedGitStatusNeverListsTheDeniedPathsOfAHomeRepository(t *testing.T) {
	needsBash(t)
	home := testHome(t)
	for rel, content := range map[string]string{".ssh/id_rsa_SECRETNAME": "SSH_KEY_SECRET\n", "proj/readme.md": "x\n"} {
		p := filepath.Join(home, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	git := exec.Command("git", "init", "-q", ".")
	git.Dir, git.Env = home, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	require.NoError(t, git.Run())

	model := promptModel(t, map[string][]modelCall{
		"[approve]": {{"run_command", map[string]any{"command": "git status"}}},
		"[again]":   {{"run_command", map[string]any{"command": "git status"}}},
		"[all]":     {{"run_command", map[string]any{"command": "git status -uall"}}},
		"[subok]":   {{"run_command", map[string]any{"command": "git status", "cwd": "proj"}}},
		"[sub]":     {{"run_command", map[string]any{"command": "git status --porcelain -uall", "cwd": "proj"}}},
	})
	client := &answeringClient{toolClient: newToolClient(home, ""), answer: "allow_always"}
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--sandbox", "off")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, sid := startE2EWith(t, cmd, client, home, sdk.ClientCapabilities{})
	asks := turnAsks(t, conn, sid, client)
	require.True(t, asks("[approve]", "allow_always"))
	assert.False(t, asks("[again]", "reject_once"), "the approved line itself is remembered")
	assert.True(t, asks("[all]", "reject_once"), "git status -uall in a home repository asks")
	require.True(t, asks("[subok]", "allow_always"))
	assert.True(t, asks("[sub]", "reject_once"), "git status -uall below the home repository asks")
	for _, b := range model.all() {
		for _, m := range chatMessages(t, b) {
			if text, _ := m.Content.(string); m.Role != "assistant" && strings.Contains(text, "SECRETNAME") {
				t.Errorf("the model saw a name under ~/.ssh in a %s message", m.Role)
			}
		}
	}

	t.Run("project repository", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "untracked_OK.txt"), []byte("x\n"), 0o644))
		git := exec.Command("git", "init", "-q", ".")
		git.Dir, git.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		require.NoError(t, git.Run())
		client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "allow_always"}
		conn, sid := e2eSessionWith(t, model, client, "--sandbox", "off")
		promptE2E(t, conn, sid, "[approve]")
		client.setAnswer("reject_once")
		promptE2E(t, conn, sid, "[all]")
		assert.Equal(t, 1, client.asked(), "git status -uall is covered in a project repository")
		bodies := model.all()
		assert.Contains(t, lastToolResult(t, bodies[len(bodies)-1]), "untracked_OK.txt")
	})
}

// A remembered "Always allow `git show` in this folder" never covers a
// revision:path word naming a tracked .env (git show HEAD:.env, :.env,
// HEAD:.env.production): the sandbox masks the .env on disk, but git
// reads the committed one from its objects, which no mask can cover, and
// approvals never widen to .env. Such a line asks, in every sandbox mode:
// a revision:path or pathspec-magic word (one with a ':') is remembered
// exactly. The control: git show with output options stays covered.
func TestBinaryRememberedGitShowNeverReadsATrackedEnvFile(t *testing.T) {
	needsBash(t)
	for _, mode := range []string{"auto", "off"} {
		t.Run("sandbox "+mode, func(t *testing.T) {
			if mode == "auto" {
				requireSandbox(t)
			}
			dir := t.TempDir()
			write(t, filepath.Join(dir, ".env"), "API_TOKEN=TRACKED_ENV_SECRET\n")
			write(t, filepath.Join(dir, ".env.production"), "DB=TRACKED_PROD_SECRET\n")
			write(t, filepath.Join(dir, "readme.md"), "ORDINARY_OK\n")
			for _, args := range [][]string{{"init", "-q", "."}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"}} {
				git := exec.Command("git", args...)
				git.Dir, git.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
				require.NoError(t, git.Run(), "git %v", args)
			}
			model := promptModel(t, map[string][]modelCall{
				"[approve]": {{"run_command", map[string]any{"command": "git show HEAD --stat"}}},
				"[covered]": {{"run_command", map[string]any{"command": "git show HEAD --name-only"}}},
				"[env]":     {{"run_command", map[string]any{"command": "git show HEAD:.env"}}},
				"[index]":   {{"run_command", map[string]any{"command": "git show :.env"}}},
				"[prod]":    {{"run_command", map[string]any{"command": "git show HEAD:.env.production"}}},
				"[format]":  {{"run_command", map[string]any{"command": "git show --format=%h HEAD:.env"}}},
			})
			client := &answeringClient{toolClient: newToolClient(dir, ""), answer: "allow_always"}
			conn, sid := e2eSessionWith(t, model, client, "--sandbox", mode)
			asks := turnAsks(t, conn, sid, client)
			require.True(t, asks("[approve]", "allow_always"))
			assert.False(t, asks("[covered]", "reject_once"), "git show with output options is covered (control)")
			for _, tag := range []string{"[env]", "[index]", "[prod]", "[format]"} {
				assert.True(t, asks(tag, "reject_once"), "%s ran under the remembered git show", tag)
			}
			for _, b := range model.all() {
				for _, m := range chatMessages(t, b) {
					if text, _ := m.Content.(string); m.Role != "assistant" && strings.Contains(text, "TRACKED_") {
						t.Errorf("the model saw a tracked .env in a %s message", m.Role)
					}
				}
			}
		})
	}
}

// turnAsks returns a function that runs the turn of tag, answering
// answer, and says whether it asked.
func turnAsks(t *testing.T, conn *sdk.ClientSideConnection, sid sdk.SessionId, client *answeringClient) func(tag, answer string) bool {
	return func(tag, answer string) bool {
		client.setAnswer(answer)
		before := client.asked()
		promptE2E(t, conn, sid, tag)
		return client.asked() > before
	}
}
