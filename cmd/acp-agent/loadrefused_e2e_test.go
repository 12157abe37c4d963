package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// A session/load or session/resume refused for its request (here a cwd
// that does not exist, a typo) leaves the live session it names as it
// was: the editor can go on prompting it. The load must close the live
// copy to reopen its file, but only once the request is one it can serve.
func TestBinaryARefusedLoadLeavesTheLiveSessionOpen(t *testing.T) {
	for _, method := range []string{acp.MethodSessionLoad, acp.MethodSessionResume} {
		t.Run(method, func(t *testing.T) {
			p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default")
			p.Initialize(nil)
			ws := t.TempDir()
			sid := p.NewSession(ws)
			resp, _ := p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("hello")}})
			require.Nil(t, resp.Error)

			missing := filepath.Join(ws, "no-such-dir")
			var params any = &acp.LoadSessionRequest{SessionID: sid, CWD: missing, MCPServers: []acp.McpServer{}}
			if method == acp.MethodSessionResume {
				params = &acp.ResumeSessionRequest{SessionID: sid, CWD: missing, MCPServers: []acp.McpServer{}}
			}
			resp, _ = p.Call(method, params)
			require.NotNil(t, resp.Error, "a load into a missing directory is refused")
			assert.EqualValues(t, -32602, resp.Error.Code)
			assert.Contains(t, resp.Error.Message, "cwd")

			resp, _ = p.Call(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.TextBlock("still there?")}})
			assert.Nil(t, resp.Error, "the live session is still open after the refused %s", method)
		})
	}
}

// The same in ACP v2: a session/resume refused for its request (a cwd
// that does not exist) leaves the live session it names open; v2's
// resume asks the agent's check (acp.LoadCheckerV2) before it ends the
// live copy, as v1's load and resume do.
func TestBinaryARefusedV2ResumeLeavesTheLiveSessionOpen(t *testing.T) {
	p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default")
	p.InitializeV2(nil)
	ws := t.TempDir()
	sid := p.NewSessionV2(ws)
	first := promptV2(t, p, sid, "hello", false)
	require.Equal(t, acpv2.StopReasonEndTurn, first.stop)

	resp, _ := p.Call(acpv2.MethodSessionResume, &acpv2.ResumeSessionRequest{SessionID: sid, CWD: filepath.Join(ws, "no-such-dir")})
	require.NotNil(t, resp.Error, "a resume into a missing directory is refused")
	assert.EqualValues(t, -32602, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "cwd")

	again := promptV2(t, p, sid, "still there?", false)
	assert.Equal(t, acpv2.StopReasonEndTurn, again.stop, "the live session is still open after the refused resume")
}
