package persistence

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultListLimit is the page size List uses when ListOptions.Limit is 0.
const DefaultListLimit = 50

// ListOptions selects a page of sessions.
type ListOptions struct {
	// CWD keeps only sessions whose header has exactly this working
	// directory; "" keeps all.
	CWD string
	// Cursor is a ListPage.NextCursor from an earlier call, or "" for the
	// first page.
	Cursor string
	// Limit is the page size; 0 means DefaultListLimit.
	Limit int
	// Archived selects by archive state before paging: ArchivedExclude
	// (the default), ArchivedInclude or ArchivedOnly.
	Archived ArchiveFilter
	// NoSubagents leaves out, before paging, the sessions whose header
	// marks them a subagent's.
	NoSubagents bool
}

// ArchiveFilter selects sessions by archive state.
type ArchiveFilter string

const (
	ArchivedExclude ArchiveFilter = "" // not archived
	ArchivedInclude ArchiveFilter = "include"
	ArchivedOnly    ArchiveFilter = "only"
)

func (f ArchiveFilter) keeps(archived bool) bool {
	switch f {
	case ArchivedInclude:
		return true
	case ArchivedOnly:
		return archived
	}
	return !archived
}

// Summary describes one session, from its header and its file's mtime.
type Summary struct {
	ID              string
	CWD             string
	Title           string
	ParentSessionID string
	// UpdatedAt is the file's modification time: the last append or
	// rewrite.
	UpdatedAt time.Time
	// CreatedAt is the header's Timestamp.
	CreatedAt time.Time
	Archived  bool
	Subagent  bool
	// AdditionalDirectories are the workspace roots besides CWD.
	AdditionalDirectories []string
}

// ListPage is one page of List's result.
type ListPage struct {
	Sessions []Summary
	// NextCursor fetches the next page; it is "" when there is none.
	NextCursor string
}

// List returns the sessions in the store, most recently updated first,
// ties broken by id, one page at a time.
//
// List reads only each file's mtime and header line (at most
// MaxHeaderSize bytes), never whole files, and takes no locks. A file
// whose header cannot be read is left out rather than failing the listing.
//
// A cursor is the position (UpdatedAt, ID) of the last session of the
// previous page; the next page starts strictly after it in the order. So
// paging is stable while sessions are created: new sessions sort before
// the cursor and later pages neither repeat nor skip the older ones. A
// session updated (appended to) while a listing is paged moves before the
// cursor too: it is not repeated if it was already listed, and it is left
// out of the remaining pages if it was not (a new first page shows it). A
// deleted session simply disappears. A cursor that List did not make is an
// error wrapping ErrInvalidCursor.
func (s *Store) List(opts ListOptions) (ListPage, error) {
	limit := opts.Limit
	switch {
	case limit == 0:
		limit = DefaultListLimit
	case limit < 0:
		return ListPage{}, fmt.Errorf("persistence: list limit %d is negative", limit)
	}
	var after *position
	if opts.Cursor != "" {
		p, err := decodeCursor(opts.Cursor)
		if err != nil {
			return ListPage{}, err
		}
		after = &p
	}

	cands, err := s.candidates()
	if err != nil {
		return ListPage{}, err
	}
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(cands, *after, comparePosition)
		if start < len(cands) && comparePosition(cands[start], *after) == 0 {
			start++
		}
	}

	// Read headers in order, in batches read in parallel, until one more
	// match than the page holds is found: that extra one says whether
	// there is a next page. Batches grow so that a CWD filter that matches
	// little does not pay for many small rounds.
	var out []Summary
	batch := limit + 1
	for pos := start; pos < len(cands) && len(out) <= limit; {
		end := min(pos+batch, len(cands))
		for _, sum := range s.readSummaries(cands[pos:end]) {
			if sum != nil && (opts.CWD == "" || sum.CWD == opts.CWD) && opts.Archived.keeps(sum.Archived) && !(opts.NoSubagents && sum.Subagent) {
				out = append(out, *sum)
			}
		}
		pos = end
		batch = min(batch*2, 4096)
	}
	page := ListPage{Sessions: out}
	if len(out) > limit {
		page.Sessions = out[:limit]
		last := out[limit-1]
		page.NextCursor = encodeCursor(position{last.UpdatedAt.UnixNano(), last.ID})
	}
	return page, nil
}

// position is a session's place in List's order.
type position struct {
	mtime int64 // UnixNano
	id    string
}

