package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
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
