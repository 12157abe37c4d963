package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// Issue 29: plan operations through the binary. The update_plan tool's
// plan goes to a client with clientCapabilities.plan as plan_update
// (items, under the session's one plan id) and its clearing as
// plan_removed of that id; a client without the capability gets the v1
// plan update, an empty one when it is cleared, byte for byte what it got
// before plan operations existed. acptest checks every update against the
// SDK 2.4.0 schema (plan_update and plan_removed against the unstable
// file) and that none goes to a client that did not advertise it.
func TestBinaryPlanOperations(t *testing.T) {
	calls := []modelCall{
		{"update_plan", map[string]any{"entries": []map[string]any{
			{"content": "Read the code", "status": "completed"}, {"content": "Fix it", "status": "in_progress", "priority": "high"}}}},
		{"update_plan", map[string]any{"entries": []map[string]any{}}},
	}
	for _, planOps := range []bool{true, false} {
		t.Run(map[bool]string{true: "with plan operations", false: "without"}[planOps], func(t *testing.T) {
			model := newScriptedModel(t, "openai", calls...)
			p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}, "--model", "openai/test-model")
			caps := &acp.ClientCapabilities{}
			if planOps {
				caps.Plan = &acp.PlanCapabilities{}
			}
			p.Initialize(caps)
			sid := p.NewSession(t.TempDir())
			resp, before := p.Call(acp.MethodSessionPrompt, promptReq(sid, "plan and fix"))
			acptest.MustResult(t, resp, nil)
			var got []string
			for _, m := range before {
				if m.Method != acp.MethodSessionUpdate {
					continue
				}
				u := m.Update(t).Update
				switch {
				case u.PlanUpdate != nil:
					require.NotNil(t, u.PlanUpdate.Plan.Items)
					it := u.PlanUpdate.Plan.Items
					var entries []string
					for _, e := range it.Entries {
						entries = append(entries, e.Content+"/"+string(e.Status)+"/"+string(e.Priority))
					}
					got = append(got, "plan_update "+it.PlanID+" "+strings.Join(entries, ","))
				case u.PlanRemoved != nil:
					got = append(got, "plan_removed "+u.PlanRemoved.PlanID)
				case u.Plan != nil:
					got = append(got, "plan "+string(mustJSON(t, u.Plan.Entries)))
				}
			}
			if planOps {
				id := "plan-" + sid
				assert.Equal(t, []string{
					"plan_update " + id + " Read the code/completed/medium,Fix it/in_progress/high",
					"plan_removed " + id,
				}, got)
				return
			}
			assert.Equal(t, []string{
				`plan [{"content":"Read the code","priority":"medium","status":"completed"},{"content":"Fix it","priority":"high","status":"in_progress"}]`,
				"plan []",
			}, got)
		})
	}
}

// Issue 29: a client-supplied systemPrompt through the binary. Advertised
// by sessionCapabilities.systemPrompt (append, and override); appended,
// the client's text comes last, under its heading, after the agent's own
// instructions and the project's rules; overriding, it replaces the
// agent's instructions, and the project's rules still reach the model.
func TestBinaryClientSystemPrompt(t *testing.T) {
	for _, mode := range []string{acp.SystemPromptAppend, acp.SystemPromptOverride} {
		t.Run(mode, func(t *testing.T) {
			model := newScriptedModel(t, "openai")
			p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"}, "--model", "openai/test-model")
			init := p.Initialize(nil)
			caps := init.AgentCapabilities.SessionCapabilities
			require.NotNil(t, caps.SystemPrompt, "sessionCapabilities.systemPrompt")
			require.NotNil(t, caps.SystemPrompt.Mode)
			require.NotNil(t, caps.SystemPrompt.Mode.Override, "override is advertised")
			dir := t.TempDir()
			write(t, filepath.Join(dir, "AGENTS.md"), "PROJECT_RULE_MARKER: use tabs.\n")
			resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: dir, MCPServers: []acp.McpServer{},
				SystemPrompt: &acp.SystemPrompt{Mode: mode, Content: []acp.ContentBlock{acp.TextBlock("EDITOR_PROMPT_MARKER: answer in French.")}}})
			var ns acp.NewSessionResponse
			acptest.MustResult(t, resp, &ns)
			p.TakeCommands(ns.SessionID)
			resp, _ = p.Call(acp.MethodSessionPrompt, promptReq(ns.SessionID, "hi"))
			acptest.MustResult(t, resp, nil)
			sys := systemPrompt(t, model.body(t, 0))
			rules := strings.Index(sys, "PROJECT_RULE_MARKER")
			client := strings.Index(sys, "EDITOR_PROMPT_MARKER")
			require.GreaterOrEqual(t, rules, 0, "the project's rules reach the model")
			require.GreaterOrEqual(t, client, 0, "the client's prompt reaches the model")
			if mode == acp.SystemPromptAppend {
				assert.Contains(t, sys, "You are acp-agent", "the agent's own instructions stay")
				assert.Less(t, rules, client, "the client's text comes after the rules")
				assert.Contains(t, sys, "# Instructions from the editor\n\nEDITOR_PROMPT_MARKER")
				return
			}
			assert.NotContains(t, sys, "You are acp-agent", "overridden")
			assert.True(t, strings.HasPrefix(sys, "EDITOR_PROMPT_MARKER"), "the client's text replaces the agent's instructions")
		})
	}
	// A mode the agent does not know is refused.
	p := startAgent(t, nil, "--model", "replay/default")
	p.Initialize(nil)
	resp, _ := p.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: t.TempDir(), MCPServers: []acp.McpServer{},
		SystemPrompt: &acp.SystemPrompt{Mode: "replace-all", Content: []acp.ContentBlock{acp.TextBlock("x")}}})
	require.NotNil(t, resp.Error)
	assert.Equal(t, acp.CodeInvalidParams, resp.Error.Code)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}
