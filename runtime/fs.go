package runtime

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/policy"
)

// DefaultMaxFileSize is the size cap LocalFS applies when no
// WithMaxFileSize option is given: reads, greps and writes of larger
// files are refused.
const DefaultMaxFileSize = 10 << 20

// maxPathLen is Linux's PATH_MAX less the terminating NUL. Longer paths
// are refused with ENAMETOOLONG before any I/O: ordinary tools cannot use
// them, and because WriteTextFile creates parents one directory at a time
// relative to the previous one, nothing else would stop a model from
// building a directory chain thousands of levels deep.
const maxPathLen = 4095

// binarySniffLen is how much of a file is searched for a NUL byte to call
// it binary, as git and grep do.
const binarySniffLen = 8 << 10

var (
	// ErrNotText is returned (wrapped) for a file that holds a NUL byte in
	// its first 8 KiB or is not valid UTF-8.
	ErrNotText = errors.New("not a text file")
	// ErrTooLarge is returned (wrapped) for a file, or content to write,
	// over the size cap.
	ErrTooLarge = errors.New("file too large")
	// ErrNotRegular is returned (wrapped) when a file operation meets a
	// directory, device, FIFO or socket.
	ErrNotRegular = errors.New("not a regular file")
)

// FSOption configures a LocalFS.
type FSOption func(*LocalFS)

// WithMaxFileSize sets the size cap in bytes (default DefaultMaxFileSize).
// A value <= 0 keeps the default.
func WithMaxFileSize(n int64) FSOption {
	return func(f *LocalFS) {
		if n > 0 {
			f.maxSize = n
		}
	}
}

// WithHardLinkReads lets reads and greps open regular files that have more
// than one hard link. By default they are refused, because a hard link
// inside a root to a file outside it (which os.Root cannot see) would
// otherwise leak that file. Enable it for trees that legitimately use hard
// links, such as pnpm's node_modules. Writes through hard links are always
// refused.
func WithHardLinkReads() FSOption {
	return func(f *LocalFS) { f.hardLinkReads = true }
}

// LocalFS is a filesystem confined to the roots of a policy.FS. It is
// what tools use when the editor does not offer fs/*.
//
// Every operation checks the path with policy.FS.Resolve, then goes
// through the os.Root of the matching root with the root-relative path
// (never os.Open of a joined string), and then checks the real path of
// what it opened (on Linux the kernel's name for the file descriptor,
// /proc/self/fd/N; elsewhere filepath.EvalSymlinks plus os.SameFile on the
// descriptor) against the same rules. So a symlink that stays inside the
// root but points into a denied prefix or a read-only root, or one swapped
// while we work, is caught; a symlink out of the root is refused by
// os.Root itself.
//
// Walks (ListDirectory, Glob, Grep over a directory) resolve and confirm
// only their start; below it they never follow symlinks, open each entry
// relative to its confirmed parent directory, and accept it only if it is
// the inode the parent's listing showed. They skip denied prefixes and
// stop descending 256 levels down.
//
// Refusals are *policy.PathError naming the path as the caller gave it.
// Missing files give errors for which errors.Is(err, fs.ErrNotExist)
// holds, also naming the given path. Paths longer than 4095 bytes after
// cleaning fail with ENAMETOOLONG before any I/O.
//
// Not covered: bind mounts and other mounts inside a root; changes made by
// terminal commands, which LocalFS does not confine; hard links inside a
// root between an allowed name and a denied one when WithHardLinkReads is
// set (and on Windows, where link counts are not read).
//
// A LocalFS is safe for concurrent use. Close releases its root handles;
// operations after Close fail.
type LocalFS struct {
	policy policy.FS // cleaned copy of the caller's rules, lexical paths
	real   policy.FS // the same rules over the roots' real paths
	roots  map[string]*os.Root

	maxSize       int64
	hardLinkReads bool
	// fdPath names the real path of an open file; tests swap it for
	// noFDPath to exercise the portable fallback on Linux.
	fdPath func(*os.File) (string, bool)

	closeOnce sync.Once
	closeErr  error
}

