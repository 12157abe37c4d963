package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
)

type labelArgs struct {
	Name   string   `json:"name" jsonschema:"the label's name" schema:"minLength=1,maxLength=20"`
	Color  string   `json:"color,omitempty" schema:"enum=red|green"`
	Weight int      `json:"weight,omitempty" jsonschema:"how heavy" schema:"minimum=0,maximum=9"`
	Tags   []string `json:"tags,omitempty" schema:"maxItems=3,uniqueItems,items.minLength=2"`
	Parts  []struct {
		Text string `json:"text" schema:"minLength=1"`
	} `json:"parts,omitempty" schema:"minItems=1"`
	Hidden string `json:"-"`
}

// The schema a typed tool offers is inferred from its argument struct:
// names from json tags, descriptions from jsonschema tags, required
// unless omitempty, the schema tag's keywords, slices as arrays.
func TestATypedToolsSchemaIsInferredFromItsArguments(t *testing.T) {
	tool := agent.NewTool(agent.TypedTool[labelArgs]{Name: "label", Run: func(context.Context, labelArgs) (agent.ToolResult, error) {
		return agent.ToolResult{}, nil
	}})
	assert.JSONEq(t, `{
		"type": "object",
		"properties": {
			"name": {"type": "string", "description": "the label's name", "minLength": 1, "maxLength": 20},
			"color": {"type": "string", "enum": ["red", "green"]},
			"weight": {"type": "integer", "description": "how heavy", "minimum": 0, "maximum": 9},
			"tags": {"type": "array", "items": {"type": "string", "minLength": 2}, "maxItems": 3, "uniqueItems": true},
			"parts": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {"text": {"type": "string", "minLength": 1}},
				"required": ["text"], "additionalProperties": false}}
		},
		"required": ["name"],
		"additionalProperties": false
	}`, string(tool.Parameters))
	again := agent.SchemaFor[labelArgs]()
	assert.Same(t, &tool.Parameters[0], &again[0], "built once per type and shared")
	assert.Nil(t, tool.Describe, "no Describe: the session's default description")
}

// A typed tool's arguments are checked against the inferred schema before
// it runs, and it gets them decoded; what breaks the schema never reaches
// it and goes back to the model.
func TestATypedToolGetsOnlyArgumentsItsSchemaAccepts(t *testing.T) {
	tests := []struct {
		name, args string
		want       *labelArgs // nil: refused
		inResult   string
	}{
		{"valid", `{"name":"bug","color":"red","tags":["ui","db"],"parts":[{"text":"x"}]}`,
			&labelArgs{Name: "bug", Color: "red", Tags: []string{"ui", "db"}, Parts: []struct {
				Text string `json:"text" schema:"minLength=1"`
			}{{Text: "x"}}}, "labelled bug"},
		{"required missing", `{"color":"red"}`, nil, "name"},
		{"empty name", `{"name":""}`, nil, "/name"},
		{"not in the enum", `{"name":"a","color":"blue"}`, nil, "/color"},
		{"above the maximum", `{"name":"a","weight":10}`, nil, "/weight"},
		{"an item too short", `{"name":"a","tags":["x"]}`, nil, "/tags/0"},
		{"items not unique", `{"name":"a","tags":["ab","ab"]}`, nil, "/tags"},
		{"null is not an array", `{"name":"a","tags":null}`, nil, "/tags"},
		{"no parts", `{"name":"a","parts":[]}`, nil, "/parts"},
		{"unknown field", `{"name":"a","Hidden":"x"}`, nil, "Hidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []labelArgs
			var described []string
			tool := agent.NewTool(agent.TypedTool[labelArgs]{
				Name: "label", Description: "Label something.",
				Describe: func(a labelArgs) (agent.ToolCallInfo, error) {
					described = append(described, a.Name)
					return agent.ToolCallInfo{Kind: agent.ToolKindEdit, Title: "Label " + a.Name}, nil
				},
				Run: func(_ context.Context, a labelArgs) (agent.ToolResult, error) {
					got = append(got, a)
					return agent.ToolResult{Text: "labelled " + a.Name}, nil
				},
			})
			m := newFakeModel(calls(call("c1", "label", tt.args)), says("done"))
			s := newSession(t, m)
			require.NoError(t, s.Tools().Register(tool))
			_, err := s.Prompt(context.Background(), "label it")
			require.NoError(t, err)
			var out agent.Entry
			for _, e := range s.Transcript() {
				if e.Kind == agent.EntryToolOutput {
					out = e
				}
			}
			assert.Contains(t, out.Text, tt.inResult)
			if tt.want == nil {
				assert.Empty(t, got, "the tool must not run")
				assert.True(t, out.IsError)
				return
			}
			assert.Equal(t, []labelArgs{*tt.want}, got)
			assert.Equal(t, []string{tt.want.Name}, described)
			assert.False(t, out.IsError)
		})
	}
}

// Arguments the schema accepts but Go cannot hold (1.0 is an integer to
// JSON Schema, not to encoding/json) are an error result, not a panic.
func TestATypedToolReportsArgumentsItCannotDecode(t *testing.T) {
	tool := agent.NewTool(agent.TypedTool[labelArgs]{Name: "label", Run: func(context.Context, labelArgs) (agent.ToolResult, error) {
		t.Error("the tool must not run")
		return agent.ToolResult{}, nil
	}})
	_, err := tool.Run(context.Background(), json.RawMessage(`{"name":"a","weight":1.5}`))
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "invalid arguments: "), err.Error())
}

type badTagArgs struct {
	N int `json:"n" schema:"maxLength=x"`
}

type unknownKeywordArgs struct {
	S string `json:"s" schema:"pattern=^a"`
}

type enumOnIntArgs struct {
	N int `json:"n" schema:"enum=1|2"`
}

type itemsOnStringArgs struct {
	S string `json:"s" schema:"items.minLength=1"`
}

type chanArgs struct {
	C chan int `json:"c"`
}

// A schema that cannot be built is a mistake in the program: NewTool
// panics, naming the type and the field.
func TestATypedToolWithABadSchemaPanics(t *testing.T) {
	assert.PanicsWithValue(t, `agent: the argument schema of agent_test.badTagArgs: N: schema tag "maxLength=x": maxLength=x: not a count`,
		func() { agent.SchemaFor[badTagArgs]() })
	assert.Panics(t, func() { agent.SchemaFor[unknownKeywordArgs]() }, "an unknown keyword")
	assert.Panics(t, func() { agent.SchemaFor[enumOnIntArgs]() }, "an enum on a non-string")
	assert.Panics(t, func() { agent.SchemaFor[itemsOnStringArgs]() }, "items. on a non-array")
	assert.Panics(t, func() { agent.SchemaFor[chanArgs]() }, "a type JSON Schema cannot describe")
	assert.Panics(t, func() { agent.SchemaFor[string]() }, "arguments are an object")
}
