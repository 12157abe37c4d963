package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/runtime"
)

// Checkpointer keeps files' content from before the changes of the
// current checkpoint (a user message), so that rewinding to it can put
// them back. The protocol adapter implements it over the session's
// checkpoint store.
type Checkpointer interface {
	// Put stores content and returns its hash.
	Put(content []byte) (string, error)
	// Keep records path's state before its first change in the current
	// checkpoint: the hash of its content, or nil when it did not exist.
	// Keeping a path twice in one checkpoint keeps the first.
	Keep(path string, before *string) error
	// Kept reports whether path is kept in the current checkpoint.
	Kept(path string) bool
	// PutAll stores contents durably, each under its hash (hex SHA-256).
	PutAll(contents map[string][]byte) error
	// CommandStarted records, durably, the workspace as it is before a
	// command (its contents stored with PutAll) and returns the
	// command's id: if the agent stops during the command, what it
	// changed is found from this when the session is opened again.
	CommandStarted(m CommandManifest) (int, error)
	// CommandDone records, durably, what command id changed (each file
	// not kept already in the checkpoint, with its content before) and
	// that the command ended.
	CommandDone(id int, ch CommandChanges) error
}

// CommandManifest is the workspace as a scan saw it before a command:
// every file it listed, with the hash of its content where the scan read
// it (Hash "" where the limits left the content out) and what says it is
// unchanged (size, mtime, inode); Complete: the listing left nothing out.
type CommandManifest struct {
	Files    map[string]ManifestFile `json:"files"`
	Complete bool                    `json:"complete"`
	// Taken is when the scan behind it started (Unix nanoseconds; absent
	// in manifests of older versions): a file listed only after the
	// command whose status changed before then was there already, unlisted
	// (ignored by rules the command changed), and is not the command's.
	Taken int64 `json:"taken,omitempty"`
}

// MarshalJSON encodes m as encoding/json would (paths in sorted order,
// the same escaping, the same fields), without its reflection: a
// command's manifest in a large workspace has thousands of entries and is
// encoded before every command.
func (m CommandManifest) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 32+len(m.Files)*96)
	b = append(b, `{"files":`...)
	if m.Files == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, p := range slices.Sorted(maps.Keys(m.Files)) {
			f := m.Files[p]
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, p)
			b = append(b, ":{"...)
			if f.Hash != "" {
				b = appendJSONString(append(b, `"h":`...), f.Hash)
				b = append(b, ',')
			}
			b = strconv.AppendInt(append(b, `"size":`...), f.Size, 10)
			b = strconv.AppendInt(append(b, `,"mtime":`...), f.MTime, 10)
			if f.Ino != 0 {
				b = strconv.AppendUint(append(b, `,"ino":`...), f.Ino, 10)
			}
			if f.CTime != 0 {
				b = strconv.AppendInt(append(b, `,"ctime":`...), f.CTime, 10)
			}
			if f.Mode != 0 {
				b = strconv.AppendUint(append(b, `,"mode":`...), uint64(f.Mode), 10)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = strconv.AppendBool(append(b, `,"complete":`...), m.Complete)
	if m.Taken != 0 {
		b = strconv.AppendInt(append(b, `,"taken":`...), m.Taken, 10)
	}
	return append(b, '}'), nil
}

// appendJSONString appends s as a JSON string, as encoding/json writes
// it: printable ASCII other than the characters it escapes as is, and
// anything else through encoding/json itself.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// ManifestFile is one file of a CommandManifest.
type ManifestFile struct {
	Hash  string `json:"h,omitempty"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"` // Unix nanoseconds
	Ino   uint64 `json:"ino,omitempty"`
	// CTime is the status change time (Unix nanoseconds; absent where the
	// platform has none, and in manifests of older versions).
	CTime int64 `json:"ctime,omitempty"`
	// Mode is the file's permission bits (absent in manifests of older
	// versions): a rewind gives a file it writes again its mode back.
	Mode uint32 `json:"mode,omitempty"`
}

