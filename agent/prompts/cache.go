package prompts

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Snapshot is a library as one check of its directories found it.
// Sessions share it: nothing in it may be changed.
type Snapshot struct {
	Library Library
	// Signature names the library's content: two snapshots with the same
	// Signature hold the same library. It is the directories' signature
	// when it was read (signature), with a generation added when a
	// re-read found other content under the same one (a same-size
	// rewrite in the clock tick of the read).
	Signature string
	// stat is the directories' signature when it was read; racy, some
	// file's times were then within RacyWindow of the look, so an equal
	// signature later does not vouch for it.
	stat string
	racy bool
}

// Cache shares the libraries of sets of directories among the sessions
// that use them: the sessions of one workspace read its commands and
// skills once per change, not once each, and a look at the directories
// made for one session serves every session whose prompt arrived before
// it started. Safe for concurrent use; the zero value is not usable
// (NewCache).
type Cache struct {
	mu   sync.Mutex
	sets map[string]*Shared
	// racy is RacyWindow; tests of what is shared, whose files are
	// written just before, set it to 0.
	racy time.Duration
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{sets: map[string]*Shared{}, racy: RacyWindow} }

// Open returns the shared library of dirs, one per distinct set of
// directories while anyone has it open. Close it when done.
func (c *Cache) Open(dirs Dirs) *Shared {
	key := dirs.key()
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sets[key]
	if s == nil {
		s = &Shared{c: c, key: key, dirs: dirs}
		c.sets[key] = s
	}
	s.refs++
	return s
}

// Shared is the library of one set of directories, shared by the
// sessions that have it open (Cache.Open).
type Shared struct {
	c    *Cache
	key  string
	dirs Dirs
	refs int // under c.mu

	// latest is the newest look's result: taking it is one atomic load,
	// so the sessions of a burst of prompts never queue on a lock.
	latest atomic.Pointer[look]
	// loadMu makes the files of one signature read once, however many
	// looks find it at once.
	loadMu sync.Mutex
	loaded *Snapshot // the last library read, under loadMu
	gen    uint64    // generations given, under loadMu
}

// look is what one look at the directories found, and when it started.
type look struct {
	snap    *Snapshot
	started time.Time
}

// Since returns the library as a look that started at t or later found
// it (what the directories held at t, or later), and when that look
// started. The newest look is shared if it started at t or later;
// otherwise the caller looks now, without waiting for anyone's look: the
// directories' signature, and a read of the files if it is one no look
// has read yet. A zero t takes any look, so the library is read once
// until something asks for a newer one.
func (s *Shared) Since(t time.Time) (*Snapshot, time.Time) {
	if l := s.latest.Load(); l != nil && !l.started.Before(t) {
		return l.snap, l.started
	}
	// A look that started before t may have missed a file written just
	// before it, and one running now may be such a look.
	l := &look{started: time.Now()}
	sig, racy := signature(s.dirs, l.started, s.c.racy)
	if prev := s.latest.Load(); prev != nil && prev.snap.stat == sig && !prev.snap.racy {
		l.snap = prev.snap
	} else {
		l.snap = s.load(sig, racy)
	}
	for {
		// The newest look wins; two looks may end out of order.
		cur := s.latest.Load()
		if cur != nil && !cur.started.Before(l.started) || s.latest.CompareAndSwap(cur, l) {
			return l.snap, l.started
		}
	}
}

// load reads the library of signature sig, once: looks that find the
// same signature at once share the read, unless the read was racy, when
// each look reads again (the files changed within RacyWindow). A re-read
// that finds the same library keeps its Signature (sessions are told of
// no change); one that finds another under the same signature gets a new
// generation.
func (s *Shared) load(sig string, racy bool) *Snapshot {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	prev := s.loaded
	if prev != nil && prev.stat == sig && !prev.racy {
		return prev
	}
	lib := loadLibrary(s.dirs)
	next := &Snapshot{Library: lib, Signature: sig, stat: sig, racy: racy}
	if prev != nil && prev.stat == sig {
		if reflect.DeepEqual(prev.Library, lib) {
			if racy {
				return prev // still shared
			}
			// The same library, no longer racy: shared from now on
			// without reading again.
			next.Library = prev.Library
			next.Signature = prev.Signature
		} else {
			s.gen++
			next.Signature = sig + "\x00" + strconv.FormatUint(s.gen, 10)
		}
	}
	s.loaded = next
	return next
}

// loadLibrary is Load; tests count the reads with it.
var loadLibrary = Load

// Close releases the library: the cache forgets it when nobody has it
// open. Call it once per Open.
func (s *Shared) Close() {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.refs--
	if s.refs == 0 && s.c.sets[s.key] == s {
		delete(s.c.sets, s.key)
	}
}

// key names a set of directories: two sets with the same key read the
// same library.
func (d Dirs) key() string {
	var b strings.Builder
	list := func(tag string, xs []string) {
		b.WriteString(tag)
		for _, x := range xs {
			b.WriteString(x)
			b.WriteByte(0)
		}
		b.WriteByte('\n')
	}
	list("c", d.Commands)
	list("s", d.Skills)
	confined := make([]string, 0, len(d.Confined))
	for dir, root := range d.Confined {
		confined = append(confined, dir+"\x00"+root)
	}
	slices.Sort(confined)
	list("r", confined)
	list("d", d.Denied)
	return b.String()
}
