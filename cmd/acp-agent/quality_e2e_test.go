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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 26 (and the edit-tool points of issue 25) through the built
// binary, against a scripted OpenAI-format (or Anthropic-format) server
// whose every answer is chosen by the test.

// step answers one model request; it sees the request's body.
type step func(body string) (status int, stream string)

// stepModel answers the n-th request with the n-th step (the last one
// again after the end) and records every body.
func stepModel(t *testing.T, steps ...step) *scriptedModel {
	m := &scriptedModel{}
	m.Server = httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		n := len(m.bodies)
		m.bodies = append(m.bodies, string(data))
		m.mu.Unlock()
		status, stream := steps[min(n, len(steps)-1)](string(data))
		if status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, stream)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
	}))
	t.Cleanup(m.Close)
	return m
}

func calls(cs ...modelCall) step {
	return func(string) (int, string) { return http.StatusOK, openAIStream(cs, false) }
}

func says(text string) step {
	return func(string) (int, string) { return http.StatusOK, textStream(text, "stop") }
}

func textStream(text, finish string) string {
	content, _ := json.Marshal(text)
	return fmt.Sprintf("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", content) +
		fmt.Sprintf("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":%q}]}\n\ndata: [DONE]\n\n", finish)
}

func (m *scriptedModel) all() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.bodies...)
}

// qualityAgent starts the binary on model (OpenAI format, as modelName)
// with config as the user's config file, and opens a session in dir.
func qualityAgent(t *testing.T, model *scriptedModel, client sdk.Client, dir, modelName, config string, args ...string) (*sdk.ClientSideConnection, sdk.SessionId) {
	t.Helper()
	home := t.TempDir()
	if config != "" {
		write(t, filepath.Join(home, ".config", "acp-agent", "config.json"), config)
	}
	cmd := exec.Command(agentBin, append([]string{"--model", modelName}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), goraceEnv, "HOME=" + home, "OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}
	return startE2EWith(t, cmd, client, dir, sdk.ClientCapabilities{})
}

// toolMessages are the contents of an OpenAI body's tool messages.
func toolMessages(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, m := range chatMessages(t, body) {
		if m.Role == "tool" {
			s, _ := m.Content.(string)
			out = append(out, s)
		}
	}
	return out
}

type chatMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

func chatMessages(t *testing.T, body string) []chatMessage {
	t.Helper()
	var req struct {
		Messages []chatMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	return req.Messages
}

// A 5,000-line file is read in numbered pages: the first page ends with
// where to continue, the model continues there, and the last page says it
// is the end. An offset past the end and a missing file (with a close
// name) are clear errors.
func TestBinaryReadFileInNumberedPages(t *testing.T) {
	ws := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %d of the big file, with some words to make it longer\n", i)
	}
	write(t, filepath.Join(ws, "big.txt"), b.String())
	write(t, filepath.Join(ws, "main.go"), "package main\n")
	hint := regexp.MustCompile(`\[lines 1–(\d+) of 5000; continue with offset=(\d+)\]`)
	model := stepModel(t,
		calls(modelCall{"read_file", map[string]any{"path": "big.txt"}}),
		func(body string) (int, string) {
			m := hint.FindStringSubmatch(lastToolResult(t, body))
			require.NotNil(t, m, "the first page says where to continue")
			var next int
			fmt.Sscan(m[2], &next)
			return calls(modelCall{"read_file", map[string]any{"path": "big.txt", "offset": next, "limit": 5000}})(body)
		},
		calls(modelCall{"read_file", map[string]any{"path": "big.txt", "offset": 4990}}),
		calls(modelCall{"read_file", map[string]any{"path": "big.txt", "offset": 6000}}),
		calls(modelCall{"read_file", map[string]any{"path": "mian.go"}}),
		says("read it"),
	)
	client := newToolClient(ws, "allow_once")
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", "")
	promptE2E(t, conn, sid, "read big.txt")

	bodies := model.all()
	require.Len(t, bodies, 6)
	first := lastToolResult(t, bodies[1])
	assert.True(t, strings.HasPrefix(first, "     1\tline 1 of the big file"), "numbered lines: %q", first[:60])
	assert.LessOrEqual(t, len(first), 32<<10, "a page fits a context window")
	m := hint.FindStringSubmatch(first)
	require.NotNil(t, m)
	assert.Contains(t, first, fmt.Sprintf("%6d\tline %s of the big file", mustAtoi(t, m[1]), m[1]), "the page ends at the line the hint names")
	second := lastToolResult(t, bodies[2])
	assert.True(t, strings.HasPrefix(second, fmt.Sprintf("%6d\tline %s of", mustAtoi(t, m[2]), m[2])), "the next page starts at the offset: %q", second[:40])
	assert.Contains(t, second, "; continue with offset=", "a long page still stops at the size limit")
	last := lastToolResult(t, bodies[3])
	assert.True(t, strings.HasSuffix(last, "  5000\tline 5000 of the big file, with some words to make it longer\n[lines 4990–5000 of 5000; end of file]"), last)
	assert.Contains(t, lastToolResult(t, bodies[4]), "offset 6000 is past the end: big.txt has 5000 lines")
	assert.Contains(t, lastToolResult(t, bodies[5]), "mian.go does not exist. Did you mean main.go?")
}

func mustAtoi(t *testing.T, s string) int {
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}

// permissionDiffs are the diffs of the permission requests asked so far.
func (c *toolClient) permissionDiffs() [][]sdk.ToolCallContentDiff {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]sdk.ToolCallContentDiff
	for _, p := range c.permissions {
		out = append(out, diffsOf(p.ToolCall.Content))
	}
	return out
}

