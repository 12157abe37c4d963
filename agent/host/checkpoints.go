package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/tools"
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
	// lastCommand is the last command id used; running, the turn of each
	// command started and not yet done.
	lastCommand int
	running     map[int]int
	// scanDir is where the workspace's scan is kept between its sessions
	// ("": not kept); scanTaken, the kept scan was asked for.
	scanDir   string
	scanTaken bool
}

// scanCacheDir is the directory, under the session directory, that
// keeps the scans of workspaces between their sessions; maxKeptScans,
// how many workspaces' scans it keeps (the most recent).
const (
	scanCacheDir = ".scan-cache"
	maxKeptScans = 16
)

// keptScanDir is where the scan of the workspace with roots is kept
// (the session's own directories under sessionDir left out: they are
// not the workspace's).
func keptScanDir(sessionDir string, roots []string) string {
	var own []string
	for _, r := range roots {
		if rel, err := filepath.Rel(sessionDir, r); err != nil || !(rel == "." || filepath.IsLocal(rel)) {
			own = append(own, r)
		}
	}
	sum := sha256.Sum256([]byte(strings.Join(own, "\x00")))
	return filepath.Join(sessionDir, scanCacheDir, hex.EncodeToString(sum[:16]))
}

// TakeScan implements tools.ScanKeeper: the scan the workspace's last
// session kept, its contents moved into this session's store.
func (c *checkpoints) TakeScan() *tools.KeptScan {
	c.mu.Lock()
	if c.scanTaken || c.scanDir == "" {
		c.mu.Unlock()
		return nil
	}
	c.scanTaken = true
	c.mu.Unlock()
	index, held, err := c.store.TakeScan(c.scanDir)
	if err != nil || index == nil {
		return nil
	}
	var k tools.KeptScan
	if k.UnmarshalBinary(index) != nil {
		return nil
	}
	for p, f := range k.Files {
		if !held[f.Hash] {
			delete(k.Files, p)
		}
	}
	return &k
}

// compact compacts the store when the session closes, keeping the
// workspace's last scan (nil: none) for its next session.
func (c *checkpoints) compact(kept *tools.KeptScan) error {
	if kept == nil || c.scanDir == "" {
		return c.store.Compact()
	}
	keep := make(map[string]bool, len(kept.Files))
	for _, f := range kept.Files {
		keep[f.Hash] = true
	}
	err := c.store.CompactKeeping(c.scanDir, keep, func(held map[string]bool) ([]byte, error) {
		out := tools.KeptScan{Files: make(map[string]tools.KeptFile, len(kept.Files))}
		for p, f := range kept.Files {
			if held[f.Hash] {
				out.Files[p] = f
			}
		}
		return out.MarshalBinary()
	})
	persistence.PruneKeptScans(filepath.Dir(c.scanDir), maxKeptScans)
	return err
}

