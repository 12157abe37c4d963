package acpagent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/policy"
)

// scriptTurn is one replay turn: tool calls (name, arguments) or text.
type scriptTurn map[string]any

func toolTurn(calls ...[2]any) scriptTurn {
	var events []any
	for i, c := range calls {
		events = append(events, map[string]any{"toolCall": map[string]any{"id": fmt.Sprintf("call_%s_%d", c[0], i), "name": c[0], "arguments": c[1]}})
	}
	return scriptTurn{"events": events}
}

func textTurn(text string) scriptTurn {
	return scriptTurn{"events": []any{map[string]any{"text": text}}}
}

// toolAgent starts an agent on a replay script (the first turn matches
// "go", the rest follow tool results) with a workspace in a temp dir.
func toolAgent(t *testing.T, caps *acp.ClientCapabilities, configure func(*acpagent.Config), first scriptTurn, rest ...scriptTurn) (*acptest.Client, string, string) {
	t.Helper()
	if _, ok := first["match"]; !ok {
		first["match"] = "go"
	}
	turns := append([]scriptTurn{first}, rest...)
	if len(rest) == 0 {
		turns = append(turns, textTurn("done"))
	}
	data, err := json.Marshal(map[string]any{"turns": turns})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	dir := t.TempDir()
	c := client(t, nil, map[string]string{"MODEL": "replay/" + path}, func(cfg *acpagent.Config) {
		if configure != nil {
			configure(cfg)
		}
	})
	c.Initialize(caps)
	return c, c.NewSession(dir), dir
}

// turnResult is what a prompt produced on the wire.
type turnResult struct {
	resp     acptest.Message
	updates  []acp.SessionUpdate
	requests []acptest.Message
}

// runPrompt sends text and answers the agent's requests with answer
// (result, or an error when the result is an *acptest.WireError).
func runPrompt(t *testing.T, c *acptest.Client, sid, text string, answer func(m acptest.Message) any) turnResult {
	t.Helper()
	id := c.Request(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock(text)))
	var r turnResult
	for {
		m := c.Next()
		switch {
		case m.IsResponse() && string(m.ID) == id:
			r.resp = m
			return r
		case m.Method == acp.MethodSessionUpdate:
			r.updates = append(r.updates, m.Update(t).Update)
		case m.Method != "" && m.ID != nil:
			r.requests = append(r.requests, m)
			require.NotNil(t, answer, "unexpected request %s", m.Raw)
			switch res := answer(m).(type) {
			case *acptest.WireError:
				c.RespondError(m.ID, res.Code, res.Message)
			default:
				c.Respond(m.ID, res)
			}
		}
	}
}

func (r turnResult) stopReason(t *testing.T) acp.StopReason {
	t.Helper()
	var pr acp.PromptResponse
	acptest.MustResult(t, r.resp, &pr)
	return pr.StopReason
}

// calls returns the tool_call updates and the final tool_call_update of
// each call, by id.
func (r turnResult) calls() (map[string]*acp.ToolCall, map[string]*acp.ToolCallUpdate) {
	calls, finals := map[string]*acp.ToolCall{}, map[string]*acp.ToolCallUpdate{}
	for _, u := range r.updates {
		if u.ToolCall != nil {
			calls[string(u.ToolCall.ToolCallID)] = u.ToolCall
		}
		if u.ToolCallUpdate != nil && (u.ToolCallUpdate.Status == acp.ToolCallStatusCompleted || u.ToolCallUpdate.Status == acp.ToolCallStatusFailed) {
			finals[string(u.ToolCallUpdate.ToolCallID)] = u.ToolCallUpdate
		}
	}
	return calls, finals
}

func contentText(cs []acp.ToolCallContent) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(unfenced(c.Content.Content.Text.Text))
		}
	}
	return b.String()
}

// unfenced is the text inside a Markdown code block the agent put a
// tool's output in, with the line break the block's fence took, or text
// as it is when it is none.
func unfenced(text string) string {
	if inner, ok := markdown.CodeBlockText(text); ok {
		return inner + "\n"
	}
	return text
}

func fullAccess(cfg *acpagent.Config) { cfg.Mode = policy.ModeFullAccess }

