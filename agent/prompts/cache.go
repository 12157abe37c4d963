package prompts

import (
	"slices"
	"strings"
	"sync"
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
// skills once per change, not once each, and a check of the directories
// done for one session serves every session whose prompt arrived before
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

	mu sync.Mutex
	// snap is the newest library found, by the check that started at
	// checked; nil before the first.
	snap    *Snapshot
	checked time.Time
	// running is the newest check running now (nil: none).
	running *check
}

// check is one look at the directories: its result is ready when done
// is closed.
type check struct {
	started time.Time
	done    chan struct{}
	snap    *Snapshot
}

// Since returns the library as a check that started at t or later found
// it (what the directories held at t, or later), and when that check
// started. A check already done or running that started at t or later is
// shared; otherwise one starts now (the directories' signature, and a
// read of the files only if it changed). A zero t takes any check done,
// so the library is read once until something asks for a newer look.
func (s *Shared) Since(t time.Time) (*Snapshot, time.Time) {
	s.mu.Lock()
	if s.snap != nil && !s.checked.Before(t) {
		snap, at := s.snap, s.checked
		s.mu.Unlock()
		return snap, at
	}
	if r := s.running; r != nil && !r.started.Before(t) {
		s.mu.Unlock()
		<-r.done
		return r.snap, r.started
	}
	// A check that started before t may have missed a file written
	// just before it: this one does not wait for it.
	r := &check{started: time.Now(), done: make(chan struct{})}
	s.running = r
	prev := s.snap
	s.mu.Unlock()

	sig := Signature(s.dirs)
	if prev != nil && prev.Signature == sig {
		r.snap = prev
	} else {
		r.snap = &Snapshot{Library: Load(s.dirs), Signature: sig}
	}

	s.mu.Lock()
	if s.snap == nil || s.checked.Before(r.started) {
		s.snap, s.checked = r.snap, r.started
	}
	if s.running == r {
		s.running = nil
	}
	s.mu.Unlock()
	close(r.done)
	return r.snap, r.started
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
