package persistence

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkFirstCheckpoint is what a session's first file change costs
// its checkpoint store: the store made (checkpoints/, objects/,
// objects/<hash[:2]>/, log.jsonl) in the session's <id>/ (which the
// session's start made), the file's content before stored and synced,
// and the turn and file records appended.
func BenchmarkFirstCheckpoint(b *testing.B) {
	root := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		b.StopTimer()
		id := filepath.Join(root, strconv.Itoa(i))
		if err := os.Mkdir(id, 0o700); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c, err := OpenCheckpoints(filepath.Join(id, "checkpoints"))
		if err != nil {
			b.Fatal(err)
		}
		h, err := c.Put([]byte("before " + strconv.Itoa(i)))
		if err == nil {
			err = c.Sync(h)
		}
		if err == nil {
			err = c.Append(CheckpointRecord{Type: CheckpointTurn, Turn: 1},
				CheckpointRecord{Type: CheckpointFile, Turn: 1, Path: "/w/a.txt", Before: &h})
		}
		if cerr := c.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