// NewLocalFS opens one os.Root per root of p. Every root must be an
// absolute path to an existing directory; read-only roots must be
// absolute but need not exist. DeniedPathPrefixes are used as given (nil
// means none: pass policy.DefaultDeniedPrefixes() for the usual set).
func NewLocalFS(p policy.FS, opts ...FSOption) (*LocalFS, error) {
	if len(p.Roots) == 0 {
		return nil, errors.New("runtime: filesystem policy has no roots")
	}
	f := &LocalFS{
		roots:   make(map[string]*os.Root, len(p.Roots)),
		maxSize: DefaultMaxFileSize,
		fdPath:  fdPath,
	}
	for _, o := range opts {
		o(f)
	}
	f.policy.DeniedPathPrefixes = append([]string(nil), p.DeniedPathPrefixes...)
	f.real.DeniedPathPrefixes = f.policy.DeniedPathPrefixes
	for _, d := range p.DeniedPaths {
		if err := checkConfigPath("denied path", d); err != nil {
			return nil, err
		}
	}
	// Each denied path as given and as its symlinks resolve (~/.ssh may
	// be a link to where the keys are), for the lexical check and for
	// the real path of what was opened alike, as the sandbox does.
	f.policy.DeniedPaths = deniedSpellings(p.DeniedPaths)
	f.real.DeniedPaths = f.policy.DeniedPaths
	for _, x := range p.ProtectedPaths {
		if err := checkConfigPath("protected path", x); err != nil {
			return nil, err
		}
	}
	// The same for the protected paths: ~/.bashrc may be a link into a
	// dotfiles repository.
	f.policy.ProtectedPaths = deniedSpellings(p.ProtectedPaths)
	f.real.ProtectedPaths = f.policy.ProtectedPaths

	for _, r := range p.Roots {
		if err := checkConfigPath("root", r); err != nil {
			f.Close()
			return nil, err
		}
		clean := filepath.Clean(r)
		if _, dup := f.roots[clean]; dup {
			continue
		}
		root, err := os.OpenRoot(clean)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("runtime: root %s must be an existing directory: %w", r, err)
		}
		f.roots[clean] = root
		real, err := f.rootRealPath(root, clean)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("runtime: root %s: real path: %w", r, err)
		}
		f.policy.Roots = append(f.policy.Roots, clean)
		f.real.Roots = append(f.real.Roots, real)
	}
	for _, r := range p.ReadOnlyRoots {
		if err := checkConfigPath("read-only root", r); err != nil {
			f.Close()
			return nil, err
		}
		clean := filepath.Clean(r)
		f.policy.ReadOnlyRoots = append(f.policy.ReadOnlyRoots, clean)
		// Real paths are checked against every spelling of the read-only
		// root: as given, resolved if it exists, and re-rooted under the
		// real path of each root that contains it (for one not created
		// yet under a root whose own path has symlinks).
		f.real.ReadOnlyRoots = append(f.real.ReadOnlyRoots, clean)
		if real, err := filepath.EvalSymlinks(clean); err == nil && real != clean {
			f.real.ReadOnlyRoots = append(f.real.ReadOnlyRoots, real)
		}
		for i, root := range f.policy.Roots {
			if rel, err := filepath.Rel(root, clean); err == nil && filepath.IsLocal(rel) {
				f.real.ReadOnlyRoots = append(f.real.ReadOnlyRoots, filepath.Join(f.real.Roots[i], rel))
			}
		}
	}
	return f, nil
}

func checkConfigPath(what, p string) error {
	if !filepath.IsAbs(p) || strings.IndexByte(p, 0) >= 0 || !utf8.ValidString(p) {
		return fmt.Errorf("runtime: %s %q must be an absolute path", what, p)
	}
	return nil
}

// Close releases the root handles. It is safe to call more than once.
func (f *LocalFS) Close() error {
	f.closeOnce.Do(func() {
		var errs []error
		for _, r := range f.roots {
			errs = append(errs, r.Close())
		}
		f.closeErr = errors.Join(errs...)
	})
	return f.closeErr
}

// Policy returns the rules f enforces, with cleaned paths. The slices are
// copies.
func (f *LocalFS) Policy() policy.FS {
	return policy.FS{
		Roots:              append([]string(nil), f.policy.Roots...),
		ReadOnlyRoots:      append([]string(nil), f.policy.ReadOnlyRoots...),
		DeniedPathPrefixes: append([]string(nil), f.policy.DeniedPathPrefixes...),
		DeniedPaths:        append([]string(nil), f.policy.DeniedPaths...),
		ProtectedPaths:     append([]string(nil), f.policy.ProtectedPaths...),
	}
}

