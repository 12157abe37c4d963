package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-agent/acp-agent/acp/acphttp"
	"github.com/acp-agent/acp-agent/internal/winetest"
	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// windowsShortName is the 8.3 name the volume gives the last element of
// the existing path p (NTFS's ENV~1, Wine's _ENV~3EE), or "".
func windowsShortName(p string) string {
	if s := winetest.ShortPath(p); s != "" && !strings.EqualFold(filepath.Base(s), filepath.Base(p)) {
		return filepath.Base(s)
	}
	return ""
}

// Through the built Windows binary: the file tools, in full-access
// mode, locally and through the editor's fs/*, never read, write, edit
// or plant beside .env, .env.local and .git by the other names Windows
// opens them by: the volume's own 8.3 short names (asked of the volume,
// so whatever form it uses), trailing dots and spaces, alternate data
// streams and device names. (The tools read a file before they replace
// it, and that read checks the real path; the runtime's own write check
// is pinned by TestWindowsLocalFSRefusesOtherSpellingsOfDeniedNames.)
func TestBinaryWindowsOtherNamesOfDeniedFiles(t *testing.T) {
	for _, editorFS := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "editor fs"}[editorFS], func(t *testing.T) {
			dir := t.TempDir()
			secrets := map[string]string{
				".env":        "SECRET_ENV",
				".env.local":  "SECRET_ENV_LOCAL",
				`.git\config`: "SECRET_GIT_CONFIG",
			}
			for p, c := range secrets {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644))
			}
			require.NoError(t, os.Mkdir(filepath.Join(dir, ".git", "hooks"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("ORDINARY_OK"), 0o644))
			env, envLocal, git := windowsShortName(filepath.Join(dir, ".env")), windowsShortName(filepath.Join(dir, ".env.local")),
				windowsShortName(filepath.Join(dir, ".git"))
			if env == "" || envLocal == "" || git == "" {
				t.Skip("this volume gives no 8.3 short names (NTFS with them off, ReFS): nothing to attack")
			}
			t.Logf("short names: %s %s %s", env, envLocal, git)
			var reads, writes []string
			reads = append(reads, env, envLocal, git+`\config`, ".env.", ".env ", ".ENV", `.git.\config`, ".env::$DATA", `.git::$INDEX_ALLOCATION\config`)
			writes = append(writes, env, envLocal, git+`\config`, git+`\hooks\pre-commit`, ".env.", ".env ", ".env. .", ".env::$DATA",
				".env:stream", `.git.\hooks\pre-commit`, `.git::$INDEX_ALLOCATION\hooks\pre-commit`, "CON", "NUL.txt", `sub\COM1`)
			var cs []modelCall
			for _, p := range reads {
				cs = append(cs, modelCall{"read_file", map[string]any{"path": p}})
			}
			for _, p := range writes {
				cs = append(cs, modelCall{"write_file", map[string]any{"path": p, "content": "PLANTED"}})
			}
			cs = append(cs,
				modelCall{"edit_file", map[string]any{"path": envLocal, "old_string": "SECRET", "new_string": "EDITED"}},
				modelCall{"list_directory", map[string]any{"path": git}},
				modelCall{"grep", map[string]any{"pattern": "SECRET", "path": git}},
				modelCall{"read_file", map[string]any{"path": "ok.txt"}},
			)
			model := promptModel(t, map[string][]modelCall{"[go]": cs})
			var conn *sdk.ClientSideConnection
			var sid sdk.SessionId
			editor := &diskEditor{toolClient: newToolClient(dir, "allow_once")}
			if editorFS {
				caps := sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}
				conn, sid = e2eSessionWithCaps(t, model, editor, caps, "--mode", "full-access")
			} else {
				conn, sid = e2eSession(t, "openai", model, editor.toolClient, sdk.ClientCapabilities{}, "--mode", "full-access")
			}
			assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))
			body := model.body(t, 1)
			for _, c := range secrets {
				assert.False(t, strings.Contains(body, c), "the model saw %s", c)
			}
			assert.Contains(t, body, "ORDINARY_OK", "an ordinary file is read (the control)")
			for p, c := range secrets {
				data, err := os.ReadFile(filepath.Join(dir, p))
				require.NoError(t, err, "%s is still there", p)
				assert.Equal(t, c, string(data), "%s is unchanged", p)
			}
			hooks, err := os.ReadDir(filepath.Join(dir, ".git", "hooks"))
			require.NoError(t, err)
			assert.Empty(t, hooks, "nothing was planted in .git\\hooks")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				assert.Contains(t, []string{".env", ".env.local", ".git", "ok.txt"}, e.Name(), "%s was created", e.Name())
			}
			if editorFS {
				editor.assertCheckedPaths(t, dir)
				editor.mu.Lock()
				for _, p := range editor.paths {
					assert.NotContains(t, p, "~", "the editor was given a short name: %s", p)
				}
				editor.mu.Unlock()
			}
		})
	}
}

