package acpagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/persistence"
)

func TestSlashCommandsAreHandledByTheAgent(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil)
	sid := c.NewSession(cwd)
	var names []string
	for _, cmd := range c.Commands {
		names = append(names, cmd.Name)
	}
	assert.Equal(t, []string{"clear", "model", "mode", "compact", "rewind", "cost"}, names, "available_commands_update after session/new")

	say(t, c, sid, "one")
	say(t, c, sid, "two")
	before := e.model.Count()

	text, _ := say(t, c, sid, "/cost")
	assert.Contains(t, text, "Token: ")
	text, updates := say(t, c, sid, "/mode read-only")
	assert.Equal(t, "Mode: read-only", text)
	var modeUpdate bool
	for _, u := range updates {
		modeUpdate = modeUpdate || u.CurrentModeUpdate != nil
	}
	assert.True(t, modeUpdate, "current_mode_update")
	text, _ = say(t, c, sid, "/model")
	assert.Contains(t, text, "* openai/test-model")
	text, _ = say(t, c, sid, "/clear")
	assert.Contains(t, text, "Context cleared")
	assert.Equal(t, before, e.model.Count(), "slash commands never reach the model")

	text, _ = say(t, c, sid, "after the clear")
	assert.Equal(t, "1 user messages so far", text, "/clear starts a new context")
	c.Stop()
	c2 := e.start(nil)
	resp, _ := loadSession(t, c2, acp.MethodSessionResume, sid, cwd)
	acptest.MustResult(t, resp, nil)
	text, _ = say(t, c2, sid, "after the restart")
	assert.Equal(t, "2 user messages so far", text, "the clear survives a restart")
}

// Seed 003 "Stop Hook": hooks append after the marker, blank output
// leaves the answer, a failing hook or progress callback never breaks the
// turn, and no hooks means nothing runs.
func TestSeed003_StopHooks(t *testing.T) {
	tests := []struct {
		name  string
		hooks []agent.StopHook
		want  string
	}{
		{"no hooks", nil, "done"},
		{"hooks do not run when the turn hits the length limit", []agent.StopHook{
			func(context.Context, agent.StopHookInput) (string, error) { return "must not appear", nil },
		}, "done"},
		{"blank message keeps the answer", []agent.StopHook{func(context.Context, agent.StopHookInput) (string, error) { return "  \n", nil }}, "done"},
		{"messages are appended after the marker", []agent.StopHook{
			func(_ context.Context, in agent.StopHookInput) (string, error) { return "checked: " + in.Answer, nil },
			func(context.Context, agent.StopHookInput) (string, error) { return "", fmt.Errorf("hook broke") },
			func(context.Context, agent.StopHookInput) (string, error) { return "second", nil },
		}, "done\n\n[StopHook]\nchecked: done\n\nsecond"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := says("done")
			if strings.Contains(tt.name, "length limit") {
				r.Finish = llm.FinishLength
			}
			m := newFakeModel(r)
			s := newSession(t, m, func(c *agent.SessionConfig) {
				c.StopHooks = tt.hooks
				c.OnStopHookMessage = func(string) { panic("progress callback failure") }
			})
			res, err := s.Prompt(context.Background(), "go")
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.Text)
		})
	}
	t.Run("shell command hook", func(t *testing.T) {
		m := newFakeModel(says("done"))
		s := newSession(t, m, func(c *agent.SessionConfig) {
			c.CWD = t.TempDir()
			c.StopHooks = []agent.StopHook{agent.CommandStopHook(`jq -r '"reason=" + .stopReason' 2>/dev/null || sed 's/.*"stopReason":"\([a-z_]*\)".*/reason=\1/'`, 0)}
		})
		res, err := s.Prompt(context.Background(), "go")
		require.NoError(t, err)
		assert.Equal(t, "done\n\n[StopHook]\nreason=end_turn", res.Text)
	})
}

// A session file whose last turn was killed mid-tool (a tool call without
// its result) loads, is repaired, and goes on. Since issue 13.10 the call
// is kept and answered as interrupted rather than dropped.
func TestSeed003_DamagedHistoryLoadsAndContinues(t *testing.T) {
	e := newStoreEnv(t)
	store, err := persistence.OpenStore(e.dir)
	require.NoError(t, err)
	f, err := store.Create(persistence.Header{ID: "damaged", CWD: t.TempDir()})
	require.NoError(t, err)
	for _, rec := range []string{
		`{"type":"entry","time":"2026-11-21T10:00:00Z","kind":"user","content":[{"type":"text","text":"list files"}],"source":"prompt"}`,
		`{"type":"entry","time":"2026-11-21T10:00:01Z","kind":"tool_calls","toolCalls":[{"id":"c1","name":"list_directory","arguments":"{}"}]}`,
	} {
		require.NoError(t, f.Append(json.RawMessage(rec)))
	}
	require.NoError(t, f.Close())
	c := e.start(nil)
	resp, _ := loadSession(t, c, acp.MethodSessionResume, "damaged", f.Header().CWD)
	acptest.MustResult(t, resp, nil)
	text, _ := say(t, c, "damaged", "go on")
	assert.Equal(t, "2 user messages so far", text)
	body := e.model.Request(t, e.model.Count()-1).Body
	assert.Contains(t, fmt.Sprint(body["messages"]), "tool_call_id:c1", "the dangling call is answered")
	assert.Contains(t, fmt.Sprint(body["messages"]), acpagent.InterruptedToolResult)
}

