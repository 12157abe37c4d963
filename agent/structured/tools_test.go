package structured

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// addTool is the seed's async `add` tool.
func addTool(calls *atomic.Int32) Tool {
	return Tool{
		Name:        "add",
		Description: "Add two integers.",
		Args:        Object(Req("a", Integer("first addend")), Req("b", Integer("second addend"))),
		Run: func(_ context.Context, args map[string]any) (any, error) {
			calls.Add(1)
			return args["a"].(float64) + args["b"].(float64), nil
		},
	}
}

// toolModel plays the model of the seed's tool test. Asked to plan, it
// picks "add" for the numbers in the input (one of them as a string, as
// models do). Asked to answer, it reads the injected action_results from
// the prompt and answers with the tool's result, so the final value can
// only be right if the results were injected.
type toolModel struct{ requests [][]llm.Message }

func (m *toolModel) Complete(_ context.Context, msgs []llm.Message) (string, error) {
	m.requests = append(m.requests, msgs)
	prompt := msgs[len(msgs)-1].Text()
	if strings.Contains(prompt, "[AVAILABLE_TOOLS]:") {
		if !strings.Contains(prompt, "- add: Add two integers.") {
			return "[]", nil // no usable tool offered
		}
		return "I'll use the add tool.\n```json\n" +
			`[{"tool": "add", "args": {"a": "3456", "b": 7890}, "purpose": "calculate"}]` + "\n```", nil
	}
	_, after, ok := strings.Cut(prompt, "[ACTION_RESULTS]:\n")
	if !ok {
		return `{"result": 0}`, nil // guessing without the tool
	}
	var results []ActionResult
	if err := json.NewDecoder(bytes.NewReader([]byte(after))).Decode(&results); err != nil {
		return "", fmt.Errorf("toolModel: bad action_results: %w", err)
	}
	return fmt.Sprintf(`{"result": %v}`, results[0].Result), nil
}

func calcPrompt() *Prompt {
	return &Prompt{
		Input:  "Use tool to calculate 3456 + 7890",
		Output: Object(Req("result", Integer("the calculation result"))),
	}
}

// Seed 004 §3: a tool offered to the agent (use_tool) can be chosen by tool
// planning, and when the input asks to use a tool to calculate, the final
// structured result equals the tool's computed value, via a second request
// with the action_results injected.
func TestSeed004_ToolPlanningWithInjectedResults(t *testing.T) {
	var calls atomic.Int32
	m := &toolModel{}
	tools := []Tool{addTool(&calls)}
	v, results, err := RequestWithTools(context.Background(), m, calcPrompt(), tools)
	require.NoError(t, err)

	require.Len(t, results, 1)
	assert.Equal(t, "add", results[0].Tool)
	assert.Equal(t, 11346.0, results[0].Result, "the planned string argument was coerced to an integer")
	assert.Empty(t, results[0].Error)
	assert.Equal(t, int32(1), calls.Load())
	assert.Equal(t, map[string]any{"result": results[0].Result}, v, "final result equals the tool's computed value")

	// Two requests: the plan, then the answer with the results injected.
	require.Len(t, m.requests, 2)
	plan := m.requests[0][len(m.requests[0])-1].Text()
	assert.Contains(t, plan, "[INPUT]:\nUse tool to calculate 3456 + 7890")
	assert.Contains(t, plan, "\"tool\": <Literal[add]>")
	final := m.requests[1][len(m.requests[1])-1].Text()
	assert.Contains(t, final, "[ACTION_RESULTS]:\n[\n  {\n    \"tool\": \"add\"")
	assert.Contains(t, final, "\"result\": 11346")
	assert.NotContains(t, final, "[AVAILABLE_TOOLS]")
}

// Seed 004 §3: only offered tools can be planned: a plan naming another
// tool fails validation.
func TestSeed004_OnlyOfferedToolsArePlanned(t *testing.T) {
	m := ModelFunc(func(context.Context, []llm.Message) (string, error) {
		return `[{"tool": "add", "args": {"a": 1, "b": 2}}]`, nil
	})
	other := Tool{Name: "mul", Run: func(context.Context, map[string]any) (any, error) { return 0, nil }}
	_, err := Plan(context.Background(), m, calcPrompt(), []Tool{other})
	assert.ErrorIs(t, err, ErrSchemaMismatch)
	assert.ErrorContains(t, err, "/0/tool")

	// No tools: no planning request at all.
	calls, err := Plan(context.Background(), m, calcPrompt(), nil)
	require.NoError(t, err)
	assert.Empty(t, calls)
}

func TestPlanPromptLayout(t *testing.T) {
	var n atomic.Int32
	p := calcPrompt()
	p.Instruct = "answer in JSON"
	q := PlanPrompt(p, []Tool{addTool(&n), {Name: "now", Description: "Current\ntime."}})
	text, err := q.ToText()
	require.NoError(t, err)
	golden(t, "plan_prompt.golden", text)
	assert.Equal(t, "json", q.Format())
}

func TestRunToolsErrors(t *testing.T) {
	var n atomic.Int32
	boom := Tool{Name: "boom", Run: func(context.Context, map[string]any) (any, error) { return nil, errors.New("kaput") }}
	tools := []Tool{addTool(&n), boom, {Name: "norun"}}
	ctx := context.Background()
	res := RunTools(ctx, tools, []ToolCall{
		{Tool: "add", Args: map[string]any{"a": 1, "b": "x"}},
		{Tool: "missing"},
		{Tool: "boom"},
		{Tool: "norun"},
		{Tool: "add", Args: map[string]any{"a": 2, "b": 3}},
	})
	require.Len(t, res, 5)
	assert.Contains(t, res[0].Error, "/b: expected integer")
	assert.Contains(t, res[1].Error, ErrUnknownTool.Error())
	assert.Contains(t, res[2].Error, "kaput")
	assert.Contains(t, res[3].Error, "no Run function")
	assert.Equal(t, 5.0, res[4].Result)
	assert.Equal(t, int32(1), n.Load())

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	res = RunTools(cctx, tools, []ToolCall{{Tool: "add", Args: map[string]any{"a": 1, "b": 1}}})
	assert.Equal(t, context.Canceled.Error(), res[0].Error)
}

func TestInjectResultsDoesNotModifyPrompt(t *testing.T) {
	p := calcPrompt()
	q := InjectResults(p, []ActionResult{{Tool: "add", Result: 3}})
	assert.Empty(t, p.Sections)
	require.Len(t, q.Sections, 1)
	assert.Equal(t, "action_results", q.Sections[0].Title)
}

func TestRequestWithoutToolsOrOutput(t *testing.T) {
	m := &toolModel{}
	// The model plans nothing without the add tool: the prompt is sent as is.
	none := Tool{Name: "noop", Run: func(context.Context, map[string]any) (any, error) { return nil, nil }}
	v, results, err := RequestWithTools(context.Background(), m, calcPrompt(), []Tool{none})
	require.NoError(t, err)
	assert.Nil(t, results)
	assert.Equal(t, map[string]any{"result": 0.0}, v)

	text, err := Request(context.Background(), ModelFunc(func(context.Context, []llm.Message) (string, error) {
		return "# Title", nil
	}), &Prompt{Input: "write"})
	require.NoError(t, err)
	assert.Equal(t, "# Title", text)

	_, err = Request(context.Background(), ModelFunc(func(context.Context, []llm.Message) (string, error) {
		return "", errors.New("offline")
	}), &Prompt{Input: "write"})
	assert.ErrorContains(t, err, "offline")
}
