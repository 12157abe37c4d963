package prompts

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sessions of a workspace open its directories separately: they get
// one library, read once, and read again only when a file changed.
func TestCacheReadsASetOfDirectoriesOncePerChange(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, ".claude", "commands", "a.md"), "A")
	c := NewCache()
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
