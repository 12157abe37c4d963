package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/internal/winetest"
)

var rewindKill9Runs = flag.Int("rewind.kill9.runs", 0, "runs of TestBinaryRewindKill9Loop (0: as many as fit in about 12 s)")

// gatedModel is an OpenAI-format model server. A turn whose user message
// holds a key of calls gets those tool calls, then a closing answer. A
// turn whose message holds a key of holdFirst waits before its first
// answer, one of holdAfter before the answer to its tool results, until
// the test sends on release (or the agent goes away); held says which
// key is waiting.
type gatedModel struct {
	*httptest.Server
	held    chan string
	release chan struct{}
}

func newGatedModel(t *testing.T, calls map[string][]modelCall, holdFirst, holdAfter []string) *gatedModel {
	return newGatedModelTexts(t, calls, holdFirst, holdAfter, nil)
}

// newGatedModelTexts is newGatedModel whose answer to a turn whose
// message holds a key of texts is that text.
func newGatedModelTexts(t *testing.T, calls map[string][]modelCall, holdFirst, holdAfter []string, texts map[string]string) *gatedModel {
	m := &gatedModel{held: make(chan string, 64), release: make(chan struct{}, 64)}
	keyOf := func(text string, keys []string) string {
		for _, k := range keys {
			if strings.Contains(text, k) {
				return k
			}
		}
		return ""
	}
	m.Server = httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(data, &req)
		user := ""
		for _, msg := range req.Messages {
			if msg.Role == "user" {
				user = string(msg.Content)
			}
		}
		after := lastIsToolResult(data)
		hold := holdFirst
		if after {
			hold = holdAfter
		}
		if k := keyOf(user, hold); k != "" {
			m.held <- k
			select {
			case <-m.release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for k, text := range texts {
			if strings.Contains(user, k) {
				data, _ := json.Marshal(text)
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", data)
				io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
				return
			}
		}
		var cs []modelCall
		if !after {
			for k, c := range calls {
				if strings.Contains(user, k) {
					cs = c
				}
			}
		}
		io.WriteString(w, openAIStream(cs, after || cs == nil))
	}))
	t.Cleanup(m.Close)
	return m
}

// awaitHeld waits until the model holds the turn of key.
func (m *gatedModel) awaitHeld(t *testing.T, key string) {
	t.Helper()
	select {
	case k := <-m.held:
		require.Equal(t, key, k)
	case <-time.After(waitBudget(t)):
		t.Fatalf("the model was never asked for %s", key)
	}
}

func integrityAgent(t *testing.T, m *gatedModel, sessions string) *proc {
	t.Helper()
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + m.URL + "/v1"},
		append([]string{"--model", "openai/test-model", "--mode", "full-access", "--session-dir", sessions}, shellArgs(t)...)...)
	p.Initialize(nil)
	return p
}

