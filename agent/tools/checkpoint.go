package tools

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
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

// fileKey is what says a file has not changed: size, mtime, inode.
type fileKey struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// scanState is the last scan's files with their content, held in memory
// (at most scanMaxBytes): a command usually changes few of them, so only
// the ones it changed are stored, and a file that has not changed since is
// not read again.
type scanState struct {
	mu    sync.Mutex
	files map[string]scanned
}

type scanned struct {
	key  fileKey
	sum  [sha256.Size]byte
	data []byte
}

// scanResult is the workspace as a scan saw it.
type scanResult struct {
	files    map[string]scanned // content, within the limits
	listed   map[string]bool    // every regular file listed
	complete bool               // nothing was left out of the listing
}

// scanTree reads the workspace's files (what git does not ignore, within
// the limits): the state a command may change.
func (w *Workspace) scanTree(ctx context.Context) scanResult {
	w.scan.mu.Lock()
	defer w.scan.mu.Unlock()
	res := scanResult{files: map[string]scanned{}, listed: map[string]bool{}, complete: true}
	budget := int64(scanMaxBytes)
	for _, root := range w.roots {
		paths, truncated, err := w.local.GlobWith(ctx, root, "**", runtime.GlobOptions{Max: scanMaxFiles})
		if err != nil || truncated {
			res.complete = false
		}
		for _, p := range paths {
			key, ok := statKey(p)
			if !ok {
				continue
			}
			res.listed[p] = true
			if prev, ok := w.scan.files[p]; ok && prev.key == key && prev.key.size <= budget {
				res.files[p] = prev
				budget -= prev.key.size
				continue
			}
			if key.size > scanMaxFileBytes || key.size > budget {
				continue
			}
			data, exists, err := w.local.ReadFile(ctx, p)
			if err != nil || !exists || int64(len(data)) > budget {
				continue
			}
			budget -= int64(len(data))
			res.files[p] = scanned{key: key, sum: sha256.Sum256(data), data: data}
		}
	}
	w.scan.files = res.files
	return res
}

// statKey is the key of the regular file at path (no symlink).
func statKey(path string) (fileKey, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileKey{}, false
	}
	return fileKey{size: fi.Size(), mtime: fi.ModTime(), ino: runtime.FileID(fi)}, true
}

// aroundCommand keeps what a command changes in the workspace: the files
// are scanned before it, and after it every file whose content changed or
// that went away is kept with its content from before (only those are
// stored), and every file that appeared as new, when the scan before saw
// the whole workspace. It returns the function to call after the
// command.
func (w *Workspace) aroundCommand(ctx context.Context) func() {
	if w.cp == nil {
		return func() {}
	}
	before := w.scanTree(ctx)
	return func() {
		after := w.scanTree(context.WithoutCancel(ctx))
		for p, b := range before.files {
			if a, ok := after.files[p]; ok && a.sum == b.sum {
				continue
			}
			if key, ok := statKey(p); ok && key == b.key {
				continue // there, not read this time (limits), not changed
			}
			if w.cp.Kept(p) {
				continue
			}
			if h, err := w.cp.Put(b.data); err == nil {
				_ = w.cp.Keep(p, &h)
			}
		}
		if !before.complete {
			return // a file not listed before may have been there
		}
		for p := range after.listed {
			if !before.listed[p] && !w.cp.Kept(p) {
				_ = w.cp.Keep(p, nil)
			}
		}
	}
}