// deniedSpellings is each of paths cleaned, then the real path of each
// that differs (for one that does not exist yet, its longest existing
// ancestor resolved and the rest appended: it may be created later).
func deniedSpellings(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, d := range paths {
		out = append(out, policy.CanonicalPath(filepath.Clean(d)))
	}
	for _, d := range paths {
		if real := policy.RealPath(filepath.Clean(d)); !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out
}

// resolve runs the lexical check and returns the os.Root to use.
func (f *LocalFS) resolve(path string, a policy.Access) (r *os.Root, rootPath, rel string, err error) {
	rootPath, rel, err = f.policy.Resolve(path, a)
	if err != nil {
		return nil, "", "", err
	}
	if len(rootPath)+1+len(rel) > maxPathLen {
		return nil, "", "", &fs.PathError{Op: "open", Path: path, Err: syscall.ENAMETOOLONG}
	}
	return f.roots[rootPath], rootPath, rel, nil
}

// ReadTextFile returns the text of the file at path.
//
// line (1-based) and limit (a line count) are each applied only when > 0:
// line alone returns from that line to the end, limit alone the first
// limit lines, both a window, neither the whole file. This is more useful
// than the seed's both-or-nothing rule, which ignored a lone line. Lines
// end at "\n" and are returned byte for byte, terminators included, so
// concatenating windows gives back the file. A window starting past the
// last line gives "".
//
// Files that are not valid UTF-8 or hold a NUL byte in their first 8 KiB
// give ErrNotText; files over the size cap give ErrTooLarge.
func (f *LocalFS) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	data, err := f.readRegular(ctx, path)
	if err != nil {
		return "", err
	}
	if err := checkText(data); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return lineWindow(string(data), line, limit), nil
}