func (c *toolClient) finalDiffs(id string) []sdk.ToolCallContentDiff {
	u, _ := c.final(id)
	return diffsOf(u.Content)
}

func diffsOf(content []sdk.ToolCallContent) []sdk.ToolCallContentDiff {
	var ds []sdk.ToolCallContentDiff
	for _, cc := range content {
		if cc.Diff != nil {
			ds = append(ds, *cc.Diff)
		}
	}
	return ds
}

// Issue 25.2: the permission request of every tool that changes files
// carries the same diff the tool call shows: path, old and new text, no
// old text for a new file; issue 25.9: edit_file on a missing file fails
// before anyone is asked.
func TestBinaryEveryEditIsShownBeforeItIsApproved(t *testing.T) {
	type want struct {
		path     string
		old      *string
		new      string
		onDisk   string
		asksNone bool
	}
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name  string
		setup map[string]string
		calls []modelCall
		want  want
	}{
		{"edit_file existing", map[string]string{"a.txt": "one\ntwo\n"},
			[]modelCall{{"edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"}}},
			want{path: "a.txt", old: str("one\ntwo\n"), new: "one\nTWO\n", onDisk: "one\nTWO\n"}},
		{"edit_file missing", nil,
			[]modelCall{{"edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"}}},
			want{path: "a.txt", asksNone: true}},
		{"write_file new", nil,
			[]modelCall{{"write_file", map[string]any{"path": "n/new.txt", "content": "fresh\n"}}},
			want{path: "n/new.txt", new: "fresh\n", onDisk: "fresh\n"}},
		{"write_file existing", map[string]string{"a.txt": "old\n"},
			[]modelCall{{"read_file", map[string]any{"path": "a.txt"}}, {"write_file", map[string]any{"path": "a.txt", "content": "new\n"}}},
			want{path: "a.txt", old: str("old\n"), new: "new\n", onDisk: "new\n"}},
		{"multi_edit existing", map[string]string{"a.txt": "a b c\n"},
			[]modelCall{{"multi_edit", map[string]any{"path": "a.txt", "edits": []any{
				map[string]any{"old_string": "a", "new_string": "A"}, map[string]any{"old_string": "c", "new_string": "C"}}}}},
			want{path: "a.txt", old: str("a b c\n"), new: "A b C\n", onDisk: "A b C\n"}},
		{"apply_patch new", nil,
			[]modelCall{{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: p.txt\n+added\n*** End Patch"}}},
			want{path: "p.txt", new: "added\n", onDisk: "added\n"}},
		{"apply_patch existing", map[string]string{"p.txt": "x\ny\n"},
			[]modelCall{{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: p.txt\n x\n-y\n+z\n*** End Patch"}}},
			want{path: "p.txt", old: str("x\ny\n"), new: "x\nz\n", onDisk: "x\nz\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			for p, c := range tc.setup {
				write(t, filepath.Join(ws, p), c)
			}
			model := stepModel(t, calls(tc.calls...), says("done"))
			client := newToolClient(ws, "allow_once")
			conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", `{"editTools": "all"}`)
			promptE2E(t, conn, sid, "change it")
			asked := client.permissionDiffs()
			path := filepath.Join(ws, tc.want.path)
			if tc.want.asksNone {
				assert.Empty(t, asked, "nothing is asked for an edit that cannot be made")
				assert.Contains(t, lastToolResult(t, model.all()[1]), tc.want.path+" does not exist; use write_file to create it")
				assert.NoFileExists(t, path)
				return
			}
			require.Len(t, asked, 1)
			require.Len(t, asked[0], 1, "the request carries the diff")
			d := asked[0][0]
			assert.Equal(t, path, d.Path)
			assert.Equal(t, tc.want.new, d.NewText)
			if tc.want.old == nil {
				assert.Nil(t, d.OldText, "a new file has no old text")
			} else {
				require.NotNil(t, d.OldText)
				assert.Equal(t, *tc.want.old, *d.OldText)
			}
			last := fmt.Sprintf("call_%d", len(tc.calls)-1)
			assert.Equal(t, []sdk.ToolCallContentDiff{d}, client.finalDiffs(last), "the same diff as the tool call shows")
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, tc.want.onDisk, string(data))
		})
	}
}

