package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm/anthropic"
	"github.com/acp-agent/acp-agent/agent/llm/openai"
)

func weatherTool(calls *[]string) agent.Tool {
	return agent.Tool{
		Name: "get_weather", Description: "Weather for a city.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		Run: func(_ context.Context, args json.RawMessage) (agent.ToolResult, error) {
			*calls = append(*calls, string(args))
			return agent.ToolResult{Text: "sunny, 21C"}, nil
		},
	}
}

// TestToolLoopAnthropic: thinking + tool_use, the tool runs, and the second
// request echoes the signed thinking, the tool_use and its tool_result.
func TestToolLoopAnthropic(t *testing.T) {
	var b bodies
	first := anthropicEvents(
		`{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"claude-x","usage":{"input_tokens":20,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Need the weather."}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG-1"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"ris\"}"}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}`,
		`{"type":"message_stop"}`,
	)
	second := anthropicEvents(
		`{"type":"message_start","message":{"id":"m2","type":"message","role":"assistant","content":[],"model":"claude-x","usage":{"input_tokens":60,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"It is sunny in Paris."}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":8}}`,
		`{"type":"message_stop"}`,
	)
	srv := b.Serve(t, "text/event-stream", first, second)
	var calls []string
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	s := agent.NewSession(agent.SessionConfig{CWD: "/tmp", ModelConfig: agent.ModelConfig{ModelName: "claude-x", Model: anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: &http.Client{Transport: transport}})}})
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Tools().Register(weatherTool(&calls)))

	res, err := s.Prompt(context.Background(), "Weather in Paris?")
	require.NoError(t, err)
	assert.Equal(t, "It is sunny in Paris.", res.Text)
	assert.Equal(t, []string{`{"city": "Paris"}`}, calls)

	msgs := b.Request(t, 1)["messages"].([]any)
	require.Len(t, msgs, 3)
	assistant, _ := json.Marshal(msgs[1])
	assert.JSONEq(t, `{"role":"assistant","content":[
		{"type":"thinking","thinking":"Need the weather.","signature":"SIG-1"},
		{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]}`, string(assistant))
	user, _ := json.Marshal(msgs[2])
	assert.JSONEq(t, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"sunny, 21C","cache_control":{"type":"ephemeral"}}]}`, string(user),
		"the newest block is the conversation's cache breakpoint")
	tools, _ := json.Marshal(b.Request(t, 0)["tools"])
	assert.Contains(t, string(tools), `"name":"get_weather"`)
}

// TestToolLoopOpenAI: a fragmented tool call, the tool runs, and the
// second request carries the assistant tool_calls and the tool message.
func TestToolLoopOpenAI(t *testing.T) {
	var b bodies
	chunk := func(delta string, finish string) string {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		return `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + `}]}` + "\n\n"
	}
	first := chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}`, "") +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}`, "") +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`, "") +
		chunk(`{}`, "tool_calls") + "data: [DONE]\n\n"
	second := chunk(`{"content":"It is sunny in Paris."}`, "") + chunk(`{}`, "stop") + "data: [DONE]\n\n"
	srv := b.Serve(t, "text/event-stream", first, second)
	var calls []string
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	s := agent.NewSession(agent.SessionConfig{CWD: "/tmp", ModelConfig: agent.ModelConfig{ModelName: "gpt-x", Model: openai.New(openai.Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: &http.Client{Transport: transport}})}})
	t.Cleanup(func() { s.Close() })
	require.NoError(t, s.Tools().Register(weatherTool(&calls)))

	res, err := s.Prompt(context.Background(), "Weather in Paris?")
	require.NoError(t, err)
	assert.Equal(t, "It is sunny in Paris.", res.Text)
	assert.Equal(t, []string{`{"city":"Paris"}`}, calls)
	msgs := b.Request(t, 1)["messages"].([]any)
	require.Len(t, msgs, 4) // system, user, assistant(tool_calls), tool
	assistant, _ := json.Marshal(msgs[2])
	assert.JSONEq(t, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`, string(assistant))
	tool := msgs[3].(map[string]any)
	assert.Equal(t, "tool", tool["role"])
	assert.Equal(t, "call_a", tool["tool_call_id"])
	assert.Equal(t, "sunny, 21C", tool["content"])
}
