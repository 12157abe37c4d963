package acp_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acptest"
)

// TestSessionLimitsRefuseNewSessions: with MaxSessions and
// MaxSessionsPerConnection, session/new past a limit answers -32600
// naming it, and closing a session frees its place.
func TestSessionLimitsRefuseNewSessions(t *testing.T) {
	srv := acp.NewServer(streamingAgent(), acp.Options{MaxSessions: 3, MaxSessionsPerConnection: 2})
	a := acptest.Connect(t, srv)
	b := acptest.Connect(t, srv)
	a.Initialize(nil)
	b.Initialize(nil)
	newSession := func(c *acptest.Client) acptest.Message {
		resp, _ := c.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: "/tmp", MCPServers: []acp.McpServer{}})
		return resp
	}
	first := a.NewSession("/tmp")
	a.NewSession("/tmp")
	resp := newSession(a)
	require.NotNil(t, resp.Error, "a third session on one connection")
	assert.Equal(t, acp.CodeInvalidRequest, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "this connection has 2 sessions open")

	b.NewSession("/tmp")
	resp = newSession(b)
	require.NotNil(t, resp.Error, "a fourth session on the server")
	assert.Contains(t, resp.Error.Message, "the agent has 3 sessions open")

	resp, _ = a.Call(acp.MethodSessionClose, &acp.CloseSessionRequest{SessionID: first})
	acptest.MustResult(t, resp, nil)
	assert.NotEmpty(t, b.NewSession("/tmp"), "a closed session gives its place back")
}

// capsStream is a LineStream whose transport advertises a capability.
type capsStream struct{ *acp.LineStream }

func (capsStream) TransportCapabilities() map[string]any {
	return map[string]any{"resumable": map[string]int{"retentionMessages": 7}}
}

// TestTransportCapabilitiesAreAdvertised: a Stream that implements
// TransportCapabilities has them in agentCapabilities._meta.transport,
// next to what the agent put in _meta; a plain LineStream adds nothing.
func TestTransportCapabilitiesAreAdvertised(t *testing.T) {
	agent := &metaAgent{fakeAgent: &fakeAgent{}}
	srv := acp.NewServer(agent, acp.Options{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeConn(context.Background(), capsStream{acp.NewLineStream(inR, outW, 0)})
		outW.Close()
	}()
	c := acptest.New(t, inW, outR)
	init := c.Initialize(nil)
	var meta map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(init.AgentCapabilities.Meta, &meta))
	assert.JSONEq(t, `{"resumable":{"retentionMessages":7}}`, string(meta["transport"]))
	assert.JSONEq(t, `{"x":1}`, string(meta["agent"]), "the agent's own _meta stays")
	inW.Close()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("ServeConn did not return")
	}
	plain := acptest.Connect(t, srv)
	init = plain.Initialize(nil)
	assert.JSONEq(t, `{"agent":{"x":1}}`, string(init.AgentCapabilities.Meta))
}

type metaAgent struct{ *fakeAgent }

func (a *metaAgent) Initialize(ctx context.Context, req *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	resp, err := a.fakeAgent.Initialize(ctx, req)
	if resp != nil {
		resp.AgentCapabilities.Meta = json.RawMessage(`{"agent":{"x":1}}`)
	}
	return resp, err
}
