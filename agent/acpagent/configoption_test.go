package acpagent_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
)

// optionView is a config option reduced to what a user sees.
type optionView struct {
	ID, Category, Current string
	Values                []string
}

func optionViews(opts []acp.SessionConfigOption) []optionView {
	var out []optionView
	for _, o := range opts {
		v := optionView{ID: string(o.ID), Category: string(o.Category), Current: string(o.Select.CurrentValue)}
		for _, c := range o.Select.Options.Options {
			v.Values = append(v.Values, string(c.Value))
		}
		out = append(out, v)
	}
	return out
}

// twoProviders starts an agent whose choices are an OpenAI-compatible
// model (default, no reasoning), an OpenAI reasoning model on the same
// server, an Anthropic model on an Anthropic server, and a model whose key
// is missing.
func twoProviders(t *testing.T) (*acptest.Client, *openAIServer, *bodies) {
	t.Helper()
	oai := newOpenAIServer(t, func(w http.ResponseWriter, r *http.Request, _ int) {
		sse(w, []string{textChunk("from openai"), finishChunk("stop")}, true)
	})
	var ab bodies
	reply := anthropicEvents(
		`{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","usage":{"input_tokens":5,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"from anthropic"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`)
	ant := ab.Serve(t, "text/event-stream", reply, reply, reply)
	c := client(t, oai, map[string]string{"OPENAI_API_KEY": testKey, "WORK_ANTHROPIC_KEY": "ak"}, func(cfg *acpagent.Config) {
		cfg.Model = "openai/test-model"
		cfg.Choices = []acpagent.ModelChoice{
			{Spec: "openai/test-model", Name: "Test model"},
			{Spec: "openai/o4-mini", Name: "o4-mini"},
			{Spec: "anthropic/claude-sonnet-4-5", Name: "Claude", BaseURL: ant.URL, APIKeyEnv: "WORK_ANTHROPIC_KEY", ThoughtLevel: "low"},
			{Spec: "anthropic/claude-opus-4-5", Name: "Opus", APIKeyEnv: "MISSING_KEY"},
		}
	})
	return c, oai, &ab
}

func setOption(c *acptest.Client, sid, id, value string) acptest.Message {
	v := acp.SessionConfigValueId(value)
	resp, _ := c.Call(acp.MethodSessionSetConfigOption, &acp.SetSessionConfigOptionRequest{
		SessionID: acp.SessionId(sid), ConfigID: acp.SessionConfigId(id), Value: acp.SessionConfigOptionValue{ValueID: &v}})
	return resp
}

func TestConfigOptionsSwitchModelAndThoughtLevelMidSession(t *testing.T) {
	c, oai, ab := twoProviders(t)
	c.Initialize(nil)
	resp, _ := c.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{}})
	var ns acp.NewSessionResponse
	acptest.MustResult(t, resp, &ns)
	models := []string{"openai/test-model", "openai/o4-mini", "anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-5"}
	mode := optionView{"mode", "mode", "default", []string{"read-only", "default", "accept-edits", "full-access"}}
	assert.Equal(t, []optionView{mode, {"model", "model", "openai/test-model", models}}, optionViews(ns.ConfigOptions),
		"a model without reasoning has no thought_level option")
	for _, o := range ns.ConfigOptions[1].Select.Options.Options {
		if o.Value == "anthropic/claude-opus-4-5" {
			assert.Contains(t, o.Description, "unavailable: MISSING_KEY is not set (the apiKeyEnv of model anthropic/claude-opus-4-5", "an unusable model says why")
		}
	}
	sid := string(ns.SessionID)

	say := func(text string) string {
		t.Helper()
		resp, updates := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock(text)))
		acptest.MustResult(t, resp, nil)
		var out string
		for _, m := range updates {
			if ch := m.Update(t).Update.AgentMessageChunk; ch != nil {
				out += ch.Content.Text.Text
			}
		}
		return out
	}
	assert.Equal(t, "from openai", say("one"))

	// To the OpenAI reasoning model: thought_level appears at medium.
	var set acp.SetSessionConfigOptionResponse
	acptest.MustResult(t, setOption(c, sid, "model", "openai/o4-mini"), &set)
	assert.Equal(t, []optionView{mode, {"model", "model", "openai/o4-mini", models},
		{"thought_level", "thought_level", "medium", []string{"low", "medium", "high"}}}, optionViews(set.ConfigOptions))
	acptest.MustResult(t, setOption(c, sid, "thought_level", "high"), &set)
	assert.Equal(t, "high", string(set.ConfigOptions[2].Select.CurrentValue))
	assert.Equal(t, "from openai", say("two"))
	body := oai.Request(t, 1).Body
	assert.Equal(t, "o4-mini", body["model"])
	assert.Equal(t, "high", body["reasoning_effort"])
	assert.Len(t, body["messages"], 4, "the transcript is kept across the switch")

	// To Anthropic: its own levels, starting at the configured one.
	acptest.MustResult(t, setOption(c, sid, "model", "anthropic/claude-sonnet-4-5"), &set)
	assert.Equal(t, []optionView{mode, {"model", "model", "anthropic/claude-sonnet-4-5", models},
		{"thought_level", "thought_level", "low", []string{"off", "low", "medium", "high"}}}, optionViews(set.ConfigOptions))
	var levelNames []string
	for _, o := range set.ConfigOptions[2].Select.Options.Options {
		levelNames = append(levelNames, o.Name)
	}
	assert.Equal(t, []string{"Off", "Low", "Medium", "High"}, levelNames, "each level has its name for the user")
	assert.Equal(t, "from anthropic", say("three"))
	req := ab.Request(t, 0)
	assert.Equal(t, "claude-sonnet-4-5", req["model"])
	assert.Equal(t, map[string]any{"type": "enabled", "budget_tokens": float64(2048)}, req["thinking"])
	acptest.MustResult(t, setOption(c, sid, "thought_level", "off"), &set)
	assert.Equal(t, "from anthropic", say("four"))
	assert.NotContains(t, ab.Request(t, 1), "thinking")

	// Back to a model without levels: the option disappears.
	acptest.MustResult(t, setOption(c, sid, "model", "openai/test-model"), &set)
	assert.Equal(t, []optionView{mode, {"model", "model", "openai/test-model", models}}, optionViews(set.ConfigOptions))
}

