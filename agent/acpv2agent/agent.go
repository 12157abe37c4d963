package acpv2agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/host"
)

// Agent implements acp.AgentV2 over a host.Host: v2's methods call the
// host's session lifecycle, and each session is a host.Session wrapped
// for its connection.
type Agent struct {
	h   *host.Host
	log *slog.Logger
}

var (
	_ acp.AgentV2          = (*Agent)(nil)
	_ acp.AuthenticatorV2  = (*Agent)(nil)
	_ acp.SessionDeleterV2 = (*Agent)(nil)
	_ acp.ForkerV2         = (*Agent)(nil)
	_ acp.SessionManager   = (*Agent)(nil)
	_ acp.MethodGate       = (*Agent)(nil)
)

// New returns an Agent serving ACP v2 over h, which the v1 adapter serves
// too (acpagent.Agent.Host): one host, so a session is the same whichever
// version opens it.
func New(h *host.Host) *Agent {
	return &Agent{h: h, log: h.Logger()}
}

// authMethodID is the one authentication method, as v1's: the model is
// configured through the agent's environment and flags (the API keys
// never come from the client), so auth/login checks it is usable.
const authMethodID = "configure-model"

// Initialize implements acp.AgentV2: it advertises what is implemented;
// the capabilities of methods are set from the v2 method table, as
// ServesMethod says.
func (a *Agent) Initialize(context.Context, *acpv2.InitializeRequest) (*acpv2.InitializeResponse, error) {
	http, _ := host.MCPTransports()
	mcp := &acpv2.McpCapabilities{Stdio: &acpv2.McpStdioCapabilities{}}
	if http {
		mcp.HTTP = &acpv2.McpHttpCapabilities{}
	}
	resp := &acpv2.InitializeResponse{
		Info: acpv2.Implementation{Name: "acp-agent", Title: "ACP Agent", Version: a.h.Version()},
		Capabilities: acpv2.AgentCapabilities{Session: &acpv2.SessionCapabilities{
			Prompt:                &acpv2.PromptCapabilities{Image: &acpv2.PromptImageCapabilities{}, EmbeddedContext: &acpv2.PromptEmbeddedContextCapabilities{}},
			MCP:                   mcp,
			AdditionalDirectories: &acpv2.SessionAdditionalDirectoriesCapabilities{},
		}},
		AuthMethods: []acpv2.AuthMethod{{Agent: &acpv2.AuthMethodAgent{MethodID: authMethodID, Name: "Configure a model"}}},
		Meta:        initializeMeta(),
	}
	if err := a.h.Usable(); err != nil && a.h.SetupBroken() {
		resp.AuthMethods[0].Agent.Name = "Fix the config file"
	}
	return resp, nil
}

// initializeMeta advertises what acp-agent adds to ACP v2: prompts held
// while a turn runs, and the extension methods v2 connections serve. It is
// built by the first v2 initialize (it needs the v2 method table, which a
// v1 start never builds), not at package init.
var initializeMeta = sync.OnceValue(func() json.RawMessage {
	meta, err := json.Marshal(map[string]any{"acp-agent": map[string]any{
		"promptQueueing": true, "extensionMethods": acp.ExtensionMethodsV2(),
	}})
	if err != nil {
		panic(err)
	}
	return meta
})

// ServesMethod implements acp.MethodGate: the methods of stored sessions
// are served only with a store. (session/list and session/resume are
// v2's baseline: without a store, list is empty and resume finds only
// live sessions.)
func (a *Agent) ServesMethod(method string) bool {
	switch method {
	case acpv2.MethodSessionDelete, acpv2.MethodSessionSetTitle, acpv2.MethodSessionStatus,
		acpv2.MethodSessionArchive, acpv2.MethodSessionUnarchive:
		return a.h.Stored()
	}
	return true
}

// Login implements acp.AuthenticatorV2: it checks that the configured
// model is usable.
func (a *Agent) Login(_ context.Context, req *acpv2.LoginAuthRequest) error {
	if req.MethodID != authMethodID {
		return fmt.Errorf("%w: methodId: unknown authentication method %q", acp.ErrInvalidParams, req.MethodID)
	}
	if a.h.Usable() != nil {
		return a.unusable()
	}
	return nil
}

// Logout implements acp.AuthenticatorV2: the agent holds no credential of
// the client's (the keys are the process's, shared by every connection),
// so there is nothing to forget; the server returns the connection to the
// unauthenticated state.
func (a *Agent) Logout(context.Context, *acpv2.LogoutAuthRequest) error {
	a.log.Info("v2 client logged out")
	return nil
}

// unusable is the error of a session request while no model is usable.
func (a *Agent) unusable() error { return acpagent.Unusable(a.h) }

