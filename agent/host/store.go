package host

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	segjson "github.com/segmentio/encoding/json"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/compact"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/telemetry"
)

// NewRequest is what a new session starts with.
type NewRequest struct {
	// CWD is the session's working directory (absolute).
	CWD string
	// AdditionalDirectories are more workspace roots.
	AdditionalDirectories []string
	// MCPServers are the MCP servers the session connects to.
	MCPServers []MCPServer
	// ClientPrompt is the client's system prompt for the session (nil:
	// none); see agent.ClientPrompt for how it is composed.
	ClientPrompt *agent.ClientPrompt
	// Routes are the model endpoints the client chose (nil: the
	// configured ones).
	Routes *Routes
}

// NewSession starts a session for client c, in the default model and
// mode. With a store, its id is held and its file created at its first
// prompt, so a session nobody prompted leaves nothing behind.
func (h *Host) NewSession(ctx context.Context, req NewRequest, c Client) (*Session, error) {
	if err := h.UsableWith(req.Routes); err != nil {
		return nil, err
	}
	// The id is held before anything of the session is on disk: a
	// start-up's clean-up (persistence.RemoveStale) removes the directory
	// of an id whose lock is free.
	id := uuid.NewString()
	res, err := h.reserveID(id)
	if err != nil {
		return nil, err
	}
	cfg, err := h.newSessionConfig(id, req.CWD, req.AdditionalDirectories, c, req.Routes)
	if err != nil {
		if res != nil {
			res.Release()
		}
		return nil, err
	}
	if req.ClientPrompt != nil {
		cfg.ClientPrompt = *req.ClientPrompt
	}
	j, err := h.reserveFile(&cfg, req.AdditionalDirectories, res)
	if err != nil {
		closeWorkspace(cfg.Workspace)
		return nil, err
	}
	s := agent.NewSession(cfg)
	hs := h.newHostSession(s, c, j, req.AdditionalDirectories, cfg.Workspace)
	hs.clientPrompt, hs.routes = cfg.ClientPrompt, req.Routes
	h.connectMCP(ctx, hs, req.MCPServers, c.Features())
	// The commands come first, before anything the host-wide work
	// (model discovery, started by track) may tell the session.
	c.CommandsChanged(hs.Commands())
	h.track(hs)
	if h.cfg.Telemetry != nil {
		h.cfg.Telemetry.Emit(ctx, telemetry.EventSessionNew, s.ID(), h.requestID(ctx), "cwd", s.CWD())
	}
	h.tellSetupNotices(hs)
	h.log.Info("session created", "session", s.ID(), "cwd", s.CWD(), "model", h.spec.String())
	return hs, nil
}

// checkDirs says which of a session's directories (its cwd, the
// client's additionalDirectories) is not an existing directory, in the
// request's words; the workspace would only say a root cannot be opened.
func checkDirs(cwd string, extra []string) error {
	check := func(field, dir string) error {
		fi, err := os.Stat(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%w: %s: %s does not exist", ErrInvalidParams, field, dir)
		case err != nil:
			return fmt.Errorf("%w: %s: %v", ErrInvalidParams, field, err)
		case !fi.IsDir():
			return fmt.Errorf("%w: %s: %s is not a directory", ErrInvalidParams, field, dir)
		}
		return nil
	}
	if err := check("cwd", cwd); err != nil {
		return err
	}
	for i, dir := range extra {
		if err := check(fmt.Sprintf("additionalDirectories[%d]", i), dir); err != nil {
			return err
		}
	}
	return nil
}

// CheckDirs refuses, as opening a session would, a cwd or additional
// directory that is not an existing directory (an empty cwd: the stored
// one, not checked here). Nil for a host without the built-in tools,
// whose sessions need no workspace.
func (h *Host) CheckDirs(cwd string, extra []string) error {
	if h.cfg.NoBuiltinTools || cwd == "" {
		return nil
	}
	return checkDirs(cwd, extra)
}

// newSessionConfig is the configuration of a session of this host in
// cwd, for client c: the default model, the workspace and the host-wide
// settings.
func (h *Host) newSessionConfig(id, cwd string, extra []string, c Client, routes *Routes) (agent.SessionConfig, error) {
	return h.sessionConfig(id, id, cwd, extra, c, routes)
}

