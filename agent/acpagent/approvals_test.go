package acpagent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
)

// commandTurn is a replay turn, played when the prompt contains tag, that
// calls run_command with line (and cwd, when not "").
func commandTurn(tag, line, cwd string) scriptTurn {
	args := map[string]any{"command": line}
	if cwd != "" {
		args["cwd"] = cwd
	}
	turn := toolTurn([2]any{"run_command", args})
	turn["match"] = tag
	return turn
}

// replayAgent starts an agent on a replay script made of turns plus a
// closing "done" for every tool result.
func replayAgent(t *testing.T, turns []scriptTurn, configure ...func(*acpagent.Config)) (*acptest.Client, string) {
	t.Helper()
	path := writeScript(t, turns)
	c := client(t, nil, map[string]string{"MODEL": "replay/" + path}, configure...)
	c.Initialize(nil)
	return c, path
}

func writeScript(t *testing.T, turns []scriptTurn) string {
	t.Helper()
	data, err := json.Marshal(map[string]any{"turns": append(turns, textTurn("done"))})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// approvalWorkspace is a workspace with files to read, a nested folder,
// a symlink and a hard link to a secret outside, and protected names;
// HOME is a temp dir holding the secret (so a bypass reads nothing real).
func approvalWorkspace(t *testing.T) (dir, home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	secret := filepath.Join(home, ".ssh", "id_rsa")
	require.NoError(t, os.WriteFile(secret, []byte("SECRET KEY\n"), 0o600))
	dir = t.TempDir()
	for name, content := range map[string]string{
		"README.md": "# readme\nfoo\n", "docs/guide.md": "guide\nbar\n", "sub/notes.txt": "notes\n",
		".env": "TOKEN=x\n", "sub/.env": "TOKEN=y\n", "list": "README.md\x00",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "build"), 0o755))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(dir, "sshdir")))
	outside := filepath.Join(t.TempDir(), "outside.txt")
	require.NoError(t, os.WriteFile(outside, []byte("outside\n"), 0o644))
	require.NoError(t, os.Link(outside, filepath.Join(dir, "hardlink")))
	// A program of the same name inside the workspace is another program.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cat"), []byte("#!/bin/sh\necho fake\n"), 0o755))
	return dir, home
}

// approvalCase: line A is approved with allow_always, then line B is run
// and must ask (or must not). cwdA/cwdB are run_command's cwd.
type approvalCase struct {
	a, cwdA, b, cwdB string
	ask              bool
}

