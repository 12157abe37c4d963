package acpagent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/telemetry"
)

var _ acp.SessionStore = (*Agent)(nil)

// newSessionConfig is the configuration of a session of this agent in
// cwd, talking to client: the default model, the workspace and the
// agent-wide settings.
func (a *Agent) newSessionConfig(id, cwd string, extra []string, client *acp.ClientConn) (agent.SessionConfig, error) {
	caps := client.Capabilities()
	def := a.defaultModel()
	cfg := agent.SessionConfig{
		ID: id, CWD: cwd,
		ModelConfig: agent.ModelConfig{Model: a.model, ModelName: a.spec.Model, ModelID: def.choice.Spec,
			ReasoningEffort: def.level, ModelInfo: def.info, Retry: a.cfg.Retry, StreamLimits: a.cfg.StreamLimits,
			PromptTimeout: a.cfg.PromptTimeout, ModelTitles: a.cfg.ModelTitles, MaxTurnRequests: a.cfg.MaxTurnRequests},
		ToolConfig: agent.ToolConfig{Mode: a.cfg.Mode, PermissionPolicy: a.cfg.PermissionPolicy, Permissions: acpSink{client}},
		OutputConfig: agent.OutputConfig{Sink: acpSink{client}, Logger: a.log, Telemetry: a.cfg.Telemetry, RequestID: acp.RequestID,
			ExecutionStates:   a.cfg.ExecutionStates || acp.ExecutionStateEnabled(caps),
			CompactionUpdates: caps.Session != nil && caps.Session.Compaction != nil},
		HookConfig: agent.HookConfig{StopHooks: a.cfg.StopHooks, Hooks: slices.Clone(a.cfg.Hooks)},
	}
	cfg.History.OffloadThreshold = a.cfg.OffloadThreshold
	if a.cfg.Resize != nil {
		cfg.History.Resize = &compact.Resizer{Policy: *a.cfg.Resize}
	}
	wcfg := a.cfg.Workspace
	if a.store != nil {
		// Long tool results go next to the session's file, where the
		// read_file tool can read them back (read-only).
		dir := offloadDir(a.store.Dir(), id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return cfg, fmt.Errorf("%w: creating %s: %v", acp.ErrInternal, dir, err)
		}
		cfg.History.OffloadDir = dir
		extra = append(slices.Clone(extra), dir)
		wcfg.ReadOnlyRoots = append(slices.Clone(wcfg.ReadOnlyRoots), dir)
		wcfg.KeptOutputDir = dir
	}
	if !a.cfg.NoBuiltinTools {
		ws, err := tools.NewWorkspace(cwd, extra, wcfg, editorOf(client, id))
		if err != nil {
			return cfg, fmt.Errorf("%w: cwd: cannot open the workspace: %v", acp.ErrInvalidParams, err)
		}
		cfg.Workspace = ws
		// The project's hooks run in the workspace, pinned and confined.
		cfg.Hooks = append(cfg.Hooks, a.loadProjectHooks(cwd, client, ws)...)
	} else {
		cfg.Hooks = append(cfg.Hooks, a.loadProjectHooks(cwd, client, nil)...)
	}
	return cfg, nil
}

// createFile creates a new session's file, with its starting mode and
// model, so a restart finds them even when flags change.
func (a *Agent) createFile(cfg *agent.SessionConfig, extra []string, parent string) (*journal, error) {
	if a.store == nil {
		return nil, nil
	}
	f, err := a.store.Create(persistence.Header{ID: cfg.ID, CWD: cfg.CWD, AdditionalDirectories: extra,
		ParentSessionID: parent, Timestamp: time.Now()})
	if err != nil {
		return nil, fmt.Errorf("%w: creating the session file: %v", acp.ErrInternal, err)
	}
	return a.startJournal(cfg, newJournal(f, a.log, nil, nil))
}

// reserveFile is createFile for a session started by session/new: its id
// is held and its file created at its first prompt (journal.save), so
// sessions nobody prompted leave nothing behind.
func (a *Agent) reserveFile(cfg *agent.SessionConfig, extra []string) (*journal, error) {
	if a.store == nil {
		return nil, nil
	}
	res, err := a.store.Reserve(cfg.ID)
	if err != nil {
		return nil, fmt.Errorf("%w: reserving the session file: %v", acp.ErrInternal, err)
	}
	return a.startJournal(cfg, newUnsavedJournal(res, persistence.Header{ID: cfg.ID, CWD: cfg.CWD,
		AdditionalDirectories: extra, Timestamp: time.Now()}, a.log))
}

