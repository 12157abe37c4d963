package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/policy"
)

const (
	// DefaultGlobMax is the result cap Glob uses when max <= 0.
	DefaultGlobMax = 1000
	// DefaultGrepMaxMatches is the match cap Grep uses when
	// GrepOptions.MaxMatches <= 0.
	DefaultGrepMaxMatches = 1000
	// grepTextMax is the longest GrepMatch.Text, in bytes.
	grepTextMax = 300
)

// Entry is one directory entry.
type Entry struct {
	Name string
	// Path is absolute: the listed directory's path as given (cleaned)
	// joined with Name. It is not a resolved real path.
	Path      string
	IsDir     bool // a directory, not a symlink to one
	IsSymlink bool
	Size      int64 // as reported by lstat
}

// ListDirectory returns the entries of the directory at path, sorted by
// name. Entries under a denied prefix (checked on the given path and on
// the directory's real path) are left out. Symlinks are listed, not
// followed.
func (f *LocalFS) ListDirectory(ctx context.Context, path string) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w, err := f.startWalk(path)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if !w.startIsDir {
		return nil, &fs.PathError{Op: "readdir", Path: path, Err: syscall.ENOTDIR}
	}
	w.withInfo = true
	var out []Entry
	err = w.walkStart(ctx, func(en entry) error {
		d := en.d
		e := Entry{
			Name:      d.Name(),
			Path:      filepath.Join(w.start, d.Name()),
			IsDir:     d.IsDir(),
			IsSymlink: d.Type()&fs.ModeSymlink != 0,
		}
		if info, err := d.Info(); err == nil {
			e.Size = info.Size()
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Glob returns the absolute paths under the directory dir whose path
// relative to dir matches pattern, sorted, at most max of them (max <= 0
// means DefaultGlobMax), and whether more matched.
//
// Pattern syntax is doublestar's: components are separated by "/"; "**"
// as a whole component matches zero or more directories ("**/*.go",
// "cmd/**/main.go"); within a component "*", "?", "[a-z]" and "\" work as
// in path.Match and never cross "/"; "{a,b}" alternatives are expanded
// (at most 64). "*" matches names starting with "." too. The pattern must
// be relative and must not contain "..". Directories, files and symlinks
// can all match.
//
// The walk never follows symlinks, skips denied prefixes, and stops with
// ctx's error when ctx is done.
func (f *LocalFS) Glob(ctx context.Context, dir, pattern string, max int) (paths []string, truncated bool, err error) {
	return f.GlobWith(ctx, dir, pattern, GlobOptions{Max: max, IncludeIgnored: true})
}

// GlobOptions configures GlobWith.
type GlobOptions struct {
	Max int // <= 0: DefaultGlobMax
	// IncludeIgnored lists what git ignores too (see
	// GrepOptions.IncludeIgnored); otherwise ignored entries, and
	// everything in ignored directories, are left out.
	IncludeIgnored bool
}

// GlobWith is Glob with options.
func (f *LocalFS) GlobWith(ctx context.Context, dir, pattern string, opt GlobOptions) (paths []string, truncated bool, err error) {
	found, truncated, err := f.glob(ctx, dir, pattern, opt, false)
	if err != nil {
		return nil, false, err
	}
	if len(found) > 0 {
		paths = make([]string, len(found))
	}
	for i, p := range found {
		paths[i] = p.Path
	}
	return paths, truncated, nil
}

// StampedPath is a path GlobStamped found, with the stamp of the regular
// file it names (Regular false: not a regular file, or gone).
type StampedPath struct {
	Path    string
	Stamp   Stamp
	Regular bool
}

// GlobStamped is GlobWith with each path's stamp (as StampOf gives it),
// taken relative to the directory the walk listed (where the platform
// allows): no path lookup per file, and the stamp is that of the entry
// the walk saw.
func (f *LocalFS) GlobStamped(ctx context.Context, dir, pattern string, opt GlobOptions) ([]StampedPath, bool, error) {
	return f.glob(ctx, dir, pattern, opt, true)
}

func (f *LocalFS) glob(ctx context.Context, dir, pattern string, opt GlobOptions, stamps bool) (paths []StampedPath, truncated bool, err error) {
	max := opt.Max
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	g, err := compileGlob(pattern)
	if err != nil {
		return nil, false, err
	}
	if max <= 0 {
		max = DefaultGlobMax
	}
	w, err := f.startWalk(dir)
	if err != nil {
		return nil, false, err
	}
	defer w.close()
	if !w.startIsDir {
		return nil, false, &fs.PathError{Op: "glob", Path: dir, Err: syscall.ENOTDIR}
	}
	var ig *ignorer
	if !opt.IncludeIgnored {
		ig = newIgnorer(w.startReal, globalExcludesFile())
	}
	// "**" matches everything, at every depth: no components to split.
	all := len(g.alts) == 1 && slices.Equal(g.alts[0], []string{"**"})
	var visit func(e entry) error
	visit = func(e entry) error {
		if ig != nil && ig.ignored(e) {
			return nil
		}
		var comps []string
		if !all {
			comps = strings.Split(e.rel, "/")
		}
		if all || g.match(comps) {
			if len(paths) == max {
				truncated = true
				return errStopWalk
			}
			p := StampedPath{Path: w.abs(e.rel)}
			if stamps && e.d.Type().IsRegular() {
				p.Stamp, p.Regular = stampAt(e.dir.fd, e.d.Name(), p.Path)
			}
			paths = append(paths, p)
		}
		if e.d.IsDir() && (all || g.mayMatchUnder(comps)) {
			return w.descend(ctx, e, visit)
		}
		return nil
	}
	err = w.walkStart(ctx, visit)
	if err != nil && !errors.Is(err, errStopWalk) {
		return nil, false, err
	}
	slices.SortFunc(paths, func(a, b StampedPath) int { return strings.Compare(a.Path, b.Path) })
	return paths, truncated, nil
}

// GrepMatch is one matching line.
type GrepMatch struct {
	Path string // absolute, as walked from the path given to Grep
	Line int    // 1-based
	Text string // the line without its terminator, cut to at most 300 bytes on a UTF-8 boundary
}

// GrepOptions configures Grep.
type GrepOptions struct {
	// Pattern is a Go regexp (RE2 syntax) matched against each line.
	Pattern string
	// Include, if set, is a glob (Glob syntax) a file must match to be
	// searched: against its name when Include has no "/", else against
	// its path relative to the directory searched.
	Include string
	// MaxMatches caps the result (<= 0 means DefaultGrepMaxMatches).
	MaxMatches int
	// IgnoreCase matches case-insensitively.
	IgnoreCase bool
	// IncludeIgnored searches files git ignores too (.gitignore, .ignore,
	// .git/info/exclude, the global excludes file), which are skipped by
	// default.
	IncludeIgnored bool
	// FilesOnly keeps each file's first match only: the result names
	// the files that match (MaxMatches then caps files).
	FilesOnly bool
}

// Grep searches the file or directory at path for lines matching
// opt.Pattern and returns them in walk order (entries sorted by name,
// depth first), at most opt.MaxMatches, and whether more matched.
//
// A directory walk never follows symlinks (to files or directories),
// skips denied prefixes, and silently skips what ReadTextFile would
// refuse: binary or non-UTF-8 files, files over the size cap, files with
// several hard links. A file named directly by path is searched even if
// it is a symlink (within the roots) and Include does not apply to it; the
// refusals and the size cap are then errors, while a binary or non-UTF-8
// file just gives no matches. Lines end at "\n"; a "\r" before it stays
// part of the line. An invalid regexp or Include gives an error before any
// I/O.
func (f *LocalFS) Grep(ctx context.Context, path string, opt GrepOptions) ([]GrepMatch, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	s, err := newGrepSearch(opt)
	if err != nil {
		return nil, false, err
	}
	w, err := f.startWalk(path)
	if err != nil {
		return nil, false, err
	}
	defer w.close()
	if !w.startIsDir {
		data, err := f.readOpened(w.file, path)
		if err != nil {
			return nil, false, err
		}
		if checkText(data) == nil {
			s.add(withPath(s.fileMatches(data, s.perFile), w.start))
		}
		return s.matches, s.truncated, nil
	}
	if !opt.IncludeIgnored {
		s.ignore = newIgnorer(w.startReal, globalExcludesFile())
	}
	err = s.searchTree(ctx, w)
	if err != nil && !errors.Is(err, errStopWalk) {
		return nil, false, err
	}
	return s.matches, s.truncated, nil
}

// grepSearch holds one Grep's compiled pattern and results.
type grepSearch struct {
	m         *lineMatcher
	include   *globPattern
	byName    bool
	ignore    *ignorer // nil: ignored files are searched too
	max       int
	perFile   int // matches kept per file (1 with FilesOnly)
	matches   []GrepMatch
	truncated bool
}

func newGrepSearch(opt GrepOptions) (*grepSearch, error) {
	m, err := newLineMatcher(opt.Pattern, opt.IgnoreCase)
	if err != nil {
		return nil, fmt.Errorf("grep: invalid pattern %q: %w", opt.Pattern, err)
	}
	s := &grepSearch{m: m, max: opt.MaxMatches}
	if s.max <= 0 {
		s.max = DefaultGrepMaxMatches
	}
	s.perFile = s.max + 1
	if opt.FilesOnly {
		s.perFile = 1
	}
	if opt.Include != "" {
		if s.include, err = compileGlob(opt.Include); err != nil {
			return nil, fmt.Errorf("grep: invalid include: %w", err)
		}
		s.byName = !strings.Contains(opt.Include, "/")
	}
	return s, nil
}

func (s *grepSearch) includes(rel string) bool {
	if s.include == nil {
		return true
	}
	if s.byName {
		return s.include.match([]string{filepath.Base(rel)})
	}
	return s.include.match(strings.Split(rel, "/"))
}

// grepBatch is files for a search worker, in walk order, and then their
// matches; done is set (by whoever searched it) once matches is final.
type grepBatch struct {
	files   []entry
	matches []GrepMatch
	done    atomic.Bool
}

// grepBatchLen is how many files go to a worker at once: one channel
// operation per file would cost more in scheduling than the search of a
// small file.
const grepBatchLen = 32

// searchTree searches the walk's tree: this goroutine walks (in name
// order) and hands batches of files to GOMAXPROCS workers, which read
// and search them. It takes the batches' matches in walk order as they
// are done, so the output is the same as a sequential search's, and it
// stops the walk once the matches in order are more than the cap
// (workers then skip what is queued). Every worker ends before
// searchTree returns.
func (s *grepSearch) searchTree(ctx context.Context, w *walk) error {
	var stop atomic.Bool // the cap is passed
	workers := min(max(goruntime.GOMAXPROCS(0), 1), 8)
	jobs := make(chan *grepBatch, 2*workers)
	search := func(b *grepBatch, bp *[]byte) {
		var out []GrepMatch
		for _, e := range b.files {
			if !stop.Load() && ctx.Err() == nil {
				if data, ok := w.readInto(e, bp); ok {
					if m := s.fileMatches(data, s.perFile); m != nil {
						out = append(out, withPath(m, w.abs(e.rel))...)
					}
				}
			}
			e.dir.release()
		}
		b.matches = out
		b.done.Store(true)
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Reused, across searches too: a search keeps only the
			// matching lines.
			bp := readBufs.Get().(*[]byte)
			defer putBuf(bp)
			for b := range jobs {
				search(b, bp)
			}
		}()
	}
	// batches are those not yet taken into s.matches, in walk order.
	var batches []*grepBatch
	collect := func() {
		i := 0
		for ; i < len(batches) && batches[i].done.Load(); i++ {
			if s.add(batches[i].matches) {
				stop.Store(true)
			}
		}
		batches = batches[i:]
	}
	pending := &grepBatch{}
	flush := func() {
		if len(pending.files) == 0 {
			return
		}
		batches = append(batches, pending)
		jobs <- pending
		pending = &grepBatch{}
		collect()
	}
	var visit func(e entry) error
	visit = func(e entry) error {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case stop.Load():
			return errStopWalk
		case s.ignore != nil && s.ignore.ignored(e):
			return nil
		case e.d.IsDir():
			return w.descend(ctx, e, visit)
		case !e.d.Type().IsRegular() || !s.includes(e.rel):
			return nil
		}
		e.dir.acquire()
		pending.files = append(pending.files, e)
		if len(pending.files) == grepBatchLen {
			flush()
		}
		return nil
	}
	err := w.walkStart(ctx, visit)
	flush()
	close(jobs)
	wg.Wait()
	collect()
	if s.truncated {
		return nil // the walk was stopped on purpose
	}
	return err
}

// fileMatches returns the matching lines of data, at most limit, with
// their paths left empty. Only a file with a match must be valid UTF-8
// (a non-text file gives no matches, as ReadTextFile refuses it). Safe
// for concurrent use.
func (s *grepSearch) fileMatches(data []byte, limit int) []GrepMatch {
	var out []GrepMatch
	s.m.matchLines(data, limit, func(n int, line []byte) {
		out = append(out, GrepMatch{Line: n, Text: string(cutUTF8(line, grepTextMax))})
	})
	if len(out) > 0 && !utf8.Valid(data) {
		return nil
	}
	return out
}

// withPath sets the path of every match.
func withPath(m []GrepMatch, path string) []GrepMatch {
	for i := range m {
		m[i].Path = path
	}
	return m
}

// add appends matches in order, up to the cap, and reports whether the
// cap was passed.
func (s *grepSearch) add(m []GrepMatch) bool {
	if s.truncated {
		return true
	}
	s.matches = append(s.matches, m...)
	if len(s.matches) > s.max {
		s.matches, s.truncated = s.matches[:s.max], true
	}
	return s.truncated
}

// cutUTF8 cuts s to at most n bytes without splitting a rune.
func cutUTF8(s []byte, n int) []byte {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// walk is one directory walk inside a single root.
//
// Only the start is resolved by path and confirmed by the real path of
// its descriptor. Below it, every directory and file is opened relative
// to its already confirmed parent directory (one openat, not a walk from
// the root, never through a symlink), and a directory is accepted only if
// the descriptor is the very inode the parent's listing showed at that
// name (on Linux the listing is read with getdents, whose entries carry
// their inode numbers; elsewhere os.SameFile with ReadDir's lstat).
// Entries that were symlinks when listed are never opened. The real path of a child is then its parent's real path joined
// with its name, which the rules check before anything is opened.
type walk struct {
	f          *LocalFS
	start      string // as given, cleaned
	startReal  string
	startIsDir bool
	// withInfo lists with FileInfo loaded (an lstat per entry), for
	// callers that show sizes; walks that search need only the types.
	withInfo bool
	file     *os.File // the start, confirmed
	dir      *os.Root // the start as a Root, when it is a directory
}

// entry is one allowed directory entry met by a walk.
type entry struct {
	rel        string      // slash-separated, relative to the start
	d          fs.DirEntry // from the parent's listing
	parentReal string
	// dir is the parent directory (the one listed). Its descriptor is
	// valid while visit runs, or while a reference to it is held
	// (acquire before visit returns).
	dir *dirHandle
}

// dirHandle is a listed directory's open descriptor, closed when the
// walk and every search worker holding it are done with it.
type dirHandle struct {
	fd int
	// root is the directory as an os.Root where its children are opened
	// through one (not on Linux, which opens them with openat on fd).
	root  *os.Root
	close func() // nil: the walk's start, which the walk closes
	refs  atomic.Int32
	// ignoreFiles has bit i set if the listing shows ignoreFileNames[i],
	// so directories without them cost no failed open.
	ignoreFiles uint8
	// ignoreChain caches ignorer.chain for the entries of this directory
	// (set: it is loaded); only the walking goroutine uses it.
	ignoreChain []ignoreFile
	chainSet    bool
}

func (h *dirHandle) acquire() { h.refs.Add(1) }

func (h *dirHandle) release() {
	if h.refs.Add(-1) == 0 && h.close != nil {
		h.close()
	}
}

// startWalk resolves, opens and confirms path. The caller closes the
// walk.
func (f *LocalFS) startWalk(path string) (*walk, error) {
	r, _, rel, err := f.resolve(path, policy.AccessRead)
	if err != nil {
		return nil, err
	}
	file, real, err := f.openChecked(path)
	if err != nil {
		return nil, err
	}
	w := &walk{f: f, start: filepath.Clean(path), startReal: real, file: file}
	fi, err := file.Stat()
	if err != nil {
		w.close()
		return nil, rootErr("stat", path, err)
	}
	if !fi.IsDir() {
		return w, nil
	}
	w.startIsDir = true
	// The Root used below must be the directory just confirmed.
	w.dir, err = r.OpenRoot(filepath.Join(rel, "."+string(filepath.Separator)+"."))
	if err != nil {
		w.close()
		return nil, rootErr("open", path, err)
	}
	if !sameDir(w.dir, fi) {
		w.close()
		return nil, &policy.PathError{Path: path, Reason: "changed while opening"}
	}
	return w, nil
}

func (w *walk) close() {
	w.file.Close()
	if w.dir != nil {
		w.dir.Close()
	}
}

// sameDir reports whether r's directory is the one fi describes.
func sameDir(r *os.Root, fi fs.FileInfo) bool {
	d, err := r.Open(".")
	if err != nil {
		return false
	}
	defer d.Close()
	dfi, err := d.Stat()
	return err == nil && os.SameFile(dfi, fi)
}

func (w *walk) abs(rel string) string {
	return filepath.Join(w.start, filepath.FromSlash(rel))
}

// walkStart lists the start directory.
func (w *walk) walkStart(ctx context.Context, visit func(entry) error) error {
	var entries []fs.DirEntry
	var err error
	if w.withInfo {
		entries, err = w.file.ReadDir(-1)
	} else {
		entries, err = readStartDir(w.file)
	}
	if err != nil {
		return rootErr("readdir", w.start, err)
	}
	h := &dirHandle{fd: int(w.file.Fd()), root: w.dir}
	h.refs.Store(1)
	defer h.release()
	return w.list(ctx, h, entries, "", w.startReal, visit)
}

// list visits, in name order, the entries of the directory dir (rel from
// the start, real its real path) that are allowed both by their lexical
// and by their real path.
func (w *walk) list(ctx context.Context, h *dirHandle, entries []fs.DirEntry, rel, real string, visit func(entry) error) error {
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if i := slices.Index(ignoreFileNames[:], e.Name()); i >= 0 {
			h.ignoreFiles |= 1 << i
		}
	}
	// Where no root or denied prefix lies right below this directory, an
	// entry's name alone decides (see policy.FS.ChildrenByName); the
	// whole path is resolved only where one does.
	byName := w.f.policy.ChildrenByName(w.abs(rel)) && w.f.real.ChildrenByName(real)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		child := e.Name()
		if rel != "" {
			child = rel + "/" + e.Name()
		}
		if byName {
			if !policy.ChildNameAllowed(e.Name()) {
				continue
			}
		} else if !w.allowed(child, real, e.Name()) {
			continue
		}
		if err := visit(entry{rel: child, d: e, parentReal: real, dir: h}); err != nil {
			return err
		}
	}
	return nil
}

