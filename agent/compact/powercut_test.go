//go:build unix

package compact

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acp-agent/acp-agent/persistence"
	"github.com/stretchr/testify/require"
)

// keptAfterPowerCut observes directory fsyncs and returns a check that
// path, and every directory between root and it, would be found after a
// power cut: an entry survives once its directory was fsynced with it
// in it.
func keptAfterPowerCut(t *testing.T, root string) func(path string) {
	var mu sync.Mutex
	kept := map[string]bool{}
	stop, err := persistence.ObserveDirSyncs(func(dir string) {
		ents, _ := os.ReadDir(dir)
		mu.Lock()
		defer mu.Unlock()
		for _, e := range ents {
			kept[filepath.Join(dir, e.Name())] = true
		}
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	return func(path string) {
		t.Helper()
		rel, err := filepath.Rel(root, path)
		require.NoError(t, err)
		mu.Lock()
		defer mu.Unlock()
		p := root
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			p = filepath.Join(p, part)
			require.True(t, kept[p], "%s would be lost in a power cut", p)
		}
	}
}

// The files an offload writes (which the compacted session's file names)
// and a tool result's kept whole output (which its record names) survive
// a power cut once the call returns, and so do the directories made for
// them (<id>/offloaded/, and <id>/ when the session had none) or that
// the session's start made without an fsync.
func TestOffloadedFilesAreKeptThroughAPowerCut(t *testing.T) {
	for _, made := range []bool{false, true} {
		t.Run(map[bool]string{false: "made by the offload", true: "made at the session's start"}[made], func(t *testing.T) {
			testOffloadKeptThroughAPowerCut(t, made)
		})
	}
}

func testOffloadKeptThroughAPowerCut(t *testing.T, madeBefore bool) {
	o := testOffloader(t)
	root := filepath.Dir(filepath.Dir(o.Dir))
	if madeBefore {
		// As the host does when the session opens: no fsync.
		require.NoError(t, os.MkdirAll(o.Dir, 0o700))
	}
	requireKept := keptAfterPowerCut(t, root)
	res, err := o.OffloadIfNeeded(history(4), o.Threshold)
	require.NoError(t, err)
	require.Len(t, res.Paths, 2)
	for _, p := range res.Paths {
		requireKept(p)
	}
	path, err := o.Keep("c9", long)
	require.NoError(t, err)
	requireKept(path)
}