// Edits that land: a multi-line edit written with LF lands in a CRLF file
// and the file keeps CRLF; old text copied with read_file's line numbers,
// or with its indentation wrong, still lands and the model is told how;
// an apply_patch whose context differs by trailing whitespace applies.
func TestBinaryEditsLandDespiteLineEndingsAndWhitespace(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "win.txt"), "first line\r\nsecond line\r\nthird line\r\n")
	write(t, filepath.Join(ws, "code.go"), "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n")
	write(t, filepath.Join(ws, "num.go"), "package num\n\nvar a = 1\nvar b = 2\n")
	write(t, filepath.Join(ws, "trail.txt"), "alpha  \nbeta\t\ngamma\n")
	model := stepModel(t,
		calls(modelCall{"edit_file", map[string]any{"path": "win.txt", "old_string": "first line\nsecond line\n", "new_string": "FIRST\nSECOND\nEXTRA\n"}}),
		calls(modelCall{"edit_file", map[string]any{"path": "code.go", "old_string": "if x {\n    return 1\n}", "new_string": "if x {\n    return 2\n}"}}),
		calls(modelCall{"edit_file", map[string]any{"path": "num.go", "old_string": "     3\tvar a = 1\n     4\tvar b = 2", "new_string": "     3\tvar a = 10\n     4\tvar b = 20"}}),
		calls(modelCall{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: trail.txt\n alpha\n-beta\n+BETA\n gamma\n*** End Patch"}}),
		says("done"),
	)
	client := newToolClient(ws, "allow_once")
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", `{"editTools": "all"}`, "--mode", "accept-edits")
	promptE2E(t, conn, sid, "edit")
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(ws, name))
		require.NoError(t, err)
		return string(data)
	}
	bodies := model.all()
	require.Len(t, bodies, 5)
	assert.Equal(t, "FIRST\r\nSECOND\r\nEXTRA\r\nthird line\r\n", read("win.txt"), "the LF edit landed and the file kept CRLF")
	assert.Equal(t, "func f() {\n\tif x {\n\t\treturn 2\n\t}\n}\n", read("code.go"), "matched ignoring indentation, written with the file's")
	assert.Contains(t, lastToolResult(t, bodies[2]), "matched ignoring indentation")
	assert.Equal(t, "package num\n\nvar a = 10\nvar b = 20\n", read("num.go"), "read_file's line numbers are not part of the text")
	assert.Contains(t, lastToolResult(t, bodies[3]), "line-number prefixes")
	assert.Equal(t, "alpha  \nBETA\ngamma\n", read("trail.txt"), "the patch applied; its context lines keep the file's text")
	assert.Contains(t, lastToolResult(t, bodies[4]), "placed ignoring trailing whitespace")
}

