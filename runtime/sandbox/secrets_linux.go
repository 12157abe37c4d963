//go:build linux

package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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
// What it listed is kept between processes too (keptSecrets, in the
// policy's SecretsCache): a directory's entry vouches for its listing on
// the same terms in the next process, so a new helper in an unchanged
// workspace reads no directory at all.
//
// A scanner is safe for concurrent use; each helper process keeps one.
type secretsScan struct {
	mu   sync.Mutex
	dirs map[string]scannedDir
	// changed: dirs gained or lost an entry since the cache file was last
	// read or written; loaded, the cache files read already.
	changed bool
	loaded  map[string]bool
	// timesKept says, per device, whether its file system keeps a ctime
	// no program can set (timesCanVouch).
	timesKept map[uint64]bool
}

type scannedDir struct {
	dev, ino     uint64
	mtime, ctime syscall.Timespec
	subdirs      []string // names of the directories to look into
	secrets      []string // names of the secrets files
	links        []string // names of links with a secrets name
	unreadable   bool     // listing it was refused (EACCES, EPERM)
}

const racyWindow = 2 * time.Second

// helperSecrets is the helper process's scanner.
var helperSecrets = &secretsScan{}

// secretFile is what the scan denies: a secrets file; a link with a
// secrets name to a regular file, and (follow) the file it leads to; or
// a directory of the user's that the helper could not read (a command
// could have made it unreadable, with chmod, to hide a .env from the
// scan, and readable again). dev and ino identify what the path named when the scan looked
// (with follow, the file the link led to), so a mask can check that it
// covers that.
type secretFile struct {
	path     string
	dev, ino uint64
	follow   bool
	opaque   bool
}

// paths are the paths to grant around for s: the path, or with follow,
// the file it leads to.
func (s secretFile) paths() []string {
	if s.follow {
		if real, err := filepath.EvalSymlinks(s.path); err == nil {
			return []string{real}
		}
		return nil
	}
	return []string{s.path}
}

// find returns the secrets files under roots, and the directories below
// them it could not read. cache is the directory of the kept listings
// ("": none; see secretsCacheDir).
func (s *secretsScan) find(roots []string, cache string) []secretFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dirs == nil {
		s.dirs = map[string]scannedDir{}
	}
	file := ""
	if cache != "" {
		file = keptSecretsFile(cache, roots)
		if !s.loaded[file] {
			if s.loaded == nil {
				s.loaded = map[string]bool{}
			}
			s.loaded[file] = true
			changed := s.changed
			kept := loadKeptSecrets(file)
			if len(s.dirs) == 0 {
				s.dirs = make(map[string]scannedDir, len(kept))
			}
			for dir, d := range kept {
				if _, ok := s.dirs[dir]; !ok {
					s.dirs[dir] = d
				}
			}
			s.changed = changed
		}
	}
	seen := make(map[string]bool, len(s.dirs))
	var out []secretFile
	var walk func(dir string)
	walk = func(dir string) {
		if seen[dir] {
			return
		}
		seen[dir] = true
		d, ok := s.read(dir)
		if !ok {
			// Only a directory of the user's own: a command can chmod
			// only those back; another user's it cannot read either.
			var st syscall.Stat_t
			if d.unreadable && syscall.Lstat(dir, &st) == nil && int(st.Uid) == os.Geteuid() {
				out = append(out, secretFile{path: dir, dev: uint64(st.Dev), ino: st.Ino, opaque: true})
			}
			return
		}
		for _, name := range d.secrets {
			p := filepath.Join(dir, name)
			var st syscall.Stat_t
			if syscall.Lstat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
				out = append(out, secretFile{path: p, dev: uint64(st.Dev), ino: st.Ino})
			}
		}
		for _, name := range d.links {
			// Only a link to a regular file counts; what it leads to is
			// denied too (first: a mask on the link would hide it).
			p := filepath.Join(dir, name)
			var st, lst syscall.Stat_t
			if syscall.Stat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || syscall.Lstat(p, &lst) != nil {
				continue
			}
			out = append(out, secretFile{path: p, dev: uint64(st.Dev), ino: st.Ino, follow: true},
				secretFile{path: p, dev: uint64(lst.Dev), ino: lst.Ino})
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
			s.changed = true
		}
	}
	if file != "" && s.changed {
		// A cache that cannot be written costs the next process its
		// listing, nothing else.
		if saveKeptSecrets(file, s.dirs) == nil {
			s.changed = false
		}
	}
	return out
}

