package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/internal/testkit"
)

const readFileSchema = `{"type":"object","properties":{"path":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`

// TestToolArgumentsAreValidatedBeforeTheToolRuns: arguments that are not
// JSON or break the tool's schema go back to the model as an error result
// naming the problem; the tool never runs.
func TestToolArgumentsAreValidatedBeforeTheToolRuns(t *testing.T) {
	tests := []struct {
		name    string
		args    string
		runs    bool
		wantErr []string // substrings of the result the model gets
	}{
		{"valid", `{"path":"/a.go","limit":5}`, true, nil},
		{"empty arguments mean {} and miss a required field", ``, false, []string{"invalid arguments for read_file", "path"}},
		{"not JSON", `{"path": "/a.go"`, false, []string{"not valid JSON"}},
		{"two JSON values", `{"path":"/a"} {}`, false, []string{"not valid JSON"}},
		{"not an object", `["/a.go"]`, false, []string{"must be a JSON object"}},
		{"wrong type", `{"path":7}`, false, []string{"at /path", "string"}},
		{"below minimum", `{"path":"/a","limit":0}`, false, []string{"at /limit"}},
		{"unexpected field", `{"path":"/a","mode":"rw"}`, false, []string{"mode"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, m, s := callOnce(t, "read_file", readFileSchema, tt.args)
			var out agent.Entry
			for _, e := range s.Transcript() {
				if e.Kind == agent.EntryToolOutput {
					out = e
				}
			}
			if tt.runs {
				assert.Equal(t, []string{"read_file:" + tt.args}, rt.Calls())
				assert.False(t, out.IsError)
				return
			}
			assert.Empty(t, rt.Calls(), "the tool must not run")
			assert.True(t, out.IsError)
			for _, w := range tt.wantErr {
				assert.Contains(t, out.Text, w)
			}
			// The model got the error as the tool result.
			last := m.Request(t, 1).Messages
			assert.Contains(t, last[len(last)-1].Text(), tt.wantErr[0])
		})
	}
}

// callOnce registers a recording tool with the schema in a session whose
// model calls it once with args, then says "done", and runs that turn.
func callOnce(t *testing.T, name, schema, args string) (*recordingTool, *testkit.FakeModel, *agent.Session) {
	t.Helper()
	rt := &recordingTool{}
	m := newFakeModel(calls(call("c1", name, args)), says("done"))
	s := newSession(t, m)
	tool := rt.Tool(name, nil)
	tool.Parameters = json.RawMessage(schema)
	require.NoError(t, s.Tools().Register(tool))
	res, err := s.Prompt(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	return rt, m, s
}

func TestRegisterRefusesAnInvalidSchema(t *testing.T) {
	r := agent.NewToolRegistry()
	err := r.Register(agent.Tool{Name: "bad", Parameters: json.RawMessage(`{"type":"nonsense"}`),
		Run: func(context.Context, json.RawMessage) (agent.ToolResult, error) { return agent.ToolResult{}, nil }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad")
	assert.Empty(t, r.Descriptors())
}