func newCheckpoints(store *persistence.Checkpoints) *checkpoints {
	c := &checkpoints{store: store, kept: map[string]bool{}, running: map[int]int{}}
	for _, r := range store.Records() {
		c.turn = max(c.turn, r.Turn)
		if r.Command != nil {
			c.lastCommand = max(c.lastCommand, r.Command.ID)
		}
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

// PutAll implements tools.Checkpointer.
func (c *checkpoints) PutAll(contents map[string][]byte) error { return c.store.PutAll(contents) }

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
	return c.appendLocked(persistence.CheckpointRecord{Type: persistence.CheckpointFile, Turn: c.turn, Path: path, Before: before, Mode: fileMode(path)})
}

// appendLocked appends recs after the current turn's record, if it is
// not written yet (c.mu held), and marks the files they keep in the
// current turn as kept.
func (c *checkpoints) appendLocked(recs ...persistence.CheckpointRecord) error {
	if c.pending != nil {
		recs = append([]persistence.CheckpointRecord{*c.pending}, recs...)
	}
	if err := c.store.Append(recs...); err != nil {
		return err
	}
	c.pending = nil
	for _, r := range recs {
		if r.Type == persistence.CheckpointFile && r.Turn == c.turn {
			c.kept[r.Path] = true
		}
	}
	return nil
}

// Kept implements tools.Checkpointer.
func (c *checkpoints) Kept(path string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kept[path] || c.turn == 0
}

// CommandStarted implements tools.Checkpointer: the manifest is stored
// (durably) and named by a command record in the current turn.
func (c *checkpoints) CommandStarted(m tools.CommandManifest) (int, error) {
	// Not json.Marshal: it would check and compact the encoding again.
	data, err := m.MarshalJSON()
	if err != nil {
		return 0, err
	}
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	if err := c.store.PutAll(map[string][]byte{h: data}); err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn == 0 {
		return 0, nil // no checkpoint to rewind to
	}
	id := c.lastCommand + 1
	if err := c.appendLocked(persistence.CheckpointRecord{Type: persistence.CheckpointCommand, Turn: c.turn,
		Command: &persistence.Command{ID: id, Manifest: h}}); err != nil {
		return 0, err
	}
	c.lastCommand = id
	c.running[id] = c.turn
	return id, nil
}

// CommandDone implements tools.Checkpointer.
func (c *checkpoints) CommandDone(id int, ch tools.CommandChanges) error {
	if id == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	turn, ok := c.running[id]
	if !ok {
		return fmt.Errorf("command %d is not running", id)
	}
	if err := c.commandDoneLocked(turn, id, ch, false); err != nil {
		return err
	}
	delete(c.running, id)
	return nil
}

// commandDoneLocked records what command id of turn changed: a file
// record for each file not kept in that turn yet (its content before is
// in the command's manifest, durable), then the done record (c.mu held).
func (c *checkpoints) commandDoneLocked(turn, id int, ch tools.CommandChanges, interrupted bool) error {
	kept := c.kept
	if turn != c.turn {
		kept = map[string]bool{}
		for _, r := range c.store.Records() {
			if r.Type == persistence.CheckpointFile && r.Turn == turn {
				kept[r.Path] = true
			}
		}
	}
	var recs []persistence.CheckpointRecord
	var hashes []string
	for _, f := range ch.Files {
		if kept[f.Path] {
			continue
		}
		kept[f.Path] = true // a path listed twice is kept once
		recs = append(recs, persistence.CheckpointRecord{Type: persistence.CheckpointFile, Turn: turn, Path: f.Path, Before: f.Before, Mode: f.Mode})
		if f.Before != nil {
			hashes = append(hashes, *f.Before)
		}
	}
	if turn == c.turn {
		// Marked again, after the append, by appendLocked.
		for _, r := range recs {
			delete(c.kept, r.Path)
		}
	}
	if err := c.store.Sync(hashes...); err != nil {
		return err
	}
	recs = append(recs, persistence.CheckpointRecord{Type: persistence.CheckpointCommandDone, Turn: turn,
		Command: &persistence.Command{ID: id, Unrestorable: ch.Unrestorable, Incomplete: ch.Incomplete, Interrupted: interrupted}})
	return c.appendLocked(recs...)
}

// finishInterruptedCommands records what the commands the agent stopped
// during changed: the workspace now is compared with each one's manifest
// (what a file held before the command is in it). It runs when a session
// is opened, before anything else, and says what it did ("" when there
// was nothing to do).
func (s *Session) finishInterruptedCommands(ctx context.Context) string {
	recs := s.cp.store.Records()
	done := map[int]bool{}
	for _, r := range recs {
		if r.Type == persistence.CheckpointCommandDone && r.Command != nil {
			done[r.Command.ID] = true
		}
	}
	var n, files int
	var failed []string
	for _, r := range recs {
		if r.Type != persistence.CheckpointCommand || r.Command == nil || done[r.Command.ID] {
			continue
		}
		n++
		var ch tools.CommandChanges
		var m tools.CommandManifest
		data, err := s.cp.store.Get(r.Command.Manifest)
		if err == nil {
			err = json.Unmarshal(data, &m)
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("command %d: %v", r.Command.ID, err))
			ch.Incomplete = true
		} else {
			ch = s.ws.CommandChanges(ctx, m)
		}
		s.cp.mu.Lock()
		err = s.cp.commandDoneLocked(r.Turn, r.Command.ID, ch, true)
		s.cp.mu.Unlock()
		if err != nil {
			failed = append(failed, fmt.Sprintf("command %d: %v", r.Command.ID, err))
		}
		files += len(ch.Files)
	}
	switch {
	case n == 0:
		return ""
	case len(failed) > 0:
		return fmt.Sprintf("The agent stopped during %d command(s) of this session; what they changed could not all be recorded for rewind: %s", n, strings.Join(failed, "; "))
	}
	return fmt.Sprintf("The agent stopped during %d command(s) of this session; the %d files they changed were recorded, and a rewind can put them back.", n, files)
}