func TestBuiltinToolsShowKindTitleLocationsAndContent(t *testing.T) {
	c, sid, dir := toolAgent(t, nil, fullAccess, toolTurn(
		[2]any{"write_file", map[string]any{"path": "notes/todo.md", "content": "one\ntwo\nthree\n"}},
		[2]any{"read_file", map[string]any{"path": "notes/todo.md", "offset": 2, "limit": 1}},
		[2]any{"edit_file", map[string]any{"path": "notes/todo.md", "old_string": "two", "new_string": "TWO"}},
		[2]any{"list_directory", map[string]any{"path": "notes"}},
		[2]any{"glob", map[string]any{"pattern": "**/*.md"}},
		[2]any{"grep", map[string]any{"pattern": "TW.", "include": "*.md"}},
		[2]any{"run_command", map[string]any{"command": "cat notes/todo.md | wc -l"}},
		[2]any{"update_plan", map[string]any{"entries": []any{
			map[string]any{"content": "write notes", "status": "completed"},
			map[string]any{"content": "review", "status": "pending", "priority": "high"}}}},
	))
	r := runPrompt(t, c, sid, "go", nil)
	assert.Equal(t, acp.StopReasonEndTurn, r.stopReason(t))
	calls, finals := r.calls()
	todo := filepath.Join(dir, "notes", "todo.md")
	want := []struct {
		id, title string
		kind      acp.ToolKind
		location  string
		result    string // in the final content's text, or "" for a diff
	}{
		{"call_write_file_0", "Write `notes/todo.md`", acp.ToolKindEdit, todo, ""},
		{"call_read_file_1", "Read `notes/todo.md` (lines 2–2)", acp.ToolKindRead, todo, "     2\ttwo\n[lines 2–2 of 3; continue with offset=3]"},
		{"call_edit_file_2", "Edit `notes/todo.md`", acp.ToolKindEdit, todo, ""},
		{"call_list_directory_3", "List `notes`", acp.ToolKindRead, filepath.Join(dir, "notes"), "todo.md (14 bytes)"},
		{"call_glob_4", "Find `**/*.md` in `.`", acp.ToolKindSearch, dir, "notes/todo.md"},
		{"call_grep_5", "Search `TW.` in `.`", acp.ToolKindSearch, dir, "notes/todo.md:2: TWO"},
		{"call_run_command_6", "`cat notes/todo.md | wc -l`", acp.ToolKindExecute, "", "3\n[exit code 0]"},
		{"call_update_plan_7", "Update plan", acp.ToolKindThink, "", "Plan updated: 2 entries, 1 completed."},
	}
	for _, w := range want {
		call, final := calls[w.id], finals[w.id]
		require.NotNil(t, call, w.id)
		require.NotNil(t, final, w.id)
		assert.Equal(t, w.title, call.Title, w.id)
		assert.Equal(t, w.kind, call.Kind, w.id)
		assert.Equal(t, acp.ToolCallStatusCompleted, final.Status, "%s: %s", w.id, contentText(final.Content))
		if w.location != "" {
			require.NotEmpty(t, call.Locations, w.id)
			assert.Equal(t, w.location, call.Locations[0].Path, w.id)
		}
		if w.result != "" {
			assert.Contains(t, contentText(final.Content), w.result, w.id)
		}
	}
	// Diffs: a new file has no old text; an edit has both.
	wd := finals["call_write_file_0"].Content[0].Diff
	require.NotNil(t, wd)
	assert.Nil(t, wd.OldText)
	assert.Equal(t, "one\ntwo\nthree\n", wd.NewText)
	ed := finals["call_edit_file_2"].Content[0].Diff
	require.NotNil(t, ed)
	assert.Equal(t, "one\ntwo\nthree\n", *ed.OldText)
	assert.Equal(t, "one\nTWO\nthree\n", ed.NewText)
	data, err := os.ReadFile(todo)
	require.NoError(t, err)
	assert.Equal(t, "one\nTWO\nthree\n", string(data))
	// The plan went out whole.
	var plan *acp.Plan
	for _, u := range r.updates {
		if u.Plan != nil {
			plan = u.Plan
		}
	}
	require.NotNil(t, plan)
	assert.Equal(t, []acp.PlanEntry{
		{Content: "write notes", Priority: acp.PlanEntryPriorityMedium, Status: acp.PlanEntryStatusCompleted},
		{Content: "review", Priority: acp.PlanEntryPriorityHigh, Status: acp.PlanEntryStatusPending},
	}, plan.Entries)
}

