package persistence

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateIDRejectsPathsAndOddCharacters(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"0b3e8f2a-6c1d-4e5f-9a7b-1c2d3e4f5a6b", true},
		{"sess_1.v2", true},
		{"a", true},
		{strings.Repeat("a", 128), true},
		{"", false},
		{strings.Repeat("a", 129), false},
		{"../x", false},
		{"a/b", false},
		{`a\b`, false},
		{"..", false},
		{"a..b", false},
		{".hidden", false},
		{"a b", false},
		{"a\x00b", false},
		{"é", false},
		{"a*", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.id), func(t *testing.T) {
			err := ValidateID(tt.id)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrInvalidID)
			}
		})
	}
}

func TestInvalidIDIsRejectedByEveryEntryPoint(t *testing.T) {
	s := newStore(t)
	_, err := s.Create(Header{ID: "../escape"})
	assert.ErrorIs(t, err, ErrInvalidID)
	_, _, err = s.Open("a/b")
	assert.ErrorIs(t, err, ErrInvalidID)
	assert.ErrorIs(t, s.Delete(".."), ErrInvalidID)
	assert.Empty(t, dirNames(t, s), "nothing created")
}

func TestDefaultDirPrefersAbsoluteXDGStateHome(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"xdg", map[string]string{"XDG_STATE_HOME": abs("/x/state"), "HOME": abs("/home/me")}, abs("/x/state/acp-agent/sessions")},
		{"home", map[string]string{"HOME": abs("/home/me")}, abs("/home/me/.local/state/acp-agent/sessions")},
		{"relative xdg ignored", map[string]string{"XDG_STATE_HOME": "state", "HOME": abs("/home/me")}, abs("/home/me/.local/state/acp-agent/sessions")},
		{"nothing", map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultDir(func(k string) string { return tt.env[k] })
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestOpenStoreCreatesPrivateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	s, err := OpenStore(dir)
	require.NoError(t, err)
	assert.Equal(t, dir, s.Dir())
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assertMode(t, os.FileMode(0o700), fi)
	_, err = OpenStore("")
	assert.Error(t, err)
}

func TestCreateWritesHeaderLineAndRefusesExistingID(t *testing.T) {
	s := newStore(t)
	h := Header{ID: "c1", CWD: "/w", Title: "hello", ParentSessionID: "p", AdditionalDirectories: []string{"/x"}}
	f, err := s.Create(h)
	require.NoError(t, err)
	got := f.Header()
	assert.Equal(t, "session", got.Type)
	assert.Equal(t, FormatVersion, got.Version)
	assert.False(t, got.Timestamp.IsZero(), "a zero timestamp becomes the creation time")
	assert.Equal(t, 0, f.Count())
	require.NoError(t, f.Close())

	data, err := os.ReadFile(dataFile(s, "c1"))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(data), "\n"))
	assert.True(t, strings.HasPrefix(string(data), `{"type":"session","version":1,"id":"c1","cwd":"/w","timestamp":`), string(data))
	fi, err := os.Stat(dataFile(s, "c1"))
	require.NoError(t, err)
	assertMode(t, os.FileMode(0o600), fi)

	_, err = s.Create(h)
	assert.ErrorIs(t, err, fs.ErrExist)
	l := load(t, s, "c1")
	assert.Equal(t, got, l.Header)
	assert.Empty(t, l.Records)
}

func TestCreateRejectsBadHeaders(t *testing.T) {
	tests := []struct {
		name string
		h    Header
	}{
		{"wrong type", Header{ID: "x", Type: "message"}},
		{"other version", Header{ID: "x", Version: 2}},
		{"huge header", Header{ID: "x", Title: strings.Repeat("t", MaxHeaderSize)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			_, err := s.Create(tt.h)
			assert.Error(t, err)
			assert.Empty(t, dirNames(t, s))
		})
	}
}

func TestOpenUnknownSessionIsNotFoundAndLeavesNoLockFile(t *testing.T) {
	s := newStore(t)
	_, _, err := s.Open("nope")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.Contains(t, err.Error(), "nope")
	assert.Empty(t, dirNames(t, s))
}

