package acpagent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/mcpclient"
)

// mcpElicit passes an MCP server's elicitation request to the user as
// elicitation/create, in the mode the server asked for (the Manager only
// lets through the modes the client advertised), naming the server in
// the message: a server must not pass itself off as the agent. A form's
// schema is the server's, decoded into ACP's restricted form schema; a
// URL must be http(s).
func (as *acpSession) mcpElicit(ctx context.Context, server string, e mcpclient.Elicitation) (mcpclient.ElicitationResult, error) {
	scope := acp.ElicitationScope{Session: &acp.ElicitationSessionScope{SessionID: as.s.ID()}}
	req := acp.CreateElicitationRequest{Message: fmt.Sprintf("The MCP server %q asks: %s", server, e.Message)}
	switch e.Mode {
	case acp.ElicitationModeForm:
		var schema acp.ElicitationSchema
		if len(e.RequestedSchema) > 0 {
			if err := json.Unmarshal(e.RequestedSchema, &schema); err != nil {
				return mcpclient.ElicitationResult{}, fmt.Errorf("the requested schema is not a form schema: %w", err)
			}
		}
		schema.Type = "object"
		req.Form = &acp.ElicitationFormMode{Scope: scope, RequestedSchema: schema}
	case acp.ElicitationModeURL:
		u, err := url.Parse(e.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return mcpclient.ElicitationResult{}, fmt.Errorf("elicitation URL %q is not an http(s) URL", e.URL)
		}
		if e.ElicitationID == "" {
			return mcpclient.ElicitationResult{}, fmt.Errorf("a URL elicitation needs an elicitationId")
		}
		req.URL = &acp.ElicitationUrlMode{Scope: scope, ElicitationID: e.ElicitationID, URL: u.String()}
	default:
		return mcpclient.ElicitationResult{}, fmt.Errorf("elicitation mode %q is not supported", e.Mode)
	}
	var resp acp.CreateElicitationResponse
	if err := as.conn.Call(ctx, acp.MethodElicitationCreate, &req, &resp); err != nil {
		return mcpclient.ElicitationResult{}, err
	}
	switch resp.Action {
	case acp.ElicitationActionAccept:
	case acp.ElicitationActionDecline:
		return mcpclient.ElicitationResult{Action: "decline"}, nil
	default:
		return mcpclient.ElicitationResult{Action: "cancel"}, nil
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
	return mcpclient.ElicitationResult{Action: "accept", Content: content}, nil
}

// mcpElicitationComplete tells the client a server's URL elicitation has
// completed (elicitation/complete).
func (as *acpSession) mcpElicitationComplete(server, id string) {
	if id == "" {
		return
	}
	if err := as.conn.Notify(context.Background(), acp.MethodElicitationComplete, map[string]any{"elicitationId": id}); err != nil {
		as.log.Debug("elicitation/complete", "server", server, "error", err)
	}
}
