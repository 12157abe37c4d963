package main

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
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

// The session files of earlier versions must load as they did: the
// golden sessions under testdata/golden/sessions were written by the
// binary of the commit that added them (before the protocol-neutral host
// of issue 28 took the store over from the ACP adapter), each with what
// that binary's session/load replayed (replay.json). The test loads each
// with this binary and compares what the client sees, as JSON values.
//
// -update-sessions writes them anew with this binary: do that only on
// purpose (a format change that is meant), never to make the test pass.
var updateSessions = flag.Bool("update-sessions", false, "write the golden session files of testdata/golden/sessions anew with this binary")

const goldenSessions = "../../testdata/golden/sessions"

// goldenScenarios are the golden session directories, each a session
// directory of one or more stored sessions.
var goldenScenarios = []struct {
	name  string
	write func(t *testing.T, g *goldenGen)
}{
	{"conversation", writeConversation},
	{"tools", writeTools},
	{"rewind", writeRewind},
	{"subagent", writeSubagent},
	{"compaction", writeCompaction},
	{"fork", writeFork},
	{"interrupted", writeInterrupted},
}

func TestBinaryLoadsGoldenSessionFiles(t *testing.T) {
	t.Parallel()
	for _, sc := range goldenScenarios {
		t.Run(sc.name, func(t *testing.T) {
			dir := filepath.Join(goldenSessions, sc.name)
			if *updateSessions {
				writeGoldenScenario(t, sc.name, sc.write)
			}
			got := loadGolden(t, dir)
			path := filepath.Join(dir, "replay.json")
			if *updateSessions {
				data, err := json.MarshalIndent(got, "", "  ")
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, append(data, '\n'), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			data, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(data), "what session/load shows of the files of %s", sc.name)
		})
	}
}

// goldenReplay is what a client sees of a scenario's sessions: for each,
// the session/load response and the updates before it; and the listing.
type goldenReplay struct {
	Sessions []goldenLoad `json:"sessions"`
	List     []any        `json:"list"`
}

type goldenLoad struct {
	SessionID string `json:"sessionId"`
	Response  any    `json:"response"`
	Updates   []any  `json:"updates"`
}

// goldenConfig writes the agent's config and models files (the same for
// writing and loading: the config options and the context meter the
// replay shows come from them) and returns the flags.
func goldenConfig(t *testing.T) []string {
	dir := t.TempDir()
	models := filepath.Join(dir, "models.json")
	require.NoError(t, os.WriteFile(models, []byte(`{"version":1,"models":[
		{"provider":"openai","model":"test-model","contextWindow":100000,"inputPerMTok":2,"outputPerMTok":8,"cacheReadPerMTok":0.5},
		{"provider":"anthropic","model":"claude-test","contextWindow":200000,"reasoning":true,"imageInput":true,"inputPerMTok":3,"outputPerMTok":15}]}`), 0o600))
	config := filepath.Join(dir, "config.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"models":[{"model":"openai/test-model","name":"Test model"},{"model":"anthropic/claude-test","name":"Claude test"}]}`), 0o600))
	return []string{"--model", "openai/test-model", "--config", config, "--models-file", models, "--discover-models=false"}
}

// goldenClientCaps are the client's capabilities, writing and loading.
func goldenClientCaps(terminal bool) *acp.ClientCapabilities {
	return &acp.ClientCapabilities{Terminal: terminal, Subagents: &acp.SubagentCapabilities{}}
}

// loadGolden copies a scenario's sessions into a new session directory
// and loads each with a new agent, recording what the client sees.
func loadGolden(t *testing.T, dir string) goldenReplay {
	sessions := t.TempDir()
	var ids []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(sessions, rel), 0o700)
		case rel == "replay.json":
			return nil
		case filepath.Dir(rel) == "." && strings.HasSuffix(rel, ".jsonl"):
			ids = append(ids, strings.TrimSuffix(rel, ".jsonl"))
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(sessions, rel), data, 0o600)
	}))
	require.NotEmpty(t, ids, "no session files in %s", dir)
	slices.Sort(ids)
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "ANTHROPIC_API_KEY=k"}, append(goldenConfig(t), "--session-dir", sessions)...)
	p.Initialize(goldenClientCaps(false))
	var out goldenReplay
	msgIDs := map[string]string{}
	for _, id := range ids {
		resp, before := p.Call(acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: id, CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
		require.Nil(t, resp.Error, "loading %s", id)
		l := goldenLoad{SessionID: id, Response: jsonValue(t, resp.Result)}
		for _, m := range before {
			require.Equal(t, acp.MethodSessionUpdate, m.Method, "only updates before the load's response: %s", m.Raw)
			l.Updates = append(l.Updates, normalizeMessageIDs(jsonValue(t, m.Params), msgIDs))
		}
		out.Sessions = append(out.Sessions, l)
	}
	resp, _ := p.Call(acp.MethodSessionList, map[string]any{"archived": "include"})
	var list struct {
		Sessions []map[string]any `json:"sessions"`
	}
	acptest.MustResult(t, resp, &list)
	slices.SortFunc(list.Sessions, func(a, b map[string]any) int {
		return strings.Compare(a["sessionId"].(string), b["sessionId"].(string))
	})
	for _, s := range list.Sessions {
		delete(s, "updatedAt") // the file's time, which a copy does not keep
		out.List = append(out.List, s)
	}
	return out
}