func TestOpenRoundTripsRecordsIncludingOverOneMiB(t *testing.T) {
	s := newStore(t)
	big := bigRecord(1, 3<<20)
	want := []json.RawMessage{rec(0), big, rec(2)}
	createWith(t, s, "big", want)
	l := load(t, s, "big")
	assert.Equal(t, strs(want), strs(l.Records))
	assert.Zero(t, l.TornTail)
	assert.Empty(t, l.Skipped)
}

func TestAppendNormalizesOrRejectsRecords(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string // "" means rejected
		wantErr bool
	}{
		{"compact object", `{"type":"a"}`, `{"type":"a"}`, false},
		{"indented object is compacted", "{\n  \"type\": \"a\",\n  \"n\": [1,\n 2]\n}", `{"type":"a","n":[1,2]}`, false},
		{"surrounding whitespace trimmed", " \t{\"type\":\"a\"}\r\n", `{"type":"a"}`, false},
		{"escaped newline in string kept", `{"text":"a\nb"}`, `{"text":"a\nb"}`, false},
		{"array", `[1]`, "", true},
		{"string", `"x"`, "", true},
		{"null", `null`, "", true},
		{"empty", ``, "", true},
		{"invalid", `{"a":`, "", true},
		{"two objects", `{"a":1}{"b":2}`, "", true},
		{"two objects on two lines", "{\"a\":1}\n{\"b\":2}", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			f, err := s.Create(header("n"))
			require.NoError(t, err)
			err = f.Append(json.RawMessage(tt.in))
			if tt.wantErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), `"n"`, "the error names the session")
			} else {
				require.NoError(t, err)
			}
			require.NoError(t, f.Close())
			l := load(t, s, "n")
			if tt.wantErr {
				assert.Empty(t, l.Records)
			} else {
				assert.Equal(t, []string{tt.want}, strs(l.Records))
			}
		})
	}
}

func TestAppendWritesNothingWhenOneRecordIsBad(t *testing.T) {
	s := newStore(t)
	f, err := s.Create(header("b"))
	require.NoError(t, err)
	assert.Error(t, f.Append(rec(0), json.RawMessage(`[1]`), rec(2)))
	assert.Equal(t, 0, f.Count())
	require.NoError(t, f.Append(rec(0), rec(1)))
	assert.Equal(t, 2, f.Count())
	require.NoError(t, f.Close())
	assert.Equal(t, strs(recs(0, 2)), strs(load(t, s, "b").Records))
}

func TestClosedFileRefusesEverything(t *testing.T) {
	s := newStore(t)
	f, err := s.Create(header("cl"))
	require.NoError(t, err)
	require.NoError(t, f.Append(rec(0)))
	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "Close is idempotent")
	assert.ErrorIs(t, f.Append(rec(1)), ErrClosed)
	assert.ErrorIs(t, f.Sync(), ErrClosed)
	assert.ErrorIs(t, f.AppendSync(rec(1)), ErrClosed)
	assert.ErrorIs(t, f.Rewrite(header("cl"), nil), ErrClosed)
	_, err = s.Fork(f, header("cl2"), 0)
	assert.ErrorIs(t, err, ErrClosed)
	assert.Len(t, load(t, s, "cl").Records, 1, "Close made the unsynced append durable")
}

// TestSecondOpenInProcessIsLocked: while a File holds a session, every
// other way of taking it in this process fails with ErrLocked naming the
// session, and Close frees it.
func TestSecondOpenInProcessIsLocked(t *testing.T) {
	s := newStore(t)
	f, err := s.Create(header("busy"))
	require.NoError(t, err)

	other := openStore(t, s.Dir()) // a second Store on the same directory
	for name, try := range map[string]func() error{
		"Open":                 func() error { _, _, err := s.Open("busy"); return err },
		"Open via other Store": func() error { _, _, err := other.Open("busy"); return err },
		"Create":               func() error { _, err := s.Create(header("busy")); return err },
		"Delete":               func() error { return s.Delete("busy") },
		"Fork onto it": func() error {
			g, err := s.Create(header("src"))
			require.NoError(t, err)
			defer g.Close()
			_, err = s.Fork(g, header("busy"), 0)
			return err
		},
	} {
		err := try()
		assert.ErrorIs(t, err, ErrLocked, name)
		assert.ErrorContains(t, err, `"busy"`, name)
		assert.ErrorContains(t, err, "this process", name)
	}
	require.NoError(t, f.Close())
	f2, _, err := s.Open("busy")
	require.NoError(t, err)
	require.NoError(t, f2.Close())
}