// RewindRequest asks for a rewind: to before the user message at entry
// index ToUserEntryIndex, with the files or not, or (Undo) the undo of
// the last rewind.
type RewindRequest struct {
	ToUserEntryIndex *int `json:"toUserEntryIndex"`
	Files            bool `json:"files"`
	Undo             bool `json:"undo"`
}

// RewindResult says what a rewind did.
type RewindResult struct {
	Entries int      `json:"entries"` // the transcript's length now
	Files   []string `json:"files"`   // the files set back
	// Prompt is the user message rewound to, for the client to offer for
	// editing.
	Prompt string `json:"prompt,omitempty"`
	// Unrestorable are files commands changed that could not be set back
	// (too large to keep); Incomplete, a command ran where the workspace
	// was too large to list, so files it created may remain.
	Unrestorable []string `json:"unrestorable,omitempty"`
	Incomplete   bool     `json:"incomplete,omitempty"`
}

// Rewind sets the conversation back to before a user message, and with
// Files every file changed since to its content then, or (Undo) undoes
// the last rewind. It runs on the session's worker, alone
// (agent.Session.RunExclusive): refused at once while a turn runs or
// waits, queued behind other rewinds and commands, and nothing else
// changes the conversation or the files while it runs. Only a stored
// session keeps the file history a rewind needs.
func (s *Session) Rewind(ctx context.Context, p RewindRequest) (*RewindResult, error) {
	if s.cp == nil {
		return nil, fmt.Errorf("%w: this session keeps no checkpoints (sessions are not stored)", ErrInvalidRequest)
	}
	if !p.Undo && p.ToUserEntryIndex == nil {
		return nil, fmt.Errorf("%w: toUserEntryIndex: required (or undo: true)", ErrInvalidParams)
	}
	var res *RewindResult
	err := s.s.RunExclusive(ctx, func(ctx context.Context) error {
		var err error
		if p.Undo {
			res, err = s.undoRewind(ctx)
		} else {
			res, err = s.rewind(ctx, *p.ToUserEntryIndex, p.Files)
		}
		return err
	})
	switch {
	case errors.Is(err, agent.ErrTurnRunning):
		return nil, fmt.Errorf("%w: %v (nothing was changed)", ErrInvalidRequest, err)
	case errors.Is(err, agent.ErrSessionClosed):
		return nil, sessionNotFound(s.s.ID(), "it is closing")
	case err != nil:
		return nil, err
	}
	return res, nil
}

// rewind sets the conversation back to before the user message at entry
// index to, and with files, every file changed since to its content
// then. It runs on the session's worker, alone. Every check is made
// before anything changes: the index, the contents to restore (present
// and intact), each path's write rules. Then the rewind is logged
// (accepted, with what it replaces) and carried out: files replaced
// atomically one by one, the conversation, and the log says when it is
// done. A crash in between is completed on the next load; a failure puts
// back what was set and is logged as failed.
func (s *Session) rewind(ctx context.Context, to int, files bool) (*RewindResult, error) {
	entries := s.s.Transcript()
	if !slices.ContainsFunc(s.s.ForkableUserMessages(), func(m agent.ForkableMessage) bool { return m.EntryIndex == to }) {
		return nil, &NotAUserMessageError{Index: to}
	}
	rw := persistence.Rewind{ID: s.nextRewindID(), Keep: to, Accepted: true}
	for i := to; i < len(entries); i++ {
		data, err := json.Marshal(entryRecord(&entries[i]))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInternal, err)
		}
		rw.Removed = append(rw.Removed, data)
	}
	var lost commandLoss
	if files {
		var err error
		if rw.Files, lost, err = s.filesSince(ctx, entries[to].Time); err != nil {
			return nil, err
		}
		if err := s.checkRestorable(ctx, rw.Files); err != nil {
			return nil, err
		}
	}
	if err := s.cp.store.Append(persistence.CheckpointRecord{Type: persistence.CheckpointRewind, Rewind: &rw}); err != nil {
		return nil, fmt.Errorf("%w: %v (nothing was changed)", ErrInternal, err)
	}
	res, err := s.carryOut(ctx, rw, entries[:to], true)
	if err != nil {
		return nil, err
	}
	res.Prompt = entries[to].Text
	res.Unrestorable, res.Incomplete = lost.unrestorable, lost.incomplete
	return res, nil
}