// startJournal records a new session's mode and model in j, so a restart
// finds them even when flags change.
func (a *Agent) startJournal(cfg *agent.SessionConfig, j *journal) (*journal, error) {
	j.SetMode(cmp.Or(cfg.Mode, policy.ModeDefault))
	j.SetModel(cfg.ModelID, cfg.ReasoningEffort)
	if err := j.Sync(); err != nil {
		j.Close()
		return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
	}
	cfg.Journal = j
	return j, nil
}

// newACPSession wraps a new or opened session for its connection, with a
// file history of its own (a subagent's changes go to its parent's
// instead: useParentCheckpoints).
func (a *Agent) newACPSession(s *agent.Session, conn *acp.ClientConn, j *journal, extra []string, w agent.Workspace) *acpSession {
	as := a.wrapSession(s, conn, j, extra, w)
	as.openCheckpoints()
	return as
}

// wrapSession wraps a session for its connection.
func (a *Agent) wrapSession(s *agent.Session, conn *acp.ClientConn, j *journal, extra []string, w agent.Workspace) *acpSession {
	ws, _ := w.(*tools.Workspace)
	as := &acpSession{s: s, a: a, conn: conn, j: j, extra: extra, ws: ws, log: a.log.With("session", s.ID()),
		subSem: make(chan struct{}, MaxParallelSubagents)}
	if ws != nil {
		if err := s.Tools().Register(as.taskTool()); err != nil {
			as.log.Warn("the task tool is not available", "error", err)
		}
	}
	return as
}

// openCheckpoints gives a stored session its file history: what the
// tools change can be rewound.
func (as *acpSession) openCheckpoints() {
	if as.a.store == nil || as.ws == nil || as.j == nil {
		return
	}
	store, err := persistence.OpenCheckpoints(checkpointDir(as.a.store.Dir(), as.s.ID()))
	if err != nil {
		as.log.Warn("file checkpoints are off for this session", "error", err)
		return
	}
	as.cp = newCheckpoints(store)
	as.ws.SetCheckpointer(as.cp)
	as.j.setCheckpoints(as.cp)
}

// closeWorkspace closes the workspace of a session that could not be set
// up.
func closeWorkspace(w agent.Workspace) {
	if w != nil {
		w.Close()
	}
}

// loadedState is a session file read back.
type loadedState struct {
	entries    []agent.Entry
	entryStart []int
	mode       policy.Mode
	model      string
	level      string
	levelSet   bool
	perms      []agent.RememberedDecision
	plan       *agent.Plan
	// plans are the plans the client was sent, each with the number of
	// entries before it: session/load shows each where it came.
	plans []placedPlan
	usage []agent.UsageRecord
}

// placedPlan is a plan and the number of transcript entries before it.
type placedPlan struct {
	at   int
	plan *acp.Plan
}

// placePlans finds the plans of recs and where they came (after a load
// repair changed the records).
func placePlans(recs []json.RawMessage) []placedPlan {
	var out []placedPlan
	entries := 0
	for _, raw := range recs {
		var r struct {
			Type string    `json:"type"`
			Plan *acp.Plan `json:"plan"`
		}
		if json.Unmarshal(raw, &r) != nil {
			continue
		}
		switch r.Type {
		case recEntry:
			entries++
		case recPlan:
			if r.Plan != nil {
				out = append(out, placedPlan{at: entries, plan: r.Plan})
			}
		case recClear:
			out, entries = nil, 0
		}
	}
	return out
}

// decodeRecords decodes the records in parallel: on a long session,
// decoding is most of the time of session/load.
func decodeRecords(recs []json.RawMessage) ([]record, []error) {
	out := make([]record, len(recs))
	errs := make([]error, len(recs))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(recs)/1024))
	var wg sync.WaitGroup
	per := (len(recs) + workers - 1) / max(workers, 1)
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, len(recs))
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				if err := json.Unmarshal(recs[i], &out[i]); err != nil {
					errs[i] = fmt.Errorf("record %d: %w", i, err)
				}
			}
		})
	}
	wg.Wait()
	return out, errs
}

