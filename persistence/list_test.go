package persistence

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var listBase = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// touch sets session id's mtime to listBase plus d.
func touch(t *testing.T, s *Store, id string, d time.Duration) {
	t.Helper()
	mt := listBase.Add(d)
	require.NoError(t, os.Chtimes(dataFile(s, id), mt, mt))
}

func ids(sums []Summary) []string {
	out := make([]string, len(sums))
	for i, s := range sums {
		out[i] = s.ID
	}
	return out
}

func TestListOrdersNewestFirstAndFiltersByCWD(t *testing.T) {
	s := newFastStore(t)
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		h := header(id)
		h.CWD = []string{"/one", "/two"}[i%2]
		h.Title = "title " + id
		h.ParentSessionID = "parent-" + id
		f, err := s.Create(h)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	touch(t, s, "a", 1*time.Second)
	touch(t, s, "b", 5*time.Second)
	touch(t, s, "c", 3*time.Second)
	touch(t, s, "d", 3*time.Second) // same mtime as c: ties go by id
	touch(t, s, "e", 2*time.Second)

	tests := []struct {
		cwd  string
		want []string
	}{
		{"", []string{"b", "c", "d", "e", "a"}},
		{"/one", []string{"c", "e", "a"}},
		{"/two", []string{"b", "d"}},
		{"/none", []string{}},
	}
	for _, tt := range tests {
		t.Run("cwd="+tt.cwd, func(t *testing.T) {
			page, err := s.List(ListOptions{CWD: tt.cwd})
			require.NoError(t, err)
			assert.Equal(t, tt.want, ids(page.Sessions))
			assert.Empty(t, page.NextCursor)
		})
	}

	page, err := s.List(ListOptions{})
	require.NoError(t, err)
	got := page.Sessions[0]
	assert.Equal(t, Summary{
		ID: "b", CWD: "/two", Title: "title b", ParentSessionID: "parent-b",
		UpdatedAt: listBase.Add(5 * time.Second), CreatedAt: header("b").Timestamp,
	}, Summary{got.ID, got.CWD, got.Title, got.ParentSessionID, got.UpdatedAt.UTC(), got.CreatedAt.UTC(), got.Archived, got.Subagent, got.AdditionalDirectories})

	_, err = s.List(ListOptions{Limit: -1})
	assert.Error(t, err)
}

// TestListPaginatesWithoutRepeatsOrGaps pages through 23 sessions five at
// a time while new sessions are created between pages: the pages together
// are exactly the original sessions in order, and the new ones appear only
// on a new first page.
func TestListPaginatesWithoutRepeatsOrGaps(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		cwd   string
	}{
		{"limit 5", 5, ""},
		{"limit 1", 1, ""},
		{"limit 23", 23, ""},
		{"limit 22", 22, ""},
		{"limit 5 with cwd", 5, "/work/s07"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newFastStore(t)
			var want []string
			for i := range 23 {
				id := fmt.Sprintf("s%02d", i)
				createWith(t, s, id, nil)
				touch(t, s, id, time.Duration(-i)*time.Second) // s00 newest
				want = append(want, id)
			}
			var got []string
			cursor := ""
			for pages := 0; ; pages++ {
				require.Less(t, pages, 100, "no end")
				page, err := s.List(ListOptions{Cursor: cursor, Limit: tt.limit, CWD: tt.cwd})
				require.NoError(t, err)
				assert.LessOrEqual(t, len(page.Sessions), tt.limit)
				got = append(got, ids(page.Sessions)...)
				if page.NextCursor == "" {
					break
				}
				assert.True(t, strings.HasPrefix(page.NextCursor, "v1:"))
				cursor = page.NextCursor
				// A session created between pages sorts before the cursor.
				createWith(t, s, fmt.Sprintf("new-%d", pages), nil)
			}
			if tt.cwd != "" {
				assert.Equal(t, []string{"s07"}, got)
			} else {
				assert.Equal(t, want, got)
			}
		})
	}
}

