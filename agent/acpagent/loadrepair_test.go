package acpagent_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// fileLines returns the lines of a session file (header first).
func fileLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Issue 13.10: a session file torn in the middle of a tool output (a
// crash while writing it) loads with every complete record kept byte for
// byte, times included; only the torn line goes (to the .broken copy),
// and the call gets an "interrupted" result appended, so the history is
// consistent without dropping the step.
func TestLoadOfATornToolOutputKeepsEveryCompleteRecord(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil)
	sid := c.NewSession(cwd)
	say(t, c, sid, "hello")
	say(t, c, sid, "please write the file")
	c.Stop()

	path := filepath.Join(e.dir, sid+".jsonl")
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := fileLines(t, path)
	torn := -1
	var callID string
	for i, l := range lines {
		var r struct {
			Kind       string `json:"kind"`
			ToolCallID string `json:"toolCallId"`
		}
		if json.Unmarshal(l, &r) == nil && r.Kind == "tool_output" {
			torn, callID = i, r.ToolCallID
			break
		}
	}
	require.Positive(t, torn, "the session has a tool output")
	var cut int
	for _, l := range lines[:torn] {
		cut += len(l)
	}
	cut += len(lines[torn]) / 2 // mid-line: the crash
	require.NoError(t, os.WriteFile(path, orig[:cut], 0o600))

	c2 := e.start(nil)
	resp, replay := loadSession(t, c2, acp.MethodSessionLoad, sid, cwd)
	acptest.MustResult(t, resp, nil)

	after := fileLines(t, path)
	require.Len(t, after, torn+1, "the kept records, then one result for the interrupted call")
	for i := range torn {
		assert.Equal(t, string(lines[i]), string(after[i]), "record %d is kept byte for byte (its time included)", i)
	}
	var added struct {
		Kind       string `json:"kind"`
		ToolCallID string `json:"toolCallId"`
		IsError    bool   `json:"isError"`
		Text       string `json:"text"`
	}
	require.NoError(t, json.Unmarshal(after[torn], &added))
	assert.Equal(t, "tool_output", added.Kind)
	assert.Equal(t, callID, added.ToolCallID)
	assert.True(t, added.IsError)
	assert.Contains(t, added.Text, "interrupted")
	broken, err := os.ReadFile(path + ".broken")
	require.NoError(t, err)
	assert.Equal(t, orig[:cut], broken, "the .broken copy holds the file as it was found")

	var tools []string
	for _, u := range replay {
		if u.ToolCall != nil {
			tools = append(tools, string(u.ToolCall.Status))
		}
	}
	assert.Equal(t, []string{"failed"}, tools, "the interrupted call is replayed, as failed")

	// The model gets the whole history, the interrupted step included.
	text, _ := say(t, c2, sid, "how many?")
	assert.Equal(t, "3 user messages so far", text)
	n := e.model.Count()
	last := e.model.Request(t, n-1).Body
	raw, _ := json.Marshal(last["messages"])
	assert.Contains(t, string(raw), callID)
	assert.Contains(t, string(raw), "interrupted")
	for i := range torn {
		assert.Equal(t, string(lines[i]), string(fileLines(t, path)[i]), "record %d is still as it was", i)
	}
}

// A damaged line in the middle (a lost tool result) cannot be appended
// after: the file is rewritten, but from the records as they were read,
// so every kept record is unchanged, and the result is added in place.
func TestLoadOfALostToolOutputMidFileKeepsEveryOtherRecord(t *testing.T) {
	e := newStoreEnv(t)
	cwd := t.TempDir()
	c := e.start(nil)
	sid := c.NewSession(cwd)
	say(t, c, sid, "please write the file")
	say(t, c, sid, "hello")
	c.Stop()

	path := filepath.Join(e.dir, sid+".jsonl")
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := fileLines(t, path)
	lost := -1
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"kind":"tool_output"`)) {
			lost = i
		}
	}
	require.Positive(t, lost)
	damaged := bytes.Join(append(append(append([][]byte{}, lines[:lost]...), []byte("{\"type\":\"entry\",\"ki\x00\n")), lines[lost+1:]...), nil)
	require.NoError(t, os.WriteFile(path, damaged, 0o600))

	c2 := e.start(nil)
	resp, _ := loadSession(t, c2, acp.MethodSessionLoad, sid, cwd)
	acptest.MustResult(t, resp, nil)
	after := fileLines(t, path)
	require.Len(t, after, len(lines))
	for i := range lines {
		if i == lost {
			assert.Contains(t, string(after[i]), "interrupted", "the lost result is answered in place")
			continue
		}
		assert.Equal(t, string(lines[i]), string(after[i]), "record %d is kept byte for byte", i)
	}
	broken, err := os.ReadFile(path + ".broken")
	require.NoError(t, err)
	assert.Equal(t, damaged, broken, "the file as it was found is kept")
	assert.NotEqual(t, orig, broken)
	text, _ := say(t, c2, sid, "how many?")
	assert.Equal(t, "3 user messages so far", text)
}