// serve's root check takes a directory inside a root spelled with 8.3
// short names (a client's TEMP under C:\Users\RUNNER~1 is common) as the
// directory it is, while a short spelling of a directory outside gets
// exactly the answer the long spelling and a missing directory get.
func TestServeTakesShortNamesOfDirectoriesInsideItsRoots(t *testing.T) {
	s := startServe(t, nil)
	inside := filepath.Join(s.root, "a project with a long name")
	require.NoError(t, os.Mkdir(inside, 0o755))
	outside := filepath.Join(t.TempDir(), "another long directory name")
	require.NoError(t, os.Mkdir(outside, 0o755))
	shortInside, shortOutside := winetest.ShortPath(inside), winetest.ShortPath(outside)
	if shortInside == "" || shortOutside == "" {
		t.Skip("this volume gives no 8.3 short names: nothing to spell")
	}
	t.Logf("inside %s, outside %s", shortInside, shortOutside)
	c := dialServe(t, s, false)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	for _, params := range []map[string]any{
		{"cwd": shortInside, "mcpServers": []any{}},
		{"cwd": s.root, "mcpServers": []any{}, "additionalDirectories": []string{shortInside}},
	} {
		require.NoError(t, c.Call(ctx, "session/new", params, nil), "%v", params)
	}
	answers := map[string]string{}
	for what, p := range map[string]string{"long": outside, "short": shortOutside, "missing": filepath.Join(outside, "missing~1")} {
		err := c.Call(ctx, "session/new", map[string]any{"cwd": p, "mcpServers": []any{}}, nil)
		var re *acphttp.RPCError
		require.ErrorAs(t, err, &re, what)
		answers[what] = strings.ReplaceAll(re.Message, p, "<PATH>") + " " + strings.ReplaceAll(string(re.Data), p, "<PATH>")
	}
	assert.Contains(t, answers["long"], "is outside the directories this agent serves")
	assert.Equal(t, answers["long"], answers["short"], "a short spelling outside answers as the long one")
	assert.Equal(t, answers["long"], answers["missing"], "a missing short-looking name answers the same")
}

// With the home directory as the workspace, the file tools never write
// Windows' own start-up places, which the user's programs run
// unconfined later: the Startup folder (runs at the next sign-in),
// PowerShell's profiles and module directories (run by the user's next
// PowerShell), a PATH directory under AppData (a per-user install whose
// programs run instead of the user's), also by an 8.3 spelling of the
// way there; an ordinary file beside them stays writable.
func TestBinaryWindowsFileToolsRefuseStartupPlaces(t *testing.T) {
	home := testHome(t)
	tool, shims := filepath.Join(home, `AppData\Local\Programs\Tool`), filepath.Join(home, `scoop\shims`)
	require.NoError(t, os.MkdirAll(tool, 0o755))
	require.NoError(t, os.MkdirAll(shims, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(home, `Documents\PowerShell`), 0o755))
	docs := windowsShortName(filepath.Join(home, "Documents"))
	writes := []string{
		`AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup\evil.bat`,
		`Documents\PowerShell\Microsoft.PowerShell_profile.ps1`,
		`Documents\WindowsPowerShell\profile.ps1`,
		`Documents\PowerShell\Modules\git\git.psm1`,
		`AppData\Local\Programs\Tool\tool.exe.bat`,
		`scoop\shims\git.cmd`,
	}
	if docs != "" {
		writes = append(writes, docs+`\PowerShell\profile.ps1`)
	}
	var cs []modelCall
	for _, p := range writes {
		cs = append(cs, modelCall{"write_file", map[string]any{"path": p, "content": "PLANTED"}})
	}
	cs = append(cs, modelCall{"write_file", map[string]any{"path": `Documents\notes.txt`, "content": "NOTES"}})
	model := stepModel(t, calls(cs...), says("done"))
	cmd := exec.Command(agentBin, "--model", "openai/test-model", "--mode", "full-access")
	cmd.Env = []string{"PATH=" + strings.Join([]string{os.Getenv("PATH"), tool, shims}, string(os.PathListSeparator)), goraceEnv, "HOME=" + home,
		"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	conn, sid := startE2EWith(t, cmd, newToolClient(home, "allow_once"), home, sdk.ClientCapabilities{})
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "[go]"))
	results := toolMessages(t, model.body(t, 1))
	require.Len(t, results, len(cs))
	for i, p := range writes {
		assert.Contains(t, results[i], "protected start-up or configuration file", "%s: %s", p, results[i])
		_, err := os.Stat(filepath.Join(home, p))
		assert.ErrorIs(t, err, os.ErrNotExist, "%s was written", p)
	}
	data, err := os.ReadFile(filepath.Join(home, `Documents\notes.txt`))
	require.NoError(t, err, "an ordinary file beside them is written (the control)")
	assert.Equal(t, "NOTES", string(data))
}

