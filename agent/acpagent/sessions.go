package acpagent

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
)

var (
	_ acp.SessionStore   = (*Agent)(nil)
	_ acp.SessionManager = (*Agent)(nil)
)

// mcpServers are the MCP servers a client named, for the host.
func mcpServers(servers []acp.McpServer) []host.MCPServer {
	if servers == nil {
		return nil
	}
	out := make([]host.MCPServer, 0, len(servers))
	for _, s := range servers {
		var hs host.MCPServer
		switch {
		case s.Stdio != nil:
			st := &host.MCPStdioServer{Name: s.Stdio.Name, Command: s.Stdio.Command, Args: s.Stdio.Args}
			for _, e := range s.Stdio.Env {
				st.Env = append(st.Env, host.MCPEnvVariable{Name: e.Name, Value: e.Value})
			}
			hs.Stdio = st
		case s.HTTP != nil:
			hs.HTTP = &host.MCPHTTPServer{Name: s.HTTP.Name, URL: s.HTTP.URL, Headers: headers(s.HTTP.Headers)}
		case s.SSE != nil:
			hs.SSE = &host.MCPHTTPServer{Name: s.SSE.Name, URL: s.SSE.URL, Headers: headers(s.SSE.Headers)}
		case s.ACP != nil:
			// Reached through the session's connection (acpClient.MCPChannel).
			hs.Channel = &host.MCPChannelServer{Name: s.ACP.Name, ID: s.ACP.ServerID}
		case s.Unknown != nil:
			var v struct{ Name string }
			_ = json.Unmarshal(s.Unknown.Raw, &v)
			hs.Unknown = &host.MCPUnknownServer{Name: v.Name, Tag: s.Unknown.Tag}
		}
		out = append(out, hs)
	}
	return out
}

func headers(hs []acp.HttpHeader) []host.MCPHTTPHeader {
	var out []host.MCPHTTPHeader
	for _, h := range hs {
		out = append(out, host.MCPHTTPHeader{Name: h.Name, Value: h.Value})
	}
	return out
}

// CheckLoad implements acp.LoadChecker: a cwd or additional directory
// that is no directory is refused before the live session is closed.
func (a *Agent) CheckLoad(ctx context.Context, req *acp.LoadRequest) error {
	return wireError(a.h.CheckDirs(req.CWD, req.AdditionalDirectories))
}

// LoadSession implements acp.SessionStore: the session is read from its
// file and, for session/load, its conversation replayed while it is
// read (host.OpenRequest.Replay), before the updates the load sends.
func (a *Agent) LoadSession(ctx context.Context, req *acp.LoadRequest, client *acp.ClientConn) (acp.Session, *acp.LoadedSession, error) {
	if err := a.usable(client.Connection()); err != nil {
		return nil, nil, err
	}
	open := host.OpenRequest{CWD: req.CWD, AdditionalDirectories: req.AdditionalDirectories,
		MCPServers: mcpServers(req.MCPServers), ClientPrompt: clientPrompt(req.SystemPrompt), Routes: routesOf(client.Connection())}
	if req.Replay {
		r := replayer{conn: client, log: a.log.With("session", req.SessionID)}
		open.Replay = func(it host.HistoryItem) { r.item(ctx, it) }
	}
	hs, err := a.h.LoadSession(ctx, req.SessionID, open, a.client(client))
	if err != nil {
		return nil, nil, wireError(err)
	}
	as := a.wrap(hs, client)
	loaded := &acp.LoadedSession{Modes: modeState(hs), ConfigOptions: configOptions(hs.Options())}
	if req.Replay {
		loaded.Replay = func(ctx context.Context) {
			// The meter as it was, after the conversation.
			if u := as.usageUpdate(); u != nil {
				as.send(ctx, acp.SessionUpdate{UsageUpdate: u})
			}
		}
	} else if u := as.usageUpdate(); u != nil {
		a.client(client).post(acp.SessionUpdate{UsageUpdate: u})
	}
	return as, loaded, nil
}

// replayer sends a session's history (host.Session.History) to the
// client as session/update, the way it was shown and in the order it
// came: user and agent messages, thoughts, every tool call with its
// final status and content, and each plan where it was sent.
type replayer struct {
	conn *acp.ClientConn
	log  *slog.Logger
}

func (r replayer) send(ctx context.Context, u acp.SessionUpdate) {
	if err := r.conn.Update(ctx, u); err != nil && ctx.Err() == nil {
		r.log.Debug("sending update", "error", err)
	}
}

// item sends one item of the history.
func (r replayer) item(ctx context.Context, it host.HistoryItem) {
	if it.Plan != nil {
		if u, ok := (acpSink{r.conn}).planUpdate(it.Plan); ok {
			r.send(ctx, u)
		}
		return
	}
	e := it.Entry
	switch e.Kind {
	case agent.EntryUser:
		if e.Source == agent.SourceSummary {
			r.summary(ctx, e)
			return
		}
		for _, p := range e.Shown() {
			switch p.Type {
			case llm.PartImage:
				r.send(ctx, acp.UserMessageChunk(acp.ContentBlock{Image: &acp.ImageContent{MimeType: p.MIMEType, Data: p.Data}}))
			default:
				r.send(ctx, acp.UserMessageChunk(acp.TextBlock(p.Text)))
			}
		}
	case agent.EntryAssistant:
		id := acp.MessageId(uuid.NewString())
		if e.Reasoning != "" {
			r.send(ctx, acp.SessionUpdate{AgentThoughtChunk: &acp.ContentChunk{Content: acp.TextBlock(e.Reasoning), MessageID: id}})
		}
		if e.Text != "" {
			r.send(ctx, acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.TextBlock(e.Text), MessageID: id}})
		}
	case agent.EntryToolOutput:
		tc := &acp.ToolCall{ToolCallID: acp.ToolCallId(e.ToolCallID), Title: e.ToolName, Name: e.ToolName,
			Kind: acp.ToolKindOther, Status: acp.ToolCallStatusCompleted}
		if e.IsError {
			tc.Status = acp.ToolCallStatusFailed
		}
		if d := e.Display; d != nil {
			tc.Title, tc.Kind, tc.Locations, tc.RawInput, tc.Content = d.Title, acp.ToolKind(d.Kind), toACPLocations(d.Locations), d.RawInput, toACPToolContent(d.Content)
		}
		if tc.Content == nil {
			tc.Content = []acp.ToolCallContent{{Content: &acp.Content{Content: acp.TextBlock(e.Text)}}}
		}
		r.send(ctx, acp.SessionUpdate{ToolCall: tc})
	}
}

