package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/mcpclient"
	"github.com/acp-agent/acp-agent/policy"
)

// mcpConnectTimeout bounds the connection to each MCP server: a new
// session waits for them (concurrently), so a server that hangs must not hold the
// session for long.
const mcpConnectTimeout = 15 * time.Second

// connectMCP connects the session to the client's MCP servers and
// registers their tools (source mcp). A server that fails does not fail
// the session: the user is told and the failure logged. The connections
// end with the session.
func (h *Host) connectMCP(ctx context.Context, hs *Session, servers []MCPServer, f Features) {
	s := hs.s
	hs.mu.Lock()
	hs.mcpServers = servers
	hs.mu.Unlock()
	if len(servers) == 0 {
		return
	}
	servers = hs.bindChannels(servers)
	var holder struct{ m *mcpclient.Manager }
	ready := make(chan struct{})
	opts := mcpclient.Options{
		ClientName: "acp-agent", ClientVersion: h.cfg.Version, Logger: h.log.With("session", s.ID()),
		ConnectTimeout: mcpConnectTimeout, Dir: s.CWD(),
		OnToolsChanged: func() {
			<-ready
			hs.syncMCPTools(holder.m)
		},
	}
	if e, ok := hs.c.(Elicitor); ok {
		opts.Elicit, opts.ElicitationComplete = hs.mcpElicit(e), e.ElicitationComplete
		opts.ElicitForm, opts.ElicitURL = f.ElicitForm, f.ElicitURL
	}
	m, failures := mcpclient.Connect(ctx, servers, opts)
	holder.m = m
	close(ready)
	hs.mu.Lock()
	hs.mcp = m
	hs.mu.Unlock()
	hs.syncMCPTools(m)
	for _, fl := range failures {
		// mcpclient logged it; the user reads it once, without the
		// server's name said twice ("mcp server "x": ...").
		why := strings.TrimPrefix(fl.Err.Error(), fmt.Sprintf("mcp server %q: ", fl.Server))
		msg := fmt.Sprintf("The MCP server %q could not be used: %s. The session goes on without its tools.", fl.Server, why)
		if f.Notices {
			hs.post(agent.Update{Kind: agent.UpdateNotice, Notice: &agent.Notice{Severity: NoticeWarning, Title: "MCP server " + fl.Server + " failed", Description: msg}})
		} else {
			hs.post(agent.Update{Kind: agent.UpdateMessage, Text: msg + "\n"})
		}
	}
}

// bindChannels binds the servers the client provides (MCP over ACP) to
// this session's client: a fork or a load of a session reaches them
// through its own connection. Without MCPChannels, they fail to
// connect.
func (hs *Session) bindChannels(servers []MCPServer) []MCPServer {
	out := slices.Clone(servers)
	for i, sv := range out {
		if sv.Channel == nil {
			continue
		}
		bound := *sv.Channel
		bound.Channel = nil
		if mc, ok := hs.c.(MCPChannels); ok {
			bound.Channel = mc.MCPChannel(bound.ID)
		}
		out[i].Channel = &bound
	}
	return out
}

// mcpElicit passes an MCP server's elicitation request to the user
// through e, in the mode the server asked for (the Manager only lets
// through the modes the client has), naming the server in the message:
// a server must not pass itself off as the agent. A URL must be http(s)
// and come with its elicitation id.
func (hs *Session) mcpElicit(e Elicitor) func(context.Context, string, Elicitation) (ElicitationResult, error) {
	return func(ctx context.Context, server string, el Elicitation) (ElicitationResult, error) {
		el.Message = fmt.Sprintf("The MCP server %q asks: %s", server, el.Message)
		switch el.Mode {
		case "form":
		case "url":
			u, err := url.Parse(el.URL)
			if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return ElicitationResult{}, fmt.Errorf("elicitation URL %q is not an http(s) URL", el.URL)
			}
			if el.ElicitationID == "" {
				return ElicitationResult{}, fmt.Errorf("a URL elicitation needs an elicitationId")
			}
			el.URL = u.String()
		default:
			return ElicitationResult{}, fmt.Errorf("elicitation mode %q is not supported", el.Mode)
		}
		return e.Elicit(ctx, hs.s.ID(), el)
	}
}

