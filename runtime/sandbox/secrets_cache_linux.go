//go:build linux

package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The secrets scan's listings kept between processes. Each helper is a
// new process, and every agent process (each "acp-agent exec", each
// editor session) starts one, so without this every process would read
// every directory of the workspace again before its first command.
//
// A kept listing is trusted on exactly the terms of the in-memory one: a
// directory's listing stands while its device, inode, mtime and ctime are
// those it was listed with, and only a directory whose ctime was more
// than racyWindow old when it was listed is kept at all. Creating,
// removing, renaming or hard-linking an entry changes the directory's
// mtime and ctime; setting the mtime back changes the ctime (which no
// program can set); a directory moved into the path is another inode with
// a new ctime. The file is read only where the policy names a directory
// under one of its denied paths (the agent's session directory), which no
// command can write (secretsCacheDir); a file that is torn, too large or
// not this format is ignored whole (its checksum).

const (
	keptSecretsMagic = "acp-agent secrets scan 1\n"
	// maxKeptSecrets bounds a cache file read (about 40 bytes a
	// directory plus its names).
	maxKeptSecrets = 64 << 20
	// maxKeptSecretsFiles is how many workspaces' listings a cache
	// directory keeps (the most recently written).
	maxKeptSecretsFiles = 16
)

// secretsCacheDir is the policy's cache directory if it may be used: an
// absolute path under one of the policy's denied paths, as written and
// with symlinks resolved, and neither under nor above a path commands
// may write. "" otherwise. A command may rename or replace anything
// below a writable path, the directories leading to a denied one
// included (a denied path is masked by a mount, which does not keep its
// parents from being renamed): a cache there would be the command's to
// forge, or to point at the user's files.
func secretsCacheDir(p Policy) string {
	c := p.SecretsCache
	if c == "" || !filepath.IsAbs(c) {
		return ""
	}
	c = filepath.Clean(c)
	cs := []string{c, realPaths([]string{c})[0]}
	writable := append(slices.Clone(p.WritableRoots), p.ExtraWritable...)
	if p.TempDir != "" {
		writable = append(writable, p.TempDir)
	}
	for _, w := range append(writable, realPaths(writable)...) {
		for _, x := range cs {
			if w != "" && (within(filepath.Clean(w), x) || within(x, filepath.Clean(w))) {
				return ""
			}
		}
	}
	denied := func(x string) bool {
		for _, d := range append(slices.Clone(p.DeniedPaths), realPaths(p.DeniedPaths)...) {
			if d != "/" && filepath.IsAbs(d) && within(filepath.Clean(d), x) {
				return true
			}
		}
		return false
	}
	if !denied(cs[0]) || !denied(cs[1]) {
		return ""
	}
	return c
}

// keptSecretsFile is the cache file of the listings under roots.
func keptSecretsFile(dir string, roots []string) string {
	sum := sha256.Sum256([]byte(strings.Join(roots, "\x00")))
	return filepath.Join(dir, hex.EncodeToString(sum[:16]))
}

// loadKeptSecrets reads the listings kept in file (none when it is
// missing or not intact).
func loadKeptSecrets(file string) map[string]scannedDir {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxKeptSecrets {
		return nil
	}
	data := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil
	}
	dirs, err := decodeKeptSecrets(data)
	if err != nil {
		return nil
	}
	return dirs
}