// summary replays a compaction's summary (a user entry only for the
// model) as what it is, not as a message the user wrote: the compaction
// to clients that show compactions, else a message saying what it is.
func (r replayer) summary(ctx context.Context, e *agent.Entry) {
	text := strings.TrimPrefix(e.Text, compact.CompressedHistoryPrefix)
	if caps := r.conn.Capabilities(); caps.Session != nil && caps.Session.Compaction != nil {
		id := acp.CompactionId(uuid.NewString())
		r.send(ctx, acp.SessionUpdate{CompactionSummaryChunk: &acp.CompactionSummaryChunk{CompactionID: id, Content: acp.TextBlock(text)}})
		r.send(ctx, acp.SessionUpdate{CompactionUpdate: &acp.CompactionUpdate{CompactionID: id, Status: acp.CompactionStatusCompleted}})
		return
	}
	r.send(ctx, acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{MessageID: acp.MessageId(uuid.NewString()),
		Content: acp.TextBlock(SummaryHeading + text)}})
}

// SummaryHeading introduces a compaction's summary in a replayed
// conversation, for clients that show no compactions.
const SummaryHeading = "Earlier messages were compacted into this summary:\n\n"

// usageUpdate is the usage_update that shows the client the session's
// context meter and cost as they were before the restart; nil when the
// context window is unknown or nothing was used.
func (as *acpSession) usageUpdate() *acp.UsageUpdate {
	u := as.s.ContextUsage()
	if u == nil {
		return nil
	}
	au := &acp.UsageUpdate{Used: u.Used, Size: u.Size}
	if c := u.Cost; c != nil {
		au.Cost = &acp.Cost{Amount: c.Amount, Currency: c.Currency}
	}
	return au
}

// ListSessions implements acp.SessionStore from the files' headers.
func (a *Agent) ListSessions(ctx context.Context, req *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	page, err := a.h.ListSessions(ctx, host.ListRequest{CWD: req.CWD, Cursor: req.Cursor, Archived: req.Archived})
	if err != nil {
		return nil, wireError(err)
	}
	resp := &acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}, NextCursor: page.NextCursor}
	for _, s := range page.Sessions {
		resp.Sessions = append(resp.Sessions, acp.SessionInfo{SessionID: acp.SessionId(s.ID), CWD: s.CWD, Title: s.Title,
			UpdatedAt: s.UpdatedAt.UTC().Format(time.RFC3339Nano), Archived: &s.Archived})
	}
	return resp, nil
}

// DeleteSession implements acp.SessionStore. The service has closed the
// session if it was open.
func (a *Agent) DeleteSession(ctx context.Context, id acp.SessionId) error {
	return wireError(a.h.DeleteSession(ctx, id))
}

// ForkSession implements acp.Forker: session/fork and the fork extension
// (host.Host.ForkSession).
func (a *Agent) ForkSession(ctx context.Context, req *acp.ForkRequest, source acp.Session, client *acp.ClientConn) (acp.Session, *acp.ForkSessionResponse, error) {
	if err := a.usable(client.Connection()); err != nil {
		return nil, nil, err
	}
	var src *host.Session
	if as, ok := source.(*acpSession); ok {
		src = as.hs
	}
	hs, err := a.h.ForkSession(ctx, host.ForkRequest{SourceID: req.SourceID, FromUserEntryIndex: req.FromUserEntryIndex,
		OpenRequest: host.OpenRequest{CWD: req.CWD, AdditionalDirectories: req.AdditionalDirectories, MCPServers: mcpServers(req.MCPServers),
			ClientPrompt: clientPrompt(req.SystemPrompt), Routes: routesOf(client.Connection())}},
		src, a.client(client))
	if err != nil {
		return nil, nil, wireError(err)
	}
	return a.wrap(hs, client), &acp.ForkSessionResponse{SessionID: acp.SessionId(hs.ID()), Modes: modeState(hs), ConfigOptions: configOptions(hs.Options())}, nil
}

// SetSessionTitle implements acp.SessionManager (host.Host.SetTitle).
func (a *Agent) SetSessionTitle(ctx context.Context, id acp.SessionId, title string) (string, error) {
	t, err := a.h.SetTitle(ctx, id, title)
	return t, wireError(err)
}

// SessionStatus implements acp.SessionManager, without side effects.
func (a *Agent) SessionStatus(ctx context.Context, id acp.SessionId) (string, error) {
	st, err := a.h.Status(ctx, id)
	if err != nil {
		return "", wireError(err)
	}
	if st == host.StatusOpen {
		return acp.SessionStatusOpen, nil
	}
	return acp.SessionStatusSaved, nil
}

// ArchiveSession implements acp.SessionManager: the state is kept in the
// header of the session's file.
func (a *Agent) ArchiveSession(ctx context.Context, id acp.SessionId, archived bool) error {
	return wireError(a.h.Archive(ctx, id, archived))
}