// sessionConfig is newSessionConfig with the editor's fs/* and terminals
// used under session editorID: a subagent the client does not see as a
// session of its own uses its parent's, the only id the client knows.
func (h *Host) sessionConfig(id, editorID, cwd string, extra []string, c Client, routes *Routes) (agent.SessionConfig, error) {
	if !h.cfg.NoBuiltinTools {
		if err := checkDirs(cwd, extra); err != nil {
			return agent.SessionConfig{}, err
		}
	}
	f := c.Features()
	def := h.defaultModel()
	cfg := agent.SessionConfig{
		ID: id, CWD: cwd,
		ModelConfig: agent.ModelConfig{Model: h.modelFor(def, routes), ModelName: h.spec.Model, ModelID: def.choice.Spec,
			ReasoningEffort: def.level, ModelInfo: def.info, Retry: h.cfg.Retry, StreamLimits: h.cfg.StreamLimits,
			PromptTimeout: h.cfg.PromptTimeout, ModelTitles: h.cfg.ModelTitles, MaxTurnRequests: h.cfg.MaxTurnRequests},
		ToolConfig: agent.ToolConfig{Mode: h.cfg.Mode, PermissionPolicy: h.cfg.PermissionPolicy, Permissions: c},
		OutputConfig: agent.OutputConfig{Sink: c, Logger: h.log, Telemetry: h.cfg.Telemetry, RequestID: h.cfg.RequestID,
			ExecutionStates: f.ExecutionStates, CompactionUpdates: f.Compaction},
		HookConfig: agent.HookConfig{StopHooks: h.cfg.StopHooks, Hooks: slices.Clone(h.cfg.Hooks)},
	}
	cfg.History.OffloadThreshold = h.cfg.OffloadThreshold
	if h.cfg.Resize != nil {
		cfg.History.Resize = &compact.Resizer{Policy: *h.cfg.Resize}
	}
	wcfg := h.cfg.Workspace
	if h.store != nil {
		// Long tool results go next to the session's file, where the
		// read_file tool can read them back (read-only).
		dir := offloadDir(h.store.Dir(), id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return cfg, fmt.Errorf("%w: creating %s: %v", ErrInternal, dir, err)
		}
		cfg.History.OffloadDir = dir
		extra = append(slices.Clone(extra), dir)
		wcfg.ReadOnlyRoots = append(slices.Clone(wcfg.ReadOnlyRoots), dir)
		wcfg.KeptOutputDir = dir
	}
	if !h.cfg.NoBuiltinTools {
		ws, err := tools.NewWorkspace(cwd, extra, wcfg, c.Editor(editorID))
		if err != nil {
			return cfg, fmt.Errorf("%w: cwd: cannot open the workspace: %v", ErrInvalidParams, err)
		}
		cfg.Workspace = ws
		// The project's hooks run in the workspace, pinned and confined.
		cfg.Hooks = append(cfg.Hooks, h.loadProjectHooks(cwd, c, ws)...)
	} else {
		cfg.Hooks = append(cfg.Hooks, h.loadProjectHooks(cwd, c, nil)...)
	}
	return cfg, nil
}

// createFile creates a new session's file, with its starting mode and
// model, so a restart finds them even when flags change.
func (h *Host) createFile(cfg *agent.SessionConfig, extra []string, parent string) (*journal, error) {
	if h.store == nil {
		return nil, nil
	}
	f, err := h.store.Create(persistence.Header{ID: cfg.ID, CWD: cfg.CWD, AdditionalDirectories: extra,
		ParentSessionID: parent, Timestamp: time.Now()})
	if err != nil {
		return nil, fmt.Errorf("%w: creating the session file: %v", ErrInternal, err)
	}
	return h.startJournal(cfg, newJournal(f, h.log, nil, nil))
}

// reserveID holds id for a session started by NewSession (nil without a
// store).
func (h *Host) reserveID(id string) (*persistence.Reservation, error) {
	if h.store == nil {
		return nil, nil
	}
	// A new random id: its first prompt need not look for files an
	// earlier holder left.
	res, err := h.store.ReserveNew(id)
	if err != nil {
		return nil, fmt.Errorf("%w: reserving the session file: %v", ErrInternal, err)
	}
	return res, nil
}

// reserveFile is createFile for a session started by NewSession: its id
// is held (res, reserveID) and its file published at its first prompt
// (journal.save), so sessions nobody prompted leave nothing behind.
func (h *Host) reserveFile(cfg *agent.SessionConfig, extra []string, res *persistence.Reservation) (*journal, error) {
	if h.store == nil {
		return nil, nil
	}
	if h.cfg.OneShot {
		// Prompted at once: a record to open it again by would be
		// removed before anyone could.
		res.Unrecorded()
	}
	j, err := h.startJournal(cfg, h.unsavedJournal(res, persistence.Header{ID: cfg.ID, CWD: cfg.CWD,
		AdditionalDirectories: extra, Timestamp: time.Now()}))
	if err == nil {
		h.prepareFile(res)
	}
	return j, err
}

// unsavedJournal is newUnsavedJournal with the host's logger and test
// hook.
func (h *Host) unsavedJournal(res *persistence.Reservation, hdr persistence.Header) *journal {
	j := newUnsavedJournal(res, hdr, h.log)
	j.beforeSave = h.cfg.saveHook
	return j
}