func readRecords(recs []json.RawMessage) (loadedState, []error) {
	var st loadedState
	var errs []error
	decoded, decodeErrs := decodeRecords(recs)
	st.entries = make([]agent.Entry, 0, len(recs))
	for i := range decoded {
		if decodeErrs[i] != nil {
			errs = append(errs, decodeErrs[i])
			continue
		}
		r := &decoded[i]
		switch r.Type {
		case recEntry:
			st.entryStart = append(st.entryStart, i)
			st.entries = append(st.entries, r.entry())
		case recMode:
			st.mode = r.Mode
		case recModel:
			st.model, st.level, st.levelSet = r.Model, r.ThoughtLevel, true
		case recPermission:
			st.perms = append(st.perms, r.decision())
		case recPlan:
			st.plan = fromACPPlan(r.Plan)
			if r.Plan != nil {
				st.plans = append(st.plans, placedPlan{at: len(st.entries), plan: r.Plan})
			}
		case recUsage:
			st.usage = append(st.usage, r.usage())
		case recClear:
			st.entries, st.entryStart, st.plan, st.plans = st.entries[:0], st.entryStart[:0], nil, nil
		default:
			// A record of a newer version: kept in the file, not understood.
			errs = append(errs, fmt.Errorf("record %d: unknown type %q", i, r.Type))
		}
	}
	return st, errs
}

// LoadSession implements acp.SessionStore: the session is read from its
// file and, for session/load, its conversation replayed.
func (a *Agent) LoadSession(ctx context.Context, req *acp.LoadRequest, client *acp.ClientConn) (acp.Session, *acp.LoadedSession, error) {
	if a.modelErr != nil {
		return nil, nil, a.unusable()
	}
	if a.store == nil {
		return nil, nil, fmt.Errorf("%w: sessions are not stored", acp.ErrMethodNotFound)
	}
	as, err := a.openStored(req.SessionID, req.CWD, req.AdditionalDirectories, client)
	if err != nil {
		return nil, nil, err
	}
	s := as.s
	if a.cfg.Telemetry != nil {
		a.cfg.Telemetry.Emit(ctx, telemetry.EventSessionLoad, s.ID(), acp.RequestID(ctx), "cwd", s.CWD())
	}
	a.log.Info("session loaded", "session", s.ID(), "entries", s.Stats().TotalEntries, "replay", req.Replay)
	a.connectMCP(ctx, as, req.MCPServers, client.Capabilities())
	as.post(acp.SessionUpdate{AvailableCommandsUpdate: as.availableCommands()})
	a.tellSetupNotices(as)
	as.announceChildren()
	loaded := &acp.LoadedSession{Modes: modeState(s.Mode()), ConfigOptions: a.sessionOptions(s)}
	if req.Replay {
		loaded.Replay = func(ctx context.Context) {
			as.replay(ctx)
			// The meter as it was, after the conversation.
			if u := as.usageUpdate(); u != nil {
				if err := as.conn.Update(ctx, acp.SessionUpdate{UsageUpdate: u}); err != nil && ctx.Err() == nil {
					as.log.Debug("replaying the usage", "error", err)
				}
			}
		}
	} else if u := as.usageUpdate(); u != nil {
		as.post(acp.SessionUpdate{UsageUpdate: u})
	}
	return as, loaded, nil
}