// write_file over a file the session has not read is refused with a
// reason, before anyone is asked; after a read it is allowed; after the
// file changed behind the session's back it is refused again.
func TestBinaryOverwritingAnUnreadFileIsRefused(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "config.yaml")
	write(t, file, "keep: me\n")
	model := stepModel(t,
		calls(modelCall{"write_file", map[string]any{"path": "config.yaml", "content": "clobbered\n"}}),
		calls(modelCall{"read_file", map[string]any{"path": "config.yaml"}}),
		func(body string) (int, string) {
			// The user edits the file after the read.
			require.NoError(t, os.WriteFile(file, []byte("keep: me\nuser: edit\n"), 0o644))
			return calls(modelCall{"write_file", map[string]any{"path": "config.yaml", "content": "clobbered\n"}})(body)
		},
		calls(modelCall{"read_file", map[string]any{"path": "config.yaml"}}),
		calls(modelCall{"write_file", map[string]any{"path": "config.yaml", "content": "rewritten\n"}}),
		says("done"),
	)
	client := newToolClient(ws, "allow_once")
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", "")
	promptE2E(t, conn, sid, "rewrite config.yaml")
	bodies := model.all()
	require.Len(t, bodies, 6)
	assert.Contains(t, lastToolResult(t, bodies[1]), "refusing to overwrite config.yaml: it exists and you have not read it in this session")
	assert.Contains(t, lastToolResult(t, bodies[3]), "refusing to overwrite config.yaml: it changed since you last read it")
	assert.Contains(t, lastToolResult(t, bodies[5]), "Replaced config.yaml")
	assert.Len(t, client.permissionDiffs(), 1, "only the allowed write asked")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "rewritten\n", string(data))
}

// A command printing about 1 MB gives the model at most 32 KiB: its head,
// its tail and the path of a file holding all of it, which read_file can
// read.
func TestBinaryLongCommandOutputIsCutWithAPathToTheRest(t *testing.T) {
	needsBash(t)
	ws := t.TempDir()
	var kept string
	model := stepModel(t,
		calls(modelCall{"run_command", map[string]any{"command": "seq 1 150000 | sed 's/$/ output line/'"}}),
		func(body string) (int, string) {
			m := regexp.MustCompile(`is in (\S+\.out): read_file it with offset=(\d+)`).FindStringSubmatch(lastToolResult(t, body))
			require.NotNil(t, m, "the result names the file with the whole output")
			kept = m[1]
			return calls(modelCall{"read_file", map[string]any{"path": kept, "offset": 75000, "limit": 2}})(body)
		},
		says("done"),
	)
	client := newToolClient(ws, "allow_once")
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", "", "--mode", "full-access")
	promptE2E(t, conn, sid, "run it")
	bodies := model.all()
	require.GreaterOrEqual(t, len(bodies), 3)
	result := lastToolResult(t, bodies[1])
	assert.LessOrEqual(t, len(result), 32<<10, "the model gets at most 32 KiB")
	assert.True(t, strings.HasPrefix(result, "1 output line\n2 output line\n"), "the head")
	assert.Contains(t, result, "150000 output line\n[exit code 0]", "the tail")
	assert.Regexp(t, `\[\.\.\. \d+ lines \(\d+ bytes\) not shown\.`, result)
	data, err := os.ReadFile(kept)
	require.NoError(t, err)
	assert.Equal(t, 150001, strings.Count(string(data), "\n")+1, "the file holds every line")
	assert.Contains(t, lastToolResult(t, bodies[2]), " 75000\t75000 output line\n 75001\t75001 output line", "read_file reads the kept file")
}