// approvalCorpus holds every line of issue 13 item 1 and the variants a
// reviewer would try next. Lines B that must ask are answered
// reject_once, so they never run.
var approvalCorpus = []approvalCase{
	// Issue 13 item 1, every line.
	{a: "cat README.md", b: "cat README.md ~/.ssh/id_rsa", ask: true},
	{a: "head -n 5 README.md", b: "head -n 5 ~/.ssh/id_rsa", ask: true},
	{a: "ls README.md", b: "ls README.md $HOME", ask: true},
	{a: "ls README.md", b: "ls README.md ~", ask: true},
	{a: "rm -rf build", b: "rm -rf build /elsewhere", ask: true},
	{a: "cat README.md", b: "cp README.md ~/.bashrc", ask: true},
	{a: "cp README.md README.bak", b: "cp README.md ~/.bashrc", ask: true},
	{a: "git branch", b: "git branch -D feature", ask: true},
	{a: "git status", b: "git stash clear", ask: true},
	{a: "git stash list", b: "git stash clear", ask: true},
	{a: "git status", b: "git checkout -- file", ask: true},
	{a: "git show", b: "git checkout -- README.md", ask: true},
	{a: "git log", b: "git push origin --delete main", ask: true},
	{a: "git push origin feature", b: "git push origin --delete main", ask: true},
	{a: "git remote -v", b: "git remote set-url origin https://evil.example/x.git", ask: true},
	{a: "git status", b: "git remote set-url origin URL", ask: true},
	{a: "git diff", b: "git branch -D feature", ask: true},
	{a: "git status", cwdA: "", b: "git status", cwdB: "sub", ask: true},
	{a: "rm -rf build", b: "rm -rf build", cwdB: "sub", ask: true},
	{a: "touch made.txt", cwdA: "sub", b: "touch made.txt", ask: true},

	// Equivalent spellings and read-only scopes: remembered.
	{a: "cat README.md", b: "cat README.md"},
	{a: "cat README.md", b: "'cat' README.md"},
	{a: "cat README.md", b: `\cat README.md`},
	{a: "cat README.md", b: "/usr/bin/cat README.md"},
	{a: "cat README.md", b: "cat docs/guide.md"},
	{a: "cat README.md", b: "cat -n README.md sub/notes.txt"},
	{a: "head -n 5 README.md", b: "head -n 10 docs/guide.md"},
	{a: "ls", b: "ls -la docs"},
	{a: "grep -n foo README.md", b: "grep -n bar docs/guide.md"},
	{a: "wc -l README.md", b: "wc -c README.md"},
	{a: "find . -name '*.md'", b: "find docs -type f"},
	{a: "git status", b: "git status --short"},
	{a: "git status", b: "git --no-pager status"},
	{a: "git log", b: "git log --oneline -5"},
	{a: "git diff", b: "git diff --stat"},
	{a: "git branch", b: "git branch -a"},
	{a: "git status", cwdA: "sub", b: "git status -s", cwdB: "sub"},
	{a: "rm -rf build", b: "rm -rf 'build'"},
	{a: "touch made.txt", b: "touch made.txt"},
	{a: "cat README.md && wc -l README.md", b: "wc -l docs/guide.md"},
	{a: "touch made.txt && cat README.md", b: "cat docs/guide.md"},
	{a: "touch made.txt && cat README.md", b: "touch made.txt && cat README.md"},
	{a: "touch made.txt && cat README.md", b: "touch made.txt && cat docs/guide.md", ask: true},
	{a: "cat README.md", b: "git checkout -q HEAD && cat README.md", ask: true},
	{a: "ls", b: "ls", cwdB: "sshdir", ask: true},
	{a: "cat README.md", b: "cat id_rsa", cwdB: "sshdir", ask: true},

	// Paths that leave the workspace, links, protected names, directories.
	{a: "cat README.md", b: "cat ../outside.txt", ask: true},
	{a: "cat README.md", b: "cat /etc/passwd", ask: true},
	{a: "cat README.md", b: "cat link", ask: true},
	{a: "cat README.md", b: "cat sshdir/id_rsa", ask: true},
	{a: "cat README.md", b: "cat hardlink", ask: true},
	{a: "cat README.md", b: "cat .env", ask: true},
	{a: "cat README.md", b: "cat sub/.env", ask: true},
	{a: "cat README.md", b: "cat .git/config", ask: true},
	{a: "cat README.md", b: "cat -- ~/.ssh/id_rsa", ask: true},
	{a: "cat README.md", b: "cat docs", ask: true},
	{a: "ls", b: "ls /", ask: true},
	{a: "ls", b: "ls -R ..", ask: true},
	{a: "ls", b: "ls -L sshdir", ask: true},
	{a: "head -n 5 README.md", b: "head -n 5 /etc/shadow", ask: true},
	{a: "stat README.md", b: "stat ~/.ssh", ask: true},
	{a: "wc -l README.md", b: "wc --files0-from=list", ask: true},
	{a: "diff README.md docs/guide.md", b: "diff -r docs ..", ask: true},

	// Appended commands, substitutions, redirections.
	{a: "cat README.md", b: "cat README.md; rm -rf build", ask: true},
	{a: "cat README.md", b: "cat README.md && touch pwned", ask: true},
	{a: "cat README.md", b: "cat README.md | sh", ask: true},
	{a: "cat README.md", b: "cat README.md > out.txt", ask: true},
	{a: "cat README.md", b: "cat $(echo README.md)", ask: true},
	{a: "echo hi", b: "echo hi > file", ask: true},
	{a: "cat README.md", b: "./cat README.md", ask: true},
	{a: "cat README.md", b: "sed -n 1p README.md", ask: true},

	// Writing or command-running options of read-only programs.
	{a: "find . -name x", b: "find . -delete", ask: true},
	{a: "find . -name x", b: "find / -name id_rsa", ask: true},
	{a: "find . -name x", b: "find . -exec rm {} +", ask: true},
	{a: "find . -name x", b: "find -L . -name x", ask: true},
	{a: "grep foo README.md", b: "grep -r foo .", ask: true},
	{a: "grep foo README.md", b: "grep foo ~/.ssh/id_rsa", ask: true},
	{a: "grep foo README.md", b: "grep -f ~/.ssh/id_rsa README.md", ask: true},

	// Exact means exact.
	{a: "rm -rf build", b: "rm -rf Build", ask: true},
	{a: "rm -rf build", b: "rm -rf build2", ask: true},
	{a: "rm -rf build", b: "rm -r -f build", ask: true},
	{a: "rm -rf '~'", b: "rm -rf ~", ask: true},
	{a: `rm -rf \~/x`, b: "rm -rf ~/x", ask: true},
	{a: "rm -rf build", b: "/usr/bin/rm -rf build"},
	{a: "rm -rf build", b: `"rm" -rf build`},

	// git: only read-only subcommands are wider than exact.
	{a: "git status", b: "git commit -am x", ask: true},
	{a: "git branch", b: "git branch feature", ask: true},
	{a: "git branch", b: "git branch -m new", ask: true},
	{a: "git tag", b: "git tag -d v1", ask: true},
	{a: "git tag", b: "git tag v2", ask: true},
	{a: "git tag", b: "git tag -a v2 -m x", ask: true},
	{a: "git remote -v", b: "git remote add evil https://evil.example/x.git", ask: true},
	{a: "git log", b: "git log --output=../x", ask: true},
	{a: "git diff", b: "git diff --no-index /etc/passwd README.md", ask: true},
	{a: "git diff", b: "git diff --ext-diff", ask: true},
	{a: "git status", b: "git -c core.pager=evil status", ask: true},
	{a: "git status", b: "git -C /tmp status", ask: true},
	{a: "git log", b: "git log -- ../../etc", ask: true},
}