// loadSession loads sid in dir and returns what the load said.
func loadSession(t *testing.T, p *proc, sid, dir string) string {
	t.Helper()
	resp, before := p.Call(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	require.Nil(t, resp.Error, "load")
	return textOf(t, before)
}

// userTexts are the texts of the session's user messages.
func userTexts(t *testing.T, p *proc, sid string) []string {
	t.Helper()
	r, werr := ext(t, p, acp.MethodExtSessionForkable, map[string]any{"sessionId": sid})
	require.Nil(t, werr)
	var out []string
	for _, m := range r["messages"].([]any) {
		out = append(out, m.(map[string]any)["text"].(string))
	}
	return out
}

// checkpointLog is the session's checkpoint log, one record a line.
func checkpointLog(t *testing.T, sessions, sid string) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(sessions, sid, "checkpoints", "log.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r map[string]any
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

func rewindRequest(sid string, to int) map[string]any {
	return map[string]any{"sessionId": sid, "toUserEntryIndex": to, "files": true}
}

// kill9 kills the agent and waits for it to be gone.
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	p.waitExit(t, 10*time.Second)
}

// Issue 24 (3): a rewind sent while a turn runs is refused (-32600)
// before anything changes: the files and the conversation stay as they
// are, when the turn ends, and after a reload (the log holds no rewind
// for a load to complete).
func TestBinaryRewindRefusedWhileATurnRunsChangesNothing(t *testing.T) {
	dir, sessions := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A0\n"), 0o644))
	model := newGatedModel(t, map[string][]modelCall{
		"[p1]": {{"edit_file", map[string]any{"path": "a.txt", "old_string": "A0", "new_string": "A1"}},
			{"run_command", map[string]any{"command": shLine("echo B1 > b.txt", "echo B1>b.txt")}}},
	}, []string{"[slow]"}, nil)
	p := integrityAgent(t, model, sessions)
	sid := p.NewSession(dir)
	promptOK(t, p, sid, "[p1]")
	s1 := treeState(t, dir)
	require.Equal(t, map[string]string{"a.txt": "A1\n", "b.txt": echoed("B1")}, s1)
	users := userIndexes(t, p, sid)
	require.Len(t, users, 1)

	turn := p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[slow]")}})
	model.awaitHeld(t, "[slow]")
	resp, _ := p.Call("_acp-agent/session/rewind", rewindRequest(sid, users[0]))
	require.NotNil(t, resp.Error, "a rewind during a turn is refused")
	assert.EqualValues(t, acp.CodeInvalidRequest, resp.Error.Code)
	assert.Equal(t, s1, treeState(t, dir), "the refused rewind changed no file")
	// /rewind typed as a prompt waits for the turn instead; the extension
	// is the one that answers at once.
	model.release <- struct{}{}
	resp, _ = p.Await(turn)
	require.Nil(t, resp.Error)
	assert.Equal(t, s1, treeState(t, dir), "nor after the turn")
	assert.Equal(t, []string{"[p1]", "[slow]"}, userTexts(t, p, sid))

	p.stdin.Close()
	p.waitExit(t, 5*time.Second)
	q := integrityAgent(t, model, sessions)
	said := loadSession(t, q, sid, dir)
	assert.NotContains(t, said, "rewind", "nothing to complete")
	assert.Equal(t, s1, treeState(t, dir), "nor after a reload")
	assert.Equal(t, []string{"[p1]", "[slow]"}, userTexts(t, q, sid))
	for _, r := range checkpointLog(t, sessions, sid) {
		assert.NotEqual(t, "rewind", r["type"], "a refused rewind is never logged")
	}
}

// Issue 24 (4): rewinds sent at once to an idle session run one after
// the other on the session's queue: each answers as it would alone in
// that order (a success, or -32602 when its message is already gone),
// the log shows each one complete before the next begins, and the files
// and the conversation end as that serial order leaves them.
func TestBinaryConcurrentRewindsAreSerialised(t *testing.T) {
	orders := [][]int{{3, 1, 4, 2}, {1, 4, 2, 3}, {4, 2, 3, 1, 0}}
	if winetest.Active {
		orders = orders[2:] // the logic is the Linux run's; cmd.exe is slow under Wine
	}
	for round, order := range orders {
		t.Run(fmt.Sprint("round ", round), func(t *testing.T) {
			dir, sessions := t.TempDir(), t.TempDir()
			for i := range 3 {
				require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte("initial\n"), 0o644))
			}
			const turns = 5
			calls := map[string][]modelCall{}
			for i := range turns {
				calls[fmt.Sprintf("[turn %d]", i)] = []modelCall{
					{"write_file", map[string]any{"path": fmt.Sprintf("w%d.txt", i), "content": fmt.Sprintf("turn %d\n", i)}},
					{"run_command", map[string]any{"command": fmt.Sprintf(shLine("echo %d > made%d.txt && echo %d >> f%d.txt", "echo t%d>made%d.txt&& echo t%d>>f%d.txt"), i, i, i, (i+1)%3)}},
				}
			}
			model := newGatedModel(t, calls, nil, nil)
			p := integrityAgent(t, model, sessions)
			sid := p.NewSession(dir)
			var before []map[string]string
			for i := range turns {
				before = append(before, treeState(t, dir))
				promptOK(t, p, sid, fmt.Sprintf("[turn %d]", i))
			}
			users := userIndexes(t, p, sid)
			require.Len(t, users, turns)
			logStart := len(checkpointLog(t, sessions, sid))

			want := map[string]int{}
			for _, k := range order {
				want[p.Request("_acp-agent/session/rewind", rewindRequest(sid, users[k]))] = k
			}
			got := map[int]acptest.Message{}
			for len(got) < len(want) {
				m := p.Next()
				if k, ok := want[string(m.ID)]; ok && m.IsResponse() {
					got[k] = m
				}
			}
			low := slices.Min(order)
			for _, k := range order {
				m := got[k]
				switch {
				case k == low:
					require.Nil(t, m.Error, "the rewind to the earliest message always succeeds")
				case m.Error != nil:
					assert.EqualValues(t, acp.CodeInvalidParams, m.Error.Code, "rewind to message %d: only 'no such message' may refuse it: %s", k, m.Error.Message)
				}
				if m.Error == nil {
					var r map[string]any
					require.NoError(t, json.Unmarshal(m.Result, &r))
					assert.EqualValues(t, users[k], r["entries"])
				}
			}
			assert.Equal(t, treeHash(before[low]), treeHash(treeState(t, dir)), "the files are as the serial order leaves them")
			var wantTexts []string
			for i := range low {
				wantTexts = append(wantTexts, fmt.Sprintf("[turn %d]", i))
			}
			assert.Equal(t, wantTexts, userTexts(t, p, sid), "the conversation is as the serial order leaves it")

			// The log: each accepted rewind done before the next one starts,
			// keeping fewer entries than the one before.
			open, lastKeep, accepted := -1.0, 1e9, 0
			for _, r := range checkpointLog(t, sessions, sid)[logStart:] {
				rw, _ := r["rewind"].(map[string]any)
				switch r["type"] {
				case "rewind":
					require.EqualValues(t, -1, open, "a rewind began before the one before it was done")
					open = rw["id"].(float64)
					keep := rw["keep"].(float64)
					assert.Less(t, keep, lastKeep)
					lastKeep = keep
					accepted++
				case "rewind_done":
					require.Equal(t, open, rw["id"].(float64))
					assert.Nil(t, rw["failed"])
					open = -1
				}
			}
			successes := 0
			for _, m := range got {
				if m.Error == nil {
					successes++
				}
			}
			assert.Equal(t, successes, accepted, "every success, and only they, in the log")
		})
	}
}