// ReadFile returns the whole file at path, size-capped, for edit tools
// that need the exact old contents. A file that does not exist gives
// (nil, false, nil), so the caller can produce a diff with a null oldText;
// every other failure is an error.
func (f *LocalFS) ReadFile(ctx context.Context, path string) (content []byte, exists bool, err error) {
	data, err := f.readRegular(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}

// readRegular opens path for reading, confirms its real path and returns
// its contents if it is a regular, single-linked file within the cap.
func (f *LocalFS) readRegular(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	file, _, err := f.openChecked(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	return f.readOpened(file, path)
}

// openChecked resolves path for reading, opens it through its root and
// confirms the real path of the descriptor. It returns the real path.
func (f *LocalFS) openChecked(path string) (*os.File, string, error) {
	r, rootPath, rel, err := f.resolve(path, policy.AccessRead)
	if err != nil {
		return nil, "", err
	}
	file, err := r.OpenFile(rel, openReadFlags, 0)
	if err != nil {
		return nil, "", rootErr("open", path, err)
	}
	real, err := f.confirm(file, path, filepath.Join(rootPath, rel), policy.AccessRead)
	if err != nil {
		file.Close()
		return nil, "", err
	}
	return file, real, nil
}

// CheckRead applies every check ReadTextFile applies — the lexical rules,
// os.Root resolution, the real path of the opened descriptor against the
// rules (so symlinks that leave the roots or reach a denied name are
// refused), a regular file, one hard link, the size cap — without reading
// the file, and returns its real path. It is for runtimes that hand the
// file to someone else to open (the editor's fs/read_text_file), who must
// be given the path that was checked, not the one the model wrote.
func (f *LocalFS) CheckRead(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	file, real, err := f.openChecked(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Not on disk: the editor may hold it as an unsaved buffer. Its
		// directory must pass the checks, and the name the rules.
		return f.checkAbsent(path)
	}
	if err != nil {
		return "", err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return "", rootErr("stat", path, err)
	}
	if err := f.checkReadable(fi, path); err != nil {
		return "", err
	}
	return f.underRoot(real), nil
}

// CheckDir resolves the directory path through os.Root, checks its real
// path for reading against the rules and returns it, spelled under the
// root as given. Commands run there (their working directory), so a
// symlink inside the workspace that leads out of it, or to a denied
// name, is refused.
func (f *LocalFS) CheckDir(path string) (string, error) {
	r, rootPath, rel, err := f.resolve(path, policy.AccessRead)
	if err != nil {
		return "", err
	}
	dir, real, err := f.openConfirmedDir(r, rootPath, rel, path)
	if err != nil {
		return "", err
	}
	dir.Close()
	return f.underRoot(real), nil
}

// openConfirmedDir opens the directory rel of root r (O_DIRECTORY, so a
// FIFO cannot block) and confirms its real path for reading.
func (f *LocalFS) openConfirmedDir(r *os.Root, rootPath, rel, path string) (*os.Root, string, error) {
	dir, err := r.OpenRoot(filepath.Join(rel, "."))
	if err != nil {
		return nil, "", rootErr("open", path, err)
	}
	d, err := dir.Open(".")
	if err != nil {
		dir.Close()
		return nil, "", rootErr("open", path, err)
	}
	defer d.Close()
	real, err := f.confirm(d, path, filepath.Join(rootPath, rel), policy.AccessRead)
	if err != nil {
		dir.Close()
		return nil, "", err
	}
	return dir, real, nil
}

// checkAbsent checks a path whose file does not exist for a read: its
// parent directory must exist and pass the real-path checks, and the full
// name the rules; it returns the name under the parent's real path.
func (f *LocalFS) checkAbsent(path string) (string, error) {
	r, rootPath, rel, err := f.resolve(path, policy.AccessRead)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("read %s: %w (is a directory)", path, ErrNotRegular)
	}
	dirRel, base := filepath.Dir(rel), filepath.Base(rel)
	dir, dirReal, err := f.openConfirmedDir(r, rootPath, dirRel, path)
	if err != nil {
		return "", err
	}
	defer dir.Close()
	target := filepath.Join(dirReal, base)
	if _, _, err := f.real.Resolve(target, policy.AccessRead); err != nil {
		return "", realRefusal(path, err)
	}
	if _, err := dir.Lstat(base); !errors.Is(err, fs.ErrNotExist) {
		// It appeared (or is a dangling symlink): not what was checked.
		return "", &policy.PathError{Path: path, Reason: "changed while checked"}
	}
	return f.underRoot(target), nil
}

// underRoot spells a checked real path under the root as it was given
// (the editor's own spelling of its workspace, which may differ from the
// real one by a symlink in the root's path), so the editor finds its
// buffers; below the root it is the real path, with no link to follow.
func (f *LocalFS) underRoot(real string) string {
	best, out := -1, real
	for i, r := range f.real.Roots {
		rel, err := filepath.Rel(r, real)
		if err != nil || (rel != "." && !filepath.IsLocal(rel)) || len(r) <= best {
			continue
		}
		best, out = len(r), filepath.Join(f.policy.Roots[i], rel)
	}
	return out
}

// readOpened reads a confirmed file, enforcing type, link count and size.
func (f *LocalFS) readOpened(file *os.File, path string) ([]byte, error) {
	fi, err := file.Stat()
	if err != nil {
		return nil, rootErr("stat", path, err)
	}
	return f.readStat(file, fi, path)
}

// readStat is readOpened for a file already stat'ed as fi.
func (f *LocalFS) readStat(file *os.File, fi fs.FileInfo, path string) ([]byte, error) {
	if err := f.checkReadable(fi, path); err != nil {
		return nil, err
	}
	if n := handleLinkCount(file, fi); !f.hardLinkReads && n > 1 {
		return nil, &policy.PathError{Path: path, Reason: fmt.Sprintf("hard link (%d links)", n)}
	}
	// Read one byte past the cap in case the file grew since Stat.
	data, err := io.ReadAll(io.LimitReader(file, f.maxSize+1))
	if err != nil {
		return nil, rootErr("read", path, err)
	}
	if int64(len(data)) > f.maxSize {
		return nil, fmt.Errorf("read %s: %w (over %d bytes)", path, ErrTooLarge, f.maxSize)
	}
	return data, nil
}

func (f *LocalFS) checkReadable(fi fs.FileInfo, path string) error {
	switch {
	case fi.IsDir():
		return fmt.Errorf("read %s: %w (is a directory)", path, ErrNotRegular)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("read %s: %w (%s)", path, ErrNotRegular, typeName(fi.Mode()))
	case !f.hardLinkReads && linkCount(fi) > 1:
		return &policy.PathError{Path: path, Reason: fmt.Sprintf("hard link (%d links)", linkCount(fi))}
	case fi.Size() > f.maxSize:
		return fmt.Errorf("read %s: %w (%d bytes, cap %d)", path, ErrTooLarge, fi.Size(), f.maxSize)
	}
	return nil
}

// typeName names a non-regular file type for error messages.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "irregular file"
}

