package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/persistence"
)

// checkpointDir is where a stored session's file history goes:
// <session-dir>/<sessionId>/checkpoints.
func checkpointDir(sessionDir, id string) string {
	return filepath.Join(sessionDir, id, "checkpoints")
}

// checkpoints tracks a session's file history: each user message starts
// a checkpoint (a turn record with the message's time), and the tools
// keep a file's content before its first change in it. It implements
// tools.Checkpointer.
type checkpoints struct {
	store *persistence.Checkpoints
	mu    sync.Mutex
	turn  int
	kept  map[string]bool
	// pending is the current turn's record, written with the turn's first
	// kept file: a message that changes no file costs no write.
	pending *persistence.CheckpointRecord
}

func newCheckpoints(store *persistence.Checkpoints) *checkpoints {
	c := &checkpoints{store: store, kept: map[string]bool{}}
	for _, r := range store.Records() {
		c.turn = max(c.turn, r.Turn)
	}
	return c
}

// startTurn starts the checkpoint of the user message sent at t.
func (c *checkpoints) startTurn(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turn++
	c.kept = map[string]bool{}
	c.pending = &persistence.CheckpointRecord{Type: persistence.CheckpointTurn, Turn: c.turn, EntryTime: t}
	return nil
}

// Put implements tools.Checkpointer.
func (c *checkpoints) Put(content []byte) (string, error) { return c.store.Put(content) }

// Keep implements tools.Checkpointer.
func (c *checkpoints) Keep(path string, before *string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kept[path] || c.turn == 0 {
		return nil
	}
	if before != nil {
		if err := c.store.Sync(*before); err != nil {
			return err
		}
	}
	recs := []persistence.CheckpointRecord{{Type: persistence.CheckpointFile, Turn: c.turn, Path: path, Before: before}}
	if c.pending != nil {
		recs = append([]persistence.CheckpointRecord{*c.pending}, recs...)
	}
	if err := c.store.Append(recs...); err != nil {
		return err
	}
	c.pending = nil
	c.kept[path] = true
	return nil
}

// Kept implements tools.Checkpointer.
func (c *checkpoints) Kept(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept[path] || c.turn == 0
}

// rewindParams are the params of acp.MethodExtSessionRewind.
type rewindParams struct {
	ToUserEntryIndex *int `json:"toUserEntryIndex"`
	Files            bool `json:"files"`
	Undo             bool `json:"undo"`
}

// rewindResult says what a rewind did.
type rewindResult struct {
	Entries int      `json:"entries"` // the transcript's length now
	Files   []string `json:"files"`   // the files set back
	// Prompt is the user message rewound to, for the client to offer for
	// editing.
	Prompt string `json:"prompt,omitempty"`
}

// rewindExtension answers acp.MethodExtSessionRewind.
func (a *acpSession) rewindExtension(ctx context.Context, raw json.RawMessage) (any, error) {
	var p rewindParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInvalidParams, err)
	}
	if a.cp == nil {
		return nil, fmt.Errorf("%w: this session keeps no checkpoints (sessions are not stored)", acp.ErrInvalidRequest)
	}
	if p.Undo {
		return a.undoRewind(ctx)
	}
	if p.ToUserEntryIndex == nil {
		return nil, fmt.Errorf("%w: toUserEntryIndex: required (or undo: true)", acp.ErrInvalidParams)
	}
	return a.rewind(ctx, *p.ToUserEntryIndex, p.Files)
}

// rewind sets the conversation back to before the user message at entry
// index to, and with files, every file changed since to its content
// then. The rewind is logged (with what it replaces) before anything
// changes, files are replaced atomically one by one, and the log says
// when it is done: a crash in between is completed on the next load.
func (a *acpSession) rewind(ctx context.Context, to int, files bool) (any, error) {
	entries := a.s.Transcript()
	if !slices.ContainsFunc(a.s.ForkableUserMessages(), func(m agent.ForkableMessage) bool { return m.EntryIndex == to }) {
		return nil, fmt.Errorf("%w: toUserEntryIndex: %d is not a user message of this session (see %s)", acp.ErrInvalidParams, to, acp.MethodExtSessionForkable)
	}
	rw := persistence.Rewind{ID: a.nextRewindID(), Keep: to}
	for i := to; i < len(entries); i++ {
		data, err := json.Marshal(entryRecord(&entries[i]))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
		}
		rw.Removed = append(rw.Removed, data)
	}
	if files {
		var err error
		if rw.Files, err = a.filesSince(ctx, entries[to].Time); err != nil {
			return nil, err
		}
		if err := a.syncFrom(rw.Files); err != nil {
			return nil, err
		}
	}
	if err := a.cp.store.Append(persistence.CheckpointRecord{Type: persistence.CheckpointRewind, Rewind: &rw}); err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
	}
	return a.carryOut(ctx, rw, entries[:to], entries[to].Text)
}

