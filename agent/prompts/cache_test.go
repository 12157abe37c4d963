package prompts

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-agent/acp-agent/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sessions of a workspace open its directories separately: they get
// one library, read once, and read again only when a file changed.
func TestCacheReadsASetOfDirectoriesOncePerChange(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".claude", "commands", "a.md"), "A")
	c := NewCache()
	c.racy = 0 // the files were written just now (TestCacheSeesARewriteInTheTickOfItsRead)
	s1, s2 := c.Open(ProjectDirs(root)), c.Open(ProjectDirs(root))
	defer s1.Close()
	defer s2.Close()
	require.Same(t, s1, s2, "equal sets of directories share one library")

	first, at := s1.Since(time.Now())
	again, _ := s2.Since(time.Time{})
	assert.Same(t, first, again, "a look already made serves the other session")
	unchanged, at2 := s2.Since(time.Now())
	assert.Same(t, first, unchanged, "a new look at unchanged files does not read them again")
	assert.True(t, at2.After(at))

	writeFile(t, filepath.Join(root, ".claude", "commands", "b.md"), "B")
	stale, _ := s1.Since(at2)
	assert.Same(t, first, stale, "a look that started late enough is not made again")
	changed, _ := s1.Since(time.Now())
	require.NotSame(t, first, changed)
	assert.Len(t, changed.Library.Commands, 2, "a look that starts after the edit reads it")
	shared, _ := s2.Since(time.Time{})
	assert.Same(t, changed, shared)
}

// Every caller gets a look at the directories that started after it
// asked, however many ask at once: what was written before a caller
// asked is in the library it gets, while the callers share looks.
func TestCacheLooksStartAfterTheirCallers(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, ".claude", "commands")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	c := NewCache()
	s := c.Open(ProjectDirs(root))
	defer s.Close()

	const files, callers = 100, 8
	var written atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := written.Load()
				snap, _ := s.Since(time.Now())
				if got := int64(len(snap.Library.Commands)); got < n {
					t.Errorf("a look asked for after %d files were written found %d", n, got)
					return
				}
			}
		})
	}
	for i := range files {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("c%02d.md", i)), "body")
		written.Add(1)
		time.Sleep(200 * time.Microsecond)
	}
	close(stop)
	wg.Wait()
	snap, _ := s.Since(time.Now())
	assert.Len(t, snap.Library.Commands, files)
}

// A set of directories nobody has open any more is forgotten, with its
// library.
func TestCacheForgetsASetNobodyHasOpen(t *testing.T) {
	root := t.TempDir()
	c := NewCache()
	s1 := c.Open(ProjectDirs(root))
	s2 := c.Open(ProjectDirs(root))
	s1.Close()
	s3 := c.Open(ProjectDirs(root))
	assert.Same(t, s2, s3, "still open elsewhere")
	s2.Close()
	s3.Close()
	assert.Empty(t, c.sets)
	s4 := c.Open(ProjectDirs(root))
	defer s4.Close()
	assert.NotSame(t, s1, s4)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// A command file rewritten with the same size in the clock tick the
// library was read in keeps its size, mtime, ctime and inode: the next
// look finds the same signature. A file changed that recently makes a
// look racy (racy git): the next look reads the files again, and sees
// the new text. Linux 6.13 and later give a file stat(2) was asked about
// a finer time at its next change (multigrain timestamps), so the test
// runs on a model of a file system whose times are whole seconds (older
// kernels' coarse clock, ext4 with 128-byte inodes, FAT, many network
// file systems): the rewrite is made in the second of the read, checked
// to have kept the stamp, and tried again if a second boundary passed.
func TestCacheSeesARewriteInTheTickOfItsRead(t *testing.T) {
	defer func(f func(string) (runtime.Stamp, bool)) { stampOf = f }(stampOf)
	stampOf = func(path string) (runtime.Stamp, bool) {
		st, ok := runtime.StampOf(path)
		st.MTime -= st.MTime % int64(time.Second)
		st.CTime -= st.CTime % int64(time.Second)
		return st, ok
	}
	root := t.TempDir()
	path := filepath.Join(root, ".claude", "commands", "a.md")
	c := NewCache()
	for attempt := 0; ; attempt++ {
		require.Less(t, attempt, 20, "no rewrite landed in the second of its look")
		writeFile(t, path, "v1")
		before, ok := stampOf(path)
		require.True(t, ok)
		s := c.Open(ProjectDirs(root))
		first, _ := s.Since(time.Now())
		require.Len(t, first.Library.Commands, 1)
		require.NoError(t, os.WriteFile(path, []byte("v2"), 0o644)) // in place: same inode
		after, _ := stampOf(path)
		if after != before || first.Library.Commands[0].Body != "v1" {
			s.Close()
			continue // a second passed: not the case under test
		}
		next, _ := s.Since(time.Now())
		s.Close()
		require.Len(t, next.Library.Commands, 1)
		assert.Equal(t, "v2", next.Library.Commands[0].Body, "a rewrite that kept the file's stamp is read (attempt %d)", attempt)
		assert.NotEqual(t, first.Signature, next.Signature, "the sessions are told the library changed")
		return
	}
}

// A same-size rewrite whose mtime is set back (touch -d) changes the
// file's status change time, which the signature holds: the next look
// reads it, even long after the first read.
func TestCacheSeesARewriteWithItsTimeSetBack(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".claude", "commands", "a.md")
	writeFile(t, path, "v1")
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))
	c := NewCache()
	c.racy = 0 // as if the first read came long after the file was written
	s := c.Open(ProjectDirs(root))
	defer s.Close()
	first, _ := s.Since(time.Now())
	require.Equal(t, "v1", first.Library.Commands[0].Body)
	require.NoError(t, os.WriteFile(path, []byte("v2"), 0o644))
	require.NoError(t, os.Chtimes(path, old, old))
	next, _ := s.Since(time.Now())
	assert.Equal(t, "v2", next.Library.Commands[0].Body)
}

// A command file whose mtime is in the future (unpacked from an archive,
// copied from a machine whose clock runs ahead) is read once, not at
// every look: its status change time, which every change sets to now,
// says it has not changed since, where the platform has one.
func TestCacheReadsAFileWithAFutureMtimeOnce(t *testing.T) {
	if st, ok := runtime.StampOf(os.Args[0]); !ok || st.CTime == 0 {
		t.Skip("no status change time here: the mtime is all there is")
	}
	reads := 0
	defer func(f func(Dirs) Library) { loadLibrary = f }(loadLibrary)
	loadLibrary = func(d Dirs) Library { reads++; return Load(d) }
	root := t.TempDir()
	path := filepath.Join(root, ".claude", "commands", "a.md")
	writeFile(t, path, "v1")
	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(path, future, future))
	c := NewCache()
	c.racy = 0 // as if the looks came long after the file was written
	s := c.Open(ProjectDirs(root))
	defer s.Close()
	first, _ := s.Since(time.Now())
	require.Equal(t, "v1", first.Library.Commands[0].Body)
	for range 3 {
		again, _ := s.Since(time.Now())
		assert.Same(t, first, again)
	}
	assert.Equal(t, 1, reads, "looks at an unchanged file read it again")

	require.NoError(t, os.WriteFile(path, []byte("v2"), 0o644))
	require.NoError(t, os.Chtimes(path, future, future))
	next, _ := s.Since(time.Now())
	assert.Equal(t, "v2", next.Library.Commands[0].Body, "a change is still seen")
}