// checkText refuses binary and non-UTF-8 data.
func checkText(data []byte) error {
	if bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0 {
		return fmt.Errorf("%w: binary (NUL byte in the first 8 KiB)", ErrNotText)
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("%w: invalid UTF-8", ErrNotText)
	}
	return nil
}

// lineWindow cuts lines [line, line+limit) out of s; see ReadTextFile.
func lineWindow(s string, line, limit int) string {
	if line <= 1 && limit <= 0 {
		return s
	}
	start := 0
	for n := 1; n < line; n++ {
		i := strings.IndexByte(s[start:], '\n')
		if i < 0 {
			return ""
		}
		start += i + 1
	}
	if start >= len(s) {
		return ""
	}
	if limit <= 0 {
		return s[start:]
	}
	end := start
	for n := 0; n < limit; n++ {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 {
			return s[start:]
		}
		end += i + 1
	}
	return s[start:end]
}

// WriteTextFile writes content to path atomically: missing parent
// directories are created inside the root, the content goes to a
// temporary file in the same directory (through the directory's own
// os.Root), which is fsynced and renamed over path; then the directory is
// fsynced. An existing file keeps its permission bits; a new one gets
// 0644 less the umask. Ownership is not preserved.
//
// Refused with *policy.PathError, besides the policy rules:
//   - path names a symlink. Writing "through" it would land on the link's
//     target, which the model did not name; replacing it would silently
//     break the link. The caller should write the target's own path.
//   - path names a file with more than one hard link. A hard link inside a
//     root may share its inode with a file outside (os.Root cannot tell);
//     the atomic rename would not modify that file, but it would silently
//     split the two names, which is never what the user meant
//     (reliability.md 1.3.4).
//
// Content over the size cap gives ErrTooLarge. Every directory the write
// creates or passes is checked by its real path first, so a symlink to a
// denied prefix or read-only root cannot be used to create anything there.
func (f *LocalFS) WriteTextFile(ctx context.Context, path, content string) error {
	w, err := f.prepareWrite(ctx, path, len(content))
	if err != nil {
		return err
	}
	defer w.dir.Close()
	return writeAtomic(w.dir, w.base, path, content, w.perm, w.existing)
}

// RemoveFile removes the regular file at path with the checks
// WriteTextFile applies (the rules for writing, no symlink, no hard link,
// the directory confirmed by its real path), and reports whether there
// was one. A missing file or directory is not an error, and nothing is
// created. Rewinding a checkpoint uses it for files created after it.
func (f *LocalFS) RemoveFile(ctx context.Context, path string) (bool, error) {
	if _, _, _, err := f.resolve(path, policy.AccessWrite); err != nil {
		return false, err
	}
	dir := filepath.Dir(path)
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false, nil // no directory: no file; a write would create it
	}
	w, err := f.prepareWrite(ctx, path, 0)
	if err != nil {
		return false, err
	}
	defer w.dir.Close()
	if !w.existing {
		return false, nil
	}
	if err := w.dir.Remove(w.base); err != nil {
		return false, rootErr("remove", path, err)
	}
	return true, syncRootDir(w.dir, path)
}

// Chmod sets the permission bits of the file at path (a rewind giving a
// file it wrote again its mode back), with the checks RemoveFile applies:
// the path's write rules, no link followed.
func (f *LocalFS) Chmod(ctx context.Context, path string, mode fs.FileMode) error {
	if _, _, _, err := f.resolve(path, policy.AccessWrite); err != nil {
		return err
	}
	w, err := f.prepareWrite(ctx, path, 0)
	if err != nil {
		return err
	}
	defer w.dir.Close()
	if !w.existing {
		return rootErr("chmod", path, fs.ErrNotExist)
	}
	if err := w.dir.Chmod(w.base, mode&fs.ModePerm); err != nil {
		return rootErr("chmod", path, err)
	}
	return nil
}