// prepareFile has the file a reserved session's first prompt saves it
// in made now (persistence.Reservation.Prepare), so that the prompt,
// which the user waits on, does not create one. A failure costs only
// that: the first prompt creates the file.
func (h *Host) prepareFile(res *persistence.Reservation) {
	if err := res.Prepare(); err != nil {
		h.log.Warn("preparing the file of a new session", "session", res.ID(), "error", err)
	}
}

// startJournal records a new session's mode and model in j, so a restart
// finds them even when flags change.
func (h *Host) startJournal(cfg *agent.SessionConfig, j *journal) (*journal, error) {
	j.keepOnce(func() {
		j.SetMode(cmp.Or(cfg.Mode, policy.ModeDefault))
		j.SetModel(cfg.ModelID, cfg.ReasoningEffort)
		if cfg.ClientPrompt.Text != "" {
			j.setClientPrompt(cfg.ClientPrompt)
		}
	})
	if err := j.Sync(); err != nil {
		j.Close()
		return nil, fmt.Errorf("%w: %v", ErrInternal, err)
	}
	cfg.Journal = j
	return j, nil
}

// newHostSession wraps a new, loaded, resumed or forked session for its
// client, with a file history of its own (a subagent's changes go to its
// parent's instead: useParentCheckpoints) and its session-bound tools.
func (h *Host) newHostSession(s *agent.Session, c Client, j *journal, extra []string, w agent.Workspace) *Session {
	return h.newHostSessionWith(s, c, j, extra, w, nil)
}

// newHostSessionWith is newHostSession with the session's file history
// opened already (history, nil if not), which it takes over.
func (h *Host) newHostSessionWith(s *agent.Session, c Client, j *journal, extra []string, w agent.Workspace, history *persistence.Checkpoints) *Session {
	hs := h.wrapSession(s, c, j, extra, w)
	hs.openCheckpoints(history)
	hs.bindSessionTools(true)
	return hs
}

// wrapSession wraps a session for its client; the caller binds its tools
// (bindSessionTools).
func (h *Host) wrapSession(s *agent.Session, c Client, j *journal, extra []string, w agent.Workspace) *Session {
	ws, _ := w.(*tools.Workspace)
	if ws != nil {
		// The helper is warmed only where a command can run.
		ws.WarmCommands(func() bool {
			return s.Mode() != policy.ModeReadOnly && slices.Contains(s.ActiveToolNames(), tools.ToolRunCommand)
		})
	}
	hs := &Session{s: s, h: h, c: c, j: j, extra: extra, ws: ws, log: h.log.With("session", s.ID()),
		subSem: make(chan struct{}, MaxParallelSubagents)}
	if ws != nil {
		ws.OnPromptsChanged(hs.commandsChanged)
	}
	return hs
}

// sessionBoundTools are the tools whose work is one session's own: task
// starts that session's subagents, exit_plan_mode asks its user and
// switches its mode.
var sessionBoundTools = []string{ToolTask, ToolExitPlanMode}

// bindSessionTools gives hs its own session-bound tools; every session
// (new, loaded, resumed, forked, subagent) gets them here and nowhere
// else. A fork's registry is a clone of its source's (a fork of a fork:
// of the fork's), whose copies are bound to the source: each is dropped
// before hs's own is registered. A subagent (asksUser false) has no
// exit_plan_mode, since it asks no one; sessions without a workspace have
// no coding tools and get neither.
func (hs *Session) bindSessionTools(asksUser bool) {
	if hs.ws == nil {
		return
	}
	for _, name := range sessionBoundTools {
		hs.s.Tools().Unregister(name)
	}
	bound := []agent.Tool{hs.taskTool()}
	if asksUser {
		bound = append(bound, hs.exitPlanModeTool())
	}
	for _, t := range bound {
		if err := hs.s.Tools().Register(t); err != nil {
			hs.log.Warn("a session tool is not available", "tool", t.Name, "error", err)
		}
	}
}

// openCheckpoints gives a stored session its file history: what the
// tools change can be rewound. store is the history opened already (a
// load opens it as its replay starts), or nil.
func (hs *Session) openCheckpoints(store *persistence.Checkpoints) {
	if hs.h.store == nil || hs.ws == nil || hs.j == nil {
		if store != nil {
			store.Close()
		}
		return
	}
	if store == nil {
		var err error
		store, err = persistence.OpenCheckpoints(checkpointDir(hs.h.store.Dir(), hs.s.ID()))
		if err != nil {
			hs.log.Warn("file checkpoints are off for this session", "error", err)
			return
		}
	}
	hs.cp = newCheckpoints(store)
	hs.cp.scanDir = keptScanDir(hs.h.store.Dir(), hs.ws.Roots())
	hs.ws.SetCheckpointer(hs.cp)
	hs.j.setCheckpoints(hs.cp)
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
	// entries before it: History shows each where it came.
	plans []placedPlan
	usage []agent.UsageRecord
	// clientPrompt is the client's system prompt last recorded (nil:
	// none was).
	clientPrompt *agent.ClientPrompt
}

