//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acp-agent/acp-agent/policy"
)

// The project's secrets files under the writable roots: .env and
// .env.<anything> at any depth (policy.EnvFileName: the names the file
// tools refuse but .git, templates such as .env.example excepted). The policy
// denies them like the configured secrets; only regular files (and links
// to one) count, since a directory named .env is by convention a Python
// virtualenv that commands must use.

// secretsScan finds the secrets files under roots for each command,
// reading again only the directories that changed since it last looked:
// creating, removing or renaming an entry changes its directory's mtime
// and ctime, and ctime cannot be set by a program. A directory changed
// within the last racyWindow is read again whatever its times say (a
// change in the same clock tick as the last read would not show).
//
// A scanner is safe for concurrent use; each helper process keeps one.
type secretsScan struct {
	mu   sync.Mutex
	dirs map[string]scannedDir
}

type scannedDir struct {
	dev, ino     uint64
	mtime, ctime syscall.Timespec
	subdirs      []string // names of the directories to look into
	secrets      []string // names of the secrets files
	links        []string // names of links with a secrets name
}

const racyWindow = 2 * time.Second

// helperSecrets is the helper process's scanner.
var helperSecrets = &secretsScan{}

// find returns the secrets files under roots: each path as found and, for
// a link, the file it leads to.
func (s *secretsScan) find(roots []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dirs == nil {
		s.dirs = map[string]scannedDir{}
	}
	seen := map[string]bool{}
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		if seen[dir] {
			return
		}
		seen[dir] = true
		d, ok := s.read(dir)
		if !ok {
			return
		}
		for _, name := range d.secrets {
			out = append(out, filepath.Join(dir, name))
		}
		for _, name := range d.links {
			// Only a link to a regular file counts; what it leads to is
			// denied too.
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			out = append(out, p)
			if real, err := filepath.EvalSymlinks(p); err == nil {
				out = append(out, real)
			}
		}
		for _, name := range d.subdirs {
			walk(filepath.Join(dir, name))
		}
	}
	for _, r := range roots {
		walk(filepath.Clean(r))
	}
	// Forget what is gone, so the map does not grow forever.
	for dir := range s.dirs {
		if !seen[dir] {
			delete(s.dirs, dir)
		}
	}
	return out
}

// read returns dir's listing: the cached one while its times hold, else
// a fresh one. A directory that cannot be read has none.
func (s *secretsScan) read(dir string) (scannedDir, bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		delete(s.dirs, dir)
		return scannedDir{}, false
	}
	cur := scannedDir{dev: uint64(st.Dev), ino: uint64(st.Ino), mtime: st.Mtim, ctime: st.Ctim}
	if old, ok := s.dirs[dir]; ok && old.dev == cur.dev && old.ino == cur.ino && old.mtime == cur.mtime && old.ctime == cur.ctime {
		return old, true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		delete(s.dirs, dir)
		return scannedDir{}, false
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case policy.EnvFileName(name) && e.Type().IsRegular():
			cur.secrets = append(cur.secrets, name)
		case policy.EnvFileName(name) && e.Type()&os.ModeSymlink != 0:
			cur.links = append(cur.links, name)
		case e.IsDir() && !strings.EqualFold(name, ".git"):
			cur.subdirs = append(cur.subdirs, name)
		}
	}
	if time.Since(time.Unix(st.Ctim.Unix())) > racyWindow {
		s.dirs[dir] = cur
	} else {
		delete(s.dirs, dir)
	}
	return cur, true
}
