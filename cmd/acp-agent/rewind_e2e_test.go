package main

import (
	"github.com/acp-agent/acp-agent/internal/winetest"

	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// treeState is every regular file under dir (relative path → content).
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(data)
		return nil
	}))
	return out
}

// treeHash is one hash of a tree state.
func treeHash(state map[string]string) string {
	keys := make([]string, 0, len(state))
	for k := range state {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%d\x00%s", k, len(state[k]), state[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// rewindAgent starts the binary on a prompt-keyed model in full-access
// mode with a session directory, and opens a session in dir.
func rewindAgent(t *testing.T, model *scriptedModel, sessions string) *proc {
	t.Helper()
	return startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"},
		append([]string{"--model", "openai/test-model", "--mode", "full-access", "--session-dir", sessions}, shellArgs(t)...)...)
}

func promptOK(t *testing.T, p *proc, sid, text string) []acptest.Message {
	t.Helper()
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	require.Nil(t, resp.Error, "prompt %s", text)
	return before
}

// userIndexes are the entry indexes of the session's user messages.
func userIndexes(t *testing.T, p *proc, sid string) []int {
	t.Helper()
	r, werr := ext(t, p, acp.MethodExtSessionForkable, map[string]any{"sessionId": sid})
	require.Nil(t, werr)
	var out []int
	for _, m := range r["messages"].([]any) {
		out = append(out, int(m.(map[string]any)["entryIndex"].(float64)))
	}
	return out
}

func rewindTo(t *testing.T, p *proc, sid string, params map[string]any) extResult {
	t.Helper()
	params["sessionId"] = sid
	r, werr := ext(t, p, "_acp-agent/session/rewind", params)
	require.Nil(t, werr, "rewind %v", params)
	return r
}

// Issue 17: rewinding to before a user message sets the conversation and
// the files back exactly (files the tools wrote and ones a command
// changed, created or deleted, outside git); the rewind can be undone;
// files: false leaves the files.
func TestBinaryRewindWithFiles(t *testing.T) {
	needsBash(t)
	dir, sessions := t.TempDir(), t.TempDir()
	w := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	w("a.txt", "A0\n")
	w("b.txt", "B0\n")
	model := promptModel(t, map[string][]modelCall{
		// write_file overwrites a.txt only after a read (issue 26).
		"[p1]": {{"read_file", map[string]any{"path": "a.txt"}}, {"write_file", map[string]any{"path": "a.txt", "content": "A1\n"}},
			{"run_command", map[string]any{"command": "echo C1 > c.txt && rm b.txt"}}},
		"[p2]": {{"edit_file", map[string]any{"path": "a.txt", "old_string": "A1", "new_string": "A2"}},
			{"write_file", map[string]any{"path": "sub/d.txt", "content": "D2\n"}}},
	})
	p := rewindAgent(t, model, sessions)
	p.Initialize(nil)
	sid := p.NewSession(dir)
	s0 := treeState(t, dir)
	promptOK(t, p, sid, "[p1]")
	s1 := treeState(t, dir)
	require.Equal(t, "C1\n", s1["c.txt"], "the command ran")
	require.NotContains(t, s1, "b.txt")
	promptOK(t, p, sid, "[p2]")
	s2 := treeState(t, dir)
	require.Equal(t, "A2\n", s2["a.txt"])
	users := userIndexes(t, p, sid)
	require.Len(t, users, 2)

	r := rewindTo(t, p, sid, map[string]any{"toUserEntryIndex": users[1], "files": true})
	assert.Equal(t, s1, treeState(t, dir), "back to after the first message")
	assert.EqualValues(t, users[1], r["entries"])
	assert.Equal(t, "[p2]", r["prompt"])
	assert.Len(t, userIndexes(t, p, sid), 1, "the conversation went back too")

	rewindTo(t, p, sid, map[string]any{"undo": true})
	assert.Equal(t, s2, treeState(t, dir), "the rewind was undone")
	assert.Len(t, userIndexes(t, p, sid), 2)

	rewindTo(t, p, sid, map[string]any{"toUserEntryIndex": users[0], "files": true})
	assert.Equal(t, s0, treeState(t, dir), "back to before anything: the command's deletion and creation too")

	// files: false moves only the conversation.
	promptOK(t, p, sid, "[p1]")
	s3 := treeState(t, dir)
	rewindTo(t, p, sid, map[string]any{"toUserEntryIndex": userIndexes(t, p, sid)[0], "files": false})
	assert.Equal(t, s3, treeState(t, dir))
	assert.Empty(t, userIndexes(t, p, sid))

	// The /rewind command lists the points and goes back to one.
	promptOK(t, p, sid, "[p2]")
	require.NotEqual(t, s3, treeState(t, dir))
	list := textOf(t, promptOK(t, p, sid, "/rewind"))
	assert.Contains(t, list, "/rewind 1  [p2]")
	out := textOf(t, promptOK(t, p, sid, "/rewind 1"))
	assert.Contains(t, out, "Rewound")
	assert.Equal(t, s3, treeState(t, dir), "/rewind set the files back")
	assert.Contains(t, textOf(t, promptOK(t, p, sid, "/rewind undo")), "Rewound")
	assert.Equal(t, "A2\n", treeState(t, dir)["a.txt"], "/rewind undo")

	// Bad input.
	_, werr := ext(t, p, "_acp-agent/session/rewind", map[string]any{"sessionId": sid, "toUserEntryIndex": 99})
	require.NotNil(t, werr)
	assert.EqualValues(t, -32602, werr.Code)
}

// Issue 17's property test: random edit sequences (tool writes, edits,
// commands that write and delete), each turn's tree recorded; rewinding
// to any earlier message gives that message's tree exactly (hash), and
// the undo gives the latest one back.
func TestBinaryRewindPropertyRandomEdits(t *testing.T) {
	t.Parallel()
	seeds := uint64(3)
	if winetest.Active {
		seeds = 1 // the logic is the same everywhere; cmd.exe is slow under Wine
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			dir, sessions := t.TempDir(), t.TempDir()
			names := []string{"a.txt", "b.txt", "dir/c.txt", "dir/deep/d.txt", "e.md"}
			for _, n := range names[:3] {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, n)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("initial "+n+"\n"), 0o644))
			}
			const turns = 6
			calls := map[string][]modelCall{}
			for turn := range turns {
				var cs []modelCall
				for range 1 + rng.IntN(3) {
					n := names[rng.IntN(len(names))]
					content := fmt.Sprintf("turn %d %x\n", turn, rng.Uint64())
					wn := filepath.FromSlash(n)
					switch rng.IntN(3) {
					case 0:
						cs = append(cs, modelCall{"write_file", map[string]any{"path": n, "content": content}})
					case 1:
						cs = append(cs, modelCall{"run_command", map[string]any{"command": shLine(
							"mkdir -p "+filepath.Dir(n)+" && printf '"+strings.TrimSpace(content)+"' > "+n,
							`(mkdir "`+filepath.Dir(wn)+`" 2>nul)& echo `+strings.TrimSpace(content)+`>"`+wn+`"`)}})
					default:
						cs = append(cs, modelCall{"run_command", map[string]any{"command": shLine("rm -f "+n, `del /q "`+wn+`" 2>nul`)}})
					}
				}
				calls[fmt.Sprintf("[turn %d]", turn)] = cs
			}
			model := promptModel(t, calls)
			p := rewindAgent(t, model, sessions)
			p.Initialize(nil)
			sid := p.NewSession(dir)
			var before []string // the tree before each turn
			for turn := range turns {
				before = append(before, treeHash(treeState(t, dir)))
				promptOK(t, p, sid, fmt.Sprintf("[turn %d]", turn))
			}
			latest := treeHash(treeState(t, dir))
			for range 3 {
				users := userIndexes(t, p, sid)
				k := rng.IntN(len(users))
				rewindTo(t, p, sid, map[string]any{"toUserEntryIndex": users[k], "files": true})
				require.Equal(t, before[k], treeHash(treeState(t, dir)), "rewind to before turn %d", k)
				rewindTo(t, p, sid, map[string]any{"undo": true})
				require.Equal(t, latest, treeHash(treeState(t, dir)), "undo of the rewind to turn %d", k)
			}
		})
	}
}

