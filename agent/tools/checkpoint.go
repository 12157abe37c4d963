package tools

import (
	"context"
	"fmt"
	"os"
	"sync"
	"syscall"
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
	scanMaxFiles     = 5000
	scanMaxFileBytes = 2 << 20
	scanMaxBytes     = 64 << 20
)

// fileKey is what says a file has not changed: size, mtime, inode.
type fileKey struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// scanState is the last scan's content hashes, by path and key, so that
// a file that has not changed is not read again.
type scanState struct {
	mu     sync.Mutex
	hashes map[string]scanned
}

type scanned struct {
	key  fileKey
	hash string
}

// scanTree keeps the content of the workspace's files (what git does not
// ignore, within the limits) in the store, and returns their hashes by
// path: the state a command may change.
func (w *Workspace) scanTree(ctx context.Context) map[string]scanned {
	out := map[string]scanned{}
	budget := int64(scanMaxBytes)
	for _, root := range w.roots {
		paths, _, err := w.local.GlobWith(ctx, root, "**", runtime.GlobOptions{Max: scanMaxFiles})
		if err != nil {
			continue
		}
		for _, p := range paths {
			if len(out) >= scanMaxFiles {
				return out
			}
			key, ok := statKey(p)
			if !ok {
				continue
			}
			w.scan.mu.Lock()
			prev, seen := w.scan.hashes[p]
			w.scan.mu.Unlock()
			if seen && prev.key == key {
				out[p] = prev
				continue
			}
			if key.size > scanMaxFileBytes || key.size > budget {
				continue
			}
			data, exists, err := w.local.ReadFile(ctx, p)
			if err != nil || !exists {
				continue
			}
			budget -= int64(len(data))
			h, err := w.cp.Put(data)
			if err != nil {
				continue
			}
			s := scanned{key: key, hash: h}
			out[p] = s
			w.scan.mu.Lock()
			if w.scan.hashes == nil {
				w.scan.hashes = map[string]scanned{}
			}
			w.scan.hashes[p] = s
			w.scan.mu.Unlock()
		}
	}
	return out
}

// statKey is the key of the regular file at path (no symlink).
func statKey(path string) (fileKey, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileKey{}, false
	}
	k := fileKey{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.ino = uint64(st.Ino)
	}
	return k, true
}

// aroundCommand keeps what a command changes in the workspace: the files
// are scanned before it, and after it every file whose content changed,
// that appeared or that went away is kept with its content from before.
// It returns the function to call after the command.
func (w *Workspace) aroundCommand(ctx context.Context) func() {
	if w.cp == nil {
		return func() {}
	}
	before := w.scanTree(ctx)
	return func() {
		ctx := context.WithoutCancel(ctx)
		after := w.scanTree(ctx)
		for p, b := range before {
			if a, ok := after[p]; ok && a.hash == b.hash {
				continue
			}
			if !w.cp.Kept(p) {
				h := b.hash
				_ = w.cp.Keep(p, &h)
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok && !w.cp.Kept(p) {
				_ = w.cp.Keep(p, nil)
			}
		}
	}
}