func jsonValue(t *testing.T, raw json.RawMessage) any {
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

// normalizeMessageIDs replaces each messageId (a new UUID at every load)
// by its order of first appearance, which keeps which chunks share one.
func normalizeMessageIDs(v any, seen map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "messageId" {
				if _, ok := seen[s]; !ok {
					seen[s] = fmt.Sprintf("message-%d", len(seen)+1)
				}
				x[k] = seen[s]
				continue
			}
			x[k] = normalizeMessageIDs(e, seen)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeMessageIDs(e, seen)
		}
	}
	return v
}

// goldenGen writes one scenario: a model server keyed by the markers of
// the prompts, an agent on a session directory, and a client that
// answers what the agent asks.
type goldenGen struct {
	t        *testing.T
	model    *goldenModel
	sessions string
	p        *proc
}

func writeGoldenScenario(t *testing.T, name string, write func(*testing.T, *goldenGen)) {
	g := &goldenGen{t: t, model: newGoldenModel(t), sessions: t.TempDir()}
	write(t, g)
	if g.p != nil {
		g.stop()
	}
	dst := filepath.Join(goldenSessions, name)
	require.NoError(t, os.RemoveAll(dst))
	require.NoError(t, filepath.WalkDir(g.sessions, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(g.sessions, path)
		switch {
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case strings.HasSuffix(rel, ".lock"):
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	}))
}

// start runs an agent on the scenario's session directory.
func (g *goldenGen) start(terminal bool, args ...string) {
	g.p = startAgent(g.t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + g.model.URL + "/v1",
		"ANTHROPIC_API_KEY=k", "ANTHROPIC_BASE_URL=" + g.model.URL},
		append(append(goldenConfig(g.t), "--session-dir", g.sessions), args...)...)
	g.p.Initialize(goldenClientCaps(terminal))
}

func (g *goldenGen) stop() {
	g.p.stdin.Close()
	require.NoError(g.t, g.p.waitExit(g.t, 10*time.Second))
	g.p = nil
}

func (g *goldenGen) newSession(cwd string) string {
	resp, _ := g.p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: cwd, MCPServers: []acp.McpServer{}})
	var r acp.NewSessionResponse
	acptest.MustResult(g.t, resp, &r)
	return r.SessionID
}

// call sends a request and answers the agent's requests until its
// response: permissions (always, where offered), and the editor's
// terminals (each command "ran" and printed "ok").
func (g *goldenGen) call(method string, params any) acptest.Message {
	t := g.t
	id := g.p.Request(method, params)
	terminals := 0
	for {
		m := g.p.Next()
		if m.IsResponse() && string(m.ID) == id {
			require.Nil(t, m.Error, "%s: %s", method, m.Raw)
			return m
		}
		if m.ID == nil {
			continue
		}
		switch m.Method {
		case acp.MethodSessionRequestPermission:
			var req acp.RequestPermissionRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			choice := req.Options[0].OptionID
			for _, o := range req.Options {
				if o.Kind == acp.PermissionOptionKindAllowAlways {
					choice = o.OptionID
				}
			}
			g.p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": choice}})
		case acp.MethodTerminalCreate:
			terminals++
			g.p.Respond(m.ID, map[string]any{"terminalId": fmt.Sprintf("term-%d", terminals)})
		case acp.MethodTerminalWaitForExit:
			g.p.Respond(m.ID, map[string]any{"exitCode": 0})
		case acp.MethodTerminalOutput:
			g.p.Respond(m.ID, map[string]any{"output": "ok\n", "truncated": false, "exitStatus": map[string]any{"exitCode": 0}})
		default:
			g.p.Respond(m.ID, map[string]any{})
		}
	}
}