// CommandChanges is what a command changed.
type CommandChanges struct {
	// Files are the files changed, created or removed, each with its
	// content before (nil: it did not exist).
	Files []ChangedFile
	// Unrestorable are files the command changed or removed whose
	// content before it was not read (the scan's limits).
	Unrestorable []string
	// Incomplete: the scan before did not list the whole workspace, so
	// a file the command created cannot be told from one that was there.
	Incomplete bool
}

// ChangedFile is a file a command changed and its content before.
type ChangedFile struct {
	Path   string
	Before *string
	Mode   uint32 // the permission bits before (0: unknown)
}

// SetCheckpointer makes the workspace's tools keep files' previous
// content before they change them (nil: none). Set it before the tools
// run.
func (w *Workspace) SetCheckpointer(c Checkpointer) { w.cp = c }

// writeFile writes path after keeping what it held.
func (w *Workspace) writeFile(ctx context.Context, path, content string) error {
	if err := w.beforeWrite(ctx, path); err != nil {
		return err
	}
	return w.files.WriteTextFile(ctx, path, content)
}

// beforeWrite keeps path's content (read through the confined local
// filesystem, the editor's buffer aside: what is on disk is what a
// rewind restores) before a tool changes it.
func (w *Workspace) beforeWrite(ctx context.Context, path string) error {
	if w.cp == nil || w.cp.Kept(path) {
		return nil
	}
	data, exists, err := w.local.ReadFile(ctx, path)
	if err != nil {
		return fmt.Errorf("keeping %s for rewind: %w", w.display(path), err)
	}
	var before *string
	if exists {
		h, err := w.cp.Put(data)
		if err != nil {
			return fmt.Errorf("keeping %s for rewind: %w", w.display(path), err)
		}
		before = &h
	}
	return w.cp.Keep(path, before)
}

// Limits of the workspace scan around a command.
const (
	scanMaxFiles     = 2000
	scanMaxFileBytes = 1 << 20
	scanMaxBytes     = 16 << 20
)

// fileKey is what says a file has not changed (runtime.Stamp): size,
// modification and status change times, inode and mode, as git's index
// keeps them.
type fileKey = runtime.Stamp

// racyWindow is how much older than a scan's start a file's times must
// be for its key to vouch for its content later (racy git): a file
// changed in the same clock tick as it was read keeps the key it was read
// with (file times come from a coarse clock; some file systems keep
// seconds, FAT two), so such a file is read again by the next scan
// whatever its key says.
const racyWindow = 2 * time.Second

// ctimeSlack is how far a file's ctime may lag the clock the scans read:
// file times come from the kernel's coarse clock, a tick behind at most.
// A larger error (a file server's clock behind ours) only keeps a file a
// command created from being deleted by a rewind, never deletes one.
const ctimeSlack = 100 * time.Millisecond

// thereBefore reports whether the file at p, with key k after a command
// whose scan before it started at taken, was there before: its status
// has not changed since (creating, renaming or linking a file, or
// writing it, sets its ctime, which no program can set back), or, where
// there is no ctime (Windows), it was created before. An error either
// way only keeps a file a command created from a rewind, never deletes
// one that was there.
func thereBefore(p string, k fileKey, taken int64) bool {
	t := k.CTime
	if t == 0 {
		t = runtime.CreatedAt(p)
	}
	return t != 0 && t < taken-int64(ctimeSlack)
}

// trusted reports whether k, seen by a scan started at start, can vouch
// for the content read with it.
func trusted(k fileKey, start time.Time) bool {
	limit := start.Add(-racyWindow).UnixNano()
	return k.MTime < limit && k.CTime < limit
}

// scanState is the last scan's files with their content, held in memory
// (at most scanMaxBytes): a command usually changes few of them, so only
// the ones it changed are stored, and a file whose key has not changed
// since it was read (and was not racy then) is not read again. A
// session's first scan starts from the scan the workspace's last session
// kept (ScanKeeper), whose contents are in the store already.
type scanState struct {
	mu    sync.Mutex
	files map[string]scanned
	// took: the kept scan was asked for.
	took bool
}

type scanned struct {
	key fileKey
	sum [sha256.Size]byte
	// data is the content; nil for a kept scan's file, whose content is
	// in the store already.
	data []byte
	// trusted: trusted(key, start) at the scan that read it.
	trusted bool
}

