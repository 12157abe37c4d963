//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Without masks, the grants around a .env are made entry by entry, by
// path: a directory of the workspace listed for its entries and swapped
// for a symlink to a denied directory before an entry was granted would
// grant the denied directory's file of that name, read and write (2 of
// 150 commands read it before every component was opened without
// following links). A process outside the sandbox (here a goroutine: an
// escalated command, the user's own tools; a confined command cannot
// rename a directory granted around, its parent is granted around too)
// swaps it while commands start: no command may ever read the denied
// file.
func TestASymlinkSwappedIntoTheGrantsNeverGrantsItsTarget(t *testing.T) {
	forEachMode(t, func(t *testing.T, m mode) {
		l, pol := newTestLauncher(t)
		ws := pol.WritableRoots[0]
		secret := filepath.Join(t.TempDir(), "ssh")
		require.NoError(t, os.Mkdir(secret, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(secret, "id_rsa"), []byte("SWAPPED_GRANT_SECRET\n"), 0o600))
		pol.DeniedPaths = []string{secret}
		sub := filepath.Join(ws, "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(sub, ".env"), []byte("X=1\n"), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(sub, "id_rsa"), []byte("decoy\n"), 0o644))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		swaps := 0
		go func() {
			defer wg.Done()
			aside := filepath.Join(ws, "aside")
			for {
				select {
				case <-stop:
					return
				default:
				}
				if os.Rename(sub, aside) == nil {
					_ = os.Symlink(secret, sub)
					time.Sleep(300 * time.Microsecond)
					_ = os.Remove(sub)
					_ = os.Rename(aside, sub)
					swaps++
				}
				time.Sleep(300 * time.Microsecond)
			}
		}()
		leaked := 0
		for range 150 {
			out, _, err := run(t, l, pol, "cat "+filepath.Join(secret, "id_rsa")+" 2>/dev/null; true")
			if err == nil && strings.Contains(out, "SWAPPED_GRANT_SECRET") {
				leaked++
			}
		}
		close(stop)
		wg.Wait()
		t.Logf("mode %s: %d swaps, %d of 150 commands read the denied file", m.name, swaps, leaked)
		assert.Zero(t, leaked, "a symlink swapped into the grants granted its target (mode %s)", m.name)
	})
}