func (g *goldenGen) prompt(sid string, blocks ...acp.ContentBlock) {
	g.call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: blocks})
}

func (g *goldenGen) say(sid, text string) { g.prompt(sid, acp.TextBlock(text)) }

func (g *goldenGen) setOption(sid, id, value string) {
	g.call(acp.MethodSessionSetConfigOption, map[string]any{"sessionId": sid, "configId": id, "value": value})
}

// goldenModel answers OpenAI and Anthropic requests by the marker
// ("[name]") of the last user message and the number of answers since it.
type goldenModel struct {
	*httptest.Server
	steps map[string][]goldenStep
}

// goldenStep is one answer: an OpenAI stream, or an Anthropic one.
type goldenStep func(marker string, n int) string

var goldenMarker = regexp.MustCompile(`\[([a-z0-9-]+)\]`)

func newGoldenModel(t *testing.T) *goldenModel {
	m := &goldenModel{steps: map[string][]goldenStep{}}
	m.Server = httptest.NewServer(chatOnly(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var req struct {
			System   json.RawMessage `json:"system"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(data, &req)
		w.Header().Set("Content-Type", "text/event-stream")
		anthropic := strings.HasSuffix(r.URL.Path, "/messages")
		if strings.Contains(string(data), "You compress the history") {
			io.WriteString(w, oaStream(oaText("## Technical Context\nThe summary of the earlier turns."), oaUsage(900, 40)))
			return
		}
		user, after := -1, 0
		for i, msg := range req.Messages {
			c := string(msg.Content)
			if msg.Role == "user" && !strings.Contains(c, `"tool_result"`) && !strings.Contains(c, "returned by tool call") && goldenMarker.MatchString(c) {
				user, after = i, 0
			} else if msg.Role == "assistant" && user >= 0 {
				after++
			}
		}
		marker := ""
		if user >= 0 {
			marker = goldenMarker.FindStringSubmatch(string(req.Messages[user].Content))[1]
		}
		steps := m.steps[marker]
		if after >= len(steps) {
			if anthropic {
				io.WriteString(w, anStream("Done.", 0, 0))
			} else {
				io.WriteString(w, oaStream(oaText("Done."), oaUsage(500, 5)))
			}
			return
		}
		io.WriteString(w, steps[after](marker, after))
	}))
	t.Cleanup(m.Close)
	return m
}

func oaChunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return fmt.Sprintf("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, f)
}

func oaText(text string) string {
	s, _ := json.Marshal(text)
	return oaChunk(`{"content":`+string(s)+`}`, "")
}

func oaReasoning(text string) string {
	s, _ := json.Marshal(text)
	return oaChunk(`{"reasoning_content":`+string(s)+`}`, "")
}

// oaCalls streams tool calls with the ids call_<marker>_<n>_<i>.
func oaCalls(marker string, n int, calls ...modelCall) string {
	var b strings.Builder
	for i, c := range calls {
		args, _ := json.Marshal(c.Args)
		argStr, _ := json.Marshal(string(args))
		b.WriteString(oaChunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%s_%d_%d","type":"function","function":{"name":%q,"arguments":%s}}]}`,
			i, marker, n, i, c.Name, argStr), ""))
	}
	return b.String()
}

func oaUsage(in, out int) string {
	return fmt.Sprintf("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,"+
		"\"prompt_tokens_details\":{\"cached_tokens\":%d},\"completion_tokens_details\":{\"reasoning_tokens\":%d}}}\n\n", in, out, in/4, out/5)
}