// TestSecondOpenFromAnotherProcessIsLocked runs the test binary as a second
// process: it cannot open a session this process holds, this process cannot
// open one it holds, and the lock goes with the holder.
func TestSecondOpenFromAnotherProcessIsLocked(t *testing.T) {
	s := newStore(t)
	createWith(t, s, "shared", recs(0, 3))

	f, _, err := s.Open("shared")
	require.NoError(t, err)
	c := startChild(t, "try", s.Dir(), "shared")
	line := c.readLine(t)
	assert.True(t, strings.HasPrefix(line, "locked: "), "child got %q", line)
	assert.Contains(t, line, "another process")
	require.NoError(t, c.wait(), c.stderr.String())
	require.NoError(t, f.Close())

	c = startChild(t, "hold", s.Dir(), "shared")
	assert.Equal(t, "locked", c.readLine(t))
	_, _, err = s.Open("shared")
	assert.ErrorIs(t, err, ErrLocked)
	assert.ErrorContains(t, err, "another process")
	assert.ErrorIs(t, s.Delete("shared"), ErrLocked)
	require.NoError(t, c.wait(), c.stderr.String()) // the holder exits without closing

	f, l, err := s.Open("shared")
	require.NoError(t, err, "the kernel released the dead holder's lock")
	assert.Len(t, l.Records, 3)
	require.NoError(t, f.Close())
}

// TestConcurrentAppendsNeverInterleave has 16 goroutines append records of
// mixed sizes (some over PIPE_BUF, some over 64 KiB), with and without
// Sync, and checks that every line parses, every writer's records are all
// there in its order, and Count agrees.
func TestConcurrentAppendsNeverInterleave(t *testing.T) {
	s := newStore(t)
	f, err := s.Create(header("conc"))
	require.NoError(t, err)
	const writers, each = 16, 150
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				size := 10
				switch {
				case i%50 == 7:
					size = 70 << 10
				case i%5 == 0:
					size = 5000
				}
				r := json.RawMessage(fmt.Sprintf(`{"type":"w","w":%d,"i":%d,"pad":"%s"}`, w, i, strings.Repeat("p", size)))
				var err error
				switch i % 3 {
				case 0:
					err = f.AppendSync(r)
				case 1:
					err = f.Append(r, r[:len(r):len(r)])
				default:
					if err = f.Append(r); err == nil {
						err = f.Sync()
					}
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	total := writers * (each + each/3) // i%3 == 1 appends two
	assert.Equal(t, total, f.Count())
	require.NoError(t, f.Close())

	l := load(t, s, "conc")
	require.Empty(t, l.Skipped)
	require.Len(t, l.Records, total)
	next := make([]int, writers)
	for _, r := range l.Records {
		var v struct{ W, I int }
		require.NoError(t, json.Unmarshal(r, &v))
		if v.I%3 == 1 && next[v.W] == v.I+1 {
			continue // the second copy of a two-record append
		}
		require.Equal(t, next[v.W], v.I, "writer %d out of order", v.W)
		next[v.W] = v.I + 1
	}
}

// TestSyncSharesOneFsyncAmongWaiters: 16 appenders that queue behind a
// running fsync are all covered by the next one.
func TestSyncSharesOneFsyncAmongWaiters(t *testing.T) {
	s := newStore(t)
	f, err := s.Create(header("gc"))
	require.NoError(t, err)
	defer f.Close()

	f.syncMu.Lock() // stands for an fsync in progress
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() { assert.NoError(t, f.AppendSync(rec(i))) })
	}
	waitUntil(func() bool { return f.written.Load() == 16 })
	before := f.fsyncs.Load()
	f.syncMu.Unlock()
	wg.Wait()
	assert.Equal(t, int64(1), f.fsyncs.Load()-before, "one fsync covers all 16 appends")
	require.NoError(t, f.Sync())
	assert.Equal(t, int64(1), f.fsyncs.Load()-before, "Sync with nothing new does not fsync")
}

