package acphttp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acphttp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/acp/schemacheck"
)

// nopAgent is a v1 agent that is never asked for anything here.
type nopAgent struct{}

func (nopAgent) Initialize(context.Context, *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	return &acp.InitializeResponse{}, nil
}
func (nopAgent) Authenticate(context.Context, *acp.AuthenticateRequest) error { return nil }
func (nopAgent) NewSession(context.Context, *acp.NewSessionRequest, *acp.ClientConn) (acp.Session, *acp.NewSessionResponse, error) {
	return nil, nil, acp.ErrInternal
}

// TestV2OverStreamableHTTPAndWebSocket: ACP v2 is served on serve's
// transports too: an initialize asking for 2 opens a v2 connection (with
// the transport's capabilities), and a prompt's updates and answer come
// on the session's stream, each valid against the v2 schema.
func TestV2OverStreamableHTTPAndWebSocket(t *testing.T) {
	checker, err := schemacheck.Load()
	require.NoError(t, err)
	for _, ws := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "websocket"}[ws], func(t *testing.T) {
			url := serveEchoV2(t, acphttp.Options{}, nil)

			var mu sync.Mutex
			var updates []acpv2.UpdateSessionNotification
			c, init, err := acphttp.Dial(context.Background(), acphttp.ClientOptions{URL: url, Token: "tok", WebSocket: ws,
				OnNotification: func(method string, params json.RawMessage) {
					assert.Equal(t, acpv2.MethodSessionUpdate, method)
					assert.NoError(t, checker.ValidateV2UnstableStrict("UpdateSessionNotification", params))
					var n acpv2.UpdateSessionNotification
					assert.NoError(t, json.Unmarshal(params, &n))
					mu.Lock()
					updates = append(updates, n)
					mu.Unlock()
				}},
				&acpv2.InitializeRequest{ProtocolVersion: 2, Info: acpv2.Implementation{Name: "t", Version: "1"}})
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, checker.ValidateV2Strict("InitializeResponse", init))
			var ir acpv2.InitializeResponse
			require.NoError(t, json.Unmarshal(init, &ir))
			assert.EqualValues(t, 2, ir.ProtocolVersion)
			if !ws {
				assert.Contains(t, string(ir.Capabilities.Meta), `"transport"`, "the transport's capabilities")
			}

			var ns acpv2.NewSessionResponse
			require.NoError(t, c.Call(context.Background(), acpv2.MethodSessionNew, &acpv2.NewSessionRequest{CWD: "/w"}, &ns))
			var pr acpv2.PromptResponse
			require.NoError(t, c.Call(context.Background(), acpv2.MethodSessionPrompt,
				&acpv2.PromptRequest{SessionID: ns.SessionID, Prompt: []acpv2.ContentBlock{{Text: &acpv2.TextContent{Text: "ping"}}}}, &pr))
			assert.Equal(t, "u1", pr.MessageID)
			require.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(updates) == 4
			}, 5*time.Second, 10*time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			var tags []string
			for _, u := range updates {
				assert.Equal(t, ns.SessionID, u.SessionID)
				tags = append(tags, u.Update.Tag())
			}
			assert.Equal(t, []string{"state_update", "user_message", "agent_message", "state_update"}, tags)
			assert.Equal(t, acpv2.StopReasonEndTurn, updates[3].Update.StateUpdate.Idle.StopReason)
		})
	}
}