// openStored opens a stored session for client: its file (locked), its
// transcript, mode, model and remembered decisions.
func (a *Agent) openStored(id, cwd string, extra []string, client *acp.ClientConn) (*acpSession, error) {
	var f *persistence.File
	var loaded *persistence.Loaded
	here, err := a.untilUnlocked(id, func() (err error) { f, loaded, err = a.store.Open(id); return err })
	switch {
	case errors.Is(err, persistence.ErrInvalidID):
		return nil, fmt.Errorf("%w: sessionId: %v", acp.ErrInvalidParams, err)
	case errors.Is(err, persistence.ErrNotFound):
		return nil, acp.SessionNotFound(id, "")
	case errors.Is(err, persistence.ErrLocked) && !here && !a.store.Exists(id):
		// Started in another process but never saved: nothing to load.
		return nil, acp.SessionNotFound(id, "")
	case errors.Is(err, persistence.ErrLocked):
		return nil, a.lockedError(id, here, err)
	case err != nil:
		return nil, fmt.Errorf("%w: reading session %s: %v", acp.ErrInternal, id, err)
	}
	for _, sk := range loaded.Skipped {
		a.log.Warn("skipped a damaged line of the session file", "session", id, "line", sk.Line, "error", sk.Err)
	}
	if loaded.TornTail > 0 {
		a.log.Warn("cut a torn last line off the session file (a copy is kept as .broken)", "session", id, "bytes", loaded.TornTail)
	}
	st, errs := readRecords(loaded.Records)
	for _, e := range errs {
		a.log.Warn("skipped a session record", "session", id, "error", e)
	}
	if cwd == "" {
		cwd = loaded.Header.CWD
	}
	if extra == nil {
		extra = loaded.Header.AdditionalDirectories
	}
	cfg, err := a.newSessionConfig(id, cwd, extra, client)
	if err != nil {
		f.Close()
		return nil, err
	}
	cfg.Title, cfg.TitleByUser = loaded.Header.Title, loaded.Header.TitleByUser
	if st.mode != "" {
		cfg.Mode = st.mode
	}
	if e, ok := a.modelByID(st.model); ok && e.err == nil {
		cfg.Model, cfg.ModelName, cfg.ModelID, cfg.ModelInfo, cfg.ReasoningEffort = e.model, e.spec.Model, e.choice.Spec, e.info, e.level
		if st.levelSet {
			cfg.ReasoningEffort = st.level
		}
	}
	// Make the tool protocol consistent keeping every usable record as it
	// is (docs/jsonl-format.md, "Repair on load"): the sanitizer below
	// then finds nothing, so the file is not rewritten with new times.
	recs := loaded.Records
	repair := planLoadRepair(st.entries)
	var appendLater []agent.Entry
	switch {
	case !repair.changed():
	case repair.appendOnly():
		appendLater = repair.insert[len(st.entries)-1]
	default:
		newRecs, entries, starts, err := repair.applyTo(recs, st.entries, st.entryStart)
		if err == nil {
			err = f.Repair(newRecs)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: repairing session %s: %v", acp.ErrInternal, id, err)
		}
		a.log.Warn("repaired the session file: unusable records dropped, unanswered tool calls answered (the file as it was is kept as .broken)",
			"session", id, "records", len(recs), "after", len(newRecs))
		recs, st.entries, st.entryStart = newRecs, entries, starts
		st.plans = placePlans(recs)
	}
	var early []json.RawMessage
	if loaded.Header.Title == "" {
		early = recs
	}
	j := newJournal(f, a.log, st.entryStart, early)
	cfg.Journal = j
	s := agent.NewSession(cfg)
	if len(appendLater) > 0 {
		a.log.Warn("answered the tool calls a stop left without results", "session", id, "calls", len(appendLater))
	}
	// A file damaged or a turn killed mid-tool must still load and go on:
	// Restore also makes the history consistent for the model.
	if err := s.Restore(agent.Restored{Entries: st.entries, Append: appendLater, Decisions: st.perms, Plan: st.plan, Usage: st.usage}); err != nil {
		s.Close()
		return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
	}
	as := a.newACPSession(s, client, j, extra, cfg.Workspace)
	as.plans = st.plans
	if as.cp != nil {
		// What the agent was doing when it stopped: commands first (a
		// rewind never runs during one).
		for _, finish := range []func(context.Context) string{as.finishInterruptedCommands, as.finishInterruptedRewind} {
			if msg := finish(context.Background()); msg != "" {
				a.log.Warn(msg, "session", id)
				as.post(acp.AgentMessageChunk(msg + "\n"))
			}
		}
	}
	a.track(as)
	return as, nil
}

// SessionLockedData is the data of the session-locked error
// (acp.CodeSessionLocked): which session, why, and what to do.
type SessionLockedData struct {
	SessionID string `json:"sessionId"`
	Reason    string `json:"reason"` // "openInAnotherProcess"
	Detail    string `json:"detail"`
}

// sessionLockedError is the error of a load, resume or fork of a session
// another agent process has open (its lock): a specific code and data an
// editor can act on, instead of an internal error.
func sessionLockedError(id string, err error) error {
	return &acp.DataError{
		Err: fmt.Errorf("%w: session %s is open in another acp-agent process (another editor window, or an agent that is still running); "+
			"close it there, or stop that agent, then load it again", acp.ErrSessionLocked, id),
		Data: SessionLockedData{SessionID: id, Reason: "openInAnotherProcess", Detail: err.Error()},
	}
}