// carryOut applies a logged rewind: the files, then the conversation,
// then the done record.
func (a *acpSession) carryOut(ctx context.Context, rw persistence.Rewind, keep []agent.Entry, prompt string) (*rewindResult, error) {
	res := &rewindResult{Entries: len(keep), Files: []string{}, Prompt: prompt}
	for _, f := range rw.Files {
		if err := a.setFile(ctx, f.Path, f.To); err != nil {
			return nil, fmt.Errorf("%w: restoring %s: %v (run the rewind again to finish it)", acp.ErrInternal, f.Path, err)
		}
		res.Files = append(res.Files, f.Path)
	}
	if err := a.s.ReplaceTranscript(keep); err != nil {
		if errors.Is(err, agent.ErrTurnRunning) {
			return nil, fmt.Errorf("%w: %v", acp.ErrInvalidRequest, err)
		}
		return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
	}
	if err := a.cp.store.Append(persistence.CheckpointRecord{Type: persistence.CheckpointRewindDone, Rewind: &persistence.Rewind{ID: rw.ID}}); err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
	}
	return res, nil
}

// setFile makes path hold the content stored under hash (nil: no file),
// through the workspace's confined filesystem: atomically (a temporary
// file renamed over it), so that it is always old or new, never torn.
func (a *acpSession) setFile(ctx context.Context, path string, hash *string) error {
	if a.ws == nil {
		return errors.New("no workspace")
	}
	if hash == nil {
		_, err := a.ws.Local().RemoveFile(ctx, path)
		return err
	}
	data, err := a.cp.store.Get(*hash)
	if err != nil {
		return err
	}
	return a.ws.Local().WriteTextFile(ctx, path, string(data))
}

// filesSince is every file kept in a checkpoint of a user message sent
// at or after t, to be set back to its content before the first of them,
// and (From) its content now, kept for an undo. (A message that changed
// no file has no turn record: the turns are selected by time.)
func (a *acpSession) filesSince(ctx context.Context, t time.Time) ([]persistence.RewindFile, error) {
	recs := a.cp.store.Records()
	since := map[int]bool{}
	for _, r := range recs {
		if r.Type == persistence.CheckpointTurn && !r.EntryTime.Before(t) {
			since[r.Turn] = true
		}
	}
	var out []persistence.RewindFile
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Type != persistence.CheckpointFile || !since[r.Turn] || seen[r.Path] {
			continue
		}
		seen[r.Path] = true
		now, err := a.currentHash(ctx, r.Path)
		if err != nil {
			return nil, fmt.Errorf("%w: keeping %s before the rewind: %v", acp.ErrInternal, r.Path, err)
		}
		out = append(out, persistence.RewindFile{Path: r.Path, From: now, To: r.Before})
	}
	return out, nil
}

// currentHash stores path's content now and returns its hash (nil: no
// file).
func (a *acpSession) currentHash(ctx context.Context, path string) (*string, error) {
	data, exists, err := a.ws.Local().ReadFile(ctx, path)
	if err != nil || !exists {
		return nil, err
	}
	h, err := a.cp.store.Put(data)
	return &h, err
}

// syncFrom makes the contents a rewind keeps for its undo durable before
// the rewind is logged.
func (a *acpSession) syncFrom(files []persistence.RewindFile) error {
	var hashes []string
	for _, f := range files {
		if f.From != nil {
			hashes = append(hashes, *f.From)
		}
	}
	if err := a.cp.store.Sync(hashes...); err != nil {
		return fmt.Errorf("%w: %v", acp.ErrInternal, err)
	}
	return nil
}

func (a *acpSession) nextRewindID() int {
	id := 0
	for _, r := range a.cp.store.Records() {
		if r.Rewind != nil {
			id = max(id, r.Rewind.ID)
		}
	}
	return id + 1
}

