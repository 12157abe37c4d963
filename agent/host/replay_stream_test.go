package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
)

// syncBuffer is a log sink for several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// genSession writes a random session file's lines: conversations with
// tool-call steps (complete, cut short, with stray or duplicate results,
// invalid arguments), plans, /clear (also spelled with a \u escape), state
// records, records of an unknown type or of the wrong shape, bad lines, a
// tool's raw input that says "clear", and a torn tail.
func genSession(r *rand.Rand, id string) []byte {
	var b bytes.Buffer
	t := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	line := func(v any) {
		data, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	raw := func(s string) { b.WriteString(s); b.WriteByte('\n') }
	at := func() string { t = t.Add(time.Second); return t.Format(time.RFC3339Nano) }
	line(map[string]any{"type": "session", "version": persistence.FormatVersion, "id": id, "cwd": os.TempDir(), "timestamp": at()})
	text := func(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }
	n := 20 + r.IntN(600)
	call := 0
	// Some files have clears, or a tool input that says "clear".
	clears, saysClear := r.IntN(3) == 0, r.IntN(6) == 0
	for i := 0; i < n; i++ {
		switch k := r.IntN(100); {
		case k < 25:
			e := map[string]any{"type": "entry", "time": at(), "kind": "user", "content": text(fmt.Sprintf("question %d", i))}
			if r.IntN(5) == 0 {
				e["messageId"] = fmt.Sprintf("m-%d", i)
			}
			line(e)
		case k < 45:
			e := map[string]any{"type": "entry", "time": at(), "kind": "assistant", "content": text(fmt.Sprintf("answer %d", i))}
			if r.IntN(3) == 0 {
				e["reasoning"] = fmt.Sprintf("thinking %d", i)
			}
			if r.IntN(10) == 0 {
				e["content"] = append(text("two"), text("parts")...)
			}
			line(e)
		case k < 70:
			// A tool-call step and its results.
			nc := 1 + r.IntN(3)
			var calls []any
			var ids []string
			for range nc {
				call++
				id := fmt.Sprintf("call-%d", call)
				args := `{"path":"f"}`
				switch r.IntN(30) {
				case 0:
					args = "{"
				case 1:
					id = ""
				case 2:
					if len(ids) > 0 {
						id = ids[0]
					}
				}
				ids = append(ids, id)
				calls = append(calls, map[string]any{"id": id, "name": "read_file", "arguments": args})
			}
			line(map[string]any{"type": "entry", "time": at(), "kind": "tool_calls", "toolCalls": calls})
			results := len(ids)
			if r.IntN(6) == 0 {
				results = r.IntN(len(ids) + 1) // cut short
			}
			for j := range results {
				id := ids[j]
				if r.IntN(25) == 0 {
					id = "stray"
				}
				e := map[string]any{"type": "entry", "time": at(), "kind": "tool_output", "toolCallId": id, "toolName": "read_file",
					"text": fmt.Sprintf("result %d", j), "isError": r.IntN(8) == 0}
				switch r.IntN(12) {
				case 0:
					if !saysClear {
						break
					}
					e["display"] = map[string]any{"title": "Read f", "kind": "read", "rawInput": map[string]any{"op": "clear"}}
				case 1:
					delete(e, "text")
					e["content"] = text("from parts")
				case 2:
					e["display"] = map[string]any{"title": "Edit f", "kind": "edit",
						"content": []any{map[string]any{"type": "diff", "path": "/f", "oldText": "a", "newText": "b"}}}
				}
				line(e)
			}
			if r.IntN(10) == 0 {
				line(map[string]any{"type": "entry", "time": at(), "kind": "tool_output", "toolCallId": ids[0], "toolName": "read_file", "text": "again"})
			}
		case k < 78:
			if r.IntN(6) == 0 {
				raw(`{"type":"plan","time":"` + at() + `","plan":null}`)
			} else {
				line(map[string]any{"type": "plan", "time": at(), "plan": map[string]any{"entries": []any{
					map[string]any{"content": fmt.Sprintf("step %d", i), "priority": "high", "status": "pending"}}}})
			}
		case k < 80:
			if !clears || r.IntN(3) > 0 {
				break
			}
			if r.IntN(3) == 0 {
				raw(`{"type":"\u0063lear","time":"` + at() + `"}`)
			} else {
				line(map[string]any{"type": "clear", "time": at()})
			}
		case k < 85:
			line(map[string]any{"type": "mode", "time": at(), "mode": "default"})
		case k < 87:
			line(map[string]any{"type": "future", "time": at()})
		case k < 89:
			raw(`{"type":"entry","time":"not a time","kind":"user","content":[{"type":"text","text":"lost"}]}`)
		case k < 91:
			raw(`{"type":"entry","time":"` + at() + `","kind":"us`) // a bad line in the middle
		case k < 92:
			raw(`{"type":"entry","time":"` + at() + `","kind":"user","content":[{"type":"text","text":"\"clear\" me"}]}`)
		default:
			line(map[string]any{"type": "entry", "time": at(), "kind": "user", "content": text("more")})
		}
	}
	switch r.IntN(4) {
	case 0:
		b.WriteString(`{"type":"entry","time":"` + at() + `","kind":"user","content":[{"ty`) // torn, no newline
	case 1:
		raw(`{"type":"entry","time":"` + at() + `","kind":"user","content":[{"ty`) // torn, with a newline
	}
	return b.Bytes()
}

// showItem is everything a replay sends of an item.
func showItem(it host.HistoryItem) string {
	if it.Plan != nil {
		data, _ := json.Marshal(it.Plan)
		return "plan " + string(data)
	}
	e := it.Entry
	data, _ := json.Marshal(struct {
		Kind                             string
		Content                          any
		Text, Reasoning, ID, Name, MsgID string
		IsError                          bool
		Display                          any
	}{string(e.Kind), e.Content, e.Text, e.Reasoning, e.ToolCallID, e.ToolName, e.MessageID, e.IsError, e.Display})
	return "entry " + string(data)
}

var replayedWhileRead = regexp.MustCompile(`msg="session file read" session=(\S+) records=\d+ replayed=(\d+)`)

// TestStreamedReplayIsHistory: what session/load replays while it reads
// the file is exactly what it replayed before, after the load: the
// session's History once open. Many generated files, each loaded twice
// from copies: once without a replay (History afterwards), once with it.
// Most of them stream (items go out before the whole file is read);
// clears, the repair of steps cut short, dropped results and plans are
// placed as the load places them.
func TestStreamedReplayIsHistory(t *testing.T) {
	t.Parallel()
	const files = 150
	dirA, dirB := t.TempDir(), t.TempDir()
	var logs syncBuffer
	open := func(dir string, logger *slog.Logger) *host.Host {
		store, err := persistence.OpenStore(dir)
		require.NoError(t, err)
		h := host.New(host.Config{Model: "replay/default", Store: store, NoBuiltinTools: true, Mode: policy.ModeFullAccess, Logger: logger})
		require.NoError(t, h.Usable())
		t.Cleanup(h.Close)
		return h
	}
	ha := open(dirA, nil)
	hb := open(dirB, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	streamed := 0
	for seed := range files {
		id := fmt.Sprintf("gen-%03d", seed)
		data := genSession(rand.New(rand.NewPCG(uint64(seed), 31)), id)
		require.NoError(t, os.WriteFile(filepath.Join(dirA, id+".jsonl"), data, 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dirB, id+".jsonl"), data, 0o600))

		sa, err := ha.LoadSession(context.Background(), id, host.OpenRequest{}, &client{})
		require.NoError(t, err, "seed %d", seed)
		var want []string
		for _, it := range sa.History() {
			want = append(want, showItem(it))
		}
		require.NoError(t, sa.Close())

		var got []string
		sb, err := hb.LoadSession(context.Background(), id, host.OpenRequest{Replay: func(it host.HistoryItem) {
			got = append(got, showItem(it))
		}}, &client{})
		require.NoError(t, err, "seed %d", seed)
		require.NoError(t, sb.Close())
		require.Equal(t, want, got, "seed %d: the replay of %s", seed, id)
	}
	for _, m := range replayedWhileRead.FindAllStringSubmatch(logs.String(), -1) {
		if n, _ := strconv.Atoi(m[2]); n > 0 {
			streamed++
		}
	}
	require.NotContains(t, logs.String(), "level=ERROR", "the replay sent while reading was checked against History")
	// Files with a clear near the end, or a tool input saying "clear",
	// stream little or nothing; most stream.
	require.Greater(t, streamed, files/3, "loads that replayed before the file was read")
	t.Logf("%d of %d loads replayed items before the file was read", streamed, files)
}

// TestStreamedReplayWaitsForAnInterruptedRewind: a rewind a crash
// interrupted is completed when the session opens, and the replay shows
// the conversation as the rewind left it: nothing is streamed before.
func TestStreamedReplayWaitsForAnInterruptedRewind(t *testing.T) {
	t.Parallel()
	dirA, dirB := t.TempDir(), t.TempDir()
	const id = "rewound"
	data := genSession(rand.New(rand.NewPCG(7, 7)), id)
	// No clears, and no torn tail: a plain long conversation.
	var keep [][]byte
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if len(l) > 0 && l[len(l)-1] == '\n' && !bytes.Contains(l, []byte("lear")) {
			keep = append(keep, l)
		}
	}
	data = bytes.Join(keep, nil)
	rewind, err := json.Marshal(persistence.CheckpointRecord{Type: persistence.CheckpointRewind, Time: time.Now(),
		Rewind: &persistence.Rewind{ID: 1, Accepted: true, Keep: 3}})
	require.NoError(t, err)
	var got, want []string
	for _, dir := range []string{dirA, dirB} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, id+".jsonl"), data, 0o600))
		require.NoError(t, os.MkdirAll(filepath.Join(dir, id, "checkpoints"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(dir, id, "checkpoints", "log.jsonl"), append(rewind, '\n'), 0o600))
		store, err := persistence.OpenStore(dir)
		require.NoError(t, err)
		h := host.New(host.Config{Model: "replay/default", Store: store, Mode: policy.ModeFullAccess})
		t.Cleanup(h.Close)
		req := host.OpenRequest{CWD: t.TempDir()}
		if dir == dirB {
			req.Replay = func(it host.HistoryItem) { got = append(got, showItem(it)) }
		}
		s, err := h.LoadSession(context.Background(), id, req, &client{})
		require.NoError(t, err)
		if dir == dirA {
			for _, it := range s.History() {
				want = append(want, showItem(it))
			}
		}
		require.NoError(t, s.Close())
	}
	entries := 0
	for _, it := range want {
		if strings.HasPrefix(it, "entry ") {
			entries++
		}
	}
	require.NotZero(t, entries)
	require.LessOrEqual(t, entries, 3, "the rewind kept 3 entries")
	require.Equal(t, want, got)
}
