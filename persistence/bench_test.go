package persistence

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// buildBigSession writes session id with n records of about size bytes
// each, without fsyncs, and returns the file's size.
func buildBigSession(b *testing.B, s *Store, id string, n, size int) int64 {
	b.Helper()
	fast := &Store{dir: s.dir, unsafeNoSync: true}
	f, err := fast.Create(header(id))
	if err != nil {
		b.Fatal(err)
	}
	pad := strings.Repeat("x", size-40)
	batch := make([]json.RawMessage, 0, 1000)
	for i := range n {
		batch = append(batch, json.RawMessage(fmt.Sprintf(`{"type":"msg","seq":%d,"text":"%s"}`, i, pad)))
		if len(batch) == cap(batch) || i == n-1 {
			if err := f.Append(batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(dataFile(s, id))
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}

// BenchmarkOpen100kRecords opens a session of 100,000 records of about 500
// bytes (about 50 MB). alloc/file is the bytes allocated per Open divided
// by the file size.
func BenchmarkOpen100kRecords(b *testing.B) {
	s := newStore(b)
	size := buildBigSession(b, s, "big", 100_000, 500)
	b.SetBytes(size)
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, l, err := s.Open("big")
		if err != nil {
			b.Fatal(err)
		}
		if len(l.Records) != 100_000 {
			b.Fatalf("%d records", len(l.Records))
		}
		f.Close()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(size), "alloc/file")
}

// BenchmarkList10kSessions lists a store of 10,000 small sessions: the
// first page, a page through a CWD filter that matches 1 in 100, and a
// filter that matches none (every header is read).
func BenchmarkList10kSessions(b *testing.B) {
	s := newStore(b)
	for i := range 10_000 {
		id := fmt.Sprintf("session-%05d", i)
		h := header(id)
		h.CWD = fmt.Sprintf("/work/p%d", i%100)
		line, err := h.encode()
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.Dir(), id+".jsonl"), append(line, rec(0)...), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for _, bb := range []struct {
		name string
		opts ListOptions
		want int
	}{
		{"first-page", ListOptions{}, 50},
		{"cwd-1-in-100", ListOptions{CWD: "/work/p7"}, 50},
		{"cwd-no-match", ListOptions{CWD: "/nowhere"}, 0},
	} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				page, err := s.List(bb.opts)
				if err != nil {
					b.Fatal(err)
				}
				if len(page.Sessions) != bb.want {
					b.Fatalf("%d sessions", len(page.Sessions))
				}
			}
		})
	}
}

// BenchmarkFork100kRecords forks all of a 100,000-record session (about
// 50 MB), fsyncs included.
func BenchmarkFork100kRecords(b *testing.B) {
	s := newStore(b)
	size := buildBigSession(b, s, "big", 100_000, 500)
	src, _, err := s.Open("big")
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("fork%d", i)
		f, err := s.Fork(src, header(id), src.Count())
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		f.Close()
		if err := s.Delete(id); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func benchRecord() json.RawMessage {
	return json.RawMessage(`{"type":"msg","text":"` + strings.Repeat("x", 460) + `"}`)
}

// BenchmarkAppendSync appends and fsyncs 500-byte records one at a time
// from one goroutine: one fsync per record.
func BenchmarkAppendSync(b *testing.B) {
	s := newStore(b)
	f, err := s.Create(header("a"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := benchRecord()
	b.SetBytes(int64(len(r) + 1))
	for i := 0; i < b.N; i++ {
		if err := f.AppendSync(r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(f.fsyncs.Load())/float64(b.N), "fsyncs/op")
}

// BenchmarkAppendSyncParallel is AppendSync from 16 goroutines per CPU:
// group commit makes concurrent callers share fsyncs.
func BenchmarkAppendSyncParallel(b *testing.B) {
	s := newStore(b)
	f, err := s.Create(header("p"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := benchRecord()
	b.SetBytes(int64(len(r) + 1))
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := f.AppendSync(r); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(f.fsyncs.Load())/float64(b.N), "fsyncs/op")
}

// BenchmarkAppend appends 500-byte records without fsync.
func BenchmarkAppend(b *testing.B) {
	s := newStore(b)
	f, err := s.Create(header("n"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := benchRecord()
	b.SetBytes(int64(len(r) + 1))
	for i := 0; i < b.N; i++ {
		if err := f.Append(r); err != nil {
			b.Fatal(err)
		}
	}
}