// checkRestorable makes sure, before a rewind is logged, that it can be
// carried out: every content it restores is stored and intact, every
// path passes the write rules as it stands now (when its directory
// exists; no directory is created here), and the contents it keeps for
// an undo are durable.
func (s *Session) checkRestorable(ctx context.Context, files []persistence.RewindFile) error {
	for _, f := range files {
		size := 0
		if f.To != nil {
			data, err := s.cp.store.Get(*f.To)
			if err != nil {
				return fmt.Errorf("%w: %s cannot be restored: %v (nothing was changed)", ErrInternal, f.Path, err)
			}
			size = len(data)
		}
		if fi, err := os.Lstat(filepath.Dir(f.Path)); err == nil && fi.IsDir() {
			if _, err := s.ws.Local().CheckWrite(ctx, f.Path, size); err != nil {
				return fmt.Errorf("%w: %s cannot be restored: %v (nothing was changed)", ErrInvalidRequest, f.Path, err)
			}
		} else if blocked := notADirectory(filepath.Dir(f.Path)); blocked != "" && f.To != nil {
			return fmt.Errorf("%w: %s cannot be restored: %s is not a directory now (nothing was changed)", ErrInvalidRequest, f.Path, blocked)
		}
	}
	return s.syncFrom(files)
}

// notADirectory is the nearest existing ancestor of dir (dir included)
// when it is not a directory: a directory that became a file, which no
// file can be restored into. Unix says so when the file is read
// (ENOTDIR); Windows reads the path as missing.
func notADirectory(dir string) string {
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if fi.IsDir() {
				return ""
			}
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// carryOut applies a logged rewind: the files, then the conversation,
// then the done record. Once logged it is not cut short by ctx. If a
// file cannot be set (rollback), the ones already set are put back and
// the rewind is logged as failed: nothing changed.
func (s *Session) carryOut(ctx context.Context, rw persistence.Rewind, keep []agent.Entry, rollback bool) (*RewindResult, error) {
	ctx = context.WithoutCancel(ctx)
	res := &RewindResult{Entries: len(keep), Files: []string{}}
	if !rollback {
		// Completing a rewind a kill interrupted: the write it was doing
		// may have left its temporary file beside the file.
		dirs := map[string]bool{}
		for _, f := range rw.Files {
			if d := filepath.Dir(f.Path); !dirs[d] {
				dirs[d] = true
				if _, err := s.ws.Local().RemoveStaleWrites(ctx, f.Path); err != nil {
					s.log.Warn("removing what an interrupted write left", "dir", d, "error", err)
				}
			}
		}
	}
	for i, f := range rw.Files {
		if err := s.setFile(ctx, f.Path, f.To, f.ToMode); err != nil {
			err = fmt.Errorf("restoring %s: %w", f.Path, err)
			if !rollback {
				return nil, fmt.Errorf("%w: %v", ErrInternal, err)
			}
			return nil, s.abandon(ctx, rw, rw.Files[:i], err)
		}
		res.Files = append(res.Files, f.Path)
	}
	if err := s.s.ReplaceTranscript(keep); err != nil {
		if !rollback {
			return nil, fmt.Errorf("%w: %v", ErrInternal, err)
		}
		return nil, s.abandon(ctx, rw, rw.Files, err)
	}
	if err := s.j.Sync(); err != nil {
		// Not logged done: the next load sets the conversation again.
		return nil, fmt.Errorf("%w: the files were set back, but the conversation could not be saved: %v", ErrInternal, err)
	}
	if err := s.cp.store.Append(persistence.CheckpointRecord{Type: persistence.CheckpointRewindDone, Rewind: &persistence.Rewind{ID: rw.ID}}); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInternal, err)
	}
	return res, nil
}