// A long scripted session with large tool outputs stays within the window
// through offload and compaction, and still loads after a restart.
func TestLongSessionStaysWithinTheWindow(t *testing.T) {
	dir, cwd := t.TempDir(), t.TempDir()
	big := strings.Repeat("x", 20_000)
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "big.txt"), []byte(big), 0o600))
	var summaries, maxBody atomic.Int64
	var srv *openAIServer
	srv = newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
		body := srv.Request(t, n-1).Body
		data, _ := json.Marshal(body)
		if int64(len(data)) > maxBody.Load() {
			maxBody.Store(int64(len(data)))
		}
		msgs := body["messages"].([]any)
		if strings.Contains(fmt.Sprint(msgs[0]), "Compressed") || strings.Contains(string(data), "summar") && strings.Contains(fmt.Sprint(msgs[0]), "system") && strings.Contains(fmt.Sprint(msgs[0]), "Target length") {
			summaries.Add(1)
			sse(w, []string{textChunk("Summary: the user read big.txt many times."), finishChunk("stop")}, true)
			return
		}
		last := msgs[len(msgs)-1].(map[string]any)
		if last["role"] == "user" {
			args, _ := json.Marshal(map[string]any{"path": "big.txt"})
			argStr, _ := json.Marshal(string(args))
			sse(w, []string{
				`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_` + fmt.Sprint(n) + `","type":"function","function":{"name":"read_file","arguments":` + string(argStr) + `}}]},"finish_reason":null}]}`,
				finishChunk("tool_calls")}, true)
			return
		}
		sse(w, []string{textChunk("read it"), finishChunk("stop")}, true)
	})
	start := func() *acptest.Client {
		store, err := persistence.OpenStore(dir)
		require.NoError(t, err)
		c := client(t, srv, nil, func(cfg *acpagent.Config) {
			cfg.Store = store
			cfg.OffloadThreshold = 30_000 // tokens: a few turns of 20 KB reads
		})
		c.Initialize(nil)
		return c
	}
	c := start()
	sid := c.NewSession(cwd)
	sawOffload, notes := false, 0
	for i := range 150 {
		text, _ := say(t, c, sid, fmt.Sprintf("read big.txt, turn %d", i))
		// The client shows no compactions: each is told in a note
		// before the answer.
		if note, rest, ok := strings.Cut(text, "\n\n"); ok && strings.HasPrefix(note, "Note: The conversation was compacted: ") {
			notes++
			text = rest
		}
		require.Equal(t, "read it", text)
		if files, _ := os.ReadDir(filepath.Join(dir, sid, "offloaded")); len(files) > 0 {
			sawOffload = true
		}
	}
	t.Logf("summaries %d, largest request %d bytes", summaries.Load(), maxBody.Load())
	assert.Positive(t, summaries.Load(), "the history was compacted")
	assert.Positive(t, notes, "and the user was told")
	assert.True(t, sawOffload, "long tool results were offloaded (and cleaned up by later compactions)")
	// 150 turns of 20 KB reads would be 3 MB requests without either.
	assert.Less(t, maxBody.Load(), int64(400_000), "requests stay bounded")

	c.Stop()
	c2 := start()
	resp, _ := loadSession(t, c2, acp.MethodSessionLoad, sid, cwd)
	acptest.MustResult(t, resp, nil)
	text, _ := say(t, c2, sid, "read big.txt once more")
	assert.Equal(t, "read it", text)
}

// Seed 004 section 2 inside a session: a lite resize keeps the newest
// messages; a deep one is a compaction by the session's model.
func TestResizePolicyRunsAfterEachTurn(t *testing.T) {
	t.Run("lite keeps the newest messages", func(t *testing.T) {
		m := newFakeModel(says("a1"), says("a2"), says("a3"), says("a4"))
		s := newSession(t, m, func(c *agent.SessionConfig) {
			c.History.Resize = &compact.Resizer{Policy: compact.ResizePolicy{MaxKeepMessagesCount: 3}}
		})
		for _, q := range []string{"q1", "q2", "q3", "q4"} {
			_, err := s.Prompt(context.Background(), q)
			require.NoError(t, err)
		}
		last := messageSummary(m.Request(t, 3))
		assert.Equal(t, []string{"user:q3", "assistant:a3", "user:q4"}, last[len(last)-3:])
		assert.LessOrEqual(t, len(last), 4, "after each turn only the newest 3 messages are kept: %v", last)
	})
	t.Run("deep compacts with the model; the policy is replaceable", func(t *testing.T) {
		m := newFakeModel(says("a1"), says("a2"), says("a3"), says("Summary of the talk."), says("a4"))
		s := newSession(t, m, func(c *agent.SessionConfig) {
			c.History.Resize = &compact.Resizer{Decide: func(msgs []llm.Message, _ int) compact.Decision {
				if len(msgs) >= 6 {
					return compact.Forced(compact.KindDeep)
				}
				return compact.Decision{}
			}}
		})
		for _, q := range []string{"q1", "q2", "q3", "q4"} {
			_, err := s.Prompt(context.Background(), q)
			require.NoError(t, err)
		}
		summary := messageSummary(m.Request(t, 4))
		assert.Contains(t, strings.Join(summary, "\n"), "[Compressed History]", "%v", summary)
		assert.Contains(t, strings.Join(summary, "\n"), "Summary of the talk.")
	})
}