// undoRewind undoes the last rewind, if nothing was said since: the
// removed messages come back and the files go back to what they were.
func (a *acpSession) undoRewind(ctx context.Context) (any, error) {
	var last *persistence.Rewind
	for _, r := range a.cp.store.Records() {
		if r.Type == persistence.CheckpointRewind && r.Rewind.Undo == 0 {
			last = r.Rewind
		}
	}
	if last == nil {
		return nil, fmt.Errorf("%w: there is no rewind to undo", acp.ErrInvalidRequest)
	}
	for _, r := range a.cp.store.Records() {
		if r.Type == persistence.CheckpointRewind && r.Rewind.Undo == last.ID {
			return nil, fmt.Errorf("%w: the last rewind was already undone", acp.ErrInvalidRequest)
		}
	}
	entries := a.s.Transcript()
	if len(entries) != last.Keep {
		return nil, fmt.Errorf("%w: the conversation went on after the rewind; rewind again instead", acp.ErrInvalidRequest)
	}
	back := slices.Clone(entries)
	for _, raw := range last.Removed {
		var r record
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
		}
		back = append(back, r.entry())
	}
	undo := persistence.Rewind{ID: a.nextRewindID(), Undo: last.ID, Keep: len(back)}
	for _, f := range last.Files {
		undo.Files = append(undo.Files, persistence.RewindFile{Path: f.Path, From: f.To, To: f.From})
	}
	for i := range back {
		data, err := json.Marshal(entryRecord(&back[i]))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
		}
		undo.Entries = append(undo.Entries, data)
	}
	if err := a.syncFrom(undo.Files); err != nil {
		return nil, err
	}
	if err := a.cp.store.Append(persistence.CheckpointRecord{Type: persistence.CheckpointRewind, Rewind: &undo}); err != nil {
		return nil, fmt.Errorf("%w: %v", acp.ErrInternal, err)
	}
	return a.carryOut(ctx, undo, back, "")
}

// finishInterruptedRewind completes a rewind (or undo) that a crash
// interrupted: its files are set again (each is old or new, never torn,
// and setting it again is harmless) and its conversation, and the user is
// told. It runs when a session is opened.
func (a *acpSession) finishInterruptedRewind(ctx context.Context) string {
	recs := a.cp.store.Records()
	done := map[int]bool{}
	var pending *persistence.Rewind
	for _, r := range recs {
		switch r.Type {
		case persistence.CheckpointRewind:
			pending = r.Rewind
		case persistence.CheckpointRewindDone:
			done[r.Rewind.ID] = true
		}
	}
	if pending == nil || done[pending.ID] {
		return ""
	}
	entries := a.s.Transcript()
	keep := entries
	if pending.Entries != nil { // an undo: the whole transcript is logged
		keep = nil
		for _, raw := range pending.Entries {
			var r record
			if json.Unmarshal(raw, &r) == nil {
				keep = append(keep, r.entry())
			}
		}
	} else if len(keep) > pending.Keep {
		keep = keep[:pending.Keep]
	}
	res, err := a.carryOut(ctx, *pending, keep, "")
	if err != nil {
		return fmt.Sprintf("A rewind of this session was interrupted and could not be completed: %v", err)
	}
	return fmt.Sprintf("A rewind of this session was interrupted (the agent stopped during it); it was completed now: the conversation has %s, and %s set back.",
		agent.Count(res.Entries, "message", "messages"), agent.Count(len(res.Files), "file was", "files were"))
}

// rewindCommand is /rewind: without arguments it lists the points (the
// user messages, numbered); "/rewind N" goes back to before message N
// with the files, "/rewind N keep-files" without them, "/rewind undo"
// undoes the last rewind.
func (a *acpSession) rewindCommand(ctx context.Context, args string) (string, error) {
	fields := strings.Fields(args)
	msgs := a.s.ForkableUserMessages()
	if len(fields) == 0 {
		if len(msgs) == 0 {
			return "There is nothing to rewind to yet.", nil
		}
		var b strings.Builder
		b.WriteString("Rewind to before one of your messages (files too; add keep-files to leave them):\n")
		for i, m := range msgs {
			fmt.Fprintf(&b, "  /rewind %d  %s\n", i+1, oneLinePreview(m.Text, 70))
		}
		b.WriteString("  /rewind undo  undo the last rewind\n")
		return b.String(), nil
	}
	var res any
	var err error
	switch {
	case fields[0] == "undo":
		if a.cp == nil {
			return "", errors.New("this session keeps no checkpoints")
		}
		res, err = a.undoRewind(ctx)
	default:
		n, perr := strconv.Atoi(fields[0])
		if perr != nil || n < 1 || n > len(msgs) {
			return "", fmt.Errorf("%q is not one of the points 1 to %d (/rewind lists them)", fields[0], len(msgs))
		}
		files := !(len(fields) > 1 && fields[1] == "keep-files")
		if a.cp == nil {
			return "", errors.New("this session keeps no checkpoints")
		}
		res, err = a.rewind(ctx, msgs[n-1].EntryIndex, files)
	}
	if err != nil {
		return "", err
	}
	r := res.(*rewindResult)
	out := fmt.Sprintf("Rewound: the conversation has %s", agent.Count(r.Entries, "message", "messages"))
	if len(r.Files) > 0 {
		out += fmt.Sprintf("; %s set back: %s", agent.Count(len(r.Files), "file", "files"), strings.Join(r.Files, ", "))
	}
	if r.Prompt != "" {
		out += ".\nYour message was: " + r.Prompt
	}
	return out + "\n(/rewind undo takes it back.)", nil
}

func oneLinePreview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