// NewSession implements acp.AgentV2.
func (a *Agent) NewSession(ctx context.Context, req *acpv2.NewSessionRequest, conn *acp.ClientConnV2) (acp.SessionV2, *acpv2.NewSessionResponse, error) {
	if a.h.Usable() != nil {
		return nil, nil, a.unusable()
	}
	cl := a.client(conn)
	hs, err := a.h.NewSession(ctx, host.NewRequest{CWD: req.CWD, AdditionalDirectories: req.AdditionalDirectories,
		MCPServers: mcpServers(req.MCPServers)}, cl)
	if err != nil {
		return nil, nil, acpagent.WireError(err)
	}
	return a.wrap(hs, cl), &acpv2.NewSessionResponse{SessionID: hs.ID(), ConfigOptions: configOptions(hs.Options()),
		AvailableCommands: availableCommands(hs.Commands())}, nil
}

// CheckResume implements acp.LoadCheckerV2: a cwd or additional
// directory that is no directory is refused before the live session is
// closed.
func (a *Agent) CheckResume(ctx context.Context, req *acpv2.ResumeSessionRequest) error {
	return acpagent.WireError(a.h.CheckDirs(req.CWD, req.AdditionalDirectories))
}

// ResumeSession implements acp.AgentV2: the session is read from its
// file (the same file v1's session/load reads), and its conversation
// replayed when asked, while the file is read (host.OpenRequest.Replay).
func (a *Agent) ResumeSession(ctx context.Context, req *acpv2.ResumeSessionRequest, conn *acp.ClientConnV2) (acp.SessionV2, *acp.ResumedSessionV2, error) {
	if a.h.Usable() != nil {
		return nil, nil, a.unusable()
	}
	cl := a.client(conn)
	open := host.OpenRequest{CWD: req.CWD, AdditionalDirectories: req.AdditionalDirectories, MCPServers: mcpServers(req.MCPServers)}
	if req.ReplayFrom != nil {
		r := &replayer{cl: cl, log: a.log.With("session", req.SessionID)}
		open.Replay = func(it host.HistoryItem) { r.item(ctx, it) }
	}
	hs, err := a.h.LoadSession(ctx, req.SessionID, open, cl)
	if err != nil {
		return nil, nil, acpagent.WireError(err)
	}
	s := a.wrap(hs, cl)
	resumed := &acp.ResumedSessionV2{Response: acpv2.ResumeSessionResponse{ConfigOptions: configOptions(hs.Options()),
		AvailableCommands: availableCommands(hs.Commands())}}
	resumed.Replay = func(ctx context.Context) {
		if u := s.s.ContextUsage(); u != nil {
			su, _ := toV2Update(agent.Update{Kind: agent.UpdateUsage, Usage: u})
			s.send(ctx, su)
		}
	}
	return s, resumed, nil
}

func (s *v2Session) send(ctx context.Context, u acpv2.SessionUpdate) {
	if err := s.cl.send(ctx, u); err != nil && ctx.Err() == nil {
		s.log.Debug("sending update", "error", err)
	}
}

// replayer sends the conversation (host.Session.History) as upserts, in
// the order it came: user messages with the ids their prompts were
// answered with, agent thoughts and messages, every tool call with its
// final state, and the plan where it was sent.
type replayer struct {
	cl  *v2Client
	log *slog.Logger
	// i is the index of the next item, users the user messages sent.
	i, users int
}

func (r *replayer) send(ctx context.Context, u acpv2.SessionUpdate) {
	if err := r.cl.send(ctx, u); err != nil && ctx.Err() == nil {
		r.log.Debug("sending update", "error", err)
	}
}

// item sends the next item of the history.
func (r *replayer) item(ctx context.Context, it host.HistoryItem) {
	i := r.i
	r.i++
	if it.Plan != nil {
		r.send(ctx, acpv2.SessionUpdate{PlanUpdate: planUpdate(it.Plan)})
		return
	}
	e := it.Entry
	switch e.Kind {
	case agent.EntryUser:
		if e.Source == agent.SourceSummary {
			// A compaction's summary is no message the user wrote: it
			// replays as the compaction (v2 clients show compactions).
			// It keeps its place in the user-N ids of older files.
			id := uuid.NewString()
			r.send(ctx, acpv2.SessionUpdate{CompactionSummaryChunk: &acpv2.CompactionSummaryChunk{CompactionID: id,
				Content: textBlock(strings.TrimPrefix(e.Text, compact.CompressedHistoryPrefix))}})
			r.send(ctx, acpv2.SessionUpdate{CompactionUpdate: &acpv2.CompactionUpdate{CompactionID: id, Status: acpv2.CompactionStatusCompleted}})
			r.users++
			return
		}
		r.send(ctx, acpv2.SessionUpdate{UserMessage: &acpv2.UserMessage{MessageID: storedMessageID(e, r.users, i),
			Content: acpv2.Some(userBlocks(e.Shown()))}})
		r.users++
	case agent.EntryAssistant:
		id := storedMessageID(e, r.users, i)
		if e.Reasoning != "" {
			r.send(ctx, acpv2.SessionUpdate{AgentThought: &acpv2.AgentThought{MessageID: id,
				Content: acpv2.Some([]acpv2.ContentBlock{textBlock(e.Reasoning)})}})
		}
		if e.Text != "" {
			r.send(ctx, acpv2.SessionUpdate{AgentMessage: &acpv2.AgentMessage{MessageID: id,
				Content: acpv2.Some([]acpv2.ContentBlock{textBlock(e.Text)})}})
		}
	case agent.EntryToolOutput:
		c := agent.ToolCallUpdate{ID: e.ToolCallID, Name: e.ToolName, Title: e.ToolName, Kind: agent.ToolKindOther, Status: agent.ToolCompleted}
		if e.IsError {
			c.Status = agent.ToolFailed
		}
		if d := e.Display; d != nil {
			c.Title, c.Kind, c.Locations, c.RawInput, c.Content = d.Title, d.Kind, d.Locations, d.RawInput, d.Content
		}
		if c.Content == nil || showsTerminal(c.Content) {
			// A terminal lived as long as its command: its output is
			// the call's result.
			c.Content = []agent.ToolContent{agent.TextContent(e.Text)}
		}
		tc := toolCallUpdate(c, true)
		r.send(ctx, acpv2.SessionUpdate{ToolCallUpdate: &tc})
	}
}

