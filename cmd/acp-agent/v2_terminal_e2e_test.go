//go:build !windows

package main

import (
	"encoding/base64"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/agent"
)

// terminalScript: a command that prints, pauses, prints and fails; a
// command that prints and then runs until stopped; a tool call that runs
// until cancelled; each followed by the model's answer.
func terminalScript(t *testing.T) string {
	run := func(id, line string) map[string]any {
		return map[string]any{"toolCall": map[string]any{"id": id, "name": "run_command", "arguments": map[string]any{"command": line}}}
	}
	return writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[run]", "events": []any{run("call_run", "printf 'line1\\n'; sleep 0.3; printf 'line2\\n'; exit 3")}},
		map[string]any{"match": "[long]", "events": []any{run("call_long", "echo started; exec sleep 60")}},
		map[string]any{"match": "[slow]", "events": []any{run("call_slow", "echo waiting; exec sleep 60")}},
		map[string]any{"events": []any{map[string]any{"text": "after the command"}}},
	}})
}

// terminalView is what a client saw of one display-only terminal.
type terminalView struct {
	command, cwd string
	cancellable  bool
	output       strings.Builder
	exit         *acpv2.TerminalExitStatus
}

// watchTerminals folds the terminal updates of msgs into views, by id,
// and returns the terminal ids the tool calls' content chunks named.
func watchTerminals(t *testing.T, views map[string]*terminalView, msgs []acptest.Message) map[string]string {
	t.Helper()
	shown := map[string]string{}
	for _, m := range msgs {
		if m.Method != acpv2.MethodSessionUpdate {
			continue
		}
		u := m.UpdateV2(t).Update
		switch {
		case u.TerminalUpdate != nil:
			tu := u.TerminalUpdate
			v := views[tu.TerminalID]
			if v == nil {
				v = &terminalView{}
				views[tu.TerminalID] = v
			}
			if c, ok := tu.Command.Get(); ok {
				v.command = c
			}
			if c, ok := tu.CWD.Get(); ok {
				v.cwd = c
			}
			if !tu.Capabilities.IsZero() {
				c, ok := tu.Capabilities.Get()
				v.cancellable = ok && c.Cancel != nil
			}
			if e, ok := tu.ExitStatus.Get(); ok {
				v.exit = &e
			}
		case u.TerminalOutputChunk != nil:
			v := views[u.TerminalOutputChunk.TerminalID]
			require.NotNil(t, v, "output before its terminal_update")
			require.Nil(t, v.exit, "output after the exit status")
			data, err := base64.StdEncoding.DecodeString(u.TerminalOutputChunk.Data)
			require.NoError(t, err)
			v.output.Write(data)
		case u.ToolCallContentChunk != nil && u.ToolCallContentChunk.Content.Terminal != nil:
			shown[u.ToolCallContentChunk.ToolCallID] = u.ToolCallContentChunk.Content.Terminal.TerminalID
		}
	}
	return shown
}

// toolCallStates lists each update of a tool call: its status (or "-")
// and whether it advertised cancel ("+cancel"), cleared it ("-cancel").
func toolCallStates(t *testing.T, msgs []acptest.Message, id string) []string {
	var out []string
	for _, m := range msgs {
		if m.Method != acpv2.MethodSessionUpdate {
			continue
		}
		tc := m.UpdateV2(t).Update.ToolCallUpdate
		if tc == nil || tc.ToolCallID != id {
			continue
		}
		s := "-"
		if st, ok := tc.Status.Get(); ok {
			s = string(st)
		}
		if !tc.Capabilities.IsZero() {
			if c, ok := tc.Capabilities.Get(); ok && c.Cancel != nil {
				s += "+cancel"
			} else {
				s += "-cancel"
			}
		}
		out = append(out, s)
	}
	return out
}

// untilUpdate reads messages until one satisfies ok, and returns them.
func untilUpdate(t *testing.T, p *proc, ok func(acpv2.SessionUpdate) bool) []acptest.Message {
	t.Helper()
	var msgs []acptest.Message
	for {
		m := p.Next()
		msgs = append(msgs, m)
		if m.Method == acpv2.MethodSessionUpdate && ok(m.UpdateV2(t).Update) {
			return msgs
		}
	}
}