// comparePosition orders newest first, then by id.
func comparePosition(a, b position) int {
	if c := cmp.Compare(b.mtime, a.mtime); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// candidates lists the session files with their mtimes, in List's order.
func (s *Store) candidates() ([]position, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("persistence: list %s: %w", s.dir, err)
	}
	out := make([]position, 0, len(ents))
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), dataSuffix)
		if !ok || !e.Type().IsRegular() || ValidateID(id) != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // deleted since ReadDir
		}
		out = append(out, position{fi.ModTime().UnixNano(), id})
	}
	slices.SortFunc(out, comparePosition)
	return out, nil
}

// readSummaries reads the headers of cands in parallel; an entry is nil
// where the header could not be read.
func (s *Store) readSummaries(cands []position) []*Summary {
	out := make([]*Summary, len(cands))
	workers := min(runtime.GOMAXPROCS(0), 8, len(cands))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			buf := make([]byte, 4096)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cands) {
					return
				}
				out[i] = s.readSummary(cands[i], &buf)
			}
		})
	}
	wg.Wait()
	return out
}

// readSummary reads the header of one session file into a Summary, or
// returns nil. *buf is reused and grown to at most MaxHeaderSize.
func (s *Store) readSummary(p position, buf *[]byte) *Summary {
	f, err := openNoFollow(s.dataPath(p.id), os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	line, err := readFirstLine(f, buf)
	if err != nil {
		return nil
	}
	h, err := parseHeader(line)
	if err != nil || h.ID != p.id {
		return nil
	}
	return &Summary{
		ID:              h.ID,
		CWD:             h.CWD,
		Title:           h.Title,
		ParentSessionID: h.ParentSessionID,
		UpdatedAt:       time.Unix(0, p.mtime),
		CreatedAt:       h.Timestamp,
		Archived:        h.Archived,
		Subagent:        h.Subagent,

		AdditionalDirectories: h.AdditionalDirectories,
	}
}

// Summary describes session id from its file's header (and mtime),
// reading nothing else and taking no lock, like List. A session without
// a file is ErrNotFound; a header that cannot be read, ErrCorrupt.
func (s *Store) Summary(id string) (Summary, error) {
	if err := ValidateID(id); err != nil {
		return Summary{}, err
	}
	fi, err := os.Lstat(s.dataPath(id))
	if err != nil || !fi.Mode().IsRegular() {
		return Summary{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	buf := make([]byte, 4096)
	sum := s.readSummary(position{fi.ModTime().UnixNano(), id}, &buf)
	if sum == nil {
		return Summary{}, fmt.Errorf("%w: the header of session %q cannot be read", ErrCorrupt, id)
	}
	return *sum, nil
}

var errNoHeaderLine = errors.New("no newline within the header size limit")

// readFirstLine returns the first line of f without its newline, reading
// no more than MaxHeaderSize bytes. Most headers fit the first 4 KiB.
func readFirstLine(f *os.File, buf *[]byte) ([]byte, error) {
	n := 0
	for {
		m, err := f.ReadAt((*buf)[n:], int64(n))
		if i := bytes.IndexByte((*buf)[n:n+m], '\n'); i >= 0 {
			return (*buf)[:n+i], nil
		}
		n += m
		if err != nil {
			if err == io.EOF {
				err = errNoHeaderLine
			}
			return nil, err
		}
		if n == len(*buf) {
			if n >= MaxHeaderSize {
				return nil, errNoHeaderLine
			}
			nb := make([]byte, MaxHeaderSize)
			copy(nb, *buf)
			*buf = nb
		}
	}
}

const cursorPrefix = "v1:"

// encodeCursor makes the opaque cursor "v1:" + base64url("<unixnano>/<id>").
// The version prefix lets a later format be told apart; '/' never occurs
// in an id.
func encodeCursor(p position) string {
	return cursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.mtime, 10)+"/"+p.id))
}

func decodeCursor(c string) (position, error) {
	bad := func(why string) (position, error) {
		return position{}, fmt.Errorf("%w %q: %s", ErrInvalidCursor, c, why)
	}
	rest, ok := strings.CutPrefix(c, cursorPrefix)
	if !ok {
		return bad("unknown version")
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return bad("not base64url")
	}
	ts, id, ok := strings.Cut(string(raw), "/")
	if !ok {
		return bad("no separator")
	}
	mtime, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return bad("bad time")
	}
	if ValidateID(id) != nil {
		return bad("bad session id")
	}
	return position{mtime, id}, nil
}