func TestBuiltinToolErrorsGoBackToTheModel(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("SECRET"), 0o600))
	c, sid, dir := toolAgent(t, nil, fullAccess, toolTurn(
		[2]any{"read_file", map[string]any{"path": filepath.Join(outside, "secret")}},
		[2]any{"read_file", map[string]any{"path": "../" + filepath.Base(outside) + "/secret"}},
		[2]any{"write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "evil"}},
		[2]any{"edit_file", map[string]any{"path": "a.txt", "old_string": "x", "new_string": "y"}},
		[2]any{"edit_file", map[string]any{"path": "dup.txt", "old_string": "x", "new_string": "y"}},
		[2]any{"read_file", map[string]any{"path": "a.txt", "bogus": true}},
		[2]any{"run_command", map[string]any{"command": "echo unterminated 'quote"}},
		[2]any{"grep", map[string]any{"pattern": "(unclosed"}},
	))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dup.txt"), []byte("x and x"), 0o600))
	r := runPrompt(t, c, sid, "go", nil)
	_, finals := r.calls()
	want := map[string]string{
		"call_read_file_0":   "Permission denied: " + filepath.Join(outside, "secret"),
		"call_read_file_1":   "Permission denied",
		"call_write_file_2":  "Permission denied",
		"call_edit_file_3":   "does not exist; use write_file",
		"call_edit_file_4":   "old_string occurs 2 times",
		"call_read_file_5":   "invalid arguments for read_file",
		"call_run_command_6": "cannot be run",
		"call_grep_7":        "(unclosed",
	}
	for id, msg := range want {
		require.NotNil(t, finals[id], id)
		assert.Equal(t, acp.ToolCallStatusFailed, finals[id].Status, id)
		assert.Contains(t, contentText(finals[id].Content), msg, id)
		assert.NotContains(t, contentText(finals[id].Content), "SECRET", id)
	}
	_, err := os.Stat(filepath.Join(dir, ".git"))
	assert.True(t, os.IsNotExist(err), "nothing was written under .git")
}

// answerPermission answers session/request_permission with optionID, and
// records the tool calls it was asked about.
func answerPermission(optionID string) func(m acptest.Message) any {
	return func(m acptest.Message) any {
		if m.Method != acp.MethodSessionRequestPermission {
			return &acptest.WireError{Code: acp.CodeMethodNotFound, Message: "no " + m.Method}
		}
		if optionID == "cancelled" {
			return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": optionID}}
	}
}

func TestPermissionRoundTripWithEachOption(t *testing.T) {
	tests := []struct {
		option     string
		wantRun    bool
		wantStop   acp.StopReason
		wantResult string
	}{
		{"allow_once", true, acp.StopReasonEndTurn, "[exit code 0]"},
		{"allow_always", true, acp.StopReasonEndTurn, "[exit code 0]"},
		{"reject_once", false, acp.StopReasonEndTurn, "The user rejected this tool call"},
		{"reject_always", false, acp.StopReasonEndTurn, "The user rejected this tool call"},
		{"cancelled", false, acp.StopReasonCancelled, "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.option, func(t *testing.T) {
			c, sid, dir := toolAgent(t, nil, nil,
				toolTurn([2]any{"run_command", map[string]any{"command": "touch made"}}), textTurn("done"))
			r := runPrompt(t, c, sid, "go", answerPermission(tt.option))
			assert.Equal(t, tt.wantStop, r.stopReason(t))
			require.Len(t, r.requests, 1)
			var req acp.RequestPermissionRequest
			require.NoError(t, json.Unmarshal(r.requests[0].Params, &req))
			assert.Equal(t, "`touch made`", req.ToolCall.Title)
			assert.Equal(t, acp.ToolKindExecute, req.ToolCall.Kind)
			var ids []string
			for _, o := range req.Options {
				ids = append(ids, string(o.OptionID)+"="+string(o.Kind))
			}
			assert.Equal(t, []string{"allow_once=allow_once", "allow_always=allow_always", "reject_once=reject_once", "reject_always=reject_always"}, ids)
			_, err := os.Stat(filepath.Join(dir, "made"))
			assert.Equal(t, tt.wantRun, err == nil, "the command ran: %v", err)
			_, finals := r.calls()
			final := finals["call_run_command_0"]
			require.NotNil(t, final)
			assert.Contains(t, contentText(final.Content), tt.wantResult)
			if !tt.wantRun {
				assert.Equal(t, acp.ToolCallStatusFailed, final.Status)
			}
		})
	}
}

// The model is told about a rejection: the next model request carries it.
func TestRejectionReachesTheModel(t *testing.T) {
	c, sid, _ := toolAgent(t, nil, nil,
		toolTurn([2]any{"write_file", map[string]any{"path": "x.txt", "content": "x"}}), textTurn("ok"))
	r := runPrompt(t, c, sid, "go", answerPermission("reject_once"))
	assert.Equal(t, acp.StopReasonEndTurn, r.stopReason(t))
	_, finals := r.calls()
	assert.Contains(t, contentText(finals["call_write_file_0"].Content), "The user rejected this tool call; it was not run")
	// What the model is sent next is the transcript's tool result.
	resp, _ := c.Call(acp.MethodExtSessionEvents, map[string]any{"sessionId": sid})
	var ev struct {
		Events []struct{ Type, ToolCallID, Text string } `json:"events"`
	}
	acptest.MustResult(t, resp, &ev)
	var result string
	for _, e := range ev.Events {
		if e.Type == "tool_result" && e.ToolCallID == "call_write_file_0" {
			result = e.Text
		}
	}
	assert.Contains(t, result, "The user rejected this tool call; it was not run", "the model's copy of the result")
}

