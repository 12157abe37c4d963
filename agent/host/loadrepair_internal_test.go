package host

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
)

// Entries in a compact notation: "u" user, "a" assistant text,
// "c:id1,id2" calls (args "{}"; "c!:id" invalid arguments), "o:id" result.
func parseEntries(spec string) []agent.Entry {
	var out []agent.Entry
	for _, f := range strings.Fields(spec) {
		kind, rest, _ := strings.Cut(f, ":")
		switch kind {
		case "u":
			out = append(out, agent.Entry{Kind: agent.EntryUser, Content: []llm.Part{llm.TextPart("q")}})
		case "a":
			out = append(out, agent.Entry{Kind: agent.EntryAssistant, Content: []llm.Part{llm.TextPart("t")}})
		case "c", "c!":
			var calls []llm.ToolCall
			for _, id := range strings.Split(rest, ",") {
				args := "{}"
				if kind == "c!" {
					args = "{"
				}
				calls = append(calls, llm.ToolCall{ID: id, Name: "t", Arguments: args})
			}
			out = append(out, agent.Entry{Kind: agent.EntryToolCalls, ToolCalls: calls})
		case "o":
			out = append(out, agent.Entry{Kind: agent.EntryToolOutput, ToolCallID: rest, ToolName: "t", Text: "r"})
		}
	}
	return out
}

func showEntries(es []agent.Entry) string {
	var parts []string
	for _, e := range es {
		switch e.Kind {
		case agent.EntryUser:
			parts = append(parts, "u")
		case agent.EntryAssistant:
			parts = append(parts, "a")
		case agent.EntryToolCalls:
			var ids []string
			for _, c := range e.ToolCalls {
				ids = append(ids, c.ID)
			}
			parts = append(parts, "c:"+strings.Join(ids, ","))
		case agent.EntryToolOutput:
			p := "o:" + e.ToolCallID
			if e.Text == InterruptedToolResult {
				p = "i:" + e.ToolCallID
			}
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}

func TestPlanLoadRepair(t *testing.T) {
	tests := []struct {
		name, in, want string
		appendOnly     bool
	}{
		{"clean", "u a c:1,2 o:2 o:1 a u a", "u a c:1,2 o:2 o:1 a u a", true},
		{"torn after the call", "u a c:1", "u a c:1 i:1", true},
		{"torn after one of two results", "u c:1,2 o:1", "u c:1,2 o:1 i:2", true},
		{"a lost result mid-file", "u c:1,2 o:2 a u a", "u c:1,2 o:2 i:1 a u a", false},
		{"two interrupted steps", "u c:1 u c:2", "u c:1 i:1 u c:2 i:2", false},
		{"a stray result inside a step drops the step", "u a c:1,2 o:1 o:9 o:2 a", "u a a", false},
		{"a second result for a call drops the step", "u c:1,2 o:1 o:1 a", "u a", false},
		{"invalid arguments drop the step and its results", "u a c!:1 o:1 u", "u a u", false},
		{"duplicate ids drop the step", "u c:1,1 o:1 u", "u u", false},
		{"empty id drops the step", "u c: u", "u u", false},
		{"a result after a complete step is dropped", "u c:1 o:1 o:1 a", "u c:1 o:1 a", false},
		{"a result with no step is dropped", "u o:1 a", "u a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries := parseEntries(tt.in)
			r := planLoadRepair(entries)
			recs := make([]json.RawMessage, 0, len(entries)+1)
			starts := make([]int, len(entries))
			recs = append(recs, json.RawMessage(`{"type":"mode","mode":"default"}`)) // a state record stays
			for i := range entries {
				starts[i] = len(recs)
				data, err := json.Marshal(entryRecord(&entries[i]))
				require.NoError(t, err)
				recs = append(recs, data)
			}
			outRecs, out, outStarts, err := r.applyTo(recs, entries, starts)
			require.NoError(t, err)
			assert.Equal(t, tt.want, showEntries(out))
			assert.Equal(t, tt.in != tt.want, r.changed())
			if r.changed() {
				assert.Equal(t, tt.appendOnly, r.appendOnly())
			}
			assert.Equal(t, string(recs[0]), string(outRecs[0]))
			for i, at := range outStarts {
				var rec record
				require.NoError(t, json.Unmarshal(outRecs[at], &rec))
				assert.Equal(t, showEntries(out[i:i+1]), showEntries([]agent.Entry{rec.entry()}), "entry %d is at record %d", i, at)
			}
			// The sanitizer has nothing left to do.
			_, changed := compact.Sanitize(agent.Messages(out))
			assert.False(t, changed, fmt.Sprint(showEntries(out)))
		})
	}
}
