package acpagent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/policy"
)

// acpClient is a session's ACP connection as the host's Client: the
// session's updates and permission requests (acpSink), what the client
// advertised, the editor's runtimes, and the updates only ACP has
// (commands, mode, config options, subagents), posted in order with the
// session's own.
type acpClient struct {
	acpSink
	a *Agent
}

var (
	_ host.SubagentClient   = (*acpClient)(nil)
	_ host.Elicitor         = (*acpClient)(nil)
	_ host.SessionMessenger = (*acpClient)(nil)
	_ host.MCPChannels      = (*acpClient)(nil)
)

func (a *Agent) client(conn *acp.ClientConn) *acpClient {
	return &acpClient{acpSink: acpSink{conn}, a: a}
}

// Features implements host.Client from the client's capabilities.
func (c *acpClient) Features() host.Features {
	caps := c.conn.Capabilities()
	return host.Features{
		Notices:         caps.Session != nil && caps.Session.Notices != nil,
		ExecutionStates: c.a.opts.ExecutionStates || acp.ExecutionStateEnabled(caps),
		Compaction:      caps.Session != nil && caps.Session.Compaction != nil,
		Subagents:       caps.Subagents != nil,
		ElicitForm:      caps.Elicitation != nil && caps.Elicitation.Form != nil,
		ElicitURL:       caps.Elicitation != nil && caps.Elicitation.URL != nil,
	}
}

// Editor implements host.Client: the fs/* methods and terminals the
// client advertised (editor.go).
func (c *acpClient) Editor(sessionID string) tools.Editor { return editorOf(c.conn, sessionID) }

// post queues an update only ACP has on the session's connection without
// waiting, in order with the session's own updates.
func (c *acpClient) post(u acp.SessionUpdate) {
	if err := c.conn.Post(u); err != nil {
		c.a.log.Debug("sending update", "session", c.conn.SessionID(), "error", err)
	}
}

// CommandsChanged implements host.Client: available_commands_update.
func (c *acpClient) CommandsChanged(cmds []host.Command) {
	c.post(acp.SessionUpdate{AvailableCommandsUpdate: availableCommands(cmds)})
}

// ModeChanged implements host.Client: current_mode_update.
func (c *acpClient) ModeChanged(m policy.Mode) {
	c.post(acp.SessionUpdate{CurrentModeUpdate: &acp.CurrentModeUpdate{CurrentModeID: acp.SessionModeId(m)}})
}

// OptionsChanged implements host.Client: config_option_update.
func (c *acpClient) OptionsChanged(opts []host.Option) {
	c.post(acp.SessionUpdate{ConfigOptionUpdate: &acp.ConfigOptionUpdate{ConfigOptions: configOptions(opts)}})
}

// OpenChild implements host.SubagentClient: the child is registered on
// the connection under its own id (acp.ClientConn.OpenChild).
func (c *acpClient) OpenChild(id string, open func(host.Client) (*host.Session, error)) (host.Child, error) {
	child, err := c.conn.OpenChild(id, func(conn *acp.ClientConn) (acp.Session, error) {
		hs, err := open(c.a.client(conn))
		if err != nil {
			return nil, err
		}
		return c.a.wrap(hs, conn), nil
	})
	if err != nil {
		return nil, err
	}
	return child, nil
}

// CloseChild implements host.SubagentClient.
func (c *acpClient) CloseChild(id string) { c.conn.CloseChild(id) }

// Drained implements host.SubagentClient.
func (c *acpClient) Drained(ctx context.Context) error { return c.conn.Drained(ctx) }

// Subagent implements host.SubagentClient: subagent_update.
func (c *acpClient) Subagent(ev host.SubagentEvent) {
	u := &acp.SubagentUpdate{SessionID: ev.ID, Title: ev.Title, Description: ev.Description, CWD: ev.CWD}
	if ev.Cancellable {
		u.Capabilities = &acp.SubagentSessionCapabilities{Cancel: &struct{}{}}
	}
	if ev.State != "" {
		u.State = &acp.SubagentState{State: ev.State}
	}
	c.post(acp.SessionUpdate{SubagentUpdate: u})
}