// Issue 17: kill -9 during a restore leaves every file old or new, never
// torn, and the next load completes the rewind and says so.
func TestBinaryRewindSurvivesKillDuringRestore(t *testing.T) {
	t.Parallel()
	files, size := 120, 64<<10
	content := func(version, i int) string {
		return strings.Repeat(fmt.Sprintf("v%d-file%03d.", version, i), size/12)
	}
	kills := 5
	if winetest.Active {
		// Under Wine each copy of cmd.exe's loop takes a good part of a
		// second on a loaded machine.
		kills, files = 2, 30
	}
	big := filepath.Join(t.TempDir(), "big.txt")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("x", size)), 0o644))
	for iter := range kills {
		t.Run(fmt.Sprint("kill ", iter), func(t *testing.T) {
			dir, sessions := t.TempDir(), t.TempDir()
			for i := range files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte(content(0, i)), 0o644))
			}
			script := shLine(fmt.Sprintf("for i in $(seq -f %%03g 0 %d); do head -c %d /dev/zero | tr '\\0' x > f$i.txt; done", files-1, size),
				`for %f in (f*.txt) do @copy /y "`+big+`" %f >nul`)
			model := promptModel(t, map[string][]modelCall{"[change all]": {{"run_command", map[string]any{"command": script, "timeout_seconds": 120}}}})
			p := rewindAgent(t, model, sessions)
			p.Initialize(nil)
			sid := p.NewSession(dir)
			promptOK(t, p, sid, "[change all]")
			changed := treeState(t, dir)
			users := userIndexes(t, p, sid)
			start := time.Now()
			p.Request("_acp-agent/session/rewind", map[string]any{"sessionId": sid, "toUserEntryIndex": users[0], "files": true})
			// From before the rewind is logged to the middle of the restore.
			time.Sleep(time.Duration(20+iter*60) * time.Millisecond)
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
			p.waitExit(t, 10*time.Second)
			killedAfter := time.Since(start)

			state := func() (restored int) {
				for i := range files {
					name := fmt.Sprintf("f%03d.txt", i)
					data, err := os.ReadFile(filepath.Join(dir, name))
					require.NoError(t, err)
					switch string(data) {
					case content(0, i):
						restored++
					case changed[name]:
					default:
						t.Fatalf("%s is torn (%d bytes)", name, len(data))
					}
				}
				return restored
			}
			restored := state()
			t.Logf("killed after %v: %d of %d files restored", killedAfter.Round(time.Millisecond), restored, files)

			q := rewindAgent(t, model, sessions)
			q.Initialize(nil)
			resp, before := q.Call(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
			require.Nil(t, resp.Error)
			after := state()
			// A rewind logged before the kill is finished by the load;
			// one the kill prevented never started. Never a mix.
			if restored > 0 {
				require.Equal(t, files, after, "the load finished the rewind")
			}
			require.True(t, after == 0 || after == files, "%d of %d files restored after the load", after, files)
			if restored > 0 && restored < files {
				assert.Contains(t, textOf(t, before), "A rewind of this session was interrupted", "the load says what happened")
			}
		})
	}
}

