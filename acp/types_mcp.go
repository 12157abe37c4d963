package acp

import (
	"encoding/json"
	"fmt"
)

// This file holds MCP over ACP (SDK 2.4.0 unstable): MCP servers that
// live in the client, declared in a session's mcpServers with type
// "acp" and reached through the ACP connection. Each inner MCP request
// of the agent is one mcp/message request to the client, answered with
// the inner result or MCP error; the client reports the inner request's
// notifications (progress and the like) as mcp/message notifications
// naming it.

// McpServerTypeACP is the "type" of an MCP server reached over ACP.
const McpServerTypeACP = "acp"

var prefixMcpACP = unionPrefix("type", McpServerTypeACP)

// McpServerAcp is an MCP server the client provides: its name, and the
// id mcp/message routes by (unique on the connection).
type McpServerAcp struct {
	Name     string          `json:"name"`
	ServerID string          `json:"serverId"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// MessageMcpRequest is the params of the agent's mcp/message request: one
// inner MCP request (RequestID is the inner request's id, unique among
// the agent's requests in flight to that server).
type MessageMcpRequest struct {
	ServerID  string          `json:"serverId"`
	RequestID string          `json:"requestId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// MessageMcpResponse is the result of mcp/message: the inner request's
// result (which may be JSON null), or its MCP error.
type MessageMcpResponse struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *McpError       `json:"error,omitempty"`
	Meta   json.RawMessage `json:"_meta,omitempty"`
}

// UnmarshalJSON keeps a "result" of null apart from an absent one.
func (r *MessageMcpResponse) UnmarshalJSON(data []byte) error {
	var v struct {
		Result *json.RawMessage `json:"result"`
		Error  *McpError        `json:"error"`
		Meta   json.RawMessage  `json:"_meta"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*r = MessageMcpResponse{Error: v.Error, Meta: v.Meta}
	if v.Result != nil {
		r.Result = *v.Result
		if r.Result == nil {
			r.Result = json.RawMessage("null")
		}
		r.Error = nil // receivers prefer the result
	}
	if r.Result == nil && r.Error == nil {
		return fmt.Errorf("mcp/message result: neither result nor error")
	}
	return nil
}

// McpError is an inner MCP error (never an ACP error).
type McpError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// MessageMcpNotification is the params of the client's mcp/message
// notification: an inner MCP notification for the agent's inner request
// RequestID to ServerID.
type MessageMcpNotification struct {
	ServerID  string          `json:"serverId"`
	RequestID string          `json:"requestId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// Validate checks serverId, requestId and method.
func (n *MessageMcpNotification) Validate() error {
	switch {
	case n.ServerID == "":
		return errRequired("serverId")
	case n.RequestID == "":
		return errRequired("requestId")
	case n.Method == "":
		return errRequired("method")
	}
	return nil
}