// Issue 24 (6): the changes of a command survive a kill -9 of the agent
// during the command, at its end and after its result: the next load
// records them (from the workspace's manifest kept before the command)
// and a rewind puts every one of them back.
func TestBinaryCommandChangesSurviveKill9(t *testing.T) {
	t.Parallel()
	script := shLine("echo A1 > a.txt && rm b.txt && echo N > new.txt && echo C1 > sub/c.txt && echo $$ > pid.txt && touch ran.txt",
		`echo A1>a.txt&& del b.txt&& echo N>new.txt&& echo C1>sub\c.txt&& type nul>ran.txt`)
	cases := []struct {
		name    string
		command string
		hold    bool // the model holds the answer to the command's result
	}{
		{"during the command", script + shLine(" && exec sleep 30", "&& "+sleeperLine("pid.txt")), false},
		{"at its end", script, false},
		{"after its result", script, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, sessions := t.TempDir(), t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
			for name, content := range map[string]string{"a.txt": "A0\n", "b.txt": "B0\n", "sub/c.txt": "C0\n"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
			}
			var holdAfter []string
			if tc.hold {
				holdAfter = []string{"[cmd]"}
			}
			model := newGatedModel(t, map[string][]modelCall{
				"[cmd]": {{"run_command", map[string]any{"command": tc.command, "timeout_seconds": 60}}},
			}, nil, holdAfter)
			p := integrityAgent(t, model, sessions)
			sid := p.NewSession(dir)
			promptOK(t, p, sid, "[first]") // a message to rewind to, before the command's
			before := treeState(t, dir)
			p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[cmd]")}})
			sleeps := tc.command != script
			pidOf := func() int {
				data, _ := os.ReadFile(filepath.Join(dir, "pid.txt"))
				pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
				return pid
			}
			if tc.hold {
				model.awaitHeld(t, "[cmd]")
			} else {
				require.Eventually(t, func() bool {
					_, err := os.Stat(filepath.Join(dir, "ran.txt"))
					return err == nil && (!sleeps || pidOf() > 0)
				}, waitBudget(t), time.Millisecond)
			}
			p.kill9(t)
			if onWindows && sleeps {
				// The command's Job Object ends with the agent's last
				// handle to it.
				require.Eventually(t, func() bool { return !processAlive(pidOf()) }, 10*time.Second, 5*time.Millisecond,
					"the command died with the agent")
			}
			killCommand(t, dir)

			q := integrityAgent(t, model, sessions)
			said := loadSession(t, q, sid, dir)
			if !tc.hold {
				t.Logf("the load said: %s", said)
			}
			users := userIndexes(t, q, sid)
			require.NotEmpty(t, users)
			r := rewindTo(t, q, sid, rewindRequest(sid, users[0]))
			assert.NotEmpty(t, r["files"], "the rewind sets the command's files back")
			assert.Nil(t, r["incomplete"])
			assert.Equal(t, before, treeState(t, dir), "every change of the command is undone")
		})
	}
}