// Issue 13 item 1: after an allow_always, exactly what the option named
// is remembered: every corpus line B asks or does not, as listed, through
// a real session, the real run_command and the real permission requests.
func TestRememberedApprovalCorpusHasNoBypass(t *testing.T) {
	dir, _ := approvalWorkspace(t)
	var turns []scriptTurn
	for i, tc := range approvalCorpus {
		turns = append(turns, commandTurn(fmt.Sprintf("[a%d]", i), tc.a, tc.cwdA), commandTurn(fmt.Sprintf("[b%d]", i), tc.b, tc.cwdB))
	}
	c, _ := replayAgent(t, turns)
	require.GreaterOrEqual(t, len(approvalCorpus), 60)
	bypasses, overAsks := 0, 0
	for i, tc := range approvalCorpus {
		sid := c.NewSession(dir)
		r := runPrompt(t, c, sid, fmt.Sprintf("[a%d]", i), answerPermission("allow_always"))
		require.Len(t, r.requests, 1, "line A %q asks first", tc.a)
		r = runPrompt(t, c, sid, fmt.Sprintf("[b%d]", i), answerPermission("reject_once"))
		asked := len(r.requests) == 1
		switch {
		case tc.ask && !asked && refusedOutright(r):
			// Stricter than asking: the line never ran (a cwd through a
			// symlink out of the workspace is refused).
		case tc.ask && !asked:
			bypasses++
			t.Errorf("case %d: after always-allowing %q (cwd %q), %q (cwd %q) ran without asking", i, tc.a, tc.cwdA, tc.b, tc.cwdB)
		case !tc.ask && asked:
			overAsks++
			t.Errorf("case %d: after always-allowing %q (cwd %q), %q (cwd %q) asked again", i, tc.a, tc.cwdA, tc.b, tc.cwdB)
		}
	}
	t.Logf("remembered-approval corpus: %d variants, %d bypasses, %d needless questions", len(approvalCorpus), bypasses, overAsks)
}

