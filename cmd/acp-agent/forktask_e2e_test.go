package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// TestBinaryForkRunsItsOwnSubagents: a fork's task tool is its own (the
// registry it cloned held its source's, bound to the source): the
// subagent a fork starts is announced on the fork, and the agent logs no
// "already registered" conflict.
func TestBinaryForkRunsItsOwnSubagents(t *testing.T) {
	cwd := t.TempDir()
	p := startAgent(t, nil, "--model", "replay/"+subagentScript(t, 0), "--session-dir", t.TempDir())
	p.Initialize(&acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}})
	src := p.NewSession(cwd)
	resp, _ := p.Call(acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: src, CWD: cwd})
	var fork acp.ForkSessionResponse
	acptest.MustResult(t, resp, &fork)
	resp, before := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: fork.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock("delegate please")}})
	require.Nil(t, resp.Error)
	var parents []string
	for _, m := range before {
		if m.Method == acp.MethodSessionUpdate {
			if n := m.Update(t); n.Update.SubagentUpdate != nil {
				parents = append(parents, n.SessionID)
			}
		}
	}
	require.NotEmpty(t, parents, "the fork's subagent is announced")
	for _, parent := range parents {
		assert.Equal(t, fork.SessionID, parent, "announced on the fork, not its source")
	}
	text, status := toolResultText(t, before, "t1")
	assert.Equal(t, "completed", status)
	assert.Contains(t, text, "child answer: 3 files")
	assert.NotContains(t, p.stderr.String(), "already registered")
}