// killCommand kills the command whose shell wrote pid.txt in dir, if it
// still runs (a command outlives a kill -9 of the agent), and waits for
// it to be gone: it must not change files while a test checks them.
func killCommand(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "pid.txt"))
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return
	}
	killPID(pid)
	require.Eventually(t, func() bool {
		return !processAlive(pid)
	}, waitBudget(t), 5*time.Millisecond, "the command is gone")
}

// Issue 24: the kill -9 loop, during rewinds (accepted ones, and ones
// refused because a turn runs) and during commands. After each kill the
// session is loaded and checked: an accepted rewind is complete or was
// never started (never a mix), a refused rewind is never applied, and
// every change a command made can be rewound. It runs for about 12 s
// (-rewind.kill9.runs for a count).
func TestBinaryRewindKill9Loop(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 24))
	deadline := time.Now().Add(12 * time.Second)
	if winetest.Active {
		deadline = time.Now() // one run of each kind: the logic is the Linux run's, and runs are slow under Wine
	}
	outcomes := map[string]int{}
	kinds := []string{"rewind", "refused rewind", "command"}
	runs := 0
	for ; ; runs++ {
		if *rewindKill9Runs > 0 {
			if runs >= *rewindKill9Runs {
				break
			}
		} else if runs >= len(kinds) && time.Now().After(deadline) {
			break
		}
		kind := kinds[runs%len(kinds)]
		var outcome string
		t.Run(fmt.Sprintf("run %d %s", runs, kind), func(t *testing.T) { outcome = kill9Run(t, rng, kind) })
		outcomes[kind+": "+outcome]++
		if t.Failed() {
			runs++
			break
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range outcomes {
			if !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s: %d", k, outcomes[k])
	}
	t.Logf("%d runs, %d kills:%s", runs, runs, b.String())
}

// kill9Run sets up a session with two turns of changes (tool writes and a
// command that changes, creates and deletes files), kills the agent at a
// random moment of a rewind, of a refused rewind or of a command, loads
// the session and checks it. It returns what the kill met.
func kill9Run(t *testing.T, rng *rand.Rand, kind string) string {
	const files = 30
	dir, sessions := t.TempDir(), t.TempDir()
	for i := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(strings.Repeat(fmt.Sprintf("v0-%02d.", i), 2000)), 0o644))
	}
	// cmd.exe has no $$ and no sleep under a second; it is slower anyway.
	slow := shLine("echo $$ > pid.txt; for f in f*.txt; do echo changed-$f > $f; sleep 0.005; done; rm -f f00.txt; echo new > new.txt; touch ran.txt",
		"(for %f in (f*.txt) do @echo changed-%f>%f)& del f00.txt& echo new>new.txt& type nul>ran.txt")
	model := newGatedModel(t, map[string][]modelCall{
		"[t0]": {{"run_command", map[string]any{"command": shLine("for f in f*.txt; do echo t0 >> $f; done; rm f01.txt; echo t0 > t0.txt",
			"(for %f in (f*.txt) do @echo t0>>%f)& del f01.txt& echo t0>t0.txt")}},
			{"write_file", map[string]any{"path": "w0.txt", "content": "t0 wrote this\n"}}},
		"[t1]":  {{"edit_file", map[string]any{"path": "w0.txt", "old_string": "t0", "new_string": "t1"}}},
		"[cmd]": {{"run_command", map[string]any{"command": slow, "timeout_seconds": 60}}},
	}, []string{"[hold]"}, nil)
	p := integrityAgent(t, model, sessions)
	sid := p.NewSession(dir)
	s0 := treeState(t, dir)
	promptOK(t, p, sid, "[t0]")
	s1 := treeState(t, dir)
	promptOK(t, p, sid, "[t1]")
	s2 := treeState(t, dir)
	users := userIndexes(t, p, sid)
	require.Len(t, users, 2)
	delay := time.Duration(rng.IntN(250)) * time.Millisecond

	var outcome string
	switch kind {
	case "rewind":
		p.Request("_acp-agent/session/rewind", rewindRequest(sid, users[0]))
		time.Sleep(delay)
		p.kill9(t)
		q := integrityAgent(t, model, sessions)
		said := loadSession(t, q, sid, dir)
		now := treeState(t, dir)
		switch treeHash(now) {
		case treeHash(s2):
			outcome = "not started"
			assert.Equal(t, []string{"[t0]", "[t1]"}, userTexts(t, q, sid), "the conversation with the files")
		case treeHash(s0):
			outcome = "complete"
			if strings.Contains(said, "completed now") {
				outcome = "completed by the load"
			}
			assert.Empty(t, userTexts(t, q, sid), "the conversation with the files")
		default:
			t.Fatalf("after a kill %v into a rewind and a load, the files are neither before nor after it: %s", delay, treeDiff(s0, now))
		}
	case "refused rewind":
		p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[hold]")}})
		model.awaitHeld(t, "[hold]")
		id := p.Request("_acp-agent/session/rewind", rewindRequest(sid, users[0]))
		time.Sleep(delay / 4)
		outcome = "killed before its answer"
		for m, ok := p.NextWithin(0); ok; m, ok = p.NextWithin(0) {
			if m.IsResponse() && string(m.ID) == id {
				require.NotNil(t, m.Error)
				assert.EqualValues(t, acp.CodeInvalidRequest, m.Error.Code)
				outcome = "killed after its answer"
			}
		}
		p.kill9(t)
		q := integrityAgent(t, model, sessions)
		said := loadSession(t, q, sid, dir)
		assert.NotContains(t, said, "rewind")
		assert.Equal(t, s2, treeState(t, dir), "a refused rewind never changes a file")
		texts := userTexts(t, q, sid)
		assert.Equal(t, []string{"[t0]", "[t1]"}, texts[:min(2, len(texts))], "nor the conversation")
		for _, r := range checkpointLog(t, sessions, sid) {
			assert.NotEqual(t, "rewind", r["type"], "a refused rewind is never logged")
		}
	case "command":
		p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[cmd]")}})
		if winetest.Active {
			delay *= 4 // cmd.exe takes most of a second to start under Wine
		}
		time.Sleep(delay * 2)
		p.kill9(t)
		killCommand(t, dir)
		switch _, err := os.Stat(filepath.Join(dir, "ran.txt")); {
		case err == nil:
			outcome = "after the command"
		case treeHash(treeState(t, dir)) == treeHash(s2):
			outcome = "before the command changed anything"
		default:
			outcome = "during the command"
		}
		q := integrityAgent(t, model, sessions)
		loadSession(t, q, sid, dir)
		users := userIndexes(t, q, sid)
		require.GreaterOrEqual(t, len(users), 2)
		rewindTo(t, q, sid, rewindRequest(sid, users[1]))
		assert.Equal(t, treeHash(s1), treeHash(treeState(t, dir)), "back to before [t1]: the command's changes are all undone")
		rewindTo(t, q, sid, rewindRequest(sid, users[0]))
		assert.Equal(t, treeHash(s0), treeHash(treeState(t, dir)), "and to before [t0]")
	}
	return outcome
}