// The allow_always option names its scope in words; a line memory never
// allows is not offered allow_always.
func TestAllowAlwaysOptionNamesItsScope(t *testing.T) {
	dir, _ := approvalWorkspace(t)
	tests := []struct {
		line, cwd string
		want      string // "" = no allow_always offered
	}{
		{"git status", "", "Always allow `git status` in this folder"},
		{"git status", "sub", "Always allow `git status` in the folder sub"},
		{"cat README.md", "", "Always allow `cat` (any files in the workspace)"},
		{"cat README.md ~/.ssh/id_rsa", "", "Always allow `cat README.md ~/.ssh/id_rsa` exactly, in this folder"},
		{"cat '~/x' ~", "", "Always allow `cat '~/x' ~` exactly, in this folder"},
		{"rm -rf build", "", "Always allow `rm -rf build` exactly, in this folder"},
		{"git branch -D feature", "", "Always allow `git branch -D feature` exactly, in this folder"},
		{"cat README.md && touch x", "", "Always allow `cat` (any files in the workspace); `touch x` exactly, in this folder"},
		{"cd sub && rm -rf build", "", "Always allow exactly this line, in this folder"},
		{"cat $(echo README.md)", "", ""},
	}
	var turns []scriptTurn
	for i, tt := range tests {
		turns = append(turns, commandTurn(fmt.Sprintf("[o%d]", i), tt.line, tt.cwd))
	}
	c, _ := replayAgent(t, turns)
	for i, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			sid := c.NewSession(dir)
			r := runPrompt(t, c, sid, fmt.Sprintf("[o%d]", i), answerPermission("reject_once"))
			require.Len(t, r.requests, 1)
			var req acp.RequestPermissionRequest
			require.NoError(t, json.Unmarshal(r.requests[0].Params, &req))
			assert.Equal(t, "`"+tt.line+"`", req.ToolCall.Title, "the title shows the command, as code")
			var always string
			var ids []string
			for _, o := range req.Options {
				ids = append(ids, string(o.OptionID))
				if o.Kind == acp.PermissionOptionKindAllowAlways {
					always = o.Name
				}
			}
			assert.Equal(t, tt.want, always)
			if tt.want == "" {
				assert.Equal(t, []string{"allow_once", "reject_once", "reject_always"}, ids)
			}
		})
	}
}

// A client that answers allow_always where it was not offered (a risky
// line) is refused: permission fails closed.
func TestAllowAlwaysNotOfferedIsRefused(t *testing.T) {
	dir, _ := approvalWorkspace(t)
	c, _ := replayAgent(t, []scriptTurn{commandTurn("[x]", "touch $(echo pwned)", "")})
	sid := c.NewSession(dir)
	r := runPrompt(t, c, sid, "[x]", answerPermission("allow_always"))
	require.Len(t, r.requests, 1)
	_, err := os.Stat(filepath.Join(dir, "pwned"))
	assert.True(t, os.IsNotExist(err), "the command did not run")
}

