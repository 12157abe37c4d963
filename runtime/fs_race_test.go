//go:build unix

package runtime

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/policy"
)

// TestSymlinkSwapRaceNeverEscapes keeps retargeting two symlinks (by
// renaming a fresh link over them, as an attacker would) between an
// allowed target, a target under .git and a target outside the root,
// while readers and writers go through them. The check-then-open
// baseline in reliability.md 1.2 leaked 1,189 times in 200k attempts; here
// no result may ever carry the marker and no write may land under .git or
// outside.
func TestSymlinkSwapRaceNeverEscapes(t *testing.T) {
	const (
		readers    = 4
		iterations = 400 // per reader, each running every operation
	)
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	writeFile(t, root, "inside.txt", "ALLOWED inside\n")
	writeFile(t, root, "sub/f.txt", "ALLOWED sub\n")
	writeFile(t, root, ".git/config", marker+" git\n")
	writeFile(t, root, ".git/f.txt", marker+" git dir\n")
	writeFile(t, outside, "secret", marker+" outside\n")
	writeFile(t, outside, "f.txt", marker+" outside dir\n")

	lfs, err := NewLocalFS(policy.FS{Roots: []string{root}, DeniedPathPrefixes: policy.DefaultDeniedPrefixes()})
	require.NoError(t, err)
	defer lfs.Close()

	// One goroutine does all the swapping, round robin, so the test does
	// not starve its readers on a small machine. Each step renames a fresh
	// link (or file, or directory) over the old one.
	linkSwap := func(name string, targets []string) func(i int) {
		tmp := filepath.Join(root, "."+name+".swap")
		return func(i int) {
			os.Remove(tmp)
			if os.Symlink(targets[i%len(targets)], tmp) == nil {
				os.Rename(tmp, filepath.Join(root, name))
			}
		}
	}
	// xfile and xdir are entries a walk meets: a regular file and a
	// directory that keep turning into links to .git. Those links stay
	// inside the root, so os.Root follows them; only the walk's inode
	// check stops them.
	xfile, xfileTmp := filepath.Join(root, "xfile"), filepath.Join(root, ".xfile.swap")
	xdir, xdirTmp := filepath.Join(root, "xdir"), filepath.Join(root, ".xdir.swap")
	require.NoError(t, os.Mkdir(xdirTmp, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(xdirTmp, "f.txt"), []byte("ALLOWED xdir\n"), 0o644))
	steps := []func(i int){
		linkSwap("sw", []string{"inside.txt", ".git/config", "../outside/secret"}),
		linkSwap("swd", []string{"sub", ".git", "../outside"}),
		func(i int) {
			os.Remove(xfileTmp)
			if i%2 == 0 {
				os.WriteFile(xfileTmp, []byte("ALLOWED x\n"), 0o644)
			} else {
				os.Symlink(".git/config", xfileTmp)
			}
			os.Rename(xfileTmp, xfile)
		},
		func(i int) {
			if i%2 == 0 {
				os.Remove(xdir)
				os.Rename(xdirTmp, xdir)
			} else {
				os.Rename(xdir, xdirTmp)
				os.Symlink(".git", xdir)
			}
		},
	}
	// The links exist before anyone uses them; otherwise the first write
	// would create swd as a real directory and the swaps would all fail.
	require.NoError(t, os.Symlink("inside.txt", filepath.Join(root, "sw")))
	require.NoError(t, os.Symlink("sub", filepath.Join(root, "swd")))
	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			steps[i%len(steps)](i / len(steps))
		}
	})

	sw, swd := filepath.Join(root, "sw"), filepath.Join(root, "swd")
	var attempts, allowed, leaks atomic.Int64
	leak := func(s string) {
		if strings.Contains(s, marker) {
			leaks.Add(1)
		}
	}
	ops := []func(ctx context.Context){
		func(ctx context.Context) {
			got, err := lfs.ReadTextFile(ctx, sw, 0, 0)
			if err == nil {
				allowed.Add(1)
				leak(got)
			}
		},
		func(ctx context.Context) {
			got, _, err := lfs.ReadFile(ctx, sw)
			if err == nil {
				allowed.Add(1)
				leak(string(got))
			}
		},
		func(ctx context.Context) {
			got, err := lfs.ReadTextFile(ctx, filepath.Join(swd, "f.txt"), 0, 0)
			if err == nil {
				allowed.Add(1)
				leak(got)
			}
		},
		func(ctx context.Context) {
			entries, err := lfs.ListDirectory(ctx, swd)
			if err == nil {
				allowed.Add(1)
				for _, e := range entries {
					// Only sub's names may show: its file, the written
					// file and a concurrent write's temporary file.
					if e.Name != "f.txt" && e.Name != "new.txt" && !strings.HasPrefix(e.Name, ".acp-write-") {
						leaks.Add(1)
					}
				}
			}
		},
		func(ctx context.Context) {
			matches, _, err := lfs.Grep(ctx, root, GrepOptions{Pattern: "."})
			if err == nil {
				allowed.Add(1)
				for _, m := range matches {
					leak(m.Text)
				}
			}
		},
		func(ctx context.Context) {
			matches, _, err := lfs.Grep(ctx, swd, GrepOptions{Pattern: "."})
			if err == nil {
				allowed.Add(1)
				for _, m := range matches {
					leak(m.Text)
				}
			}
		},
	}
	// Writes fsync twice each, so they run on every 8th iteration only,
	// to keep the test near a second.
	write := func(ctx context.Context) {
		if lfs.WriteTextFile(ctx, filepath.Join(swd, "new.txt"), "written\n") == nil {
			allowed.Add(1)
		}
		attempts.Add(1)
	}
	var workers sync.WaitGroup
	for range readers {
		workers.Go(func() {
			ctx := context.Background()
			for i := range iterations {
				for _, op := range ops {
					op(ctx)
					attempts.Add(1)
				}
				if i%8 == 0 {
					write(ctx)
				}
			}
		})
	}
	workers.Wait()
	close(stop)
	swapper.Wait()

	t.Logf("%d attempts through swapping links, %d allowed, %d leaks", attempts.Load(), allowed.Load(), leaks.Load())
	require.Zero(t, leaks.Load())
	require.NotZero(t, allowed.Load(), "the allowed target was reached at least once")
	fi, err := os.Lstat(swd)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&fs.ModeSymlink, "swd stayed a symlink")
	for _, p := range []string{filepath.Join(root, ".git", "new.txt"), filepath.Join(outside, "new.txt")} {
		_, err := os.Lstat(p)
		require.ErrorIs(t, err, fs.ErrNotExist, "a write escaped to %s", p)
	}
}