// treeDiff says how tree b differs from tree a.
func treeDiff(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "-"+k)
		} else if v != w {
			out = append(out, "~"+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "+"+k)
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// Issue 24 (3): logs written before rewinds were checked first still
// load. Such a version logged a rewind before it checked for a running
// turn, so an unfinished rewind record may be one that was refused: a
// load completes it only when nothing followed it (the log ends with it
// and the conversation is as it left it), and otherwise leaves it alone
// and says so.
func TestBinaryOldFormatRewindRecordsLoad(t *testing.T) {
	for _, tc := range []struct {
		name     string
		followed bool // the session went on after the record (a refused rewind)
	}{{"interrupted", false}, {"refused, then the session went on", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, sessions := t.TempDir(), t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A0\n"), 0o644))
			model := newGatedModel(t, map[string][]modelCall{
				"[p1]": {{"edit_file", map[string]any{"path": "a.txt", "old_string": "A0", "new_string": "A1"}}},
				"[p2]": {{"edit_file", map[string]any{"path": "a.txt", "old_string": "A1", "new_string": "A2"}}},
			}, nil, nil)
			p := integrityAgent(t, model, sessions)
			sid := p.NewSession(dir)
			promptOK(t, p, sid, "[p1]")
			promptOK(t, p, sid, "[p2]")
			users := userIndexes(t, p, sid)
			stats, werr := ext(t, p, acp.MethodExtSessionStats, map[string]any{"sessionId": sid})
			require.Nil(t, werr)
			total := int(stats["totalEntries"].(float64))
			p.stdin.Close()
			p.waitExit(t, 5*time.Second)

			// What the old version wrote: a rewind to before [p2], with the
			// file it sets, not "accepted".
			var before string
			for _, r := range checkpointLog(t, sessions, sid) {
				if r["type"] == "file" && r["turn"].(float64) == 2 {
					before = r["before"].(string)
				}
			}
			require.NotEmpty(t, before)
			removed := []any{}
			for range total - users[1] {
				removed = append(removed, map[string]any{"type": "entry", "time": time.Now(), "kind": "user"})
			}
			if tc.followed {
				// The turn that was running went on and added entries.
				removed = removed[:1]
			}
			recs := []map[string]any{{"type": "rewind", "time": time.Now(), "rewind": map[string]any{"id": 1, "keep": users[1],
				"files": []any{map[string]any{"path": filepath.Join(dir, "a.txt"), "from": nil, "to": before}}, "removed": removed}}}
			if tc.followed {
				recs = append(recs, map[string]any{"type": "turn", "turn": 3, "entryTime": time.Now(), "time": time.Now()})
			}
			f, err := os.OpenFile(filepath.Join(sessions, sid, "checkpoints", "log.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			for _, r := range recs {
				data, _ := json.Marshal(r)
				_, err := f.Write(append(data, '\n'))
				require.NoError(t, err)
			}
			require.NoError(t, f.Close())

			q := integrityAgent(t, model, sessions)
			said := loadSession(t, q, sid, dir)
			data, err := os.ReadFile(filepath.Join(dir, "a.txt"))
			require.NoError(t, err)
			if tc.followed {
				assert.Contains(t, said, "left alone")
				assert.Equal(t, "A2\n", string(data), "a rewind that may have been refused is not completed")
				assert.Equal(t, []string{"[p1]", "[p2]"}, userTexts(t, q, sid))
			} else {
				assert.Contains(t, said, "completed now")
				assert.Equal(t, "A1\n", string(data), "an interrupted rewind is completed")
				assert.Equal(t, []string{"[p1]"}, userTexts(t, q, sid))
			}
			// Either way it is settled: a second load does nothing.
			q.stdin.Close()
			q.waitExit(t, 5*time.Second)
			r := integrityAgent(t, model, sessions)
			assert.NotContains(t, loadSession(t, r, sid, dir), "rewind")
		})
	}
}

// Issue 24 (3): a rewind whose files cannot all be restored as they
// stand (a directory became a file) is refused before anything changes:
// nothing is logged, and no load completes it.
func TestBinaryRewindThatCannotRestoreIsRefusedFirst(t *testing.T) {
	dir, sessions := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "x.txt"), []byte("X0\n"), 0o644))
	model := newGatedModel(t, map[string][]modelCall{
		"[p1]": {{"edit_file", map[string]any{"path": "a.txt", "old_string": "A0", "new_string": "A1"}},
			{"run_command", map[string]any{"command": shLine("rm -r sub && echo not a directory > sub", "rmdir /s /q sub&& echo not a directory>sub")}}},
	}, nil, nil)
	p := integrityAgent(t, model, sessions)
	sid := p.NewSession(dir)
	promptOK(t, p, sid, "[p1]")
	s1 := treeState(t, dir)
	require.Equal(t, echoed("not a directory"), s1["sub"])
	_, werr := ext(t, p, "_acp-agent/session/rewind", rewindRequest(sid, userIndexes(t, p, sid)[0]))
	require.NotNil(t, werr)
	assert.Contains(t, werr.Message, "nothing was changed")
	assert.Equal(t, s1, treeState(t, dir))
	assert.Equal(t, []string{"[p1]"}, userTexts(t, p, sid))
	for _, r := range checkpointLog(t, sessions, sid) {
		assert.NotEqual(t, "rewind", r["type"], "a refused rewind is never logged")
	}
}