// TestBinaryV2ShowsCommandsAsTerminals: a command the agent runs is shown
// to a v2 client as a display-only terminal (every message checked
// against the v2 schema): terminal_update with its command, cwd and
// cancel capability, the terminal appended to its tool call as a
// tool_call_content_chunk, its output as terminal_output_chunks, and its
// exit status before the tool call ends. terminal/cancel stops one
// command and the turn goes on, the model told the user stopped it;
// tool_call/cancel stops one tool call (final status "cancelled") and the
// turn goes on; unknown and finished ids are -32602. The replay after a
// resume shows the command's output as text.
func TestBinaryV2ShowsCommandsAsTerminals(t *testing.T) {
	p := startAgent(t, nil, "--model", "replay/"+terminalScript(t), "--mode", "full-access")
	p.InitializeV2(nil)
	cwd := t.TempDir()
	sid := p.NewSessionV2(cwd)
	views := map[string]*terminalView{}

	run := promptV2(t, p, sid, "[run] build it", false)
	assert.Equal(t, acpv2.StopReasonEndTurn, run.stop)
	shown := watchTerminals(t, views, run.msgs)
	id := shown["call_run"]
	require.NotEmpty(t, id, "the tool call shows its terminal: %v", run.kinds)
	v := views[id]
	require.NotNil(t, v)
	assert.Contains(t, v.command, "printf 'line1")
	assert.Equal(t, cwd, v.cwd)
	assert.Equal(t, "line1\nline2\n", v.output.String())
	require.NotNil(t, v.exit)
	require.NotNil(t, v.exit.ExitCode)
	assert.Equal(t, int64(3), *v.exit.ExitCode)
	assert.False(t, v.cancellable, "an exited terminal cannot be cancelled")
	assert.Equal(t, []string{"pending", "in_progress+cancel", "failed-cancel"}, toolCallStates(t, run.msgs, "call_run"))
	assert.Less(t, indexOf(run.kinds, "terminal_update"), indexOf(run.kinds, "tool_call_content_chunk"))
	assert.Less(t, lastIndexOf(run.kinds, "terminal_update"), lastIndexOf(run.kinds, "tool_call_update"), "the exit status before the call ends")
	assert.Equal(t, "after the command", run.text)

	resp, _ := p.Call(acpv2.MethodTerminalCancel, map[string]any{"sessionId": sid, "terminalId": id})
	require.NotNil(t, resp.Error, "an exited terminal")
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
	resp, _ = p.Call(acpv2.MethodToolCallCancel, map[string]any{"sessionId": sid, "toolCallId": "call_run"})
	require.NotNil(t, resp.Error, "a finished tool call")
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)

	// terminal/cancel: the command stops, the turn goes on.
	long := p.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: "[long] serve"}}}})
	msgs := untilUpdate(t, p, func(u acpv2.SessionUpdate) bool {
		c := u.TerminalOutputChunk
		return c != nil && strings.Contains(string(must64(t, c.Data)), "started")
	})
	longID := msgs[len(msgs)-1].UpdateV2(t).Update.TerminalOutputChunk.TerminalID
	cancel := p.Request(acpv2.MethodTerminalCancel, map[string]any{"sessionId": sid, "terminalId": longID})
	turn := readTurnV2(t, p, long, false, sofar(msgs, long))
	assert.Equal(t, acpv2.StopReasonEndTurn, turn.stop, "the turn went on")
	assert.Equal(t, "after the command", turn.text)
	answered := false
	for _, m := range turn.msgs {
		if m.IsResponse() && string(m.ID) == cancel {
			acptest.MustResult(t, m, nil)
			answered = true
		}
	}
	assert.True(t, answered)
	watchTerminals(t, views, turn.msgs)
	require.NotNil(t, views[longID].exit, "the exit status confirms the cancel")
	assert.NotEmpty(t, views[longID].exit.Signal, "killed")
	assert.Equal(t, "failed-cancel", last(toolCallStates(t, turn.msgs, "call_long")))

	// tool_call/cancel: the tool call stops, the turn goes on.
	slow := p.Request(acpv2.MethodSessionPrompt, &acpv2.PromptRequest{SessionID: sid, Prompt: []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: "[slow] wait"}}}})
	msgs = untilUpdate(t, p, func(u acpv2.SessionUpdate) bool {
		c := u.TerminalOutputChunk
		return c != nil && strings.Contains(string(must64(t, c.Data)), "waiting")
	})
	require.Contains(t, toolCallStates(t, msgs, "call_slow"), "in_progress+cancel")
	resp, _ = p.Call(acpv2.MethodToolCallCancel, map[string]any{"sessionId": sid, "toolCallId": "nope"})
	require.NotNil(t, resp.Error, "an unknown tool call")
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
	cancel = p.Request(acpv2.MethodToolCallCancel, map[string]any{"sessionId": sid, "toolCallId": "call_slow"})
	turn = readTurnV2(t, p, slow, false, sofar(msgs, slow))
	assert.Equal(t, acpv2.StopReasonEndTurn, turn.stop, "the turn went on")
	assert.Equal(t, "cancelled-cancel", last(toolCallStates(t, turn.msgs, "call_slow")))
	assert.Equal(t, "after the command", turn.text)

	// What the model got, in the replay.
	resp, _ = p.Call(acpv2.MethodSessionClose, &acpv2.CloseSessionRequest{SessionID: sid})
	acptest.MustResult(t, resp, nil)
	resp, replay := p.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: cwd, ReplayFrom: &acpv2.ReplayFrom{Start: &acpv2.ReplayFromStart{}}})
	acptest.MustResult(t, resp, nil)
	results := map[string]string{}
	for _, m := range replay {
		tc := m.UpdateV2(t).Update.ToolCallUpdate
		if tc == nil {
			continue
		}
		items, _ := tc.Content.Get()
		for _, it := range items {
			require.Nil(t, it.Terminal, "no terminal in a replay")
			if it.Content != nil && it.Content.Content.Text != nil {
				results[tc.ToolCallID] += it.Content.Content.Text.Text
			}
		}
	}
	assert.Contains(t, results["call_run"], "line2")
	assert.Contains(t, results["call_run"], "[exit code 3]")
	assert.Contains(t, results["call_long"], "started")
	assert.Contains(t, results["call_long"], "stopped by the user")
	assert.Contains(t, results["call_slow"], agent.ToolCancelledByUserResult)
}

