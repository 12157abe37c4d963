package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// offeredTools are the tool names of a recorded Chat Completions body.
func offeredTools(t *testing.T, body string) []string {
	t.Helper()
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Function.Name)
	}
	return names
}

// Issue 29: plan mode ends in an approval. A read-only session's model
// calls exit_plan_mode with its plan; the tool call is of kind
// switch_mode and its session/request_permission carries the plan as
// Markdown content and, in rawInput, its entries, with the options
// claude-agent-acp offers (accept-edits, default, keep planning).
// Approved, the session switches mode (current_mode_update) and the turn
// goes on with the plan; rejected, it stays read-only and the turn ends.
func TestBinaryPlanModeApproval(t *testing.T) {
	const plan = "## Fix the bug\n1. Read main.go\n2. Change the loop"
	args := map[string]any{"plan": plan, "entries": []map[string]any{{"content": "Read main.go"}, {"content": "Change the loop", "priority": "high"}}}
	for _, tc := range []struct {
		name   string
		option string
		// planOps: the client advertises clientCapabilities.plan.
		planOps bool
		args    []string
	}{
		{"approved into accept-edits, client with plan operations", "accept-edits", true, nil},
		{"approved into default, client without", "default", false, nil},
		{"rejected", "read-only", false, nil},
		// Nobody is asked: the model cannot lift read-only itself.
		{"not asked with --permission allow", "", false, []string{"--permission", "allow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := newScriptedModel(t, "openai", modelCall{"exit_plan_mode", args})
			p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"},
				append([]string{"--model", "openai/test-model", "--mode", "read-only"}, tc.args...)...)
			caps := &acp.ClientCapabilities{}
			if tc.planOps {
				caps.Plan = &acp.PlanCapabilities{}
			}
			p.Initialize(caps)
			sid := p.NewSession(t.TempDir())

			var asked *acp.RequestPermissionRequest
			id := p.Request(acp.MethodSessionPrompt, promptReq(sid, "plan the fix"))
			resp, before := awaitAnswering(t, p, id, func(m acptest.Message) {
				require.Equal(t, acp.MethodSessionRequestPermission, m.Method)
				require.Nil(t, asked, "one permission request")
				asked = new(acp.RequestPermissionRequest)
				require.NoError(t, json.Unmarshal(m.Params, asked))
				p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": tc.option}})
			})
			var pr acp.PromptResponse
			acptest.MustResult(t, resp, &pr)
			assert.Equal(t, acp.StopReasonEndTurn, pr.StopReason)
			assert.Contains(t, offeredTools(t, model.body(t, 0)), "exit_plan_mode", "offered in read-only mode")

			if tc.option == "" {
				require.Nil(t, asked, "nobody is asked")
				text, status := toolResultText(t, before, "call_0")
				assert.Equal(t, "failed", status)
				assert.Contains(t, text, "did not approve")
				assert.Len(t, model.all(), 1, "the turn ended")
				for _, m := range before {
					if m.Method == acp.MethodSessionUpdate {
						assert.Nil(t, m.Update(t).Update.CurrentModeUpdate, "the mode stays read-only")
					}
				}
				return
			}
			// The tool call and the question carry the plan.
			require.NotNil(t, asked, "the plan was put to the user")
			assert.Equal(t, acp.ToolKindSwitchMode, asked.ToolCall.Kind)
			require.Len(t, asked.ToolCall.Content, 1)
			assert.Equal(t, plan, asked.ToolCall.Content[0].Content.Content.Text.Text, "the plan as Markdown content")
			var raw struct {
				Plan    string `json:"plan"`
				Entries []struct {
					Content string `json:"content"`
				} `json:"entries"`
			}
			require.NoError(t, json.Unmarshal(asked.ToolCall.RawInput, &raw))
			assert.Equal(t, plan, raw.Plan)
			require.Len(t, raw.Entries, 2, "the entries, in rawInput")
			var options []string
			for _, o := range asked.Options {
				options = append(options, string(o.OptionID)+":"+string(o.Kind))
			}
			assert.Equal(t, []string{"accept-edits:allow_always", "default:allow_once", "read-only:reject_once"}, options)

			var kinds, modes []string
			var planShown, planItems bool
			for _, m := range before {
				if m.Method != acp.MethodSessionUpdate {
					continue
				}
				u := m.Update(t).Update
				switch {
				case u.ToolCall != nil && u.ToolCall.ToolCallID == "call_0":
					kinds = append(kinds, string(u.ToolCall.Kind))
				case u.CurrentModeUpdate != nil:
					modes = append(modes, string(u.CurrentModeUpdate.CurrentModeID))
				case u.PlanUpdate != nil:
					require.NotNil(t, u.PlanUpdate.Plan.Markdown, "a proposed plan is its Markdown")
					planShown = u.PlanUpdate.Plan.Markdown.Content == plan
				case u.Plan != nil:
					planItems = len(u.Plan.Entries) == 2 && u.Plan.Entries[1].Content == "Change the loop"
				}
			}
			assert.Equal(t, []string{"switch_mode"}, kinds, "the tool call is of kind switch_mode")
			if tc.planOps {
				assert.True(t, planShown, "plan_update with the Markdown to a client with plan operations")
			} else {
				assert.True(t, planItems, "the v1 plan of its entries to the others")
			}
			text, status := toolResultText(t, before, "call_0")

			if tc.option == "read-only" {
				assert.Empty(t, modes, "no mode change")
				assert.Equal(t, "failed", status)
				assert.Len(t, model.all(), 1, "the turn ended: the user says what to change")
				var told string
				for _, m := range before {
					if m.Method == acp.MethodSessionUpdate {
						if c := m.Update(t).Update.AgentMessageChunk; c != nil {
							told += c.Content.Text.Text
						}
					}
				}
				assert.Contains(t, told, "stays in read-only mode", "the user is told")
				// Still planning: the next turn is read-only, with the tool.
				id = p.Request(acp.MethodSessionPrompt, promptReq(sid, "make it shorter"))
				resp, _ = awaitAnswering(t, p, id, func(m acptest.Message) {
					p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "cancelled"}})
				})
				acptest.MustResult(t, resp, nil)
				assert.Contains(t, offeredTools(t, model.body(t, 1)), "exit_plan_mode", "still read-only")
				return
			}
			assert.Equal(t, []string{tc.option}, modes, "current_mode_update")
			assert.Equal(t, "completed", status)
			assert.Contains(t, text, "approved the plan")
			require.Len(t, model.all(), 2, "the turn went on")
			after := model.body(t, 1)
			assert.Contains(t, after, "switched the session to "+tc.option+" mode", "the model carries on with the plan")
			assert.NotContains(t, offeredTools(t, after), "exit_plan_mode", "no longer read-only")
		})
	}
}