// A turn that reaches the request limit (maxTurnRequests) ends with one
// more request, without tools, whose answer is the turn's last message.
func TestBinaryATurnAtTheRequestLimitEndsWithASummary(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "a.txt"), "a\n")
	model := stepModel(t, func(body string) (int, string) {
		if strings.Contains(body, `"tool_choice":"none"`) {
			return says("Summary: I listed the workspace three times; next I would read a.txt.")(body)
		}
		return calls(modelCall{"list_directory", map[string]any{}})(body)
	})
	client := &messageClient{toolClient: newToolClient(ws, "allow_once")}
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", `{"maxTurnRequests": 3}`)
	assert.Equal(t, sdk.StopReasonMaxTurnRequests, promptE2E(t, conn, sid, "explore"))
	bodies := model.all()
	require.Len(t, bodies, 4, "three requests, then the summary request")
	last := bodies[3]
	assert.Contains(t, last, `"tool_choice":"none"`)
	assert.Contains(t, last, "used all 3 model requests")
	assert.Contains(t, client.said(), "Summary: I listed the workspace three times")
}

// Three identical failing calls trigger the loop guard: the third result
// tells the model to stop and rethink, the fifth ends the turn with a
// message to the user.
func TestBinaryLoopGuardStopsTheSameFailingCall(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "a.txt"), "hello\n")
	model := stepModel(t, calls(modelCall{"edit_file", map[string]any{"path": "a.txt", "old_string": "goodbye", "new_string": "hi"}}))
	client := &messageClient{toolClient: newToolClient(ws, "allow_once")}
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", "", "--mode", "accept-edits")
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "edit"))
	bodies := model.all()
	require.Len(t, bodies, 5, "the fifth failure ends the turn: no sixth request")
	results := toolMessages(t, bodies[4])
	require.Len(t, results, 4)
	assert.NotContains(t, results[1], "[loop guard]")
	assert.Contains(t, results[2], "[loop guard] This exact edit_file call (the same arguments) has now failed 3 times")
	assert.Contains(t, results[3], "failed 4 times")
	assert.Contains(t, client.said(), "I stopped here: my call to edit_file failed 5 times in a row with the same arguments")
}

// An Anthropic request carries cache_control on the system prompt, the
// last tool and the newest message block, and the system prompt stays the
// same from one request to the next.
func TestBinaryAnthropicRequestCarriesCacheControl(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "hello.txt"), "hi\n")
	model := newScriptedModel(t, "anthropic", modelCall{"read_file", map[string]any{"path": "hello.txt"}})
	client := newToolClient(ws, "allow_once")
	conn, sid := e2eSession(t, "anthropic", model, client, sdk.ClientCapabilities{})
	promptE2E(t, conn, sid, "read hello.txt")
	type block struct {
		Type         string          `json:"type"`
		CacheControl json.RawMessage `json:"cache_control"`
	}
	var systems []string
	for i := range 2 {
		var req struct {
			System   []block `json:"system"`
			Tools    []block `json:"tools"`
			Messages []struct {
				Content []block `json:"content"`
			} `json:"messages"`
		}
		require.NoError(t, json.Unmarshal([]byte(model.body(t, i)), &req))
		require.Len(t, req.System, 1)
		assert.JSONEq(t, `{"type":"ephemeral"}`, string(req.System[0].CacheControl), "the system prompt is a cache breakpoint")
		require.NotEmpty(t, req.Tools)
		assert.JSONEq(t, `{"type":"ephemeral"}`, string(req.Tools[len(req.Tools)-1].CacheControl), "so are the tools")
		for _, tool := range req.Tools[:len(req.Tools)-1] {
			assert.Empty(t, tool.CacheControl)
		}
		lastMsg := req.Messages[len(req.Messages)-1].Content
		assert.JSONEq(t, `{"type":"ephemeral"}`, string(lastMsg[len(lastMsg)-1].CacheControl), "and the newest block")
		var raw struct {
			System []struct {
				Text string `json:"text"`
			} `json:"system"`
		}
		require.NoError(t, json.Unmarshal([]byte(model.body(t, i)), &raw))
		systems = append(systems, raw.System[0].Text)
	}
	assert.Equal(t, systems[0], systems[1], "the system prompt does not change between requests")
}