// TestCreatesShareDirectoryFsyncs: 16 sessions created at once (their
// first prompts) each need the directory fsynced after the rename that
// publishes their file; those that queue behind a running directory
// fsync are all covered by the next one, not one each in a row.
func TestCreatesShareDirectoryFsyncs(t *testing.T) {
	s := newStore(t)
	// The store's entry in .running/ first (its own directory fsyncs).
	warm, err := s.ReserveNew("warm")
	require.NoError(t, err)
	require.NoError(t, warm.Release())
	base := s.dirChanges.Load()
	// A directory fsync in progress, which covers none of the creates.
	running := make(chan struct{})
	s.dirMu.Lock()
	s.dirSyncing = running
	s.dirMu.Unlock()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			res, err := s.ReserveNew(fmt.Sprintf("gc%d", i))
			if !assert.NoError(t, err) {
				return
			}
			f, err := res.Create(header(fmt.Sprintf("gc%d", i)))
			if assert.NoError(t, err) {
				assert.NoError(t, f.Close())
			}
		})
	}
	waitUntil(func() bool { return s.dirChanges.Load() == base+16 })
	before := s.dirSyncs.Load()
	s.dirMu.Lock()
	s.dirSyncing = nil
	close(running)
	s.dirMu.Unlock()
	wg.Wait()
	assert.Equal(t, int64(1), s.dirSyncs.Load()-before, "one directory fsync covers the 16 renames")
	for i := range 16 {
		assert.True(t, s.Exists(fmt.Sprintf("gc%d", i)))
	}
	f, err := s.Create(header("later"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	assert.Equal(t, int64(2), s.dirSyncs.Load()-before, "a rename after that fsync gets one of its own")
}

// waitUntil polls cond until it holds or 10 s have passed (the callers'
// assertions then fail): goroutines reaching a lock the test holds.
func waitUntil(cond func() bool) {
	for deadline := time.Now().Add(10 * time.Second); !cond() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

func TestDeleteRemovesEverythingAndUnknownIsNil(t *testing.T) {
	s := newStore(t)
	createWith(t, s, "d", recs(0, 3))
	createWith(t, s, "keep", recs(0, 1))
	// Give "d" a .broken copy and a stale temporary file too.
	path := dataFile(s, "d")
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	fh.WriteString(`{"torn`)
	fh.Close()
	l := load(t, s, "d")
	require.NotZero(t, l.TornTail)
	require.NoError(t, os.WriteFile(path+".tmp999", nil, 0o600))

	require.NoError(t, s.Delete("d"))
	assert.Equal(t, []string{"keep.jsonl", "keep.lock"}, dirNames(t, s))
	page, err := s.List(ListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Sessions, 1)
	assert.Equal(t, "keep", page.Sessions[0].ID)
	_, _, err = s.Open("d")
	assert.ErrorIs(t, err, ErrNotFound)

	assert.NoError(t, s.Delete("d"), "already gone")
	assert.NoError(t, s.Delete("never-existed"))
	assert.Equal(t, []string{"keep.jsonl", "keep.lock"}, dirNames(t, s))
}

// TestRewriteKeepsLockAndLaterAppendsLandInNewFile replaces a file (new
// title, fewer records) while it stays open: the lock holds throughout,
// appends afterwards go to the new file, and no temporary file is left.
func TestRewriteKeepsLockAndLaterAppendsLandInNewFile(t *testing.T) {
	s := newStore(t)
	createWith(t, s, "rw", recs(0, 10))
	f, l, err := s.Open("rw")
	require.NoError(t, err)
	h := l.Header
	h.Title = "renamed"
	h.Timestamp = time.Time{} // keeps the current one
	require.NoError(t, f.Rewrite(h, []json.RawMessage{rec(100), json.RawMessage("{\n\"type\": \"x\"\n}")}))
	assert.Equal(t, "renamed", f.Header().Title)
	assert.Equal(t, l.Header.Timestamp, f.Header().Timestamp)
	assert.Equal(t, 2, f.Count())

	_, _, err = s.Open("rw")
	assert.ErrorIs(t, err, ErrLocked, "the lock survives the rename")
	c := startChild(t, "try", s.Dir(), "rw")
	assert.True(t, strings.HasPrefix(c.readLine(t), "locked: "), "and holds against other processes")
	require.NoError(t, c.wait(), c.stderr.String())

	require.NoError(t, f.AppendSync(rec(101)))
	assert.Equal(t, 3, f.Count())
	assert.Equal(t, []string{"rw.jsonl", "rw.lock"}, dirNames(t, s))
	require.NoError(t, f.Close())

	l2 := load(t, s, "rw")
	assert.Equal(t, "renamed", l2.Header.Title)
	assert.Equal(t, []string{string(rec(100)), `{"type":"x"}`, string(rec(101))}, strs(l2.Records))

	g, err := s.Create(header("other"))
	require.NoError(t, err)
	defer g.Close()
	assert.Error(t, g.Rewrite(header("rw"), nil), "a header for another session is refused")
	assert.Error(t, g.Rewrite(header("other"), []json.RawMessage{json.RawMessage(`[]`)}))
	assert.Equal(t, 0, g.Count())
}

// TestRewriteWhileAppending: appends racing with Rewrites are either in
// the old file (and replaced) or in the new one, never lost from it.
func TestRewriteWhileAppending(t *testing.T) {
	s := newStore(t)
	f, err := s.Create(header("rwa"))
	require.NoError(t, err)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			assert.NoError(t, f.AppendSync(rec(i)))
		}
	})
	for range 20 {
		require.NoError(t, f.Rewrite(header("rwa"), []json.RawMessage{json.RawMessage(`{"type":"compacted"}`)}))
	}
	close(stop)
	wg.Wait()
	n := f.Count()
	require.NoError(t, f.Close())
	l := load(t, s, "rwa")
	assert.Len(t, l.Records, n)
	assert.Equal(t, `{"type":"compacted"}`, string(l.Records[0]))
}