// placedPlan is a plan and the number of transcript entries before it.
type placedPlan struct {
	at   int
	plan *agent.Plan
}

// decodedRecord is a record as a load keeps it: an entry already
// converted (most records, converted on the decoding goroutines), any other
// record as decoded.
type decodedRecord struct {
	entry agent.Entry
	rec   *record // nil for an entry
}

// applyStored gives cfg what st recorded: the client's system prompt
// (cp, the one it sent, else the stored one, which it returns), the mode
// and the model with its reasoning effort, where that model is usable
// with routes.
func (h *Host) applyStored(cfg *agent.SessionConfig, st loadedState, cp *agent.ClientPrompt, routes *Routes) *agent.ClientPrompt {
	if cp == nil {
		cp = st.clientPrompt
	}
	if cp != nil {
		cfg.ClientPrompt = *cp
	}
	if st.mode != "" {
		cfg.Mode = st.mode
	}
	if e, ok := h.modelByID(st.model); ok && usableWith(e, routes) {
		cfg.Model, cfg.ModelName, cfg.ModelID, cfg.ModelInfo, cfg.ReasoningEffort = h.modelFor(e, routes), e.spec.Model, e.choice.Spec, e.info, e.level
		if st.levelSet {
			cfg.ReasoningEffort = st.level
		}
	}
	return cp
}

// scratchRecords are the records entries are decoded into before they
// are converted: a record is several times an entry's size.
var scratchRecords = sync.Pool{New: func() any { return new(record) }}

// decodeRecord decodes one record line. It validates as it decodes, in
// one pass (segmentio's decoder, which the MCP SDK links in anyway; about
// ten times encoding/json's Unmarshal, itself a validating scan and a
// decoding one, on a session's records), and rejects what is not JSON with
// a *json.SyntaxError, as persistence.OpenDecoded requires.
func decodeRecord(rec []byte, d *decodedRecord) error {
	r := scratchRecords.Get().(*record)
	defer scratchRecords.Put(r)
	return decodeVia(r, rec, d)
}

// decodeVia is decodeRecord with r as the scratch record.
func decodeVia(r *record, rec []byte, d *decodedRecord) error {
	// The decoder fills the slices it finds in place: the scratch's
	// arrays, cleared, spare an allocation of ten elements per record
	// (entry copies what it keeps).
	content, calls := r.Content[:cap(r.Content)], r.ToolCalls[:cap(r.ToolCalls)]
	clear(content)
	clear(calls)
	*r = record{Content: content[:0], ToolCalls: calls[:0]}
	if err := segjson.Unmarshal(rec, r); err != nil {
		return err
	}
	if r.Type == recEntry {
		d.entry = r.entry()
		return nil
	}
	c := *r
	d.rec = &c
	// c owns the arrays now.
	r.Content, r.ToolCalls = nil, nil
	return nil
}

// readRawRecords is readRecords for records not yet decoded (a
// reservation's few), decoded here one by one.
func readRawRecords(recs []json.RawMessage) (loadedState, []error) {
	decoded := make([]decodedRecord, len(recs))
	errs := make([]error, len(recs))
	for i, rec := range recs {
		errs[i] = decodeRecord(rec, &decoded[i])
	}
	return readRecords(decoded, errs)
}

// readRecords rebuilds a session's state from its decoded records
// (decodeErrs[i]: why record i could not be decoded).
func readRecords(decoded []decodedRecord, decodeErrs []error) (loadedState, []error) {
	var st loadedState
	var errs []error
	st.entries = make([]agent.Entry, 0, len(decoded))
	for i := range decoded {
		if decodeErrs[i] != nil {
			errs = append(errs, fmt.Errorf("record %d: %w", i, decodeErrs[i]))
			continue
		}
		r := decoded[i].rec
		if r == nil {
			st.entryStart = append(st.entryStart, i)
			st.entries = append(st.entries, decoded[i].entry)
			continue
		}
		switch r.Type {
		case recMode:
			st.mode = r.Mode
		case recModel:
			st.model, st.level, st.levelSet = r.Model, r.ThoughtLevel, true
		case recPermission:
			st.perms = append(st.perms, r.decision())
		case recPlan:
			st.plan = r.Plan.plan()
			if r.Plan != nil {
				st.plans = append(st.plans, placedPlan{at: len(st.entries), plan: r.Plan.plan()})
			}
		case recUsage:
			st.usage = append(st.usage, r.usage())
		case recClientPrompt:
			if r.ClientPrompt != nil {
				st.clientPrompt = &agent.ClientPrompt{Text: r.ClientPrompt.Text, Override: r.ClientPrompt.Override}
			}
		case recClear:
			st.entries, st.entryStart, st.plan, st.plans = st.entries[:0], st.entryStart[:0], nil, nil
		default:
			// A record of a newer version: kept in the file, not understood.
			errs = append(errs, fmt.Errorf("record %d: unknown type %q", i, r.Type))
		}
	}
	return st, errs
}