// abandon puts back the files a failed rewind had set and logs it as
// failed; if one cannot be put back, the rewind stays logged and the next
// load completes it. It returns the error for the client.
func (s *Session) abandon(ctx context.Context, rw persistence.Rewind, set []persistence.RewindFile, cause error) error {
	var stuck []string
	for i := len(set) - 1; i >= 0; i-- {
		if err := s.setFile(ctx, set[i].Path, set[i].From, set[i].FromMode); err != nil {
			stuck = append(stuck, fmt.Sprintf("%s (%v)", set[i].Path, err))
		}
	}
	if len(stuck) > 0 {
		return fmt.Errorf("%w: %v; putting back what was set also failed for %s: the rewind stays logged and is completed when the session is opened again",
			ErrInternal, cause, strings.Join(stuck, ", "))
	}
	if err := s.cp.store.Append(persistence.CheckpointRecord{Type: persistence.CheckpointRewindDone,
		Rewind: &persistence.Rewind{ID: rw.ID, Failed: cause.Error()}}); err != nil {
		return fmt.Errorf("%w: %v; what was set was put back, but the log could not say so: %v", ErrInternal, cause, err)
	}
	return fmt.Errorf("%w: %v; nothing was changed (what was already set back was put back)", ErrInternal, cause)
}

// setFile makes path hold the content stored under hash (nil: no file),
// through the workspace's confined filesystem: atomically (a temporary
// file renamed over it), so that it is always old or new, never torn.
func (s *Session) setFile(ctx context.Context, path string, hash *string, mode uint32) error {
	if s.ws == nil {
		return errors.New("no workspace")
	}
	if hash == nil {
		_, err := s.ws.Local().RemoveFile(ctx, path)
		return err
	}
	data, err := s.cp.store.Get(*hash)
	if err != nil {
		return err
	}
	if err := s.ws.Local().WriteTextFile(ctx, path, string(data)); err != nil {
		return err
	}
	if mode == 0 || goruntime.GOOS == "windows" {
		return nil // unknown (older logs), or no Unix permission bits
	}
	return s.ws.Local().Chmod(ctx, path, fs.FileMode(mode)&fs.ModePerm)
}

// fileMode is the permission bits of the regular file at path, 0 if there
// is none (or the platform has no Unix permission bits): what a rewind
// gives back to a file it writes again.
func fileMode(path string) uint32 {
	if goruntime.GOOS == "windows" {
		return 0
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return uint32(fi.Mode().Perm())
}

// removeInterruptedWrites removes the temporary files that the file
// tools' writes a kill interrupted left beside their files: the calls of
// the last tool step that have no result (RemoveStaleWrites: only those
// older than this process). A kill in the middle of write_file, say,
// otherwise leaves a ".acp-write-…" file in the user's workspace for good.
func (s *Session) removeInterruptedWrites(ctx context.Context, entries []agent.Entry) {
	if s.ws == nil || len(s.ws.Roots()) == 0 {
		return
	}
	step := -1
	for i := len(entries) - 1; i >= 0 && step < 0; i-- {
		if entries[i].Kind == agent.EntryToolCalls {
			step = i
		}
	}
	if step < 0 {
		return
	}
	answered := map[string]bool{}
	for _, e := range entries[step+1:] {
		if e.Kind == agent.EntryToolOutput {
			answered[e.ToolCallID] = true
		}
	}
	dirs := map[string]bool{}
	var paths []string
	for _, c := range entries[step].ToolCalls {
		var args struct {
			Path  string `json:"path"`
			Patch string `json:"patch"`
		}
		if answered[c.ID] || json.Unmarshal([]byte(c.Arguments), &args) != nil {
			continue
		}
		switch c.Name {
		case "write_file", "edit_file", "multi_edit":
			paths = append(paths, args.Path)
		case "apply_patch":
			paths = append(paths, tools.PatchPaths(args.Patch)...)
		}
	}
	for _, path := range paths {
		if path == "" {
			continue
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.ws.Roots()[0], path)
		}
		if d := filepath.Dir(path); !dirs[d] {
			dirs[d] = true
			if n, err := s.ws.Local().RemoveStaleWrites(ctx, path); err != nil {
				s.log.Warn("removing what an interrupted write left", "dir", d, "error", err)
			} else if n > 0 {
				s.log.Info("removed what an interrupted write left", "dir", d, "files", n)
			}
		}
	}
}