// A provider's "context too long" error is followed by a compaction (the
// user's messages kept verbatim in the summary) and a successful retry.
func TestBinaryContextTooLongCompactsAndRetries(t *testing.T) {
	ws := t.TempDir()
	overflow := `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`
	model := stepModel(t,
		says("first answer"),
		func(string) (int, string) { return http.StatusBadRequest, overflow },
		func(body string) (int, string) {
			require.Contains(t, body, "You compress the history", "the second request is the compaction's")
			return says("The user asked two questions about the parser.")(body)
		},
		says("recovered"),
	)
	client := &messageClient{toolClient: newToolClient(ws, "allow_once")}
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", "")
	promptE2E(t, conn, sid, "first question about the parser")
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "second question about the parser"))
	assert.Contains(t, client.said(), "recovered")
	checkCompactedRetry(t, model)
}

// checkCompactedRetry: the fourth request (after an answer, the refused
// one and the compaction's) carries the summary and the user's words,
// not the rest.
func checkCompactedRetry(t *testing.T, model *scriptedModel) {
	t.Helper()
	bodies := model.all()
	require.Len(t, bodies, 4)
	retry := bodies[3]
	assert.Contains(t, retry, "[Compressed History]")
	assert.Contains(t, retry, "The user asked two questions about the parser.")
	assert.Contains(t, retry, "second question about the parser", "the user's words are kept verbatim")
	assert.NotContains(t, retry, "first answer", "the rest went into the summary")
}

// Issue 30 (6): Anthropic's 413 (request_too_large, in its exact error
// body) is a history too large to send: it is compacted and the request
// sent once more, as a prompt over the context window is.
func TestBinaryAnthropicRequestTooLargeCompactsAndRetries(t *testing.T) {
	anthropicSays := func(text string) step {
		return func(string) (int, string) {
			return http.StatusOK, strings.Replace(anthropicStream(nil, true), `"All done."`, strconv.Quote(text), 1)
		}
	}
	tooLarge := `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
	model := stepModel(t,
		anthropicSays("first answer"),
		func(string) (int, string) { return http.StatusRequestEntityTooLarge, tooLarge },
		func(body string) (int, string) {
			require.Contains(t, body, "You compress the history", "the request after the 413 is the compaction's")
			return anthropicSays("The user asked two questions about the parser.")(body)
		},
		anthropicSays("recovered"),
	)
	conn, sid := e2eSession(t, "anthropic", model, newToolClient(t.TempDir(), "allow_once"), sdk.ClientCapabilities{})
	promptE2E(t, conn, sid, "first question about the parser")
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "second question about the parser"))
	checkCompactedRetry(t, model)
}

// A tool call cut off by the output-token limit is not run, and the model
// is told it hit the limit.
func TestBinaryCutOffToolCallTellsTheModelItHitTheLimit(t *testing.T) {
	ws := t.TempDir()
	cut := func(string) (int, string) {
		args, _ := json.Marshal(`{"path":"big.go","content":"package big\nfunc A() {`)
		return http.StatusOK, fmt.Sprintf("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_0\",\"type\":\"function\",\"function\":{\"name\":\"write_file\",\"arguments\":%s}}]},\"finish_reason\":null}]}\n\n", args) +
			"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n"
	}
	model := stepModel(t, cut, says("I will write it in parts."))
	client := newToolClient(ws, "allow_once")
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", "")
	promptE2E(t, conn, sid, "write big.go")
	bodies := model.all()
	require.Len(t, bodies, 2)
	assert.Contains(t, lastToolResult(t, bodies[1]), "reached the output-token limit while writing this call's arguments")
	assert.NoFileExists(t, filepath.Join(ws, "big.go"))
	assert.Empty(t, client.permissionDiffs(), "nothing was asked")
}