// OpenRequest is what a stored session is opened with (Load, Fork).
type OpenRequest struct {
	// CWD is the session's working directory; "" means the stored one
	// (the source's, for a fork).
	CWD string
	// AdditionalDirectories are more workspace roots; nil means the
	// stored ones (the source's, for a fork).
	AdditionalDirectories []string
	// MCPServers are the MCP servers the session connects to (nil, for a
	// fork: the source's).
	MCPServers []MCPServer
	// ClientPrompt is the client's system prompt; nil means the one
	// stored with the session (the source's, for a fork).
	ClientPrompt *agent.ClientPrompt
	// Routes are the model endpoints the client chose (nil: the
	// configured ones).
	Routes *Routes
	// Replay, if set, is given the conversation as History shows it once
	// the session is open, item by item in order, before LoadSession
	// returns and before anything the load tells the client (an
	// interrupted command or rewind, the commands): the first items while
	// the file is still being read. It runs on LoadSession's goroutine
	// and must not keep the items. A load that fails once the file is
	// read (a repair it cannot write) may have replayed part of it first;
	// one refused before (an unusable cwd, a damaged header) has not.
	Replay func(HistoryItem)
}

// LoadSession opens stored session id for client c: its transcript,
// mode, model, remembered decisions and plan come back (History is the
// conversation as it was shown); what the agent was doing when it
// stopped (a command, a rewind) is completed first, and the client told.
func (h *Host) LoadSession(ctx context.Context, id string, req OpenRequest, c Client) (*Session, error) {
	if err := h.UsableWith(req.Routes); err != nil {
		return nil, err
	}
	if h.store == nil {
		return nil, fmt.Errorf("%w: sessions are not stored", ErrNotStored)
	}
	hs, err := h.openStored(id, req.CWD, req.AdditionalDirectories, req.ClientPrompt, req.Routes, c, req.Replay)
	if err != nil {
		return nil, err
	}
	s := hs.s
	if h.cfg.Telemetry != nil {
		h.cfg.Telemetry.Emit(ctx, telemetry.EventSessionLoad, s.ID(), h.requestID(ctx), "cwd", s.CWD())
	}
	h.log.Info("session loaded", "session", s.ID(), "entries", s.Stats().TotalEntries)
	h.connectMCP(ctx, hs, req.MCPServers, c.Features())
	c.CommandsChanged(hs.Commands())
	h.tellSetupNotices(hs)
	hs.announceChildren()
	return hs, nil
}