// replay sends the conversation to the client as session/update, the way
// it was shown and in the order it came: user and agent messages,
// thoughts, every tool call with its final status and content, and each
// plan where it was sent (after the tool call that made it).
func (as *acpSession) replay(ctx context.Context) {
	s := as.s
	send := func(u acp.SessionUpdate) {
		if err := as.conn.Update(ctx, u); err != nil && ctx.Err() == nil {
			as.log.Debug("replaying the history", "error", err)
		}
	}
	plans := as.plans
	sendPlans := func(upTo int) {
		for len(plans) > 0 && plans[0].at <= upTo {
			send(acp.SessionUpdate{Plan: plans[0].plan})
			plans = plans[1:]
		}
	}
	entries := s.Transcript()
	for i, e := range entries {
		if e.Kind != agent.EntryToolOutput {
			// Plans sent before this entry (a tool's plan comes after
			// its call, below).
			sendPlans(i)
		}
		switch e.Kind {
		case agent.EntryUser:
			for _, p := range e.Content {
				switch p.Type {
				case llm.PartImage:
					send(acp.UserMessageChunk(acp.ContentBlock{Image: &acp.ImageContent{MimeType: p.MIMEType, Data: p.Data}}))
				default:
					send(acp.UserMessageChunk(acp.TextBlock(p.Text)))
				}
			}
		case agent.EntryAssistant:
			id := uuid.NewString()
			if e.Reasoning != "" {
				send(acp.SessionUpdate{AgentThoughtChunk: &acp.ContentChunk{Content: acp.TextBlock(e.Reasoning), MessageID: acp.MessageId(id)}})
			}
			if e.Text != "" {
				send(acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.TextBlock(e.Text), MessageID: acp.MessageId(id)}})
			}
		case agent.EntryToolOutput:
			tc := &acp.ToolCall{ToolCallID: acp.ToolCallId(e.ToolCallID), Title: e.ToolName, Name: e.ToolName,
				Kind: acp.ToolKindOther, Status: acp.ToolCallStatusCompleted}
			if e.IsError {
				tc.Status = acp.ToolCallStatusFailed
			}
			if d := toDisplayRecord(e.Display); d != nil {
				tc.Title, tc.Kind, tc.Locations, tc.RawInput, tc.Content = d.Title, d.Kind, d.Locations, d.RawInput, d.Content
			}
			if tc.Content == nil {
				tc.Content = []acp.ToolCallContent{{Content: &acp.Content{Content: acp.TextBlock(e.Text)}}}
			}
			send(acp.SessionUpdate{ToolCall: tc})
			sendPlans(i)
		}
	}
	if as.plans == nil {
		// No plan records placed (a session restored another way): the
		// last plan, at the end.
		if plan := s.Plan(); plan != nil {
			send(acp.SessionUpdate{Plan: toACPPlan(plan)})
		}
		return
	}
	sendPlans(math.MaxInt)
}

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
func (a *Agent) ListSessions(_ context.Context, req *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	if a.store == nil {
		return nil, fmt.Errorf("%w: sessions are not stored", acp.ErrMethodNotFound)
	}
	filter := persistence.ArchiveFilter(req.Archived)
	if filter == "exclude" {
		filter = persistence.ArchivedExclude
	}
	page, err := a.store.List(persistence.ListOptions{CWD: req.CWD, Cursor: req.Cursor, Archived: filter})
	if errors.Is(err, persistence.ErrInvalidCursor) {
		return nil, fmt.Errorf("%w: cursor: %v", acp.ErrInvalidParams, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: listing sessions: %v", acp.ErrInternal, err)
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
	if a.store == nil {
		return fmt.Errorf("%w: sessions are not stored", acp.ErrMethodNotFound)
	}
	if err := persistence.ValidateID(id); err != nil {
		// The service rejects such ids first; this guards direct callers.
		return fmt.Errorf("%w: sessionId: %v", acp.ErrInvalidParams, err)
	}
	here, err := a.untilUnlocked(id, func() error { return a.store.Delete(id) })
	switch {
	case errors.Is(err, persistence.ErrLocked):
		return a.lockedError(id, here, err)
	case err != nil:
		return fmt.Errorf("%w: deleting session %s: %v", acp.ErrInternal, id, err)
	}
	if err := os.RemoveAll(filepath.Join(a.store.Dir(), id)); err != nil {
		a.log.Warn("removing the session's offloaded files", "session", id, "error", err)
	}
	if a.cfg.Telemetry != nil {
		a.cfg.Telemetry.Emit(ctx, telemetry.EventSessionDelete, id, acp.RequestID(ctx))
	}
	a.log.Info("session deleted", "session", id)
	return nil
}

// ForkSession implements acp.Forker: session/fork and the fork extension.
// The fork gets a copy of the source's transcript (up to
// req.FromUserEntryIndex), mode and model, in memory and in its own file,
// and nothing remembered (its file forgets the source's remembered
// decisions it copied); the two never affect each other.
func (a *Agent) ForkSession(ctx context.Context, req *acp.ForkRequest, source acp.Session, client *acp.ClientConn) (acp.Session, *acp.ForkSessionResponse, error) {
	if a.modelErr != nil {
		return nil, nil, a.unusable()
	}
	var src *acpSession
	if as, ok := source.(*acpSession); ok {
		src = as
	} else if a.store != nil {
		// Not open here: read it, fork it, let it go.
		as, err := a.openStored(req.SourceID, "", nil, client)
		if err != nil {
			return nil, nil, err
		}
		defer as.Close()
		src = as
	} else {
		return nil, nil, acp.SessionNotFound(req.SourceID, "")
	}
	id := uuid.NewString()
	cwd, extra := req.CWD, req.AdditionalDirectories
	if cwd == "" {
		cwd = src.s.CWD()
	}
	if extra == nil {
		extra = src.extra
	}
	cfg, err := a.newSessionConfig(id, cwd, extra, client)
	if err != nil {
		return nil, nil, err
	}
	opts := agent.ForkOptions{ID: id, FromUserEntryIndex: req.FromUserEntryIndex, Sink: acpSink{client}, Permissions: acpSink{client}, Workspace: cfg.Workspace}
	var fj *journal
	if src.j != nil && a.store != nil {
		// A fork copies its source's file: a source never prompted is
		// saved first.
		if err := src.j.save(); err != nil {
			closeWorkspace(cfg.Workspace)
			return nil, nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
		}
		// Called with the source's appends held: the file copy holds the
		// records of exactly the entries the fork keeps.
		opts.Journal = func(kept int) (agent.Journal, error) {
			h := src.j.f.Header()
			h.ID, h.ParentSessionID, h.CWD, h.AdditionalDirectories, h.Timestamp = id, src.s.ID(), cwd, extra, time.Now()
			f, err := a.store.Fork(src.j.f, h, src.j.prefixFor(kept))
			if errors.Is(err, persistence.ErrClosed) {
				return nil, acp.SessionNotFound(src.s.ID(), "it was closed")
			}
			if err != nil {
				return nil, fmt.Errorf("%w: forking the session file: %v", acp.ErrInternal, err)
			}
			fj = newJournal(f, a.log, append([]int(nil), src.j.entryStartPrefix(kept)...), nil)
			fj.copied = true
			return fj, nil
		}
	}
	f, err := src.s.ForkWith(opts)
	if err != nil {
		closeWorkspace(cfg.Workspace)
		if fj != nil {
			fj.Close()
			a.store.Delete(id)
		}
		var bad *agent.InvalidForkEntryIndexError
		if errors.As(err, &bad) {
			return nil, nil, &acp.DataError{
				Err:  fmt.Errorf("%w: fromUserEntryIndex: %v", acp.ErrInvalidParams, err),
				Data: map[string]int{"fromUserEntryIndex": bad.Index},
			}
		}
		return nil, nil, err
	}
	if fj != nil {
		// The copied records include the source's remembered decisions;
		// the fork starts with nothing remembered, also after a reload,
		// and in the mode it has now.
		fj.Remember(agent.RememberedDecision{Scope: agent.ScopeForget})
		fj.SetMode(f.Mode())
		if err := fj.Sync(); err != nil {
			a.log.Error("saving the fork", "session", id, "error", err)
		}
	}
	// The fork's MCP tools are its own: those cloned from the source are
	// bound to the source's connections, so the fork connects anew (to
	// the servers it was given, else to the source's).
	for _, d := range f.Tools().Descriptors() {
		if d.Source == agent.ToolSourceMCP {
			f.Tools().UnregisterMCP(d.Name)
		}
	}
	servers := req.MCPServers
	if servers == nil {
		src.mu.Lock()
		servers = src.mcpServers
		src.mu.Unlock()
	}
	fs := a.newACPSession(f, client, fj, extra, cfg.Workspace)
	a.connectMCP(ctx, fs, servers, client.Capabilities())
	a.track(fs)
	a.log.Info("session forked", "session", f.ID(), "from", src.s.ID())
	return fs, &acp.ForkSessionResponse{SessionID: acp.SessionId(f.ID()), Modes: modeState(f.Mode()), ConfigOptions: a.sessionOptions(f)}, nil
}