// The edit tools a model is offered depend on it (configurable): a model
// trained on apply_patch gets it instead of edit_file/write_file, others
// the reverse; editTools overrides.
func TestBinaryEditToolsFollowTheModel(t *testing.T) {
	for _, tc := range []struct {
		model, config string
		want, not     []string
	}{
		{"openai/gpt-5-codex", "", []string{"apply_patch"}, []string{"edit_file", "write_file", "multi_edit"}},
		{"openai/qwen3-coder", "", []string{"edit_file", "write_file", "multi_edit"}, []string{"apply_patch"}},
		{"openai/qwen3-coder", `{"editTools": "patch"}`, []string{"apply_patch"}, []string{"edit_file"}},
		{"openai/gpt-5", `{"editTools": "all"}`, []string{"apply_patch", "edit_file", "write_file", "multi_edit"}, nil},
	} {
		t.Run(tc.model+tc.config, func(t *testing.T) {
			ws := t.TempDir()
			model := stepModel(t, says("hi"))
			conn, sid := qualityAgent(t, model, newToolClient(ws, "allow_once"), ws, tc.model, tc.config)
			promptE2E(t, conn, sid, "hello")
			var req struct {
				Tools []struct {
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tools"`
			}
			require.NoError(t, json.Unmarshal([]byte(model.body(t, 0)), &req))
			var names []string
			for _, tool := range req.Tools {
				names = append(names, tool.Function.Name)
			}
			for _, n := range tc.want {
				assert.Contains(t, names, n)
			}
			for _, n := range tc.not {
				assert.NotContains(t, names, n)
			}
			sys := systemPrompt(t, model.body(t, 0))
			if !slices.Contains(names, "edit_file") {
				assert.Contains(t, sys, "Change files with apply_patch", "the prompt names the edit tools offered")
			} else {
				assert.Contains(t, sys, "Change a file with edit_file")
			}
		})
	}
}

// The system prompt carries the guidance and the environment, and stays
// the same for the whole session: a mode change reaches the model as a
// reminder before the next user message, not as a new system prompt.
func TestBinarySystemPromptIsStableWithTheEnvironment(t *testing.T) {
	needsBash(t)
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git"), 0o755))
	write(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/feature/x\n")
	model := stepModel(t, says("one"), says("two"))
	client := newToolClient(ws, "allow_once")
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", "")
	promptE2E(t, conn, sid, "hello")
	setModeE2E(t, conn, sid, "read-only")
	promptE2E(t, conn, sid, "again")
	bodies := model.all()
	require.Len(t, bodies, 2)
	sys := systemPrompt(t, bodies[0])
	for _, want := range []string{
		"Keep going until the user's request is completely resolved",
		"Tell questions from directives",
		"narrowest check",
		"Fix the root cause",
		"Never revert",
		"Do not commit",
		"same approach has failed twice",
		"exactly one step in_progress",
		"Lead with the outcome",
		"path:line",
		"what you did not do or could not verify",
		"- OS: ",
		"- Date: ",
		"- Shell: run_command runs command lines with bash -c",
		"in a git repository at " + ws + ", on branch feature/x",
		"named .git, .env or .env.* (but for templates such as .env.example) are off limits at any depth",
	} {
		assert.Contains(t, sys, want)
	}
	assert.NotContains(t, sys, "Paths under .git, .env are off limits")
	assert.Equal(t, sys, systemPrompt(t, bodies[1]), "the system prompt is not rewritten mid-session")
	assert.Contains(t, bodies[1], "The user switched the session to another mode. The session is in read-only (plan) mode")
	assert.NotContains(t, bodies[0], "<system-reminder>")
}

func setModeE2E(t *testing.T, conn *sdk.ClientSideConnection, sid sdk.SessionId, mode string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBudget(t))
	defer cancel()
	_, err := conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sid, ModeId: sdk.SessionModeId(mode)})
	require.NoError(t, err)
}