// Remembered approvals survive a restart as they were stored; records of
// the old per-key format ("scope":"command") are not widened on load:
// their allows are ignored, their rejects still reject.
func TestRememberedApprovalsReloadExactlyAndOldFormatIsIgnored(t *testing.T) {
	dir, _ := approvalWorkspace(t)
	storeDir := t.TempDir()
	turns := []scriptTurn{
		commandTurn("[cat]", "cat README.md", ""), commandTurn("[catssh]", "cat README.md ~/.ssh/id_rsa", ""),
		commandTurn("[rm]", "rm -rf build", ""), commandTurn("[rm2]", "rm -rf build /elsewhere", ""),
		commandTurn("[git]", "git status", ""), commandTurn("[gitsub]", "git status", "sub"),
	}
	path := writeScript(t, turns)
	start := func() *acptest.Client {
		store, err := persistence.OpenStore(storeDir)
		require.NoError(t, err)
		c := client(t, nil, map[string]string{"MODEL": "replay/" + path}, func(cfg *acpagent.Config) { cfg.Store = store })
		c.Initialize(nil)
		return c
	}
	c := start()
	sid := c.NewSession(dir)
	for _, tag := range []string{"[cat]", "[rm]", "[git]"} {
		require.Len(t, runPrompt(t, c, sid, tag, answerPermission("allow_always")).requests, 1)
	}
	c.Stop()

	// An old-format allow of "rm" (its key covered "rm -rf" anywhere) is
	// appended as a session written by an older version would hold it.
	cl, err := policy.ParseCommandLine("rm -rf build", policy.NewLookPath("", dir))
	require.NoError(t, err)
	old, err := json.Marshal(map[string]any{"type": "permission", "time": "2026-01-01T00:00:00Z", "scope": "command", "decision": "allow", "command": cl})
	require.NoError(t, err)
	f, err := os.OpenFile(filepath.Join(storeDir, sid+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(append(old, '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())

	c = start()
	resp, _ := loadSession(t, c, acp.MethodSessionLoad, sid, dir)
	acptest.MustResult(t, resp, nil)
	for tag, wantAsk := range map[string]bool{"[cat]": false, "[rm]": false, "[git]": false, "[catssh]": true, "[rm2]": true, "[gitsub]": true} {
		r := runPrompt(t, c, sid, tag, answerPermission("reject_once"))
		assert.Equal(t, wantAsk, len(r.requests) == 1, "%s after reload", tag)
	}

	// A session holding only the old format remembers nothing.
	sid2 := c.NewSession(dir)
	title := "old format only"
	resp, _ = c.Call(acp.MethodSessionSetTitle, &acp.SetSessionTitleRequest{SessionID: acp.SessionId(sid2), Title: &title})
	acptest.MustResult(t, resp, nil) // saves it
	c.Stop()
	f, err = os.OpenFile(filepath.Join(storeDir, sid2+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(append(old, '\n'))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	c = start()
	resp, _ = loadSession(t, c, acp.MethodSessionLoad, sid2, dir)
	acptest.MustResult(t, resp, nil)
	assert.Len(t, runPrompt(t, c, sid2, "[rm]", answerPermission("reject_once")).requests, 1, "an old-format allow is ignored")
}

// Issue 13 item 8: a fork starts with the source's mode and nothing
// remembered, in memory and after session/load reads the fork's file
// (which begins with a copy of the source's records).
func TestForkStartsWithNothingRememberedAlsoAfterReload(t *testing.T) {
	dir, _ := approvalWorkspace(t)
	storeDir := t.TempDir()
	// [edit] is a write_file call, so the edits decision is forked too
	// (after a read: overwriting a file needs one in the session).
	edit := toolTurn([2]any{"read_file", map[string]any{"path": "x.txt"}}, [2]any{"write_file", map[string]any{"path": "x.txt", "content": "x"}})
	edit["match"] = "[edit]"
	path := writeScript(t, []scriptTurn{commandTurn("[cat]", "cat README.md", ""), edit})

	start := func() *acptest.Client {
		store, err := persistence.OpenStore(storeDir)
		require.NoError(t, err)
		c := client(t, nil, map[string]string{"MODEL": "replay/" + path}, func(cfg *acpagent.Config) { cfg.Store = store })
		c.Initialize(nil)
		return c
	}
	c := start()
	src := c.NewSession(dir)
	require.Len(t, runPrompt(t, c, src, "[cat]", answerPermission("allow_always")).requests, 1)
	require.Len(t, runPrompt(t, c, src, "[edit]", answerPermission("allow_always")).requests, 1)
	require.Empty(t, runPrompt(t, c, src, "[cat]", answerPermission("reject_once")).requests, "the source remembers")
	resp, _ := c.Call(acp.MethodSessionSetMode, &acp.SetSessionModeRequest{SessionID: acp.SessionId(src), ModeID: "default"})
	acptest.MustResult(t, resp, nil)

	resp, _ = c.Call(acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: acp.SessionId(src), CWD: dir})
	var fr acp.ForkSessionResponse
	acptest.MustResult(t, resp, &fr)
	fork := string(fr.SessionID)
	assert.Equal(t, acp.SessionModeId("default"), fr.Modes.CurrentModeID, "the fork keeps the mode")
	for _, tag := range []string{"[cat]", "[edit]"} {
		assert.Len(t, runPrompt(t, c, fork, tag, answerPermission("reject_once")).requests, 1, "the fork asks about %s", tag)
	}
	assert.Empty(t, runPrompt(t, c, src, "[cat]", answerPermission("reject_once")).requests, "the source still remembers")
	c.Stop()

	c = start()
	resp, _ = loadSession(t, c, acp.MethodSessionLoad, fork, dir)
	var loaded acp.LoadSessionResponse
	acptest.MustResult(t, resp, &loaded)
	assert.Equal(t, acp.SessionModeId("default"), loaded.Modes.CurrentModeID)
	for _, tag := range []string{"[cat]", "[edit]"} {
		assert.Len(t, runPrompt(t, c, fork, tag, answerPermission("reject_once")).requests, 1, "the reloaded fork asks about %s", tag)
	}
	// What the fork itself remembers is kept across a reload.
	require.Len(t, runPrompt(t, c, fork, "[cat]", answerPermission("allow_always")).requests, 1)
	c.Stop()
	c = start()
	resp, _ = loadSession(t, c, acp.MethodSessionLoad, fork, dir)
	acptest.MustResult(t, resp, nil)
	assert.Empty(t, runPrompt(t, c, fork, "[cat]", answerPermission("reject_once")).requests, "the fork's own approval survives")
	resp, _ = loadSession(t, c, acp.MethodSessionLoad, src, dir)
	acptest.MustResult(t, resp, nil)
	assert.Empty(t, runPrompt(t, c, src, "[cat]", answerPermission("reject_once")).requests, "the source's approvals survive")
}

// trampolines are lines that try to run a denied rm without naming it
// where a list check sees it. %s is a copy of rm outside the workspace.
var trampolines = []string{
	"command rm victim", "env rm victim", "env -i rm victim", "nice rm victim", "nohup rm victim",
	"timeout 5 rm victim", "echo victim | xargs rm", "sudo rm victim", "exec rm victim",
	"builtin rm victim", "bash -c 'rm victim'", "sh -c 'rm victim'", "eval 'rm victim'",
	"$(echo rm) victim", "`echo rm` victim", "x=rm; $x victim", `"$X" victim`, "./myrm victim",
	"./rmlink victim", "%s victim", "find . -name victim -exec rm {} +", "busybox rm victim",
	`f(){ rm "$@"; }; f victim`, `g(){ "$@"; }; g rm victim`, "alias r=rm; r victim",
	"source ./script.sh", ". ./script.sh", "cp /usr/bin/rm ./x && ./x victim",
	"ln -sf /usr/bin/rm ./y; ./y victim", "PATH=.:$PATH myrm victim", "r''m victim", `\rm victim`,
	"/usr/bin/rm victim", "time rm victim", "python3 -c 'import os; os.remove(\"victim\")'",
	"export PATH=.; myrm victim", "X=rm; ${X} victim", "$'\\x72m' victim", "echo 'rm victim' | bash",
	"if true; then rm victim; fi", "ls $(rm victim)", "rm${IFS}victim", "/usr/bin/../bin/rm victim",
}

// Issue 13 item 5: with deniedCommands set, a full-access session (where
// nothing asks) refuses every trampoline through run_command, with a
// reason, and victim survives.
func TestDeniedCommandsRefuseTrampolinesInFullAccess(t *testing.T) {
	rm, err := exec.LookPath("rm")
	require.NoError(t, err)
	dir, _ := approvalWorkspace(t)
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("x"), 0o644))
	data, err := os.ReadFile(rm)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "myrm"), data, 0o755))
	require.NoError(t, os.Symlink(rm, filepath.Join(dir, "rmlink")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "script.sh"), []byte("rm victim\n"), 0o644))
	outsideCopy := filepath.Join(t.TempDir(), "rm")
	require.NoError(t, os.WriteFile(outsideCopy, data, 0o755))

	var turns []scriptTurn
	for i, line := range trampolines {
		if strings.Contains(line, "%s") {
			line = fmt.Sprintf(line, outsideCopy)
		}
		turns = append(turns, commandTurn(fmt.Sprintf("[t%d]", i), line, ""))
	}
	turns = append(turns, commandTurn("[ok]", "cat victim", ""))
	c, _ := replayAgent(t, turns, fullAccess, func(cfg *acpagent.Config) {
		cfg.Workspace.Terminal.DeniedCommands = []string{"rm"}
	})
	sid := c.NewSession(dir)
	require.GreaterOrEqual(t, len(trampolines), 20)
	bypasses := 0
	for i, line := range trampolines {
		r := runPrompt(t, c, sid, fmt.Sprintf("[t%d]", i), nil)
		_, finals := r.calls()
		text := contentText(onlyFinal(t, finals).Content)
		if _, err := os.Stat(victim); err != nil || !strings.Contains(text, "Command denied") {
			bypasses++
			t.Errorf("%q was not refused (result %q, victim: %v)", line, text, err)
			require.NoError(t, os.WriteFile(victim, []byte("x"), 0o644))
		}
	}
	t.Logf("deny-list trampoline corpus: %d lines, %d bypasses", len(trampolines), bypasses)
	// The refusal says why; a plain line still runs.
	r := runPrompt(t, c, sid, "[t1]", nil)
	_, finals := r.calls()
	assert.Contains(t, contentText(onlyFinal(t, finals).Content), "must be known before it runs")
	r = runPrompt(t, c, sid, "[ok]", nil)
	_, finals = r.calls()
	assert.Contains(t, contentText(onlyFinal(t, finals).Content), "[exit code 0]")
}