// commandLoss is what the commands of the turns a rewind covers changed
// that it cannot restore.
type commandLoss struct {
	unrestorable []string
	incomplete   bool
}

// filesSince is every file kept in a checkpoint of a user message sent
// at or after t, to be set back to its content before the first of them,
// and (From) its content now, kept for an undo; and what commands of
// those checkpoints changed that cannot be set back. (A message that
// changed no file has no turn record: the turns are selected by time.)
func (s *Session) filesSince(ctx context.Context, t time.Time) ([]persistence.RewindFile, commandLoss, error) {
	recs := s.cp.store.Records()
	since := map[int]bool{}
	for _, r := range recs {
		if r.Type == persistence.CheckpointTurn && !r.EntryTime.Before(t) {
			since[r.Turn] = true
		}
	}
	var out []persistence.RewindFile
	var lost commandLoss
	seen := map[string]bool{}
	for _, r := range recs {
		if !since[r.Turn] {
			continue
		}
		if r.Type == persistence.CheckpointCommandDone && r.Command != nil {
			lost.unrestorable = append(lost.unrestorable, r.Command.Unrestorable...)
			lost.incomplete = lost.incomplete || r.Command.Incomplete
		}
		if r.Type != persistence.CheckpointFile || seen[r.Path] {
			continue
		}
		seen[r.Path] = true
		now, err := s.currentHash(ctx, r.Path)
		if err != nil {
			return nil, lost, fmt.Errorf("%w: keeping %s before the rewind: %v (nothing was changed)", ErrInternal, r.Path, err)
		}
		out = append(out, persistence.RewindFile{Path: r.Path, From: now, To: r.Before, FromMode: fileMode(r.Path), ToMode: r.Mode})
	}
	slices.Sort(lost.unrestorable)
	lost.unrestorable = slices.Compact(lost.unrestorable)
	return out, lost, nil
}

// currentHash stores path's content now and returns its hash (nil: no
// file).
func (s *Session) currentHash(ctx context.Context, path string) (*string, error) {
	data, exists, err := s.ws.Local().ReadFile(ctx, path)
	if err != nil || !exists {
		return nil, err
	}
	h, err := s.cp.store.Put(data)
	return &h, err
}

// syncFrom makes the contents a rewind keeps for its undo durable before
// the rewind is logged.
func (s *Session) syncFrom(files []persistence.RewindFile) error {
	var hashes []string
	for _, f := range files {
		if f.From != nil {
			hashes = append(hashes, *f.From)
		}
	}
	if err := s.cp.store.Sync(hashes...); err != nil {
		return fmt.Errorf("%w: %v (nothing was changed)", ErrInternal, err)
	}
	return nil
}

func (s *Session) nextRewindID() int {
	id := 0
	for _, r := range s.cp.store.Records() {
		if r.Rewind != nil {
			id = max(id, r.Rewind.ID)
		}
	}
	return id + 1
}

// rewindOutcomes says, for each rewind logged, whether it is complete
// (true) or failed (false); a rewind not in it is pending.
func rewindOutcomes(recs []persistence.CheckpointRecord) map[int]bool {
	out := map[int]bool{}
	for _, r := range recs {
		if r.Type == persistence.CheckpointRewindDone && r.Rewind != nil {
			out[r.Rewind.ID] = r.Rewind.Failed == ""
		}
	}
	return out
}