// SessionMessage implements host.SessionMessenger: session_message, the
// sender's view (naming the recipient's message) on the sender's
// session, the recipient's view (naming the sender's) on the other.
func (c *acpClient) SessionMessage(m host.SessionMessage) {
	u := &acp.SessionMessage{MessageID: m.ID, SenderSessionID: m.From, RecipientSessionID: m.To,
		Content: []acp.ContentBlock{acp.TextBlock(m.Text)}}
	if m.From == c.conn.SessionID() {
		u.RecipientMessageID = m.OtherID
	} else {
		u.SenderMessageID = m.OtherID
	}
	c.post(acp.SessionUpdate{SessionMessage: u})
}

// Elicit implements host.Elicitor with elicitation/create, in the mode
// the server asked for. A form's schema is the server's, decoded into
// ACP's restricted form schema.
func (c *acpClient) Elicit(ctx context.Context, sessionID string, e host.Elicitation) (host.ElicitationResult, error) {
	scope := acp.ElicitationScope{Session: &acp.ElicitationSessionScope{SessionID: sessionID}}
	req := acp.CreateElicitationRequest{Message: e.Message}
	switch e.Mode {
	case acp.ElicitationModeForm:
		var schema acp.ElicitationSchema
		if len(e.RequestedSchema) > 0 {
			if err := json.Unmarshal(e.RequestedSchema, &schema); err != nil {
				return host.ElicitationResult{}, fmt.Errorf("the requested schema is not a form schema: %w", err)
			}
		}
		schema.Type = "object"
		req.Form = &acp.ElicitationFormMode{Scope: scope, RequestedSchema: schema}
	case acp.ElicitationModeURL:
		req.URL = &acp.ElicitationUrlMode{Scope: scope, ElicitationID: e.ElicitationID, URL: e.URL}
	default:
		return host.ElicitationResult{}, fmt.Errorf("elicitation mode %q is not supported", e.Mode)
	}
	var resp acp.CreateElicitationResponse
	if err := c.conn.Call(ctx, acp.MethodElicitationCreate, &req, &resp); err != nil {
		return host.ElicitationResult{}, err
	}
	switch resp.Action {
	case acp.ElicitationActionAccept:
	case acp.ElicitationActionDecline:
		return host.ElicitationResult{Action: "decline"}, nil
	default:
		return host.ElicitationResult{Action: "cancel"}, nil
	}
	content := map[string]any{}
	for k, v := range resp.Content {
		switch {
		case v.String != nil:
			content[k] = *v.String
		case v.Integer != nil:
			content[k] = *v.Integer
		case v.Number != nil:
			content[k] = *v.Number
		case v.Boolean != nil:
			content[k] = *v.Boolean
		case v.Strings != nil:
			content[k] = v.Strings
		}
	}
	return host.ElicitationResult{Action: "accept", Content: content}, nil
}

// ElicitationComplete implements host.Elicitor: elicitation/complete.
func (c *acpClient) ElicitationComplete(server, id string) {
	if id == "" {
		return
	}
	if err := c.conn.Notify(context.Background(), acp.MethodElicitationComplete, map[string]any{"elicitationId": id}); err != nil {
		c.a.log.Debug("elicitation/complete", "server", server, "error", err)
	}
}

// MCPChannel implements host.MCPChannels: the client's own MCP server
// serverID, reached with mcp/message on the session's connection.
func (c *acpClient) MCPChannel(serverID string) host.MCPChannel {
	return acpMCPChannel{conn: c.conn, serverID: serverID}
}

// acpMCPChannel carries an MCP client's requests to a server the ACP
// client provides: each is one mcp/message request, whose response is
// the inner result or MCP error; the client's mcp/message notifications
// about it go to the SDK.
type acpMCPChannel struct {
	conn     *acp.ClientConn
	serverID string
}

func (ch acpMCPChannel) Call(ctx context.Context, id, method string, params json.RawMessage,
	notify func(method string, params json.RawMessage)) (json.RawMessage, *host.MCPError, error) {
	resp, err := ch.conn.CallMCP(ctx, &acp.MessageMcpRequest{ServerID: ch.serverID, RequestID: id, Method: method, Params: params}, notify)
	switch {
	case err != nil:
		return nil, nil, err
	case resp.Error != nil && resp.Result == nil:
		return nil, &host.MCPError{Code: resp.Error.Code, Message: resp.Error.Message, Data: resp.Error.Data}, nil
	}
	return resp.Result, nil, nil
}