// Issue 17: a rewind sets files back only inside the workspace: when a
// directory it would remove a file from was swapped for a symlink leading
// out of the workspace, the file out there is left alone.
func TestBinaryRewindDoesNotFollowASwappedDirectory(t *testing.T) {
	winetest.NeedsRealWindows(t, winetest.Symlinks)
	dir, outside, sessions := t.TempDir(), t.TempDir(), t.TempDir()
	model := promptModel(t, map[string][]modelCall{
		"[create]": {{"write_file", map[string]any{"path": "sub/new.txt", "content": "made by the agent\n"}}},
	})
	p := rewindAgent(t, model, sessions)
	p.Initialize(nil)
	sid := p.NewSession(dir)
	promptOK(t, p, sid, "[create]")
	// The workspace is hostile: sub becomes a link to a directory outside
	// holding a file of the same name.
	require.NoError(t, os.WriteFile(filepath.Join(outside, "new.txt"), []byte("precious\n"), 0o644))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "sub")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "sub")))
	_, werr := ext(t, p, "_acp-agent/session/rewind", map[string]any{"sessionId": sid, "toUserEntryIndex": userIndexes(t, p, sid)[0], "files": true})
	require.NotNil(t, werr, "the rewind is refused: the path now leads out of the workspace")
	data, err := os.ReadFile(filepath.Join(outside, "new.txt"))
	require.NoError(t, err, "the file outside the workspace is still there")
	assert.Equal(t, "precious\n", string(data))
}

// Issue 17: the scan around a command has limits (16 MiB read, 2000
// files); a file it could not read before the command is never taken for
// one the command created, so a rewind never deletes it.
func TestBinaryRewindNeverDeletesFilesBeyondTheScanLimits(t *testing.T) {
	t.Parallel()
	dir, sessions := t.TempDir(), t.TempDir()
	for i := range 20 { // 20 MiB: more than one scan reads
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("big%02d.bin", i)), []byte(strings.Repeat("x", 1<<20)), 0o644))
	}
	model := promptModel(t, map[string][]modelCall{
		"[cmd]": {{"run_command", map[string]any{"command": "echo made > made.txt"}}},
	})
	p := rewindAgent(t, model, sessions)
	p.Initialize(nil)
	sid := p.NewSession(dir)
	promptOK(t, p, sid, "[cmd]")
	before := treeState(t, dir)
	rewindTo(t, p, sid, map[string]any{"toUserEntryIndex": userIndexes(t, p, sid)[0], "files": true})
	after := treeState(t, dir)
	for i := range 20 {
		name := fmt.Sprintf("big%02d.bin", i)
		assert.Equal(t, len(before[name]), len(after[name]), "%s is still there", name)
	}
}