// allowed reports whether the entry child (rel from the start) of the
// directory whose real path is real is allowed by its lexical and by its
// real path.
func (w *walk) allowed(child, real, name string) bool {
	if _, _, err := w.f.policy.Resolve(w.abs(child), policy.AccessRead); err != nil {
		return false
	}
	_, _, err := w.f.real.Resolve(filepath.Join(real, name), policy.AccessRead)
	return err == nil
}

// maxWalkDepth bounds how deep a walk descends. Each level holds one
// descriptor open, so this also bounds a walk's descriptors; deeper
// subtrees are skipped.
const maxWalkDepth = 256

// descend walks the subdirectory e. One that cannot be opened, is no
// longer the listed directory, or is too deep is skipped.
func (w *walk) descend(ctx context.Context, e entry, visit func(entry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if strings.Count(e.rel, "/") >= maxWalkDepth {
		return nil
	}
	h, entries, ok := openListedDir(e)
	if !ok {
		return nil
	}
	defer h.release()
	return w.list(ctx, h, entries, e.rel, filepath.Join(e.parentReal, e.d.Name()), visit)
}

// readBufs holds the search workers' read buffers.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

// pooledBufMax is the largest read buffer kept for later searches: the
// few larger files of a tree do not pin their size in memory.
const pooledBufMax = 1 << 20

// growBuf makes *buf hold at least n bytes, growing it to a power of two
// (at least 64 KiB) so that a search of many files of growing sizes
// allocates a few times, not once per larger file.
func growBuf(buf *[]byte, n int) []byte {
	if cap(*buf) < n {
		*buf = make([]byte, max(64<<10, 1<<bits.Len(uint(n-1))))
	}
	return (*buf)[:n]
}

// growBufKeep is growBuf keeping the first keep bytes of *buf.
func growBufKeep(buf *[]byte, n, keep int) []byte {
	if cap(*buf) >= n {
		return (*buf)[:n]
	}
	old := *buf
	b := growBuf(buf, n)
	copy(b, old[:keep])
	return b
}

// putBuf returns a read buffer to readBufs, unless it is over
// pooledBufMax.
func putBuf(bp *[]byte) {
	if cap(*bp) > pooledBufMax {
		*bp = nil
	}
	readBufs.Put(bp)
}

// readInto reads the walked file e into *buf (grown as needed and reused
// across files) if it is still the listed file, readable, and not binary
// (a NUL in its first 8 KiB). It leaves the UTF-8 check to the caller,
// which needs it only for files that match.
func (w *walk) readInto(e entry, buf *[]byte) ([]byte, bool) {
	data, ok := w.readEntry(e, buf)
	if !ok || bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0 {
		return nil, false
	}
	return data, true
}