// read returns dir's listing: the cached one while its times hold, else
// a fresh one. A directory that cannot be read has none.
func (s *secretsScan) read(dir string) (scannedDir, bool) {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		s.forget(dir)
		return scannedDir{}, false
	}
	cur := scannedDir{dev: uint64(st.Dev), ino: uint64(st.Ino), mtime: st.Mtim, ctime: st.Ctim}
	vouch := s.timesVouch(dir, cur.dev)
	if old, ok := s.dirs[dir]; ok && vouch && old.dev == cur.dev && old.ino == cur.ino && old.mtime == cur.mtime && old.ctime == cur.ctime {
		return old, true
	}
	if err := listDir(dir, &cur); err != nil {
		s.forget(dir)
		return scannedDir{unreadable: errors.Is(err, fs.ErrPermission)}, false
	}
	if vouch && time.Since(time.Unix(st.Ctim.Unix())) > racyWindow {
		s.dirs[dir] = cur
		s.changed = true
	} else {
		s.forget(dir)
	}
	return cur, true
}

// timesVouch reports whether the times of directories on device dev
// (dir is one) can vouch for their listings: only where the file system
// keeps a ctime that no program can set. FAT and exFAT have none (Linux
// reports the mtime, which utimes sets), network and FUSE file systems
// report what a server says.
func (s *secretsScan) timesVouch(dir string, dev uint64) bool {
	if v, ok := s.timesKept[dev]; ok {
		return v
	}
	// The file system of the directory on dev itself: a handle, checked
	// to be on dev, not a second lookup of the path, which a command could
	// have pointed elsewhere meanwhile (a parent swapped for a symlink).
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	var fs unix.Statfs_t
	if unix.Fstat(fd, &st) != nil || uint64(st.Dev) != dev {
		return false // not remembered: the next listing asks again
	}
	v := unix.Fstatfs(fd, &fs) == nil && timesCanVouch(int64(fs.Type))
	if s.timesKept == nil {
		s.timesKept = map[uint64]bool{}
	}
	s.timesKept[dev] = v
	return v
}

// timesCanVouch reports whether a file system of type magic (statfs)
// keeps a status change time that only the kernel sets: the local
// Linux file systems a workspace is on.
func timesCanVouch(magic int64) bool {
	switch magic {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, unix.OVERLAYFS_SUPER_MAGIC,
		0x2fc12fc1, // ZFS
		0xca451a4e: // bcachefs
		return true
	}
	return false
}

// forget drops dir's listing.
func (s *secretsScan) forget(dir string) {
	if _, ok := s.dirs[dir]; ok {
		delete(s.dirs, dir)
		s.changed = true
	}
}

// direntBuf is the getdents buffer of listDir (the scan holds s.mu). An
// array, not make: zeroed memory of the binary, no allocation at package
// init of every start that never scans.
var direntBuf [32 << 10]byte

// dirsListed counts listDir's listings (what the kept listings save; the
// tests read it).
var dirsListed atomic.Int64

// listDir reads dir's entries into d: the names of its secrets files,
// of its links with a secrets name and of its subdirectories (not .git).
// It reads the directory with getdents64 and keeps only those names: a
// workspace of 50,000 files has 50,000 entries that are none of them,
// which os.ReadDir would each allocate and sort. An entry whose type the
// file system does not report is lstatted.
func listDir(dir string, d *scannedDir) error {
	dirsListed.Add(1)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Getdents(fd, direntBuf[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "getdents", Path: dir, Err: err}
		}
		if n <= 0 {
			// In name order, as the scan always went.
			slices.Sort(d.secrets)
			slices.Sort(d.links)
			slices.Sort(d.subdirs)
			return nil
		}
		for b := direntBuf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				break
			}
			typ, name := b[18], b[19:reclen]
			b = b[reclen:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			env := policy.EnvFileName(string(name))
			if !env && typ != unix.DT_DIR && typ != unix.DT_UNKNOWN {
				continue
			}
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue
				}
				switch st.Mode & unix.S_IFMT {
				case unix.S_IFREG:
					typ = unix.DT_REG
				case unix.S_IFLNK:
					typ = unix.DT_LNK
				case unix.S_IFDIR:
					typ = unix.DT_DIR
				}
			}
			switch {
			case env && typ == unix.DT_REG:
				d.secrets = append(d.secrets, string(name))
			case env && typ == unix.DT_LNK:
				d.links = append(d.links, string(name))
			case typ == unix.DT_DIR && !strings.EqualFold(string(name), ".git"):
				d.subdirs = append(d.subdirs, string(name))
			}
		}
	}
}