// undoRewind undoes the last rewind, if nothing was said since: the
// removed messages come back and the files go back to what they were.
// It runs on the session's worker, alone, and checks everything before
// it logs anything.
func (s *Session) undoRewind(ctx context.Context) (*RewindResult, error) {
	recs := s.cp.store.Records()
	done := rewindOutcomes(recs)
	var last *persistence.Rewind
	for _, r := range recs {
		if r.Type == persistence.CheckpointRewind && r.Rewind.Undo == 0 && done[r.Rewind.ID] {
			last = r.Rewind
		}
	}
	if last == nil {
		return nil, fmt.Errorf("%w: there is no rewind to undo", ErrInvalidRequest)
	}
	for _, r := range recs {
		if r.Type == persistence.CheckpointRewind && r.Rewind.Undo == last.ID && done[r.Rewind.ID] {
			return nil, fmt.Errorf("%w: the last rewind was already undone", ErrInvalidRequest)
		}
	}
	entries := s.s.Transcript()
	if len(entries) != last.Keep {
		return nil, fmt.Errorf("%w: the conversation went on after the rewind; rewind again instead", ErrInvalidRequest)
	}
	back := slices.Clone(entries)
	for _, raw := range last.Removed {
		var r record
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInternal, err)
		}
		back = append(back, r.entry())
	}
	undo := persistence.Rewind{ID: s.nextRewindID(), Undo: last.ID, Keep: len(back), Accepted: true}
	for _, f := range last.Files {
		undo.Files = append(undo.Files, persistence.RewindFile{Path: f.Path, From: f.To, To: f.From, FromMode: f.ToMode, ToMode: f.FromMode})
	}
	for i := range back {
		data, err := json.Marshal(entryRecord(&back[i]))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInternal, err)
		}
		undo.Entries = append(undo.Entries, data)
	}
	if err := s.checkRestorable(ctx, undo.Files); err != nil {
		return nil, err
	}
	if err := s.cp.store.Append(persistence.CheckpointRecord{Type: persistence.CheckpointRewind, Rewind: &undo}); err != nil {
		return nil, fmt.Errorf("%w: %v (nothing was changed)", ErrInternal, err)
	}
	return s.carryOut(ctx, undo, back, true)
}

// unfinishedRewind is the last rewind (or undo) of recs if it neither
// completed nor failed, and whether it is the last record.
func unfinishedRewind(recs []persistence.CheckpointRecord) (pending *persistence.Rewind, last bool) {
	for i, r := range recs {
		if r.Type == persistence.CheckpointRewind {
			pending, last = r.Rewind, i == len(recs)-1
		}
	}
	if pending == nil {
		return nil, false
	}
	if _, ended := rewindOutcomes(recs)[pending.ID]; ended {
		return nil, false
	}
	return pending, last
}

// finishInterruptedRewind completes a rewind (or undo) that a crash
// interrupted: its files are set again (each is old or new, never torn,
// and setting it again is harmless) and its conversation, and the user is
// told. It runs when a session is opened. Only an accepted rewind is
// completed: one logged by a version that logged rewinds before checking
// them is completed only when nothing followed it (the log ends with it
// and the conversation is as it left it); otherwise it is marked failed
// and left alone.
func (s *Session) finishInterruptedRewind(ctx context.Context) string {
	recs := s.cp.store.Records()
	pending, last := unfinishedRewind(recs)
	if pending == nil {
		return ""
	}
	entries := s.s.Transcript()
	if !pending.Accepted && !(last && oldRewindUnfinished(pending, entries)) {
		why := "logged by an older version and not completed: the session went on after it, so it may have been refused"
		if err := s.cp.store.Append(persistence.CheckpointRecord{Type: persistence.CheckpointRewindDone,
			Rewind: &persistence.Rewind{ID: pending.ID, Failed: why}}); err != nil {
			s.log.Warn("marking an old rewind as not completed", "error", err)
		}
		return "An unfinished rewind was found in this session's history (" + why + "); it was left alone. Files it had already set back stay as they are."
	}
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
	res, err := s.carryOut(ctx, *pending, keep, false)
	if err != nil {
		return fmt.Sprintf("A rewind of this session was interrupted and could not be completed: %v", err)
	}
	return fmt.Sprintf("A rewind of this session was interrupted (the agent stopped during it); it was completed now: the conversation has %s, and %s set back.",
		agent.Count(res.Entries, "message", "messages"), agent.Count(len(res.Files), "file was", "files were"))
}