// writeTempPrefix starts the name of the temporary file of a write
// (writeAtomic): the prefix and rand.Text()'s 26 base32 characters.
const writeTempPrefix = ".acp-write-"

// started is when this process started: a write temporary file older
// than that was left by a process killed mid-write, never one of ours in
// flight.
var started = time.Now()

// RemoveStaleWrites removes, from the directory of path, the temporary
// files that writes left behind when the process writing them was killed
// (regular files named ".acp-write-" and 26 base32 characters, one link,
// last changed before this process started), with the checks RemoveFile
// applies. Completing a rewind after a kill calls it, so that nothing of
// the interrupted writes stays beside the files it sets. A missing
// directory is not an error. It reports how many it removed.
func (f *LocalFS) RemoveStaleWrites(ctx context.Context, path string) (int, error) {
	if _, _, _, err := f.resolve(path, policy.AccessWrite); err != nil {
		return 0, err
	}
	if fi, err := os.Lstat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return 0, nil
	}
	w, err := f.prepareWrite(ctx, path, 0)
	if err != nil {
		return 0, err
	}
	defer w.dir.Close()
	d, err := w.dir.Open(".")
	if err != nil {
		return 0, rootErr("open dir", path, err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0, rootErr("list", path, err)
	}
	n := 0
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, writeTempPrefix)
		if !ok || len(rest) != 26 || strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
			continue
		}
		fi, err := w.dir.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() || linkCount(fi) > 1 || !fi.ModTime().Before(started) {
			continue
		}
		if err := w.dir.Remove(name); err == nil {
			n++
		}
	}
	if n > 0 {
		return n, syncRootDir(w.dir, path)
	}
	return 0, nil
}

// CheckWrite applies every check WriteTextFile applies to path for size
// bytes of content — creating missing parent directories the same checked
// way — without writing the file, and returns the real path to write. It
// is for runtimes that hand the write to someone else (the editor's
// fs/write_text_file).
func (f *LocalFS) CheckWrite(ctx context.Context, path string, size int) (string, error) {
	w, err := f.prepareWrite(ctx, path, size)
	if err != nil {
		return "", err
	}
	w.dir.Close()
	return f.underRoot(filepath.Join(w.dirReal, w.base)), nil
}

// preparedWrite is a checked write target: its directory (open, confirmed
// by real path) and the file's name, mode and whether it exists.
type preparedWrite struct {
	dir      *os.Root
	dirReal  string
	base     string
	perm     fs.FileMode
	existing bool
}

func (f *LocalFS) prepareWrite(ctx context.Context, path string, size int) (preparedWrite, error) {
	if err := ctx.Err(); err != nil {
		return preparedWrite{}, err
	}
	r, rootPath, rel, err := f.resolve(path, policy.AccessWrite)
	if err != nil {
		return preparedWrite{}, err
	}
	if int64(size) > f.maxSize {
		return preparedWrite{}, fmt.Errorf("write %s: %w (%d bytes, cap %d)", path, ErrTooLarge, size, f.maxSize)
	}
	if rel == "." {
		return preparedWrite{}, fmt.Errorf("write %s: %w (is a directory)", path, ErrNotRegular)
	}
	dir, dirReal, err := f.openWriteDir(r, rootPath, filepath.Dir(rel), path)
	if err != nil {
		return preparedWrite{}, err
	}
	w := preparedWrite{dir: dir, dirReal: dirReal, base: filepath.Base(rel), perm: 0o644}
	if err := f.checkWriteTarget(&w, path); err != nil {
		dir.Close()
		return preparedWrite{}, err
	}
	return w, nil
}

