package llm

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func argDelta(index int, id, name, args string) Event {
	return Event{Kind: EventToolCallDelta, ToolCall: &ToolCallDelta{Index: index, ID: id, Name: name, ArgumentsDelta: args}}
}

func TestAccumulatorCollectsInterleavedCalls(t *testing.T) {
	a := NewAccumulator(Limits{})
	for _, ev := range []Event{
		{Kind: EventTextDelta, Text: "Hel"}, {Kind: EventReasoningDelta, Text: "hm"}, {Kind: EventTextDelta, Text: "lo"},
		argDelta(0, "a", "read", `{"p":`), argDelta(1, "b", "write", `{}`), argDelta(0, "", "", `1}`),
		{Kind: EventUsage, Usage: &Usage{}}, {Kind: EventFinish, Finish: FinishToolCalls},
	} {
		require.NoError(t, a.Add(ev))
	}
	assert.Equal(t, "Hello", a.Text())
	assert.Equal(t, "hm", a.Reasoning())
	assert.Equal(t, []ToolCall{{ID: "a", Name: "read", Arguments: `{"p":1}`}, {ID: "b", Name: "write", Arguments: `{}`}}, a.ToolCalls())
}

func TestAccumulatorLimits(t *testing.T) {
	tests := []struct {
		name     string
		limits   Limits
		events   []Event
		setting  string
		position int
		text     string
		args     []string
	}{
		{"arguments of all calls count together", Limits{MaxToolArgumentBytes: 6},
			[]Event{argDelta(0, "a", "x", "1234"), argDelta(1, "b", "y", "56"), argDelta(0, "", "", "7")},
			"maxToolArgumentBytes", 0, "", []string{"1234", "56"}},
		{"the call streaming is named", Limits{MaxToolArgumentBytes: 4},
			[]Event{argDelta(0, "a", "x", "12"), argDelta(1, "b", "y", "345")},
			"maxToolArgumentBytes", 1, "", []string{"12", ""}},
		{"text and reasoning count together", Limits{MaxTextBytes: 5},
			[]Event{{Kind: EventReasoningDelta, Text: "abc"}, {Kind: EventTextDelta, Text: "de"}, {Kind: EventTextDelta, Text: "f"}},
			"maxResponseTextBytes", 0, "de", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAccumulator(tt.limits)
			var err error
			for _, ev := range tt.events {
				if err = a.Add(ev); err != nil {
					break
				}
			}
			var le *LimitError
			require.ErrorAs(t, err, &le)
			assert.True(t, errors.Is(err, ErrResponseTooLarge))
			assert.Equal(t, tt.setting, le.Setting)
			if tt.setting == "maxToolArgumentBytes" {
				assert.Equal(t, tt.position, le.Position)
			} else {
				assert.Nil(t, le.ToolCall)
			}
			assert.Equal(t, tt.text, a.Text())
			var args []string
			for _, c := range a.ToolCalls() {
				args = append(args, c.Arguments)
			}
			assert.Equal(t, tt.args, args, "nothing of the piece past the limit is kept")
			assert.Error(t, a.Add(Event{Kind: EventTextDelta, Text: "x"}), "the response is over")
		})
	}
}

func TestAccumulatorNegativeLimitIsUnlimited(t *testing.T) {
	a := NewAccumulator(Limits{MaxTextBytes: -1, MaxToolArgumentBytes: -1})
	big := string(make([]byte, DefaultMaxTextBytes+1))
	require.NoError(t, a.Add(Event{Kind: EventTextDelta, Text: big}))
	require.NoError(t, a.Add(argDelta(0, "a", "x", big)))
}