// oldRewindUnfinished reports whether a rewind logged without Accepted
// (before rewinds were checked first) left the conversation as an
// interrupted rewind does: as it was (the rewind had not replaced it) or
// as the rewind made it.
func oldRewindUnfinished(rw *persistence.Rewind, entries []agent.Entry) bool {
	if rw.Entries != nil { // an undo grows the conversation back
		return len(entries) <= len(rw.Entries)
	}
	return len(entries) == rw.Keep || len(entries) == rw.Keep+len(rw.Removed)
}

// rewindCommand is /rewind: without arguments it lists the points (the
// user messages, numbered); "/rewind N" goes back to before message N
// with the files, "/rewind N keep-files" without them, "/rewind undo"
// undoes the last rewind.
func (s *Session) rewindCommand(ctx context.Context, args string) (string, error) {
	fields := strings.Fields(args)
	msgs := s.s.ForkableUserMessages()
	// A compaction is the horizon of rewinds: the messages it summarized
	// are no longer in the conversation, so they are no points either.
	// Without a word the user finds the first half of the day missing.
	horizon := ""
	if s.compacted() {
		horizon = "Your earlier messages were compacted into a summary: a rewind reaches back only to the messages since."
	}
	if len(fields) == 0 {
		if len(msgs) == 0 {
			if horizon != "" {
				return "There is nothing to rewind to. " + horizon, nil
			}
			return "There is nothing to rewind to yet.", nil
		}
		var b strings.Builder
		b.WriteString("Rewind to before one of your messages (files too; add keep-files to leave them):\n")
		for i, m := range msgs {
			fmt.Fprintf(&b, "  /rewind %d  %s\n", i+1, oneLinePreview(m.Text, 70))
		}
		b.WriteString("  /rewind undo  undo the last rewind\n")
		if horizon != "" {
			b.WriteString(horizon + "\n")
		}
		return b.String(), nil
	}
	var r *RewindResult
	var err error
	switch {
	case fields[0] == "undo":
		if s.cp == nil {
			return "", errors.New("this session keeps no checkpoints")
		}
		r, err = s.undoRewind(ctx)
	default:
		n, perr := strconv.Atoi(fields[0])
		if len(msgs) == 0 {
			return "", errors.New(strings.TrimSpace("there is nothing to rewind to. " + horizon))
		}
		if perr != nil || n < 1 || n > len(msgs) {
			return "", fmt.Errorf("%q is not one of the points 1 to %d (/rewind lists them)", fields[0], len(msgs))
		}
		files := !(len(fields) > 1 && fields[1] == "keep-files")
		if s.cp == nil {
			return "", errors.New("this session keeps no checkpoints")
		}
		r, err = s.rewind(ctx, msgs[n-1].EntryIndex, files)
	}
	if err != nil {
		return "", err
	}
	out := fmt.Sprintf("Rewound: the conversation has %s", agent.Count(r.Entries, "message", "messages"))
	if len(r.Files) > 0 {
		out += fmt.Sprintf("; %s set back: %s", agent.Count(len(r.Files), "file", "files"), strings.Join(r.Files, ", "))
	}
	if len(r.Unrestorable) > 0 {
		out += fmt.Sprintf(".\nNot set back (too large to keep): %s", strings.Join(r.Unrestorable, ", "))
	}
	if r.Incomplete {
		out += ".\nThe workspace was too large to list around a command: files a command created may remain"
	}
	if r.Prompt != "" {
		out += ".\nYour message was: " + r.Prompt
	}
	return out + "\n(/rewind undo takes it back.)", nil
}

// compacted reports whether a compaction summarized part of the
// conversation (its summary is the first user entry it kept).
func (s *Session) compacted() bool {
	for _, e := range s.s.Transcript() {
		if e.Source == agent.SourceSummary {
			return true
		}
	}
	return false
}

// oneLinePreview is s as one printable line of at most n runes: runs of
// white space (newlines too) become one space, and what does not print
// is dropped (control characters; bidi overrides, zero-width and other
// format characters, with which text can make a line show something
// other than what it says).
func oneLinePreview(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.Is(unicode.Cf, r) || !unicode.IsPrint(r):
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