// sofar is a turn of which msgs were read, answered if the prompt's
// answer is among them.
func sofar(msgs []acptest.Message, promptID string) v2Turn {
	turn := v2Turn{msgs: msgs}
	for _, m := range msgs {
		if m.IsResponse() && string(m.ID) == promptID {
			turn.messageID = "answered"
		}
	}
	return turn
}

func must64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}

func lastIndexOf(kinds []string, kind string) int {
	for i := len(kinds) - 1; i >= 0; i-- {
		if kinds[i] == kind {
			return i
		}
	}
	return -1
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

// TestBinaryV2CoalescesTerminalOutput: a command that prints a megabyte
// in small writes reaches the client in a few bounded chunks, each at
// most 64 KiB besides the note of what it left out; what is shown and
// what the notes say was left out add up to all of it.
func TestBinaryV2CoalescesTerminalOutput(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[flood]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "call_flood", "name": "run_command",
			"arguments": map[string]any{"command": "head -c 1000000 /dev/zero | tr '\\0' x"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "flooded"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access")
	p.InitializeV2(nil)
	sid := p.NewSessionV2(t.TempDir())
	turn := promptV2(t, p, sid, "[flood] print", false)
	note := regexp.MustCompile(`\r\n\[\.\.\. (\d+) bytes of output not shown \.\.\.\]\r\n`)
	chunks, shown, dropped := 0, 0, 0
	for _, m := range turn.msgs {
		if m.Method != acpv2.MethodSessionUpdate {
			continue
		}
		c := m.UpdateV2(t).Update.TerminalOutputChunk
		if c == nil {
			continue
		}
		chunks++
		data := string(must64(t, c.Data))
		if n := note.FindStringSubmatch(data); n != nil {
			k, err := strconv.Atoi(n[1])
			require.NoError(t, err)
			dropped += k
			data = note.ReplaceAllString(data, "")
		}
		assert.LessOrEqual(t, len(data), 64<<10)
		assert.Equal(t, strings.Repeat("x", len(data)), data)
		shown += len(data)
	}
	assert.Equal(t, 1000000, shown+dropped, "shown %d, left out %d", shown, dropped)
	assert.Less(t, chunks, 100, "coalesced")
	assert.GreaterOrEqual(t, chunks, 1)
}

// TestBinaryV2LimitsTheTerminalChunkRate: a command that prints a line
// every few milliseconds is sent at most one chunk per 50 ms: however
// slow the machine, n chunks take at least (n-1)×50 ms to send.
func TestBinaryV2LimitsTheTerminalChunkRate(t *testing.T) {
	script := writeScript(t, map[string]any{"turns": []any{
		map[string]any{"match": "[drip]", "events": []any{map[string]any{"toolCall": map[string]any{"id": "call_drip", "name": "run_command",
			"arguments": map[string]any{"command": "for i in $(seq 1 150); do echo $i; sleep 0.005; done"}}}}},
		map[string]any{"events": []any{map[string]any{"text": "dripped"}}},
	}})
	p := startAgent(t, nil, "--model", "replay/"+script, "--mode", "full-access")
	p.InitializeV2(nil)
	sid := p.NewSessionV2(t.TempDir())
	start := time.Now()
	turn := promptV2(t, p, sid, "[drip] print", false)
	elapsed := time.Since(start)
	var out strings.Builder
	chunks := 0
	for _, m := range turn.msgs {
		if m.Method == acpv2.MethodSessionUpdate {
			if c := m.UpdateV2(t).Update.TerminalOutputChunk; c != nil {
				chunks++
				out.Write(must64(t, c.Data))
			}
		}
	}
	assert.Equal(t, 150, strings.Count(out.String(), "\n"), "every line")
	assert.LessOrEqual(t, chunks, int(elapsed/(50*time.Millisecond))+1, "%d chunks in %v", chunks, elapsed)
}