// An allow_always covers the same program and subcommand, never a line
// with more appended.
func TestRememberedDecisionsAndTheirScope(t *testing.T) {
	run := func(match, line string) scriptTurn {
		turn := toolTurn([2]any{"run_command", map[string]any{"command": line}})
		turn["match"] = match
		return turn
	}
	c, sid, dir := toolAgent(t, nil, nil, run("first", "git status"), run("second", "git status --short"),
		run("third", "git status && touch pwned"), run("fourth", "git log"), textTurn("ok"))
	asked := func(prompt, answer string) int {
		t.Helper()
		r := runPrompt(t, c, sid, prompt, answerPermission(answer))
		return len(r.requests)
	}
	assert.Equal(t, 1, asked("first", "allow_always"))
	assert.Equal(t, 0, asked("second", "reject_once"), "same program and first argument: remembered")
	assert.Equal(t, 1, asked("third", "reject_once"), "a chained command is asked about")
	_, err := os.Stat(filepath.Join(dir, "pwned"))
	assert.True(t, os.IsNotExist(err))
	assert.Equal(t, 1, asked("fourth", "reject_once"), "another subcommand is another key")
}

func TestRememberedRejectAlwaysCancelsWithoutAsking(t *testing.T) {
	c, sid, dir := toolAgent(t, nil, nil, toolTurn([2]any{"write_file", map[string]any{"path": "x.txt", "content": "x"}}), textTurn("ok"))
	r := runPrompt(t, c, sid, "go 1", answerPermission("reject_always"))
	require.Len(t, r.requests, 1)
	assert.Equal(t, acp.StopReasonEndTurn, r.stopReason(t))
	r = runPrompt(t, c, sid, "go 2", answerPermission("allow_once"))
	assert.Empty(t, r.requests, "a remembered reject_always is not asked again")
	assert.Equal(t, acp.StopReasonCancelled, r.stopReason(t), "seed 002: it answers cancelled, which ends the turn")
	_, err := os.Stat(filepath.Join(dir, "x.txt"))
	assert.True(t, os.IsNotExist(err))
}

func TestModesDecideWhatAsks(t *testing.T) {
	write := toolTurn([2]any{"write_file", map[string]any{"path": "x.txt", "content": "x"}},
		[2]any{"run_command", map[string]any{"command": "true"}})
	tests := []struct {
		mode      string
		wantAsked []string // titles asked about
		wantWrite bool
	}{
		{"read-only", nil, false},
		{"default", []string{"Write `x.txt`", "`true`"}, true},
		{"accept-edits", []string{"`true`"}, true},
		{"full-access", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			c, sid, dir := toolAgent(t, nil, nil, write, textTurn("ok"))
			resp, updates := c.Call(acp.MethodSessionSetMode, &acp.SetSessionModeRequest{SessionID: acp.SessionId(sid), ModeID: acp.SessionModeId(tt.mode)})
			acptest.MustResult(t, resp, nil)
			require.Len(t, updates, 2)
			assert.Equal(t, acp.SessionModeId(tt.mode), updates[0].Update(t).Update.CurrentModeUpdate.CurrentModeID)
			opts := updates[1].Update(t).Update.ConfigOptionUpdate.ConfigOptions
			assert.Equal(t, tt.mode, string(opts[0].Select.CurrentValue), "the mode config option follows")

			r := runPrompt(t, c, sid, "go", answerPermission("allow_once"))
			var asked []string
			for _, m := range r.requests {
				var req acp.RequestPermissionRequest
				require.NoError(t, json.Unmarshal(m.Params, &req))
				asked = append(asked, req.ToolCall.Title)
			}
			assert.Equal(t, tt.wantAsked, asked)
			_, err := os.Stat(filepath.Join(dir, "x.txt"))
			assert.Equal(t, tt.wantWrite, err == nil)
			if tt.mode == "read-only" {
				_, finals := r.calls()
				assert.Contains(t, contentText(finals["call_write_file_0"].Content), "read-only mode")
			}
		})
	}
	t.Run("unknown mode", func(t *testing.T) {
		c, sid, _ := toolAgent(t, nil, nil, write)
		resp, _ := c.Call(acp.MethodSessionSetMode, &acp.SetSessionModeRequest{SessionID: acp.SessionId(sid), ModeID: "yolo"})
		require.NotNil(t, resp.Error)
		assert.Equal(t, int64(acp.CodeInvalidParams), resp.Error.Code)
	})
}