func (f *LocalFS) checkWriteTarget(w *preparedWrite, path string) error {
	if _, _, err := f.real.Resolve(filepath.Join(w.dirReal, w.base), policy.AccessWrite); err != nil {
		return realRefusal(path, err)
	}
	switch fi, err := w.dir.Lstat(w.base); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return rootErr("lstat", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return &policy.PathError{Path: path, Reason: "symlink (would write through it)"}
	case fi.IsDir():
		return fmt.Errorf("write %s: %w (is a directory)", path, ErrNotRegular)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("write %s: %w (%s)", path, ErrNotRegular, typeName(fi.Mode()))
	case linkCountAt(w.dir, w.base, fi) > 1:
		return &policy.PathError{Path: path, Reason: fmt.Sprintf("hard link (%d links)", linkCountAt(w.dir, w.base, fi))}
	case fi.Mode().Perm()&0o200 == 0:
		// The rename would replace a write-protected file that open(2)
		// would refuse to write; keep the protection.
		return &fs.PathError{Op: "write", Path: path, Err: fs.ErrPermission}
	default:
		w.perm, w.existing = fi.Mode().Perm(), true
		// The file's own name, where the one given is another name for
		// it (Windows' short names): that is what the write replaces.
		name, err := entryName(w.dir, w.base)
		if err != nil {
			return rootErr("name", path, err)
		}
		if name != w.base {
			if _, _, err := f.real.Resolve(filepath.Join(w.dirReal, name), policy.AccessWrite); err != nil {
				return realRefusal(path, err)
			}
			w.base = name
		}
	}
	return nil
}

// writeAtomic writes content to base in dir via a temporary file.
func writeAtomic(dir *os.Root, base, path, content string, perm fs.FileMode, existing bool) error {
	tmp := writeTempPrefix + rand.Text()
	createPerm := perm
	if existing {
		// Created private, then set exactly with fchmod: the umask must
		// not change an existing file's mode.
		createPerm = 0o600
	}
	tf, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, createPerm)
	if err != nil {
		return rootErr("create", path, err)
	}
	fail := func(op string, err error) error {
		tf.Close()
		dir.Remove(tmp)
		return rootErr(op, path, err)
	}
	if existing {
		if err := tf.Chmod(perm); err != nil {
			return fail("chmod", err)
		}
	}
	if _, err := io.WriteString(tf, content); err != nil {
		return fail("write", err)
	}
	if err := tf.Sync(); err != nil {
		return fail("sync", err)
	}
	if err := tf.Close(); err != nil {
		dir.Remove(tmp)
		return rootErr("close", path, err)
	}
	if err := dir.Rename(tmp, base); err != nil {
		dir.Remove(tmp)
		return rootErr("rename", path, err)
	}
	// The rename is durable only once the directory is synced.
	return syncRootDir(dir, path)
}

// syncRootDir fsyncs the directory of dir (after a rename or removal in
// it); path names the file for errors.
func syncRootDir(dir *os.Root, path string) error {
	d, err := dir.Open(".")
	if err != nil {
		return rootErr("open dir", path, err)
	}
	defer d.Close()
	if err := syncDirFile(d); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return rootErr("sync dir", path, err)
	}
	return nil
}

// openWriteDir opens the directory dirRel of root r for writing, creating
// missing components one at a time. Each existing directory is confirmed
// by its real path and each new one is checked before it is created, so
// nothing is created under a denied prefix or read-only root even when a
// symlink inside the root leads there.
func (f *LocalFS) openWriteDir(r *os.Root, rootPath, dirRel, path string) (*os.Root, string, error) {
	var comps []string
	if dirRel != "." {
		comps = strings.Split(filepath.ToSlash(dirRel), "/")
	}
	// Find the deepest existing directory. The trailing "/." makes os.Root
	// open the last component as a directory (O_DIRECTORY), so a FIFO
	// cannot block us.
	i := len(comps)
	var cur *os.Root
	for ; ; i-- {
		name := strings.Join(append(comps[:i:i], "."), "/")
		sub, err := r.OpenRoot(filepath.FromSlash(name))
		if err == nil {
			cur = sub
			break
		}
		if i == 0 || !errors.Is(err, fs.ErrNotExist) {
			return nil, "", rootErr("open", path, err)
		}
	}
	lexical := filepath.Join(rootPath, filepath.FromSlash(strings.Join(comps[:i], "/")))
	real, err := f.confirmRoot(cur, path, lexical)
	if err != nil {
		cur.Close()
		return nil, "", err
	}
	for _, c := range comps[i:] {
		next := filepath.Join(real, c)
		if _, _, err := f.real.Resolve(next, policy.AccessWrite); err != nil {
			cur.Close()
			return nil, "", realRefusal(path, err)
		}
		if err := cur.Mkdir(c, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			cur.Close()
			return nil, "", rootErr("mkdir", path, err)
		}
		sub, err := cur.OpenRoot(c + string(filepath.Separator) + ".")
		cur.Close()
		if err != nil {
			return nil, "", rootErr("open", path, err)
		}
		cur = sub
		lexical = filepath.Join(lexical, c)
		if real, err = f.confirmRoot(cur, path, lexical); err != nil {
			cur.Close()
			return nil, "", err
		}
	}
	return cur, real, nil
}