// openStored opens a stored session for client: its file (locked), its
// transcript, mode, model and remembered decisions. With replay, the
// conversation is replayed to it (OpenRequest.Replay).
func (h *Host) openStored(id, cwd string, extra []string, cp *agent.ClientPrompt, routes *Routes, c Client, replay func(HistoryItem)) (*Session, error) {
	var f *persistence.File
	var loaded *persistence.Loaded
	var decoded *persistence.Decoded[decodedRecord]
	var cfg agent.SessionConfig
	var cfgErr error
	configured := false
	var rs *replayStream
	if replay != nil {
		rs = newReplayStream(replay, h.log.With("session", id))
	}
	// The file history, read once: opened as the replay starts (which
	// must know whether a rewind is pending), then the session's.
	var history *persistence.Checkpoints
	defer func() {
		if history != nil {
			history.Close()
		}
	}()
	// The session is configured (its workspace opened) from the header,
	// before the records are decoded: a replay streamed while they are
	// must not be followed by an error the request could have had first.
	stream := persistence.Stream[decodedRecord]{Opened: func(hdr persistence.Header, data []byte, headerEnd int64) error {
		if cwd == "" {
			cwd = hdr.CWD
		}
		if extra == nil {
			extra = hdr.AdditionalDirectories
		}
		cfg, cfgErr = h.newSessionConfig(id, cwd, extra, c, routes)
		if cfgErr != nil {
			return cfgErr
		}
		configured = true
		if rs != nil {
			// The id is checked and the session held here.
			if history != nil {
				history.Close() // a try before, which found the file locked
			}
			var pending bool
			history, pending = h.openHistory(id)
			rs.opened(data, headerEnd, !pending)
		}
		return nil
	}}
	if rs != nil {
		stream.Record = rs.record
	}
	here, err := h.untilUnlocked(id, func() (err error) {
		f, loaded, decoded, err = persistence.OpenDecodedStream(h.store, id, decodeRecord, stream)
		return err
	})
	if err != nil && configured {
		closeWorkspace(cfg.Workspace)
	}
	switch {
	case err != nil && err == cfgErr:
		return nil, err
	case errors.Is(err, persistence.ErrInvalidID):
		return nil, fmt.Errorf("%w: sessionId: %v", ErrInvalidParams, err)
	case errors.Is(err, persistence.ErrNotFound):
		// Started (here or by another process) and never prompted: it
		// opens empty from its reservation.
		return h.openReserved(id, cwd, extra, cp, routes, c)
	case errors.Is(err, persistence.ErrLocked) && !here && !h.store.Exists(id):
		// Started in another process but never saved: nothing to load.
		return nil, sessionNotFound(id, "")
	case errors.Is(err, persistence.ErrLocked):
		return nil, h.lockedError(id, here, err)
	case err != nil:
		return nil, fmt.Errorf("%w: reading session %s: %v", ErrInternal, id, err)
	}
	if rs != nil {
		h.log.Debug("session file read", "session", id, "records", len(loaded.Records), "replayed", rs.sent)
	} else {
		h.log.Debug("session file read", "session", id, "records", len(loaded.Records))
	}
	for _, sk := range loaded.Skipped {
		h.log.Warn("skipped a damaged line of the session file", "session", id, "line", sk.Line, "error", sk.Err)
	}
	if loaded.TornTail > 0 {
		h.log.Warn("cut a torn last line off the session file (a copy is kept as .broken)", "session", id, "bytes", loaded.TornTail)
	}
	st, errs := readRecords(decoded.Values, decoded.Errs)
	decoded = nil // the records' values are the entries now
	for _, e := range errs {
		h.log.Warn("skipped a session record", "session", id, "error", e)
	}
	cfg.Title, cfg.TitleByUser = loaded.Header.Title, loaded.Header.TitleByUser
	cp = h.applyStored(&cfg, st, cp, routes)
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
			closeWorkspace(cfg.Workspace)
			return nil, fmt.Errorf("%w: repairing session %s: %v", ErrInternal, id, err)
		}
		h.log.Warn("repaired the session file: unusable records dropped, unanswered tool calls answered (the file as it was is kept as .broken)",
			"session", id, "records", len(recs), "after", len(newRecs))
		recs, st.entries, st.entryStart = newRecs, entries, starts
		st.plans = repair.placePlans(st.plans)
	}
	var early []json.RawMessage
	if loaded.Header.Title == "" {
		early = recs
	}
	j := newJournal(f, h.log, st.entryStart, early)
	j.clientPrompt = st.clientPrompt
	if cp != nil && (st.clientPrompt != nil || cp.Text != "") {
		j.setClientPrompt(*cp)
	}
	cfg.Journal = j
	s := agent.NewSession(cfg)
	if len(appendLater) > 0 {
		h.log.Warn("answered the tool calls a stop left without results", "session", id, "calls", len(appendLater))
	}
	// A file damaged or a turn killed mid-tool must still load and go on:
	// Restore also makes the history consistent for the model.
	if err := s.Restore(agent.Restored{Entries: st.entries, Append: appendLater, Decisions: st.perms, Plan: st.plan, Usage: st.usage}); err != nil {
		s.Close()
		return nil, fmt.Errorf("%w: %v", ErrInternal, err)
	}
	hs := h.newHostSessionWith(s, c, j, extra, cfg.Workspace, history)
	history = nil // the session's now
	hs.plans = st.plans
	hs.clientPrompt, hs.routes = cfg.ClientPrompt, routes
	hs.removeInterruptedWrites(context.Background(), st.entries)
	var said []string
	if hs.cp != nil {
		// What the agent was doing when it stopped: commands first (a
		// rewind never runs during one).
		for _, finish := range []func(context.Context) string{hs.finishInterruptedCommands, hs.finishInterruptedRewind} {
			if msg := finish(context.Background()); msg != "" {
				h.log.Warn(msg, "session", id)
				said = append(said, msg)
			}
		}
	}
	if rs != nil {
		// The conversation first, as it is now, then what the load did.
		rs.finish(hs)
	}
	for _, msg := range said {
		hs.post(agent.Update{Kind: agent.UpdateMessage, Text: msg + "\n"})
	}
	h.track(hs)
	return hs, nil
}