// scanResult is the workspace as a scan saw it.
type scanResult struct {
	files    map[string]scanned // content, within the limits
	keys     map[string]fileKey // the key of every regular file listed
	complete bool               // nothing was left out of the listing
	start    time.Time          // when the scan started
}

// scanTree reads the workspace's files (what git does not ignore, within
// the limits): the state a command may change.
func (w *Workspace) scanTree(ctx context.Context) scanResult {
	w.scan.mu.Lock()
	defer w.scan.mu.Unlock()
	start := time.Now()
	var kept chan map[string]scanned
	if !w.scan.took {
		// The kept scan is taken (its contents moved into the store and
		// checked) while the workspace is walked; waited for below.
		w.scan.took = true
		kept = make(chan map[string]scanned, 1)
		go func() { kept <- w.keptScan() }()
	}
	// Each file's key is taken by the walk, from the directory it listed
	// (no lookup of its whole path).
	res := scanResult{complete: true, start: start}
	var walked [][]runtime.StampedPath
	n := 0
	for _, root := range w.roots {
		paths, truncated, err := w.local.GlobStamped(ctx, root, "**", runtime.GlobOptions{Max: scanMaxFiles})
		if err != nil || truncated {
			res.complete = false
		}
		walked = append(walked, paths)
		n += len(paths)
	}
	if kept != nil {
		w.scan.files = <-kept
	}
	res.files, res.keys = make(map[string]scanned, n), make(map[string]fileKey, n)
	budget := int64(scanMaxBytes)
	for _, paths := range walked {
		for _, sp := range paths {
			p, key := sp.Path, sp.Stamp
			if !sp.Regular {
				continue
			}
			res.keys[p] = key
			if prev, ok := w.scan.files[p]; ok && prev.trusted && prev.key == key && prev.key.Size <= budget {
				res.files[p] = prev
				budget -= prev.key.Size
				continue
			}
			if key.Size > scanMaxFileBytes || key.Size > budget {
				continue
			}
			data, exists, err := w.local.ReadFile(ctx, p)
			if err != nil || !exists || int64(len(data)) > budget {
				continue
			}
			budget -= int64(len(data))
			// The key is the one taken before the read: a change after it
			// shows as a new key; trusted only if it was not racy.
			res.files[p] = scanned{key: key, sum: sha256.Sum256(data), data: data, trusted: trusted(key, start)}
		}
	}
	w.scan.files = res.files
	return res
}

// statKey is the key of the regular file at path (no symlink).
func statKey(path string) (fileKey, bool) { return runtime.StampOf(path) }

// KeptScan is a workspace's scan kept between its sessions, so that a
// session's first command need not read again what has not changed: the
// files whose times were older than the scan's start by the racy window,
// each with its key and the hash of its content.
type KeptScan struct {
	Files map[string]KeptFile
}

// KeptFile is one file of a KeptScan.
type KeptFile struct {
	Hash  string
	Size  int64
	MTime int64 // Unix nanoseconds
	CTime int64 // Unix nanoseconds
	Ino   uint64
	Mode  uint32
}

// keptScanMagic starts an encoded KeptScan.
const keptScanMagic = "acp-agent kept scan 1\n"