func TestFilesGoThroughTheEditorWhenAdvertised(t *testing.T) {
	caps := &acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}
	c, sid, dir := toolAgent(t, caps, fullAccess, toolTurn(
		[2]any{"read_file", map[string]any{"path": "buf.go"}},
		[2]any{"write_file", map[string]any{"path": "new.go", "content": "package x\n"}},
	))
	// buf.go exists on disk with other content: the editor's buffer wins.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "buf.go"), []byte("on disk"), 0o600))
	var methods []string
	r := runPrompt(t, c, sid, "go", func(m acptest.Message) any {
		methods = append(methods, m.Method)
		switch m.Method {
		case acp.MethodFSReadTextFile:
			return map[string]any{"content": "unsaved buffer"}
		case acp.MethodFSWriteTextFile:
			var req acp.WriteTextFileRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			assert.Equal(t, filepath.Join(dir, "new.go"), req.Path)
			assert.Equal(t, sid, string(req.SessionID))
			return map[string]any{}
		}
		return &acptest.WireError{Code: acp.CodeMethodNotFound, Message: m.Method}
	})
	assert.Equal(t, []string{acp.MethodFSReadTextFile, acp.MethodFSWriteTextFile}, methods)
	_, finals := r.calls()
	assert.Equal(t, "     1\tunsaved buffer\n", contentText(finals["call_read_file_0"].Content), "numbered like every read")
	_, err := os.Stat(filepath.Join(dir, "new.go"))
	assert.True(t, os.IsNotExist(err), "the editor wrote it, not the agent")
}

func TestCommandsRunInTheEditorTerminalWhenAdvertised(t *testing.T) {
	caps := &acp.ClientCapabilities{Terminal: true}
	c, sid, _ := toolAgent(t, caps, fullAccess, toolTurn([2]any{"run_command", map[string]any{"command": "make test"}}))
	var methods []string
	r := runPrompt(t, c, sid, "go", func(m acptest.Message) any {
		methods = append(methods, m.Method)
		switch m.Method {
		case acp.MethodTerminalCreate:
			var req acp.CreateTerminalRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			assert.Contains(t, []string{"/usr/bin/bash", "/bin/bash", "/usr/local/bin/bash"}, req.Command, "lines run with bash, as the policy parses them")
			assert.Equal(t, []string{"-c", "make test"}, req.Args)
			require.NotNil(t, req.OutputByteLimit)
			return map[string]any{"terminalId": "term-1"}
		case acp.MethodTerminalWaitForExit:
			return map[string]any{"exitCode": 2}
		case acp.MethodTerminalOutput:
			return map[string]any{"output": "FAIL: TestX\n", "truncated": false, "exitStatus": map[string]any{"exitCode": 2}}
		case acp.MethodTerminalRelease:
			return map[string]any{}
		}
		return &acptest.WireError{Code: acp.CodeMethodNotFound, Message: m.Method}
	})
	assert.Equal(t, []string{acp.MethodTerminalCreate, acp.MethodTerminalWaitForExit, acp.MethodTerminalOutput, acp.MethodTerminalRelease}, methods)
	_, finals := r.calls()
	final := finals["call_run_command_0"]
	require.NotNil(t, final)
	assert.Equal(t, acp.ToolCallStatusFailed, final.Status, "a non-zero exit fails the call")
	require.Len(t, final.Content, 1)
	require.NotNil(t, final.Content[0].Terminal, "the editor's terminal is embedded")
	assert.Equal(t, "term-1", string(final.Content[0].Terminal.TerminalID))
}

// A client that advertises nothing is never sent fs/* or terminal/*.
func TestNothingUnadvertisedIsCalled(t *testing.T) {
	c, sid, dir := toolAgent(t, nil, fullAccess, toolTurn(
		[2]any{"write_file", map[string]any{"path": "a.txt", "content": "local"}},
		[2]any{"read_file", map[string]any{"path": "a.txt"}},
		[2]any{"run_command", map[string]any{"command": "cat a.txt"}},
	))
	r := runPrompt(t, c, sid, "go", nil) // nil: any request fails the test
	_, finals := r.calls()
	assert.Equal(t, "     1\tlocal\n", contentText(finals["call_read_file_1"].Content))
	assert.Contains(t, contentText(finals["call_run_command_2"].Content), "local\n[exit code 0]")
	data, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "local", string(data))
}
