package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A workspace's scan kept between its sessions: when a session closes,
// the packs that hold the contents of its workspace's last scan are moved
// (not copied) with the scan's index into a directory of the workspace's
// (CompactKeeping), and the workspace's next session moves them into its
// own store (TakeScan). A kept scan is in one place at a time, so no store
// ever loses a content another one still counts on. Layout of that
// directory: kept/ (the index and the packs), written as tmp-*/ and
// renamed into place.
const (
	keptScanName  = "kept"
	scanIndexName = "index"
	// keptPackSlack: the packs are kept only if they are at most this many
	// times the bytes of the contents kept (plus keptPackExtra): a pack
	// mostly of contents the scan no longer has is not worth moving.
	keptPackSlack = 4
	keptPackExtra = 1 << 20
	// maxKeptPack is the largest pack TakeScan reads (the scan keeps at
	// most 16 MiB of contents).
	maxKeptPack = 128 << 20
	// staleScanTemp is the age after which a tmp-* or old-* directory
	// left by a process that stopped is removed.
	staleScanTemp = time.Hour
)

// TakeScan takes the scan kept in dir: its packs move into this store,
// every content checked against its hash (one that does not match is not
// taken), durably (the store's directory is synced), and it returns the
// scan's index and the hashes of the contents taken. With nothing kept
// there, or when another session took it first, the index is nil.
func (c *Checkpoints) TakeScan(dir string) ([]byte, map[string]bool, error) {
	if err := c.makeStore(); err != nil {
		return nil, nil, err
	}
	objects := filepath.Join(c.dir, "objects")
	claim, err := os.MkdirTemp(objects, ".scan-")
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoints: %w", err)
	}
	defer os.RemoveAll(claim)
	taken := filepath.Join(claim, keptScanName)
	if err := os.Rename(filepath.Join(dir, keptScanName), taken); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("checkpoints: taking the kept scan: %w", err)
	}
	index, err := ReadRegularFile(filepath.Join(taken, scanIndexName), maxKeptPack)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoints: taking the kept scan: %w", err)
	}
	names, _ := filepath.Glob(filepath.Join(taken, "pack-*"))
	held := map[string]bool{}
	for _, p := range names {
		good, ok := checkPack(p)
		dst := filepath.Join(objects, filepath.Base(p))
		if !ok {
			continue
		}
		if _, err := os.Lstat(dst); err == nil {
			continue // the same pack (its name is its header's hash)
		}
		if err := os.Rename(p, dst); err != nil {
			continue
		}
		c.mu.Lock()
		if len(c.packed) == 0 {
			c.packed = make(map[string]packLoc, len(good)) // not grown 2,000 times
		}
		if len(held) == 0 {
			held = make(map[string]bool, len(good))
		}
		for h, loc := range good {
			if _, ok := c.packed[h]; !ok {
				loc.path = dst
				c.packed[h] = loc
			}
			held[h] = true
		}
		c.mu.Unlock()
	}
	// Durable here before a manifest names them.
	if err := syncDirectory(objects); err != nil {
		return nil, nil, fmt.Errorf("checkpoints: %w", err)
	}
	if err := c.syncNewDirs(); err != nil {
		return nil, nil, err
	}
	return index, held, nil
}

// checkPack reads the pack at path and returns where each content that
// matches its hash lies in it.
func checkPack(path string) (map[string]packLoc, bool) {
	f, _, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeptPack+1))
	if err != nil || len(data) > maxKeptPack {
		return nil, false
	}
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, false
	}
	header, err := decodePackHeader(data[:nl])
	if err != nil {
		return nil, false
	}
	good := make(map[string]packLoc, len(header.Objects))
	off := int64(nl + 1)
	for _, o := range header.Objects {
		if o.N < 0 || off+o.N > int64(len(data)) {
			break
		}
		if len(o.H) == 64 && matches(data[off:off+o.N], o.H) {
			good[o.H] = packLoc{path: path, off: off, n: o.N}
		}
		off += o.N
	}
	return good, true
}

// keepScan moves the packs that hold the contents of keep into dir as its
// kept scan, with the index index returns for the contents moved, unless
// they are mostly other contents. It returns the packs it moved.
func (c *Checkpoints) keepScan(dir string, keep map[string]bool, index func(kept map[string]bool) ([]byte, error)) (map[string]bool, error) {
	c.mu.Lock()
	var live int64
	hold := map[string]bool{}
	kept := make(map[string]bool, len(keep))
	for h := range keep {
		if loc, ok := c.packed[h]; ok {
			hold[loc.path], kept[h] = true, true
			live += loc.n
		}
	}
	c.mu.Unlock()
	if len(kept) == 0 {
		return nil, nil
	}
	var total int64
	for p := range hold {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("checkpoints: %w", err)
		}
		total += fi.Size()
	}
	if total > keptPackSlack*live+keptPackExtra {
		return nil, nil
	}
	data, err := index(kept)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	removeStaleScanTemps(dir)
	tmp, err := os.MkdirTemp(dir, "tmp-")
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	moved := map[string]bool{}
	// Nothing here is synced: a kept scan lost or torn by a crash costs
	// the next session a full scan (TakeScan checks every content, and
	// the index names only what it took), and the contents the session's
	// log names were made loose objects, durably, before.
	err = os.WriteFile(filepath.Join(tmp, scanIndexName), data, 0o600)
	for p := range hold {
		if err == nil {
			err = os.Rename(p, filepath.Join(tmp, filepath.Base(p)))
			moved[p] = err == nil
		}
	}
	if err == nil {
		// The newest session's scan replaces the one kept before.
		old := filepath.Join(filepath.Dir(tmp), "old-"+strings.TrimPrefix(filepath.Base(tmp), "tmp-"))
		if rerr := os.Rename(filepath.Join(dir, keptScanName), old); rerr == nil {
			defer os.RemoveAll(old)
		}
		err = os.Rename(tmp, filepath.Join(dir, keptScanName))
	}
	if err != nil {
		os.RemoveAll(tmp)
		return moved, fmt.Errorf("checkpoints: keeping the workspace's scan: %w", err)
	}
	return moved, nil
}

// removeStaleScanTemps removes what a process that stopped while keeping
// a scan left in dir.
func removeStaleScanTemps(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "tmp-") && !strings.HasPrefix(e.Name(), "old-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleScanTemp {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// PruneKeptScans keeps the kept scans of at most max workspaces in
// parent (one directory each), the most recently kept.
func PruneKeptScans(parent string, max int) {
	ents, err := os.ReadDir(parent)
	if err != nil || len(ents) <= max {
		return
	}
	type dirTime struct {
		name string
		t    time.Time
	}
	var dirs []dirTime
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && e.IsDir() {
			dirs = append(dirs, dirTime{e.Name(), fi.ModTime()})
		}
	}
	slices.SortFunc(dirs, func(a, b dirTime) int { return b.t.Compare(a.t) })
	for _, d := range dirs[min(max, len(dirs)):] {
		os.RemoveAll(filepath.Join(parent, d.name))
	}
}