// Issue 24 (3): a rewind that fails part-way, after it was logged (a
// file it restores cannot be replaced: it is immutable), puts back what
// it had already set and is logged as failed: it changed nothing, it
// says so, and no load completes it later.
func TestBinaryFailedRewindPutsBackWhatItSet(t *testing.T) {
	dir, sessions := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("B0\n"), 0o644))
	model := newGatedModel(t, map[string][]modelCall{
		"[p1]": {{"edit_file", map[string]any{"path": "a.txt", "old_string": "A0", "new_string": "A1"}}},
		"[p2]": {{"edit_file", map[string]any{"path": "b.txt", "old_string": "B0", "new_string": "B1"}}},
	}, nil, nil)
	p := integrityAgent(t, model, sessions)
	sid := p.NewSession(dir)
	promptOK(t, p, sid, "[p1]")
	promptOK(t, p, sid, "[p2]")
	s2 := treeState(t, dir)
	require.Equal(t, map[string]string{"a.txt": "A1\n", "b.txt": "B1\n"}, s2)
	// a.txt is restored first, then b.txt, which nothing can replace.
	b := filepath.Join(dir, "b.txt")
	if out, err := exec.Command("chattr", "+i", b).CombinedOutput(); err != nil {
		t.Skipf("cannot make a file immutable here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", b).Run() })
	_, werr := ext(t, p, "_acp-agent/session/rewind", rewindRequest(sid, userIndexes(t, p, sid)[0]))
	require.NotNil(t, werr)
	assert.Contains(t, werr.Message, "nothing was changed")
	assert.Equal(t, s2, treeState(t, dir), "a.txt, set first, was put back")
	assert.Equal(t, []string{"[p1]", "[p2]"}, userTexts(t, p, sid))
	var types []any
	for _, r := range checkpointLog(t, sessions, sid) {
		if r["type"] == "rewind_done" {
			assert.NotEmpty(t, r["rewind"].(map[string]any)["failed"])
		}
		types = append(types, r["type"])
	}
	assert.Contains(t, types, "rewind_done", "logged as failed")

	p.stdin.Close()
	p.waitExit(t, 5*time.Second)
	require.NoError(t, exec.Command("chattr", "-i", b).Run())
	q := integrityAgent(t, model, sessions)
	assert.NotContains(t, loadSession(t, q, sid, dir), "rewind")
	assert.Equal(t, s2, treeState(t, dir), "no load completes a failed rewind")
	assert.Equal(t, []string{"[p1]", "[p2]"}, userTexts(t, q, sid))
}