// MarshalBinary encodes k: a first line, then per file its hash, size,
// times, inode and mode in decimal, separated by spaces, then its path,
// ended by a NUL (which no path holds). Thousands of files decode in well
// under a millisecond, which JSON does not.
func (k *KeptScan) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, len(keptScanMagic)+len(k.Files)*160)
	b = append(b, keptScanMagic...)
	for _, p := range slices.Sorted(maps.Keys(k.Files)) {
		f := k.Files[p]
		if len(f.Hash) != 2*sha256.Size || strings.IndexByte(p, 0) >= 0 {
			return nil, fmt.Errorf("kept scan: bad entry %q", p)
		}
		b = append(b, f.Hash...)
		for _, n := range []int64{f.Size, f.MTime, f.CTime} {
			b = strconv.AppendInt(append(b, ' '), n, 10)
		}
		b = strconv.AppendUint(append(b, ' '), f.Ino, 10)
		b = strconv.AppendUint(append(b, ' '), uint64(f.Mode), 10)
		b = append(append(append(b, ' '), p...), 0)
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary encoded.
func (k *KeptScan) UnmarshalBinary(data []byte) error {
	rest, ok := bytes.CutPrefix(data, []byte(keptScanMagic))
	if !ok {
		return errors.New("kept scan: not one")
	}
	k.Files = make(map[string]KeptFile, bytes.Count(rest, []byte{0}))
	for len(rest) > 0 {
		rec, next, ok := bytes.Cut(rest, []byte{0})
		if !ok {
			return errors.New("kept scan: torn")
		}
		rest = next
		fields := bytes.SplitN(rec, []byte{' '}, 7)
		if len(fields) != 7 || len(fields[0]) != 2*sha256.Size {
			return errors.New("kept scan: bad entry")
		}
		var ints [3]int64
		var uints [2]uint64
		var err error
		for i := range ints {
			if ints[i], err = strconv.ParseInt(string(fields[i+1]), 10, 64); err != nil {
				return fmt.Errorf("kept scan: %w", err)
			}
		}
		for i, bits := range []int{64, 32} {
			if uints[i], err = strconv.ParseUint(string(fields[i+4]), 10, bits); err != nil {
				return fmt.Errorf("kept scan: %w", err)
			}
		}
		k.Files[string(fields[6])] = KeptFile{Hash: string(fields[0]), Size: ints[0], MTime: ints[1],
			CTime: ints[2], Ino: uints[0], Mode: uint32(uints[1])}
	}
	return nil
}

// ScanKeeper is what a Checkpointer may offer to keep a workspace's scan
// between its sessions.
type ScanKeeper interface {
	// TakeScan returns the scan the workspace's last session kept (nil:
	// none), its contents now in this checkpointer's store, durable and
	// checked against their hashes (files whose content is not are left
	// out). A kept scan is taken once.
	TakeScan() *KeptScan
}

// keptScan is the scan the checkpointer kept for the workspace, as the
// starting point of the session's first scan (nil: none).
func (w *Workspace) keptScan() map[string]scanned {
	k, ok := w.cp.(ScanKeeper)
	if !ok {
		return nil
	}
	kept := k.TakeScan()
	if kept == nil {
		return nil
	}
	files := make(map[string]scanned, len(kept.Files))
	for p, f := range kept.Files {
		var s scanned
		if n, err := hex.Decode(s.sum[:], []byte(f.Hash)); err != nil || n != sha256.Size {
			continue
		}
		s.key = fileKey{Size: f.Size, MTime: f.MTime, CTime: f.CTime, Ino: f.Ino, Mode: f.Mode}
		s.trusted = true
		files[p] = s
	}
	return files
}

// KeptScan is the workspace's last scan to keep for its next session:
// its files whose key vouches for their content (nil when there is none,
// or where files have no status change time: without it a program could
// change a file and set its modification time back unseen).
func (w *Workspace) KeptScan() *KeptScan {
	w.scan.mu.Lock()
	defer w.scan.mu.Unlock()
	out := &KeptScan{Files: make(map[string]KeptFile, len(w.scan.files))}
	for p, f := range w.scan.files {
		if !f.trusted || f.key.CTime == 0 {
			continue
		}
		out.Files[p] = KeptFile{Hash: hex.EncodeToString(f.sum[:]), Size: f.key.Size, MTime: f.key.MTime,
			CTime: f.key.CTime, Ino: f.key.Ino, Mode: f.key.Mode}
	}
	if len(out.Files) == 0 {
		return nil
	}
	return out
}

// sameStamp reports whether k shows the file f describes unchanged: size,
// mtime, inode and, where the manifest has it, ctime (a program can set
// the mtime back, not the ctime).
func (f ManifestFile) sameStamp(k fileKey) bool {
	return f.Size == k.Size && f.MTime == k.MTime && f.Ino == k.Ino && (f.CTime == 0 || f.CTime == k.CTime)
}

func manifestFile(k fileKey, hash string) ManifestFile {
	return ManifestFile{Hash: hash, Size: k.Size, MTime: k.MTime, Ino: k.Ino, CTime: k.CTime, Mode: k.Mode & 0o777}
}

// aroundCommand keeps what a command changes in the workspace. Before
// it, the files are scanned, their contents stored durably (only those
// not stored already) and the manifest of the workspace recorded: from
// here on, whatever happens to the agent, what the command changes can
// be found and put back. After it, the files are scanned again and every
// file whose content changed, that went away, or (when the scan before
// saw the whole workspace) that appeared, is kept with its content from
// before, durably, before the command's result is returned. If the
// workspace cannot be kept, the command is not run (the error says so).
// It returns the function to call after the command, which says what
// could not be kept ("" when nothing).
func (w *Workspace) aroundCommand(ctx context.Context) (func() string, error) {
	if w.cp == nil {
		return func() string { return "" }, nil
	}
	before := w.scanTree(ctx)
	m, err := w.storeManifest(before)
	if err != nil {
		return nil, fmt.Errorf("keeping the workspace for rewind before the command: %w; the command was not run", err)
	}
	id, err := w.cp.CommandStarted(m)
	if err != nil {
		return nil, fmt.Errorf("keeping the workspace for rewind before the command: %w; the command was not run", err)
	}
	return func() string {
		ch := w.CommandChanges(context.WithoutCancel(ctx), m)
		if err := w.cp.CommandDone(id, ch); err != nil {
			return fmt.Sprintf("\n[what this command changed could not be recorded for rewind: %v]", err)
		}
		if len(ch.Unrestorable) > 0 {
			return fmt.Sprintf("\n[a rewind cannot restore what this command did to %s: too large to keep]", strings.Join(ch.Unrestorable, ", "))
		}
		return ""
	}, nil
}

// storeManifest stores the contents a scan read and returns the
// workspace's manifest.
func (w *Workspace) storeManifest(sc scanResult) (CommandManifest, error) {
	m := CommandManifest{Files: make(map[string]ManifestFile, len(sc.keys)), Complete: sc.complete, Taken: sc.start.UnixNano()}
	contents := map[string][]byte{}
	for p, f := range sc.files {
		h := hex.EncodeToString(f.sum[:])
		if f.data != nil || f.key.Size == 0 {
			// Otherwise a kept scan's content, in the store already (an
			// empty file read may have nil data: stored again, harmless).
			contents[h] = f.data
		}
		m.Files[p] = manifestFile(f.key, h)
	}
	if err := w.cp.PutAll(contents); err != nil {
		return m, err
	}
	for p, k := range sc.keys {
		if _, ok := m.Files[p]; !ok {
			m.Files[p] = manifestFile(k, "")
		}
	}
	return m, nil
}

// CommandChanges scans the workspace and says what changed since m was
// taken: after a command, or when a session is opened after the agent
// stopped during one.
func (w *Workspace) CommandChanges(ctx context.Context, m CommandManifest) CommandChanges {
	after := w.scanTree(ctx)
	var ch CommandChanges
	paths := slices.Sorted(maps.Keys(m.Files))
	for _, p := range paths {
		f := m.Files[p]
		if a, ok := after.files[p]; ok && f.Hash != "" {
			var sum [2 * sha256.Size]byte
			hex.Encode(sum[:], a.sum[:])
			if string(sum[:]) == f.Hash {
				continue
			}
			// Read both times and not the same: changed, whatever its
			// stamp says (the mtime can be set back).
		} else if key, ok := statKey(p); ok && f.sameStamp(key) {
			continue // there, not read one of the times (limits), not changed
		}
		if f.Hash == "" {
			ch.Unrestorable = append(ch.Unrestorable, p)
			continue
		}
		ch.Files = append(ch.Files, ChangedFile{Path: p, Before: &f.Hash, Mode: f.Mode})
	}
	if !m.Complete {
		// A file not listed before may have been there.
		ch.Incomplete = true
		return ch
	}
	for _, p := range slices.Sorted(maps.Keys(after.keys)) {
		if _, ok := m.Files[p]; ok {
			continue
		}
		if m.Taken != 0 && thereBefore(p, after.keys[p], m.Taken) {
			// Not listed before, yet there before the command: ignored by
			// rules the command changed. A rewind must not delete it.
			continue
		}
		ch.Files = append(ch.Files, ChangedFile{Path: p})
	}
	return ch
}