func TestListRejectsInvalidCursor(t *testing.T) {
	s := newFastStore(t)
	createWith(t, s, "x", nil)
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct{ name, cursor string }{
		{"garbage", "garbage"},
		{"other version", "v2:" + b64("1/x")},
		{"not base64", "v1:!!!"},
		{"no separator", "v1:" + b64("12345")},
		{"bad time", "v1:" + b64("abc/x")},
		{"bad id", "v1:" + b64("1/../x")},
		{"empty id", "v1:" + b64("1/")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.List(ListOptions{Cursor: tt.cursor})
			assert.ErrorIs(t, err, ErrInvalidCursor)
		})
	}
	// A well-formed cursor for a session that no longer exists still works:
	// it is a position, not a reference.
	page, err := s.List(ListOptions{Cursor: encodeCursor(position{time.Now().Add(time.Hour).UnixNano(), "gone"})})
	require.NoError(t, err)
	assert.Equal(t, []string{"x"}, ids(page.Sessions))
}

// TestListReadsOnlyHeaders lists a session whose body is 8 GiB of zeros (a
// sparse file: no valid line after the header) and one with a 20 MiB body
// and a garbage line deep inside. Reading either whole would take seconds
// and gigabytes; List must be quick and allocate little.
func TestListReadsOnlyHeaders(t *testing.T) {
	s := newFastStore(t)
	createWith(t, s, "sparse", nil)
	fh, err := os.OpenFile(dataFile(s, "sparse"), os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, fh.Truncate(8<<30))
	require.NoError(t, fh.Close())

	createWith(t, s, "huge", nil)
	fh, err = os.OpenFile(dataFile(s, "huge"), os.O_RDWR|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = fh.WriteString(strings.Repeat(string(rec(1))+"\n", 20<<20/len(rec(1))))
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	fh, err = os.OpenFile(dataFile(s, "huge"), os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = fh.WriteAt([]byte("\x00garbage{{{"), 10<<20)
	require.NoError(t, err)
	require.NoError(t, fh.Close())

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	page, err := s.List(ListOptions{})
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"sparse", "huge"}, ids(page.Sessions))
	assert.Less(t, elapsed, 2*time.Second)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by List")
}

// TestListSkipsUnreadableHeadersAndOtherFiles: only regular <id>.jsonl
// files whose header names them are listed; a bad one does not fail the
// listing.
func TestListSkipsUnreadableHeadersAndOtherFiles(t *testing.T) {
	s := newFastStore(t)
	createWith(t, s, "good", recs(0, 2))
	dir := s.Dir()
	write := func(name, data string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}
	write("garbage.jsonl", "not json\n")
	write("empty.jsonl", "")
	write("noline.jsonl", `{"type":"session","version":1,"id":"noline"}`)
	write("mismatch.jsonl", `{"type":"session","version":1,"id":"other"}`+"\n")
	write("hugeheader.jsonl", `{"type":"session","version":1,"id":"hugeheader","title":"`+strings.Repeat("t", MaxHeaderSize)+`"}`+"\n")
	write("good.jsonl.broken", "x")
	write("good.jsonl.tmp123", "x")
	write(".hidden.jsonl", `{"type":"session","version":1,"id":".hidden"}`+"\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "adir.jsonl"), 0o700))
	other := newFastStore(t)
	createWith(t, other, "link", nil)
	require.NoError(t, os.Symlink(dataFile(other, "link"), filepath.Join(dir, "link.jsonl")))

	page, err := s.List(ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"good"}, ids(page.Sessions))
}

// TestListLeavesOutSubagentsBeforePaging: NoSubagents filters before
// paging, as CWD does: every page is full until the last, and the pages
// together are the other sessions in order.
func TestListLeavesOutSubagentsBeforePaging(t *testing.T) {
	s := newFastStore(t)
	var want, all []string
	for i := range 12 {
		id := fmt.Sprintf("s%02d", i)
		h := header(id)
		h.Subagent = i%3 != 0 // two in three are subagents
		f, err := s.Create(h)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		touch(t, s, id, time.Duration(-i)*time.Second) // s00 newest
		all = append(all, id)
		if !h.Subagent {
			want = append(want, id)
		}
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10, "no end")
		page, err := s.List(ListOptions{Cursor: cursor, Limit: 2, NoSubagents: true})
		require.NoError(t, err)
		got = append(got, ids(page.Sessions)...)
		if page.NextCursor == "" {
			break
		}
		assert.Len(t, page.Sessions, 2, "a page before the last is full")
		cursor = page.NextCursor
	}
	assert.Equal(t, want, got)
	page, err := s.List(ListOptions{Limit: 100})
	require.NoError(t, err)
	assert.Equal(t, all, ids(page.Sessions), "without it every session is listed")
}