// oaStream ends the parts with the finish (tool_calls when there are
// calls) and the usage after it.
func oaStream(parts ...string) string {
	body := strings.Join(parts, "")
	usage := ""
	if i := strings.Index(body, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\""); i >= 0 {
		body, usage = body[:i], body[i:]
	}
	finish := "stop"
	if strings.Contains(body, `"tool_calls"`) {
		finish = "tool_calls"
	}
	return body + oaChunk(`{}`, finish) + usage + "data: [DONE]\n\n"
}

// anStream is an Anthropic message: thinking with its signature, a
// redacted thinking block, then text.
func anStream(text string, in, out int) string {
	var b strings.Builder
	ev := func(typ, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", typ, data) }
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":%d,"output_tokens":1,"cache_read_input_tokens":%d}}}`, in, in/3))
	i := 0
	if in > 0 {
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"The user sent a picture; I describe it."}}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2lnbmF0dXJlLTE="}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"cmVkYWN0ZWQtMQ=="}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
		i = 2
	}
	s, _ := json.Marshal(text)
	ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i))
	ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, s))
	ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":%d}}`, max(out, 1)))
	ev("message_stop", `{"type":"message_stop"}`)
	return b.String()
}

func text(s string, in, out int) goldenStep {
	return func(string, int) string { return oaStream(oaText(s), oaUsage(in, out)) }
}

func toolCalls(calls ...modelCall) goldenStep {
	return func(marker string, n int) string {
		return oaStream(oaCalls(marker, n, calls...), oaUsage(700+100*n, 30))
	}
}

// A conversation: reasoning, text and usage on OpenAI; a switch to
// Anthropic with a thought level, an image, thinking with a signature and
// redacted thinking; a mode change; a title the user set.
func writeConversation(t *testing.T, g *goldenGen) {
	g.model.steps["hello"] = []goldenStep{func(string, int) string {
		return oaStream(oaReasoning("The user greets me."), oaText("Hello! "), oaText("How can I help?"), oaUsage(1200, 80))
	}}
	g.model.steps["look"] = []goldenStep{func(string, int) string { return anStream("A red square.", 1500, 60) }}
	g.model.steps["bye"] = []goldenStep{text("Goodbye.", 1600, 10)}
	g.start(false)
	sid := g.newSession(t.TempDir())
	g.say(sid, "[hello] Hi there\nsecond line of the first prompt")
	g.setOption(sid, "model", "anthropic/claude-test")
	g.setOption(sid, "thought_level", "high")
	g.prompt(sid, acp.TextBlock("[look] What is in this picture?"), acp.ContentBlock{Image: &acp.ImageContent{MimeType: "image/png", Data: base64PNG(t)}})
	g.call(acp.MethodSessionSetMode, map[string]any{"sessionId": sid, "modeId": "accept-edits"})
	g.setOption(sid, "model", "openai/test-model")
	g.say(sid, "[bye] Bye")
	g.call(acp.MethodSessionSetTitle, map[string]any{"sessionId": sid, "title": "A conversation   with a   title"})
	// A second session, archived, never titled by the user.
	other := g.newSession(t.TempDir())
	g.say(other, "[bye] Archive me")
	g.call(acp.MethodSessionArchive, map[string]any{"sessionId": other})
}

func base64PNG(t *testing.T) string { return base64.StdEncoding.EncodeToString(testPNG(t)) }

// Tools: reads, a plan, edits with diffs, a new file, a command in the
// editor's terminal, a failing call, permissions remembered.
func writeTools(t *testing.T, g *goldenGen) {
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"), 0o644))
	plan := func(statuses ...string) modelCall {
		var entries []any
		for i, s := range statuses {
			entries = append(entries, map[string]any{"content": fmt.Sprintf("step %d", i+1), "priority": []string{"high", "medium", "low"}[i%3], "status": s})
		}
		return modelCall{"update_plan", map[string]any{"entries": entries}}
	}
	g.model.steps["work"] = []goldenStep{
		toolCalls(plan("in_progress", "pending", "pending"), modelCall{"read_file", map[string]any{"path": "main.go"}}),
		toolCalls(modelCall{"edit_file", map[string]any{"path": "main.go", "old_string": "println(\"hi\")", "new_string": "println(\"hello\")"}},
			modelCall{"write_file", map[string]any{"path": "doc/README.md", "content": "# Demo\n\nA demo.\n"}}),
		toolCalls(plan("completed", "in_progress", "pending"), modelCall{"run_command", map[string]any{"command": "go vet ./..."}}),
		toolCalls(modelCall{"read_file", map[string]any{"path": "missing.go"}}, modelCall{"glob", map[string]any{"pattern": "**/*.go"}}),
		toolCalls(plan("completed", "completed", "completed")),
		text("The program now says hello, with a README.", 1900, 40),
	}
	g.model.steps["more"] = []goldenStep{
		toolCalls(modelCall{"grep", map[string]any{"pattern": "hello"}}, modelCall{"run_command", map[string]any{"command": "go vet ./..."}}),
		text("Still fine.", 2100, 12),
	}
	g.start(true)
	sid := g.newSession(cwd)
	g.say(sid, "[work] Make it say hello and document it")
	g.say(sid, "[more] Check again")
}