// openReserved opens session id, which was started and never saved, from
// its reservation record (persistence.Reservation.Keep): empty, in the
// mode and model it had, its id held again and its file created at its
// first prompt, as a new session's.
func (h *Host) openReserved(id, cwd string, extra []string, cp *agent.ClientPrompt, routes *Routes, c Client) (*Session, error) {
	hdr, recs, err := h.store.Reserved(id)
	if err != nil {
		if !errors.Is(err, persistence.ErrNotFound) {
			h.log.Warn("reading the reservation of a session never saved", "session", id, "error", err)
		}
		return nil, sessionNotFound(id, "")
	}
	var res *persistence.Reservation
	here, err := h.untilUnlocked(id, func() (err error) { res, err = h.store.Reserve(id); return err })
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil, sessionNotFound(id, "it was saved meanwhile; try again")
	case errors.Is(err, persistence.ErrLocked) && !here:
		return nil, sessionNotFound(id, "") // open, unsaved, in another process
	case errors.Is(err, persistence.ErrLocked):
		return nil, h.lockedError(id, here, err)
	case err != nil:
		return nil, fmt.Errorf("%w: reserving session %s: %v", ErrInternal, id, err)
	}
	h.prepareFile(res)
	st, errs := readRawRecords(recs)
	for _, e := range errs {
		h.log.Warn("skipped a record of a session's reservation", "session", id, "error", e)
	}
	if cwd == "" {
		cwd = hdr.CWD
	}
	if extra == nil {
		extra = hdr.AdditionalDirectories
	}
	cfg, err := h.newSessionConfig(id, cwd, extra, c, routes)
	if err != nil {
		res.Release()
		return nil, err
	}
	cfg.Title, cfg.TitleByUser = hdr.Title, hdr.TitleByUser
	cp = h.applyStored(&cfg, st, cp, routes)
	j := h.unsavedJournal(res, hdr)
	j.pending = recs
	j.clientPrompt = st.clientPrompt
	if cp != nil && (st.clientPrompt != nil || cp.Text != "") {
		j.setClientPrompt(*cp)
	}
	cfg.Journal = j
	s := agent.NewSession(cfg)
	if len(st.perms) > 0 {
		if err := s.Restore(agent.Restored{Decisions: st.perms}); err != nil {
			s.Close()
			return nil, fmt.Errorf("%w: %v", ErrInternal, err)
		}
	}
	hs := h.newHostSession(s, c, j, extra, cfg.Workspace)
	hs.clientPrompt, hs.routes = cfg.ClientPrompt, routes
	h.track(hs)
	h.log.Info("opened a session never saved from its reservation", "session", id, "cwd", cwd)
	return hs, nil
}

// ListRequest selects stored sessions to list.
type ListRequest struct {
	// CWD, if set, lists only the sessions in that directory.
	CWD string
	// Cursor is where the page starts (a previous page's NextCursor).
	Cursor string
	// Archived is "exclude" (default), "include" or "only".
	Archived string
}

// SessionInfo is a stored session as listed.
type SessionInfo struct {
	ID, CWD, Title string
	UpdatedAt      time.Time
	Archived       bool
}

// SessionList is a page of stored sessions; NextCursor, if set, is where
// the next page starts.
type SessionList struct {
	Sessions   []SessionInfo
	NextCursor string
}

// ListSessions lists stored sessions from their files' headers, newest
// first, a page at a time.
func (h *Host) ListSessions(_ context.Context, req ListRequest) (*SessionList, error) {
	if h.store == nil {
		return nil, fmt.Errorf("%w: sessions are not stored", ErrNotStored)
	}
	filter := persistence.ArchiveFilter(req.Archived)
	if filter == "exclude" {
		filter = persistence.ArchivedExclude
	}
	// Subagents are their parents': the editor's list of conversations is
	// the user's own (a child opens by its id, and the parent's load
	// announces its children to clients that show them).
	page, err := h.store.List(persistence.ListOptions{CWD: req.CWD, Cursor: req.Cursor, Archived: filter, NoSubagents: true})
	if errors.Is(err, persistence.ErrInvalidCursor) {
		// The store's words ("persistence: ... unknown version") mean
		// nothing to a client; what it can do does.
		return nil, fmt.Errorf("%w: cursor: %q is not a cursor session/list gave; list again without one", ErrInvalidParams, req.Cursor)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: listing sessions: %v", ErrInternal, err)
	}
	out := &SessionList{NextCursor: page.NextCursor}
	for _, s := range page.Sessions {
		out.Sessions = append(out.Sessions, SessionInfo{ID: s.ID, CWD: s.CWD, Title: s.Title, UpdatedAt: s.UpdatedAt, Archived: s.Archived})
	}
	return out, nil
}

// DeleteSession deletes stored session id: its file and its directory
// (file history, offloaded results). A live session must be closed
// first.
func (h *Host) DeleteSession(ctx context.Context, id string) error {
	if h.store == nil {
		return fmt.Errorf("%w: sessions are not stored", ErrNotStored)
	}
	if err := persistence.ValidateID(id); err != nil {
		// Adapters reject such ids first; this guards direct callers.
		return fmt.Errorf("%w: sessionId: %v", ErrInvalidParams, err)
	}
	here, err := h.untilUnlocked(id, func() error { return h.store.Delete(id) })
	switch {
	case errors.Is(err, persistence.ErrLocked):
		return h.lockedError(id, here, err)
	case err != nil:
		return fmt.Errorf("%w: deleting session %s: %v", ErrInternal, id, err)
	}
	// Only a directory: a file of that name is not the session's.
	if fi, err := os.Lstat(filepath.Join(h.store.Dir(), id)); err == nil && fi.IsDir() {
		if err := os.RemoveAll(filepath.Join(h.store.Dir(), id)); err != nil {
			h.log.Warn("removing the session's offloaded files", "session", id, "error", err)
		}
	}
	if h.cfg.Telemetry != nil {
		h.cfg.Telemetry.Emit(ctx, telemetry.EventSessionDelete, id, h.requestID(ctx))
	}
	h.log.Info("session deleted", "session", id)
	return nil
}

