package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// TestBinaryLogout: logout is advertised with the method to log in again;
// after it, every way of opening a session answers auth_required until
// authenticate, while the session already open keeps working.
func TestBinaryLogout(t *testing.T) {
	p := startAgent(t, []string{"ACP_AGENT_SESSION_DIR=" + t.TempDir()}, "--model", "replay/default")
	init := p.Initialize(nil)
	require.NotNil(t, init.AgentCapabilities.Auth.Logout, "logout is advertised")
	require.Len(t, init.AuthMethods, 1, "a method to log in again is listed")
	require.NotNil(t, init.AuthMethods[0].Agent)
	login := init.AuthMethods[0].Agent.ID
	cwd := t.TempDir()
	sid := p.NewSession(cwd)

	resp, _ := p.Call(acp.MethodLogout, &acp.LogoutRequest{})
	acptest.MustResult(t, resp, nil)

	opens := []struct {
		method string
		params any
	}{
		{acp.MethodSessionNew, &acp.NewSessionRequest{CWD: cwd, MCPServers: []acp.McpServer{}}},
		{acp.MethodSessionLoad, &acp.LoadSessionRequest{SessionID: sid, CWD: cwd, MCPServers: []acp.McpServer{}}},
		{acp.MethodSessionResume, &acp.ResumeSessionRequest{SessionID: sid, CWD: cwd}},
		{acp.MethodSessionFork, &acp.ForkSessionRequest{SessionID: sid, CWD: cwd}},
		{acp.MethodExtSessionFork, map[string]any{"sessionId": sid}},
	}
	for _, o := range opens {
		resp, _ := p.Call(o.method, o.params)
		require.NotNil(t, resp.Error, "%s after logout: %s", o.method, resp.Raw)
		assert.Equal(t, acp.CodeAuthRequired, resp.Error.Code, o.method)
	}
	resp, _ = p.Call(acp.MethodSessionPrompt, promptReq(sid, "still here?"))
	acptest.MustResult(t, resp, nil)

	resp, _ = p.Call(acp.MethodAuthenticate, &acp.AuthenticateRequest{MethodID: login})
	acptest.MustResult(t, resp, nil)
	assert.NotEmpty(t, p.NewSession(cwd))
	resp, _ = p.Call(acp.MethodSessionResume, &acp.ResumeSessionRequest{SessionID: sid, CWD: cwd})
	acptest.MustResult(t, resp, nil)
}