// Rewind: file changes in three turns, a rewind with the files, its
// undo, a rewind keeping the files, then more conversation.
func writeRewind(t *testing.T, g *goldenGen) {
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("A0\n"), 0o644))
	g.model.steps["r1"] = []goldenStep{
		toolCalls(modelCall{"read_file", map[string]any{"path": "a.txt"}}, modelCall{"write_file", map[string]any{"path": "a.txt", "content": "A1\n"}}),
		text("a.txt is A1.", 800, 8)}
	g.model.steps["r2"] = []goldenStep{
		toolCalls(modelCall{"edit_file", map[string]any{"path": "a.txt", "old_string": "A1", "new_string": "A2"}},
			modelCall{"run_command", map[string]any{"command": "echo B > b.txt"}}),
		text("a.txt is A2, b.txt exists.", 900, 9)}
	g.model.steps["r3"] = []goldenStep{
		toolCalls(modelCall{"write_file", map[string]any{"path": "c.txt", "content": "C\n"}}),
		text("c.txt written.", 1000, 7)}
	g.model.steps["r4"] = []goldenStep{text("After the rewinds.", 1100, 6)}
	g.start(false, "--mode", "full-access")
	sid := g.newSession(cwd)
	g.say(sid, "[r1] first")
	g.say(sid, "[r2] second")
	g.say(sid, "[r3] third")
	users := g.userIndexes(sid)
	require.Len(t, users, 3)
	g.call(acp.MethodExtSessionRewind, map[string]any{"sessionId": sid, "toUserEntryIndex": users[1], "files": true})
	g.call(acp.MethodExtSessionRewind, map[string]any{"sessionId": sid, "undo": true})
	g.call(acp.MethodExtSessionRewind, map[string]any{"sessionId": sid, "toUserEntryIndex": users[2], "files": false})
	g.say(sid, "[r4] fourth")
	g.say(sid, "/rewind")
}

func (g *goldenGen) userIndexes(sid string) []int {
	m := g.call(acp.MethodExtSessionForkable, map[string]any{"sessionId": sid})
	var r struct {
		Messages []struct {
			EntryIndex int `json:"entryIndex"`
		} `json:"messages"`
	}
	require.NoError(g.t, json.Unmarshal(m.Result, &r))
	var out []int
	for _, m := range r.Messages {
		out = append(out, m.EntryIndex)
	}
	return out
}

// Subagents: a parent delegates twice (one child reads a file, one is
// limited to a tool list); the children are sessions of their own.
func writeSubagent(t *testing.T, g *goldenGen) {
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("three notes\n"), 0o644))
	g.model.steps["delegate"] = []goldenStep{
		toolCalls(modelCall{"task", map[string]any{"description": "read the notes", "prompt": "[child] Read notes.txt and say what it holds."}}),
		toolCalls(modelCall{"task", map[string]any{"description": "count", "prompt": "[count] Count the files.", "tools": []string{"glob"}}}),
		text("The notes hold three notes; there is one file.", 1300, 20)}
	g.model.steps["child"] = []goldenStep{
		toolCalls(modelCall{"read_file", map[string]any{"path": "notes.txt"}}),
		text("notes.txt holds: three notes", 600, 9)}
	g.model.steps["count"] = []goldenStep{
		toolCalls(modelCall{"glob", map[string]any{"pattern": "*"}}),
		text("One file.", 500, 3)}
	g.start(false)
	sid := g.newSession(cwd)
	g.say(sid, "[delegate] What do the notes say, and how many files are there?")
}