// Issue 15: the config lists and the runtime cap as run_command applies
// them.
func TestRunCommandAppliesConfiguredListsAndRuntimeCap(t *testing.T) {
	dir, _ := approvalWorkspace(t)
	c, _ := replayAgent(t, []scriptTurn{
		commandTurn("[echo]", "echo hello", ""), commandTurn("[touch]", "touch made", ""),
		commandTurn("[git]", "git --version", ""),
		toolTurnMatch("[sleep]", map[string]any{"command": "sleep 30", "timeout_seconds": 60}),
	}, fullAccess, func(cfg *acpagent.Config) {
		cfg.Workspace.Terminal.AllowedCommands = []string{"echo", "sleep", "git --version"}
		cfg.Workspace.Terminal.DeniedCommands = []string{"git"}
		cfg.Workspace.Terminal.MaxRuntime = time.Second
	})
	sid := c.NewSession(dir)
	result := func(tag string) string {
		r := runPrompt(t, c, sid, tag, nil)
		_, finals := r.calls()
		return contentText(onlyFinal(t, finals).Content)
	}
	assert.Contains(t, result("[echo]"), "hello", "an allowed command runs")
	assert.Contains(t, result("[touch]"), "Command denied: touch", "a command off the allow list is refused")
	_, err := os.Stat(filepath.Join(dir, "made"))
	assert.True(t, os.IsNotExist(err))
	assert.Contains(t, result("[git]"), "Command denied: git", "deny wins over allow")
	start := time.Now()
	assert.Contains(t, result("[sleep]"), "[timed out after 1s; the command was killed]", "maxCommandRuntime caps the model's timeout")
	assert.Less(t, time.Since(start), 15*time.Second)
	// The model is told: its copy of the result says so.
	resp, _ := c.Call(acp.MethodExtSessionEvents, map[string]any{"sessionId": sid})
	assert.Contains(t, string(resp.Result), "timed out after 1s")
}