func TestConfigOptionBadInputChangesNothing(t *testing.T) {
	c, oai, _ := twoProviders(t)
	c.Initialize(nil)
	sid := c.NewSession("/tmp")
	tests := []struct {
		name, id, value string
		code            int64
		msg             string
	}{
		{"unknown option", "temperature", "1", acp.CodeInvalidParams, `unknown config option "temperature"`},
		{"unknown model", "model", "openai/gpt-99", acp.CodeInvalidParams, `invalid params: value: unknown model "openai/gpt-99"; the models are `},
		{"unusable model", "model", "anthropic/claude-opus-4-5", acp.CodeInvalidParams, "MISSING_KEY is not set (the apiKeyEnv of model anthropic/claude-opus-4-5"},
		{"thought level on a model without levels", "thought_level", "high", acp.CodeInvalidParams, "has no thought levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := setOption(c, sid, tt.id, tt.value)
			require.NotNil(t, resp.Error, "%s", resp.Raw)
			assert.Equal(t, tt.code, resp.Error.Code)
			assert.Contains(t, resp.Error.Message, tt.msg)
		})
	}
	t.Run("boolean value for a select option", func(t *testing.T) {
		b := true
		resp, _ := c.Call(acp.MethodSessionSetConfigOption, &acp.SetSessionConfigOptionRequest{
			SessionID: acp.SessionId(sid), ConfigID: "model", Value: acp.SessionConfigOptionValue{Bool: &b}})
		require.NotNil(t, resp.Error)
		assert.Equal(t, int64(acp.CodeInvalidParams), resp.Error.Code)
	})
	t.Run("unknown session", func(t *testing.T) {
		resp := setOption(c, "no-such-session", "model", "openai/o4-mini")
		require.NotNil(t, resp.Error)
		assert.Equal(t, int64(acp.CodeResourceNotFound), resp.Error.Code)
	})
	t.Run("bad level for a model with levels", func(t *testing.T) {
		acptest.MustResult(t, setOption(c, sid, "model", "openai/o4-mini"), nil)
		resp := setOption(c, sid, "thought_level", "extreme")
		require.NotNil(t, resp.Error)
		assert.Contains(t, resp.Error.Message, "low, medium, high")
		acptest.MustResult(t, setOption(c, sid, "model", "openai/test-model"), nil)
	})
	// After all that, the session still talks to its model.
	resp, _ := c.Call(acp.MethodSessionPrompt, prompt(sid, acp.TextBlock("hi")))
	acptest.MustResult(t, resp, nil)
	assert.Equal(t, "test-model", oai.Request(t, 0).Body["model"])
}

func TestConfigFileChoicesAreValidated(t *testing.T) {
	a := acpagent.New(acpagent.Config{Config: host.Config{Model: "openai/a", Getenv: func(string) string { return "k" },
		Choices: []acpagent.ModelChoice{{Spec: "openai/a"}, {Spec: "openai/a"}}}})
	resp, err := a.Initialize(context.Background(), &acp.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	require.Len(t, resp.AuthMethods, 1, "a broken model list is reported like an unusable model")
	assert.Contains(t, resp.AuthMethods[0].Agent.Description, `"openai/a" is listed twice`)

	a = acpagent.New(acpagent.Config{Config: host.Config{Model: "openai/gpt-4o", Getenv: func(string) string { return "k" },
		Choices: []acpagent.ModelChoice{{Spec: "openai/gpt-4o", ThoughtLevel: "high"}}}})
	resp, err = a.Initialize(context.Background(), &acp.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	require.Len(t, resp.AuthMethods, 1)
	assert.Contains(t, resp.AuthMethods[0].Agent.Description, "has no thought levels")
}

func TestForkKeepsTheChosenModel(t *testing.T) {
	m1, m2 := newFakeModel(says("a")), newFakeModel(says("b"))
	s := newSession(t, m1)
	s.SetModel(agent.SessionModel{ID: "fake/two", Model: m2, Name: "two", ReasoningEffort: "high"})
	f, err := s.Fork()
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	_, err = f.Prompt(context.Background(), "hi")
	require.NoError(t, err)
	assert.Len(t, m2.Requests(), 1)
	assert.Empty(t, m1.Requests())
	assert.Equal(t, "high", m2.Request(t, 0).ReasoningEffort)
	assert.Equal(t, "fake/two", f.CurrentModel().ID)
}