// Compaction: turns with usage, /compact (a summary replaces them), more
// turns, /clear, and a turn after it; /cost in between.
func writeCompaction(t *testing.T, g *goldenGen) {
	g.model.steps["c1"] = []goldenStep{toolCalls(modelCall{"glob", map[string]any{"pattern": "*"}}), text("One.", 3000, 30)}
	g.model.steps["c2"] = []goldenStep{text("Two.", 4000, 40)}
	g.model.steps["c3"] = []goldenStep{text("Three, after the summary.", 1200, 12)}
	g.model.steps["c4"] = []goldenStep{text("Four, after the clear.", 300, 4)}
	g.start(false)
	sid := g.newSession(t.TempDir())
	g.say(sid, "[c1] one")
	g.say(sid, "[c2] two")
	g.say(sid, "/compact")
	g.say(sid, "[c3] three")
	g.say(sid, "/cost")
	g.say(sid, "/clear")
	g.say(sid, "[c4] four")
}

// Forks: a whole fork (session/fork) and a fork from the second user
// message (the extension), each prompted after; remembered permissions
// in the source that the forks forget.
func writeFork(t *testing.T, g *goldenGen) {
	cwd := t.TempDir()
	g.model.steps["f1"] = []goldenStep{
		toolCalls(modelCall{"write_file", map[string]any{"path": "f.txt", "content": "F\n"}},
			modelCall{"update_plan", map[string]any{"entries": []any{map[string]any{"content": "fork", "priority": "high", "status": "in_progress"}}}}),
		text("f.txt written.", 700, 7)}
	g.model.steps["f2"] = []goldenStep{text("Second.", 800, 8)}
	g.model.steps["f3"] = []goldenStep{text("In a fork.", 900, 9)}
	g.start(false)
	src := g.newSession(cwd)
	g.say(src, "[f1] first")
	g.say(src, "[f2] second")
	m := g.call(acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: acp.SessionId(src), CWD: cwd})
	var whole acp.ForkSessionResponse
	acptest.MustResult(t, m, &whole)
	g.say(string(whole.SessionID), "[f3] in the whole fork")
	users := g.userIndexes(src)
	m = g.call(acp.MethodExtSessionFork, map[string]any{"sessionId": src, "fromUserEntryIndex": users[1]})
	var part struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &part))
	g.say(part.SessionID, "[f3] in the partial fork")
}

// Interrupted: the agent is killed during a command; the file holds the
// call without its result, and the file history a command without its
// end (the load completes both).
func writeInterrupted(t *testing.T, g *goldenGen) {
	cwd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cwd, "x.txt"), []byte("x\n"), 0o644))
	g.model.steps["before"] = []goldenStep{text("Ready.", 400, 4)}
	g.model.steps["hang"] = []goldenStep{
		toolCalls(modelCall{"write_file", map[string]any{"path": "y.txt", "content": "y\n"}},
			modelCall{"run_command", map[string]any{"command": "echo z > z.txt && sleep 5"}})}
	g.start(false, "--mode", "full-access")
	sid := g.newSession(cwd)
	g.say(sid, "[before] first")
	id := g.p.Request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("[hang] run it")}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		require.True(t, time.Now().Before(deadline), "the command never started")
		m := g.p.Next()
		require.False(t, m.IsResponse() && string(m.ID) == id, "the prompt ended: %s", m.Raw)
		if m.Method != acp.MethodSessionUpdate {
			continue
		}
		if u := m.Update(t).Update.ToolCallUpdate; u != nil && strings.HasSuffix(string(u.ToolCallID), "_1") && u.Status == acp.ToolCallStatusInProgress {
			break
		}
	}
	// The command has started (z.txt is written first): kill the agent.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(cwd, "z.txt")); err == nil {
			break
		}
		require.Less(t, time.Since(start), waitBudget(t), "z.txt never appeared")
	}
	require.NoError(t, g.p.cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, g.p.waitExit(t, 5*time.Second))
	g.p = nil
	// What the load finds of the workspace must not depend on when it
	// runs: the workspace is gone, at once as later.
	time.Sleep(100 * time.Millisecond) // the sandbox helpers and their command end
	require.NoError(t, os.RemoveAll(cwd))
}