// An "Always allow exactly LINE, in this folder" of a cmd.exe line
// covers that line in that folder and nothing near it, through the
// built Windows binary: not the line with a command chained on (&, &&,
// |, a caret-escaped &), another spelling of it, nor the line in
// another folder, a short spelling of the folder excepted (it is the
// same folder). And the agent's secrets are not in the environment a
// line expands: %OPENAI_API_KEY% stays unexpanded.
func TestBinaryWindowsExactLineApprovalsDoNotWiden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a folder with a long name")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	const line = "echo approved-line"
	variants := []string{
		line + " & echo WIDENED-1",
		line + " && echo WIDENED-2",
		line + " | echo WIDENED-3",
		line + " ^& echo WIDENED-4",
		line + " ",
		"ECHO approved-line",
		"echo approved-line & %COMSPEC% /c echo WIDENED-5",
	}
	var tries []modelCall
	for _, v := range variants {
		tries = append(tries, modelCall{"run_command", map[string]any{"command": v}})
	}
	tries = append(tries, modelCall{"run_command", map[string]any{"command": line, "cwd": "sub"}})
	same := []modelCall{{"run_command", map[string]any{"command": line}}}
	if s := winetest.ShortPath(dir); s != "" {
		same = append(same, modelCall{"run_command", map[string]any{"command": line, "cwd": s}})
	}
	model := promptModel(t, map[string][]modelCall{
		"[approve]": {{"run_command", map[string]any{"command": line}},
			{"run_command", map[string]any{"command": "echo [%OPENAI_API_KEY%] [%ACP_TEST_SERVICE_TOKEN%]"}}},
		"[variants]": tries,
		"[same]":     same,
	})
	client := &answeringClient{toolClient: newToolClient(dir, "")}
	cmd := exec.Command(agentBin, "--model", "openai/test-model")
	cmd.Env = append(agentEnv(t), "OPENAI_API_KEY=sk-agent-key-NEVER-SHOWN", "ACP_TEST_SERVICE_TOKEN=token-NEVER-SHOWN",
		"OPENAI_BASE_URL="+model.URL+"/v1")
	conn, sid := startE2EWith(t, cmd, client, dir, sdk.ClientCapabilities{})

	client.setAnswer("allow_always")
	promptE2E(t, conn, sid, "[approve]")
	require.Equal(t, 2, client.asked())
	body := model.body(t, 1)
	assert.Contains(t, body, "approved-line", "the approved line ran")
	assert.NotContains(t, body, "NEVER-SHOWN", "no secret of the agent's is in a command's environment")

	client.setAnswer("reject_once")
	promptE2E(t, conn, sid, "[variants]")
	assert.Equal(t, 2+len(tries), client.asked(), "every variant asks again")
	for _, r := range toolMessages(t, model.body(t, 3)) {
		assert.NotContains(t, r, "WIDENED", "no variant ran")
	}

	promptE2E(t, conn, sid, "[same]")
	assert.Equal(t, 2+len(tries), client.asked(), "the approved line in its folder runs without asking")
}