func toolTurnMatch(tag string, args map[string]any) scriptTurn {
	turn := toolTurn([2]any{"run_command", args})
	turn["match"] = tag
	return turn
}

// Issue 13 item 5 and issue 15: the permission policy modes at the
// session level. allow runs what would ask, except lines that are risky
// or chained, which ask; deny cancels without asking.
func TestPermissionPolicyModesAtTheSessionLevel(t *testing.T) {
	tests := []struct {
		policy   policy.PolicyMode
		line     string
		wantAsk  bool
		wantMade bool
		wantStop acp.StopReason
	}{
		{policy.PolicyAllow, "touch made", false, true, acp.StopReasonEndTurn},
		{policy.PolicyAllow, "touch other; touch made", true, false, acp.StopReasonEndTurn},
		{policy.PolicyAllow, "touch other && touch made", true, false, acp.StopReasonEndTurn},
		{policy.PolicyAllow, "touch $(echo made)", true, false, acp.StopReasonEndTurn},
		{policy.PolicyAllow, "touch `echo made`", true, false, acp.StopReasonEndTurn},
		{policy.PolicyAllow, "echo x > made", true, false, acp.StopReasonEndTurn},
		{policy.PolicyDeny, "touch made", false, false, acp.StopReasonCancelled},
		{policy.PolicyAsk, "touch made", true, false, acp.StopReasonEndTurn},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy)+" "+tt.line, func(t *testing.T) {
			dir := t.TempDir()
			c, _ := replayAgent(t, []scriptTurn{commandTurn("[go]", tt.line, "")}, func(cfg *acpagent.Config) {
				cfg.PermissionPolicy = tt.policy
			})
			sid := c.NewSession(dir)
			r := runPrompt(t, c, sid, "[go]", answerPermission("reject_once"))
			assert.Equal(t, tt.wantAsk, len(r.requests) == 1)
			assert.Equal(t, tt.wantStop, r.stopReason(t))
			_, err := os.Stat(filepath.Join(dir, "made"))
			assert.Equal(t, tt.wantMade, err == nil)
		})
	}
}

// refusedOutright reports whether the turn's tool call failed with a path
// refusal before anything ran.
func refusedOutright(r turnResult) bool {
	for _, u := range r.updates {
		data, _ := json.Marshal(u)
		if strings.Contains(string(data), `"failed"`) && strings.Contains(string(data), "Permission denied") {
			return true
		}
	}
	return false
}

// onlyFinal is the final update of a turn's one tool call. A turn's
// script reuses an id of an earlier turn (call_run_command_0), which the
// agent replaces with a fresh one: the id is not known here.
func onlyFinal(t *testing.T, finals map[string]*acp.ToolCallUpdate) *acp.ToolCallUpdate {
	t.Helper()
	require.Len(t, finals, 1)
	for _, f := range finals {
		return f
	}
	return nil
}