// grep shows context lines, lists files only or matches plain text, with
// paths relative to the workspace root.
func TestBinaryGrepContextFilesOnlyAndFixedStrings(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "pkg", "a.go"), "package pkg\n\nfunc A() {\n\tcall(x)\n}\n")
	write(t, filepath.Join(ws, "pkg", "b.go"), "package pkg\n\nvar y = call(x)\n")
	model := stepModel(t,
		calls(modelCall{"grep", map[string]any{"pattern": "call(x)", "fixed_strings": true, "context": 1}}),
		calls(modelCall{"grep", map[string]any{"pattern": "call", "files_only": true}}),
		calls(modelCall{"grep", map[string]any{"pattern": "call(x)"}}),
		says("done"),
	)
	conn, sid := qualityAgent(t, model, newToolClient(ws, "allow_once"), ws, "openai/test-model", "")
	promptE2E(t, conn, sid, "find calls")
	bodies := model.all()
	require.Len(t, bodies, 4)
	// Paths in the OS's own spelling (pkg\a.go on Windows).
	sep := string(filepath.Separator)
	assert.Equal(t, strings.ReplaceAll("pkg/a.go-3- func A() {\npkg/a.go:4: \tcall(x)\npkg/a.go-5- }\n--\npkg/b.go-2- \npkg/b.go:3: var y = call(x)\n", "/", sep), lastToolResult(t, bodies[1]))
	assert.Equal(t, strings.ReplaceAll("pkg/a.go\npkg/b.go\n", "/", sep), lastToolResult(t, bodies[2]))
	assert.Equal(t, "No matches.", lastToolResult(t, bodies[3]), "without fixed_strings the parentheses are a group")
}

// A subagent that stops at its request limit is reported to the parent as
// not finished, with its summary, not as if it had answered.
func TestBinarySubagentSaysHowItEnded(t *testing.T) {
	ws := t.TempDir()
	model := stepModel(t, func(body string) (int, string) {
		switch {
		case strings.Contains(body, `"tool_choice":"none"`):
			return says("Child summary: listed twice, not done.")(body)
		case strings.Contains(body, "did not finish"):
			return says("parent done")(body)
		case strings.Contains(body, "[child]"):
			return calls(modelCall{"list_directory", map[string]any{}})(body)
		}
		return calls(modelCall{"task", map[string]any{"description": "lister", "prompt": "[child] list forever"}})(body)
	})
	client := newToolClient(ws, "allow_once")
	conn, sid := qualityAgent(t, model, client, ws, "openai/test-model", `{"maxTurnRequests": 2}`)
	assert.Equal(t, sdk.StopReasonEndTurn, promptE2E(t, conn, sid, "delegate"))
	bodies := model.all()
	result := lastToolResult(t, bodies[len(bodies)-1])
	assert.Contains(t, result, `Subagent "lister"`)
	assert.Contains(t, result, "did not finish: it reached its limit of model requests")
	assert.Contains(t, result, "Child summary: listed twice, not done.")
}