// Issue 24 (6): closing a session drops the workspace contents its packs
// kept for commands (only what the log names stays), and a rewind after
// a reload still restores a command's changes; a change the checkpoint
// could not keep (a file beyond the scan's limits) is named in the
// rewind's answer, never passed over in silence.
func TestBinaryCommandCheckpointsAfterCloseAndWhatCannotBeRestored(t *testing.T) {
	dir, sessions := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.bin"), []byte(strings.Repeat("b", 2<<20)), 0o644))
	model := newGatedModel(t, map[string][]modelCall{
		"[cmd]": {{"run_command", map[string]any{"command": shLine("echo A1 > a.txt && echo new > n.txt && echo tail >> big.bin", "echo A1>a.txt&& echo new>n.txt&& echo tail>>big.bin")}}},
	}, nil, nil)
	p := integrityAgent(t, model, sessions)
	sid := p.NewSession(dir)
	before := treeState(t, dir)
	promptOK(t, p, sid, "[cmd]")
	objects := filepath.Join(sessions, sid, "checkpoints", "objects")
	names, _ := filepath.Glob(filepath.Join(objects, "pack-*"))
	require.NotEmpty(t, names, "the workspace was kept in a pack for the command")
	resp, _ := p.Call(acp.MethodSessionClose, map[string]any{"sessionId": sid})
	require.Nil(t, resp.Error)
	names, _ = filepath.Glob(filepath.Join(objects, "pack-*"))
	assert.Empty(t, names, "closing the session dropped the packs")

	loadSession(t, p, sid, dir)
	r := rewindTo(t, p, sid, rewindRequest(sid, userIndexes(t, p, sid)[0]))
	assert.ElementsMatch(t, []any{filepath.Join(dir, "a.txt"), filepath.Join(dir, "n.txt")}, r["files"])
	assert.Equal(t, []any{filepath.Join(dir, "big.bin")}, r["unrestorable"], "the rewind says what it could not set back")
	after := treeState(t, dir)
	assert.Equal(t, before["a.txt"], after["a.txt"])
	assert.NotContains(t, after, "n.txt")
}