// TestCloseReleasesLockWhileProcessesAreForked closes and reopens a session
// while other goroutines keep forking processes. A forked child shares the
// lock file's open file description until its exec, so Close must unlock
// explicitly or the reopen fails with ErrLocked.
func TestCloseReleasesLockWhileProcessesAreForked(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to fork")
	}
	s := newFastStore(t)
	createWith(t, s, "fk", nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				exec.Command(truePath).Run()
			}
		})
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for i := range 300 {
		f, _, err := s.Open("fk")
		require.NoError(t, err, "open %d", i)
		require.NoError(t, f.Close())
	}
}

func TestRewriteHeaderKeepsEveryRecord(t *testing.T) {
	s := newStore(t)
	f, err := s.Create(Header{ID: "retitle", CWD: "/w", Title: "first line"})
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, f.Append(json.RawMessage(fmt.Sprintf(`{"type":"entry","n":%d}`, i))))
	}
	h := f.Header()
	h.Title = "A better title"
	require.NoError(t, f.RewriteHeader(h))
	require.NoError(t, f.Append(json.RawMessage(`{"type":"entry","n":5}`)))
	require.NoError(t, f.Close())
	f, loaded, err := s.Open("retitle")
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "A better title", loaded.Header.Title)
	require.Len(t, loaded.Records, 6)
	for i, r := range loaded.Records {
		assert.JSONEq(t, fmt.Sprintf(`{"type":"entry","n":%d}`, i), string(r))
	}
}

// Repair keeps the evidence: the file as it was is saved as .broken,
// unless Open already saved the original there for a torn tail.
func TestRepairSavesTheFileAsBrokenFirst(t *testing.T) {
	for _, torn := range []bool{false, true} {
		t.Run(fmt.Sprintf("torn=%v", torn), func(t *testing.T) {
			s := newStore(t)
			f, err := s.Create(Header{ID: "r", CWD: "/w"})
			require.NoError(t, err)
			require.NoError(t, f.Append(json.RawMessage(`{"type":"a"}`), json.RawMessage(`{"type":"b"}`)))
			require.NoError(t, f.Close())
			path := filepath.Join(s.Dir(), "r.jsonl")
			if torn {
				fd, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				_, err = fd.WriteString(`{"type":"c","x`)
				require.NoError(t, err)
				require.NoError(t, fd.Close())
			}
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			f, loaded, err := s.Open("r")
			require.NoError(t, err)
			defer f.Close()
			require.NoError(t, f.Repair(loaded.Records[1:]))
			broken, err := os.ReadFile(path + ".broken")
			require.NoError(t, err)
			assert.Equal(t, string(before), string(broken), "the copy is the file as Open found it")
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, strings.HasSuffix(string(after), "\n{\"type\":\"b\"}\n"), "%s", after)
			assert.NotContains(t, string(after), `"type":"a"`)
		})
	}
}