// ListSessions implements acp.AgentV2 from the files' headers; without a
// store the list is empty.
func (a *Agent) ListSessions(ctx context.Context, req *acpv2.ListSessionsRequest) (*acpv2.ListSessionsResponse, error) {
	resp := &acpv2.ListSessionsResponse{Sessions: []acpv2.SessionInfo{}}
	if !a.h.Stored() {
		return resp, nil
	}
	page, err := a.h.ListSessions(ctx, host.ListRequest{CWD: req.CWD, Cursor: req.Cursor, Archived: string(req.Archived)})
	if err != nil {
		return nil, acpagent.WireError(err)
	}
	resp.NextCursor = page.NextCursor
	for _, s := range page.Sessions {
		archived := s.Archived
		resp.Sessions = append(resp.Sessions, acpv2.SessionInfo{SessionID: s.ID, CWD: s.CWD, Title: s.Title,
			UpdatedAt: s.UpdatedAt.UTC().Format(time.RFC3339Nano), Archived: &archived})
	}
	return resp, nil
}

// DeleteSession implements acp.SessionDeleterV2. The server has closed
// the session if it was open.
func (a *Agent) DeleteSession(ctx context.Context, id acpv2.SessionId) error {
	return acpagent.WireError(a.h.DeleteSession(ctx, id))
}

// ForkSession implements acp.ForkerV2 (host.Host.ForkSession).
func (a *Agent) ForkSession(ctx context.Context, req *acpv2.ForkSessionRequest, source acp.SessionV2, conn *acp.ClientConnV2) (acp.SessionV2, *acpv2.ForkSessionResponse, error) {
	if a.h.Usable() != nil {
		return nil, nil, a.unusable()
	}
	var src *host.Session
	if s, ok := source.(*v2Session); ok {
		src = s.hs
	} else if hs, ok := a.h.Session(req.SessionID); ok {
		src = hs // live on a v1 connection
	}
	var meta struct {
		Agent struct {
			From *int `json:"fromUserEntryIndex"`
		} `json:"acp-agent"`
	}
	if len(req.Meta) > 0 && json.Unmarshal(req.Meta, &meta) != nil {
		meta.Agent.From = nil // a client's _meta of another shape: no index
	}
	cl := a.client(conn)
	hs, err := a.h.ForkSession(ctx, host.ForkRequest{SourceID: req.SessionID, FromUserEntryIndex: meta.Agent.From,
		OpenRequest: host.OpenRequest{CWD: req.CWD, AdditionalDirectories: req.AdditionalDirectories, MCPServers: mcpServers(req.MCPServers)}},
		src, cl)
	if err != nil {
		return nil, nil, acpagent.WireError(err)
	}
	return a.wrap(hs, cl), &acpv2.ForkSessionResponse{SessionID: hs.ID(), ConfigOptions: configOptions(hs.Options()),
		AvailableCommands: availableCommands(hs.Commands())}, nil
}

// SetSessionTitle implements acp.SessionManager (host.Host.SetTitle).
func (a *Agent) SetSessionTitle(ctx context.Context, id acpv2.SessionId, title string) (string, error) {
	t, err := a.h.SetTitle(ctx, id, title)
	return t, acpagent.WireError(err)
}

// SessionStatus implements acp.SessionManager, without side effects.
func (a *Agent) SessionStatus(ctx context.Context, id acpv2.SessionId) (string, error) {
	st, err := a.h.Status(ctx, id)
	if err != nil {
		return "", acpagent.WireError(err)
	}
	if st == host.StatusOpen {
		return string(acpv2.SessionStatusOpen), nil
	}
	return string(acpv2.SessionStatusSaved), nil
}

// ArchiveSession implements acp.SessionManager.
func (a *Agent) ArchiveSession(ctx context.Context, id acpv2.SessionId, archived bool) error {
	return acpagent.WireError(a.h.Archive(ctx, id, archived))
}
