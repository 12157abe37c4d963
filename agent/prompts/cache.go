package prompts

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Snapshot is a library as one check of its directories found it: the
// library and the signature (Signature) it was read at. Sessions share
// it: nothing in it may be changed.
type Snapshot struct {
	Library   Library
	Signature string
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
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{sets: map[string]*Shared{}} }

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
	sig := Signature(s.dirs)
	if prev := s.latest.Load(); prev != nil && prev.snap.Signature == sig {
		l.snap = prev.snap
	} else {
		l.snap = s.load(sig)
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
// same signature at once share the read.
func (s *Shared) load(sig string) *Snapshot {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if s.loaded != nil && s.loaded.Signature == sig {
		return s.loaded
	}
	s.loaded = &Snapshot{Library: Load(s.dirs), Signature: sig}
	return s.loaded
}

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