// encodeKeptSecrets encodes dirs: the magic line; per directory, its path,
// then its device, inode, mtime and ctime (seconds and nanoseconds) and
// how many subdirectory, secrets and link names follow, in decimal
// separated by spaces, then those names, each ended by a NUL (which no
// name holds); and last the SHA-256 of all that.
func encodeKeptSecrets(dirs map[string]scannedDir) []byte {
	b := []byte(keptSecretsMagic)
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		d := dirs[dir]
		if d.unreadable || strings.IndexByte(dir, 0) >= 0 {
			continue
		}
		b = append(append(b, dir...), 0)
		for i, n := range []int64{int64(d.dev), int64(d.ino), d.mtime.Sec, d.mtime.Nsec, d.ctime.Sec, d.ctime.Nsec,
			int64(len(d.subdirs)), int64(len(d.secrets)), int64(len(d.links))} {
			if i > 0 {
				b = append(b, ' ')
			}
			if i < 2 {
				b = strconv.AppendUint(b, uint64(n), 10)
			} else {
				b = strconv.AppendInt(b, n, 10)
			}
		}
		b = append(b, 0)
		for _, list := range [][]string{d.subdirs, d.secrets, d.links} {
			for _, name := range list {
				b = append(append(b, name...), 0)
			}
		}
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

var errKeptSecrets = errors.New("kept secrets scan: not intact")

// decodeKeptSecrets decodes what encodeKeptSecrets encoded, checking it
// whole.
func decodeKeptSecrets(data []byte) (map[string]scannedDir, error) {
	if len(data) < len(keptSecretsMagic)+sha256.Size {
		return nil, errKeptSecrets
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if want := sha256.Sum256(body); !bytes.Equal(want[:], sum) {
		return nil, errKeptSecrets
	}
	rest, ok := bytes.CutPrefix(body, []byte(keptSecretsMagic))
	if !ok {
		return nil, errKeptSecrets
	}
	next := func() (string, bool) {
		field, after, ok := bytes.Cut(rest, []byte{0})
		rest = after
		return string(field), ok
	}
	dirs := map[string]scannedDir{}
	for len(rest) > 0 {
		dir, ok1 := next()
		head, ok2 := next()
		fields := strings.Split(head, " ")
		if !ok1 || !ok2 || !filepath.IsAbs(dir) || len(fields) != 9 {
			return nil, errKeptSecrets
		}
		var n [9]int64
		for i, f := range fields {
			var err error
			if i < 2 {
				var u uint64
				u, err = strconv.ParseUint(f, 10, 64)
				n[i] = int64(u)
			} else {
				n[i], err = strconv.ParseInt(f, 10, 64)
			}
			if err != nil || (i >= 6 && (n[i] < 0 || n[i] > int64(len(rest)))) {
				return nil, errKeptSecrets
			}
		}
		d := scannedDir{dev: uint64(n[0]), ino: uint64(n[1]),
			mtime: syscall.Timespec{Sec: n[2], Nsec: n[3]}, ctime: syscall.Timespec{Sec: n[4], Nsec: n[5]}}
		for i, list := range []*[]string{&d.subdirs, &d.secrets, &d.links} {
			for range n[6+i] {
				name, ok := next()
				if !ok || name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
					return nil, errKeptSecrets
				}
				*list = append(*list, name)
			}
		}
		dirs[dir] = d
	}
	return dirs, nil
}

// saveKeptSecrets writes dirs to file, atomically (a temporary file
// renamed over it; not synced: a cache lost in a crash costs one listing,
// and one torn is not read), and keeps the cache directory to the most
// recent maxKeptSecretsFiles files.
func saveKeptSecrets(file string, dirs map[string]scannedDir) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("secrets cache %s is not a directory", dir)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(encodeKeptSecrets(dirs))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	pruneKeptSecrets(dir)
	return nil
}

// pruneKeptSecrets removes all but the most recently written
// maxKeptSecretsFiles cache files of dir, and temporary files a killed
// helper left.
func pruneKeptSecrets(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) <= maxKeptSecretsFiles {
		return
	}
	type fileTime struct {
		name string
		t    time.Time
	}
	var files []fileTime
	for _, e := range ents {
		// Only what saveKeptSecrets writes: cache files and its
		// temporary files.
		if !keptSecretsName(e.Name()) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			files = append(files, fileTime{e.Name(), fi.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b fileTime) int { return b.t.Compare(a.t) })
	for _, f := range files[min(maxKeptSecretsFiles, len(files)):] {
		os.Remove(filepath.Join(dir, f.name))
	}
}

// keptSecretsName reports whether name is one saveKeptSecrets writes: a
// cache file (keptSecretsFile: 32 hexadecimal digits) or one of its
// temporary files.
func keptSecretsName(name string) bool {
	if strings.HasPrefix(name, ".tmp-") {
		return true
	}
	if len(name) != 32 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil
}