// A fork's exit_plan_mode is its own, also for a fork of a fork: the
// registry a fork clones holds its source's copy, bound to the source.
// Approved in the second fork, the plan switches that fork's mode
// (current_mode_update under its id, the question asked under its id)
// and neither its source nor the source's source leave read-only: the
// next turn of the middle fork is still offered exit_plan_mode and asks
// under its own id.
func TestBinaryPlanModeApprovalInAForkOfAFork(t *testing.T) {
	args := map[string]any{"plan": "## Plan\n1. Change it"}
	model := newScriptedModel(t, "openai", modelCall{"exit_plan_mode", args})
	p := startAgent(t, []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + model.URL + "/v1"},
		"--model", "openai/test-model", "--mode", "read-only", "--session-dir", t.TempDir())
	p.Initialize(nil)
	cwd := t.TempDir()
	src := p.NewSession(cwd)
	fork := func(id string) string {
		resp, _ := p.Call(acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: id, CWD: cwd})
		var f acp.ForkSessionResponse
		acptest.MustResult(t, resp, &f)
		return f.SessionID
	}
	middle := fork(src)
	last := fork(middle)

	// turn answers the turn's plan question with option and returns
	// the session it was asked in and the sessions whose mode changed.
	turn := func(sid, option string) (asked []string, modes map[string]string) {
		id := p.Request(acp.MethodSessionPrompt, promptReq(sid, "plan the fix"))
		resp, before := awaitAnswering(t, p, id, func(m acptest.Message) {
			require.Equal(t, acp.MethodSessionRequestPermission, m.Method)
			var req acp.RequestPermissionRequest
			require.NoError(t, json.Unmarshal(m.Params, &req))
			asked = append(asked, req.SessionID)
			p.Respond(m.ID, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": option}})
		})
		acptest.MustResult(t, resp, nil)
		modes = map[string]string{}
		for _, m := range before {
			if m.Method == acp.MethodSessionUpdate {
				if n := m.Update(t); n.Update.CurrentModeUpdate != nil {
					modes[n.SessionID] = string(n.Update.CurrentModeUpdate.CurrentModeID)
				}
			}
		}
		return asked, modes
	}
	asked, modes := turn(last, "default")
	assert.Equal(t, []string{last}, asked, "the plan is put to the user of the fork that proposed it")
	assert.Equal(t, map[string]string{last: "default"}, modes, "only that fork leaves read-only")

	n := len(model.all())
	asked, modes = turn(middle, "read-only")
	assert.Equal(t, []string{middle}, asked, "the middle fork plans on its own")
	assert.Empty(t, modes)
	assert.Contains(t, offeredTools(t, model.body(t, n)), "exit_plan_mode", "the middle fork is still read-only")
	assert.NotContains(t, p.stderr.String(), "already registered")
}
