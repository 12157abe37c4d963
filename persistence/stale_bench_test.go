package persistence

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// buildSessionDir fills s's directory with n saved sessions as real ones
// leave them: <id>.jsonl (a header), <id>.lock, and for every other one
// its <id>/offloaded/ directory; plus what a few crashed agents left.
func buildSessionDir(b *testing.B, s *Store, n int) {
	b.Helper()
	dir := s.Dir()
	for i := range n {
		id := fmt.Sprintf("c091c4b2-0000-4000-8000-%012d", i)
		line := fmt.Sprintf(`{"type":"session","version":1,"id":%q,"cwd":"/home/u/proj","timestamp":"2026-11-26T19:02:48.356982934Z"}`+"\n", id)
		if err := os.WriteFile(filepath.Join(dir, id+dataSuffix), []byte(line), 0o600); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id+lockSuffix), nil, 0o600); err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			if err := os.MkdirAll(filepath.Join(dir, id, "offloaded"), 0o700); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// plantStale makes what three agents killed at different points leave.
func plantStale(b *testing.B, dir string) {
	b.Helper()
	for _, name := range []string{"killed-a.lock", "killed-a.jsonl.tmp123", "killed-b.lock", "killed-c.jsonl.tmp456"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "killed-b", "offloaded"), 0o700); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRemoveStale is the clean-up every agent start runs, in a
// directory of 100, 1,000 and 10,000 saved sessions: "full" lists the
// whole directory (RemoveStale) and finds the few stale items planted
// before each run; "start" is what a start does after agents that
// exited cleanly (RemoveStaleAtStart), which must not grow with the
// number of sessions.
func BenchmarkRemoveStale(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		s := newFastStore(b)
		buildSessionDir(b, s, n)
		b.Run(fmt.Sprintf("full/sessions=%d", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				plantStale(b, s.Dir())
				b.StartTimer()
				removed, err := s.RemoveStale()
				if err != nil || len(removed) != 5 {
					b.Fatal(removed, err)
				}
			}
		})
		// The agents before exited cleanly (Close).
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("start/sessions=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, full, err := s.RemoveStaleAtStart(); err != nil || full {
					b.Fatal(full, err)
				}
			}
		})
	}
}