// ForkRequest is what a fork is made of: the source, where the fork
// works (OpenRequest: empty means the source's) and how much of the
// conversation it keeps.
type ForkRequest struct {
	OpenRequest
	SourceID string
	// FromUserEntryIndex, if set, keeps only the conversation before that
	// user message.
	FromUserEntryIndex *int
}

// ForkSession forks a session for client c: src if it is live here (nil:
// the stored session req.SourceID, opened for the fork and closed). The
// fork gets a copy of the source's transcript (up to
// req.FromUserEntryIndex), mode and model, in memory and in its own file,
// and nothing remembered (its file forgets the source's remembered
// decisions it copied); the two never affect each other.
func (h *Host) ForkSession(ctx context.Context, req ForkRequest, src *Session, c Client) (*Session, error) {
	if err := h.UsableWith(req.Routes); err != nil {
		return nil, err
	}
	if src == nil {
		if h.store == nil {
			return nil, sessionNotFound(req.SourceID, "")
		}
		// Not open here: read it, fork it, let it go.
		opened, err := h.openStored(req.SourceID, "", nil, nil, req.Routes, c, nil)
		if err != nil {
			return nil, err
		}
		defer opened.Close()
		src = opened
	}
	id := uuid.NewString()
	cwd, extra := req.CWD, req.AdditionalDirectories
	if cwd == "" {
		cwd = src.s.CWD()
	}
	if extra == nil {
		extra = src.extra
	}
	cfg, err := h.newSessionConfig(id, cwd, extra, c, req.Routes)
	if err != nil {
		return nil, err
	}
	cp := src.clientPrompt
	if req.ClientPrompt != nil {
		cp = *req.ClientPrompt
	}
	opts := agent.ForkOptions{ID: id, FromUserEntryIndex: req.FromUserEntryIndex, Sink: c, Permissions: c, Workspace: cfg.Workspace,
		ClientPrompt: &cp}
	var fj *journal
	if src.j != nil && h.store != nil {
		// A fork copies its source's file: a source never prompted is
		// saved first.
		if err := src.j.save(); err != nil {
			closeWorkspace(cfg.Workspace)
			return nil, fmt.Errorf("%w: %v", ErrInternal, err)
		}
		// Called with the source's appends held: the file copy holds the
		// records of exactly the entries the fork keeps.
		opts.Journal = func(kept int) (agent.Journal, error) {
			// What a full disk held back is written first: the fork
			// copies the file.
			if err := src.j.flush(); err != nil {
				return nil, fmt.Errorf("%w: forking the session file: %v", ErrInternal, err)
			}
			hdr := src.j.f.Header()
			hdr.ID, hdr.ParentSessionID, hdr.CWD, hdr.AdditionalDirectories, hdr.Timestamp = id, src.s.ID(), cwd, extra, time.Now()
			hdr.Title = agent.ForkTitle(hdr.Title)
			f, err := h.store.Fork(src.j.f, hdr, src.j.prefixFor(kept))
			if errors.Is(err, persistence.ErrClosed) {
				return nil, sessionNotFound(src.s.ID(), "it was closed")
			}
			if err != nil {
				return nil, fmt.Errorf("%w: forking the session file: %v", ErrInternal, err)
			}
			fj = newJournal(f, h.log, append([]int(nil), src.j.entryStartPrefix(kept)...), nil)
			fj.copied = true
			return fj, nil
		}
	}
	f, err := src.s.ForkWith(opts)
	if err != nil {
		closeWorkspace(cfg.Workspace)
		if fj != nil {
			fj.Close()
			h.store.Delete(id)
		}
		var bad *agent.InvalidForkEntryIndexError
		if errors.As(err, &bad) {
			return nil, fmt.Errorf("%w: fromUserEntryIndex: %w", ErrInvalidParams, err)
		}
		return nil, err
	}
	if fj != nil {
		// The copied records include the source's remembered decisions;
		// the fork starts with nothing remembered, also after a reload,
		// and in the mode it has now.
		fj.Remember(agent.RememberedDecision{Scope: agent.ScopeForget})
		fj.SetMode(f.Mode())
		copied := src.clientPrompt // the copied records' own
		fj.clientPrompt = &copied
		fj.setClientPrompt(cp)
		if err := fj.Sync(); err != nil {
			h.log.Error("saving the fork", "session", id, "error", err)
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
	fs := h.newHostSession(f, c, fj, extra, cfg.Workspace)
	fs.clientPrompt, fs.routes = cp, req.Routes
	h.connectMCP(ctx, fs, servers, c.Features())
	h.track(fs)
	h.log.Info("session forked", "session", f.ID(), "from", src.s.ID())
	return fs, nil
}