// syncMCPTools makes the registry's MCP tools those the servers offer now:
// gone ones are unregistered (and so no longer offered to the model), new
// ones registered.
func (hs *Session) syncMCPTools(m *mcpclient.Manager) {
	if m == nil {
		return
	}
	tools := hs.s.Tools()
	want := map[string]mcpclient.Tool{}
	for _, t := range m.Tools() {
		want[t.QualifiedName] = t
	}
	disabled := map[string]bool{}
	for _, d := range tools.Descriptors() {
		if d.Source != agent.ToolSourceMCP {
			continue
		}
		t, ok := want[d.Name]
		switch {
		case !ok:
			tools.UnregisterMCP(d.Name)
		case sameDefinition(d, mcpTool(m, t)):
			delete(want, d.Name) // already registered
		default:
			// The server changed the tool under the same name: the
			// model is offered, and its arguments checked against, what
			// the server says now (registered again below, as enabled
			// as it was).
			tools.UnregisterMCP(d.Name)
			disabled[d.Name] = !d.Enabled
		}
	}
	for _, t := range want {
		tool := mcpTool(m, t)
		if err := tools.Register(tool); err != nil {
			// A schema our validator cannot compile: keep the tool, check
			// only that the arguments are an object.
			hs.log.Warn("MCP tool schema not usable; arguments are checked as an object only", "tool", t.QualifiedName, "error", err)
			tool.Parameters = json.RawMessage(`{"type":"object"}`)
			if err := tools.Register(tool); err != nil {
				hs.log.Error("registering an MCP tool", "tool", t.QualifiedName, "error", err)
			}
		}
		if disabled[t.QualifiedName] {
			_ = tools.SetEnabled(t.QualifiedName, false)
		}
	}
}

// sameDefinition reports whether the registered tool d is tool as it
// would be registered now.
func sameDefinition(d agent.ToolDescriptor, tool agent.Tool) bool {
	return d.Description == tool.Description && d.ShortDescription == tool.ShortDescription &&
		bytes.Equal(bytes.TrimSpace(d.Parameters), bytes.TrimSpace(tool.Parameters))
}

// mcpDigest identifies an MCP tool's definition as the model and the
// user see it: what "Always allow" of it is remembered under.
func mcpDigest(t mcpclient.Tool) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(t.QualifiedName), []byte(t.Title), []byte(t.Description), t.InputSchema} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return t.QualifiedName + "@" + hex.EncodeToString(h.Sum(nil))[:16]
}

// mcpTool is an MCP server's tool as a session tool: named by server and
// tool in its title, asking permission like any tool with effects.
func mcpTool(m *mcpclient.Manager, t mcpclient.Tool) agent.Tool {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	digest := mcpDigest(t)
	return agent.Tool{
		Name: t.QualifiedName, Description: fmt.Sprintf("%s (tool %q of the MCP server %q)", desc, t.Name, t.Server),
		ShortDescription: fmt.Sprintf("MCP %s: %s", t.Server, t.Title),
		Parameters:       t.InputSchema, Source: agent.ToolSourceMCP,
		Describe: func(json.RawMessage) (agent.ToolCallInfo, error) {
			return agent.ToolCallInfo{Kind: agent.ToolKindOther, Title: fmt.Sprintf("%s: %s (MCP)", t.Server, t.Title), Action: policy.ActionOther,
				ApprovalKey: digest}, nil
		},
		Run: func(ctx context.Context, args json.RawMessage) (agent.ToolResult, error) {
			res, err := m.Call(ctx, t.QualifiedName, args)
			if err != nil {
				return agent.ToolResult{}, err
			}
			out := agent.ToolResult{Text: res.Text, IsError: res.IsError}
			for _, b := range res.Content {
				out.Content = append(out.Content, agent.ToolContent{Block: &b})
				// Images go to the model too (the core drops types and
				// sizes it cannot send).
				if b.Type == agent.BlockImage {
					out.Images = append(out.Images, llm.Part{Type: llm.PartImage, MIMEType: b.MIMEType, Data: b.Data})
				}
			}
			return out, nil
		},
	}
}

// closeMCP ends the session's MCP connections (servers are shut down).
func (hs *Session) closeMCP() {
	hs.mu.Lock()
	m := hs.mcp
	hs.mcp = nil
	hs.mu.Unlock()
	if m != nil {
		if err := m.Close(); err != nil {
			hs.log.Warn("closing MCP servers", "error", err)
		}
	}
}

// MCPTransports says which MCP transports beside stdio sessions can use:
// streamable HTTP and HTTP+SSE.
func MCPTransports() (http, sse bool) { return mcpclient.Supports() }