// confirmRoot confirms the real path of an os.Root's directory for writing.
func (f *LocalFS) confirmRoot(r *os.Root, path, lexical string) (string, error) {
	d, err := r.Open(".")
	if err != nil {
		return "", rootErr("open", path, err)
	}
	defer d.Close()
	return f.confirm(d, path, lexical, policy.AccessWrite)
}

// confirm checks the real path of an opened file against the rules and
// returns it. lexical is root joined with the relative path that was
// opened; only the portable fallback uses it.
func (f *LocalFS) confirm(file *os.File, path, lexical string, a policy.Access) (string, error) {
	real, err := f.realPath(file, lexical)
	if err != nil {
		return "", &policy.PathError{Path: path, Reason: "real path unknown: " + err.Error()}
	}
	if _, _, err := f.real.Resolve(real, a); err != nil {
		return "", realRefusal(path, err)
	}
	return real, nil
}

// realPath names the file the descriptor refers to. Where the kernel can
// tell (fdPath) that name is authoritative. Otherwise the lexical path is
// resolved with EvalSymlinks and accepted only if it names the very inode
// we hold, which defeats a symlink swapped between open and check.
func (f *LocalFS) realPath(file *os.File, lexical string) (string, error) {
	return heldPath(file, lexical, f.fdPath)
}

// heldPath is the real path of the file held, opened as lexical: the
// kernel's name for it where it has one (kernel: fdPath, or a test's
// stand-in), else lexical resolved with EvalSymlinks, accepted only if it
// names the very file held.
func heldPath(file *os.File, lexical string, kernel func(*os.File) (string, bool)) (string, error) {
	if p, ok := kernel(file); ok {
		return p, nil
	}
	p, err := filepath.EvalSymlinks(lexical)
	if err != nil {
		return "", err
	}
	held, err := file.Stat()
	if err != nil {
		return "", err
	}
	named, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if !os.SameFile(held, named) {
		return "", errors.New("file changed while opening")
	}
	return p, nil
}

// rootRealPath is the real path of an os.Root's directory.
func (f *LocalFS) rootRealPath(r *os.Root, lexical string) (string, error) {
	d, err := r.Open(".")
	if err != nil {
		return "", err
	}
	defer d.Close()
	return f.realPath(d, lexical)
}

func noFDPath(*os.File) (string, bool) { return "", false }

// realRefusal restates a refusal of a real path under the path the caller
// gave, keeping the rule that refused it for the logs.
func realRefusal(path string, err error) error {
	var pe *policy.PathError
	if errors.As(err, &pe) {
		return &policy.PathError{Path: path, Reason: "real path " + pe.Path + ": " + pe.Reason, Hint: pe.Hint}
	}
	return &policy.PathError{Path: path, Reason: err.Error()}
}

// escapeText is the text of os's unexported errPathEscapes; the test
// TestRootEscapeIsPermissionDenied fails if a Go release changes it.
const escapeText = "path escapes from parent"

// rootErr renames an os.Root error after the path the caller gave (os.Root
// only knows the root-relative name) and turns an escape into a refusal.
// The underlying errno is kept, so errors.Is(err, fs.ErrNotExist) works.
func rootErr(op, path string, err error) error {
	inner := err
	for {
		var pe *fs.PathError
		if !errors.As(inner, &pe) || pe.Err == nil {
			break
		}
		inner = pe.Err
	}
	if inner.Error() == escapeText {
		return &policy.PathError{Path: path, Reason: "escapes its root"}
	}
	if errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("%s %s: %w", op, path, err)
	}
	return &fs.PathError{Op: op, Path: path, Err: inner}
}