// TestBinaryRewindKeepsAFileACommandStoppedIgnoring: a command that drops
// an ignore rule makes a file show up that was there all along, unlisted
// by the scan before it; a rewind to before the command puts the rules
// back and deletes only what the command created, not that file.
func TestBinaryRewindKeepsAFileACommandStoppedIgnoring(t *testing.T) {
	dir, sessions := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("notes.log\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.log"), []byte("precious\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("A0\n"), 0o644))
	// Older than the file-time slack when the command's scan starts.
	time.Sleep(300 * time.Millisecond)
	model := newGatedModel(t, map[string][]modelCall{
		"[cmd]": {{"run_command", map[string]any{"command": shLine("echo '*.tmp' > .gitignore && echo A1 > a.txt && echo new > n.txt", "echo *.tmp>.gitignore&& echo A1>a.txt&& echo new>n.txt")}}},
	}, nil, nil)
	p := integrityAgent(t, model, sessions)
	sid := p.NewSession(dir)
	promptOK(t, p, sid, "[cmd]")
	r := rewindTo(t, p, sid, rewindRequest(sid, userIndexes(t, p, sid)[0]))
	assert.ElementsMatch(t, []any{filepath.Join(dir, ".gitignore"), filepath.Join(dir, "a.txt"), filepath.Join(dir, "n.txt")}, r["files"])
	after := treeState(t, dir)
	assert.Equal(t, "notes.log\n", after[".gitignore"])
	assert.Equal(t, "A0\n", after["a.txt"])
	assert.NotContains(t, after, "n.txt")
	data, err := os.ReadFile(filepath.Join(dir, "notes.log"))
	require.NoError(t, err, "the rewind deleted a file the command did not create")
	assert.Equal(t, "precious\n", string(data))
}
