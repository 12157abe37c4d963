package acpagent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/acpagent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/persistence"
)

// bigSessionFile writes a session of n alternating user and assistant
// entries of about 500 bytes each and returns its store, id and size.
func bigSessionFile(b *testing.B, n int) (string, string, int64) {
	b.Helper()
	dir := b.TempDir()
	store, err := persistence.OpenStore(dir)
	if err != nil {
		b.Fatal(err)
	}
	id := "big-session"
	f, err := store.Create(persistence.Header{ID: id, CWD: b.TempDir(), Title: "big"})
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("lorem ipsum dolor sit amet ", 16)
	batch := make([]json.RawMessage, 0, 1000)
	for i := range n {
		kind := "user"
		if i%2 == 1 {
			kind = "assistant"
		}
		rec, _ := json.Marshal(map[string]any{"type": "entry", "time": time.Unix(int64(i), 0).UTC(), "kind": kind,
			"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("%d %s", i, text)}}})
		batch = append(batch, rec)
		if len(batch) == cap(batch) {
			if err := f.Append(batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := f.Append(batch...); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	return dir, id, st.Size()
}

// BenchmarkLoadSession100k: session/resume (read, decode, rebuild the
// session) and session/load (the same plus replaying every entry to the
// client) of a 100,000-entry, ~50 MB session, through the ACP service over
// in-memory pipes, with a client that only reads lines (so the time is the
// agent's). MB-heap is the agent's live heap after the load, against the
// file size; s-first-update (load) the time until the client reads the
// first replayed update.
func BenchmarkLoadSession100k(b *testing.B) {
	dir, id, size := bigSessionFile(b, 100_000)
	for _, method := range []string{acp.MethodSessionResume, acp.MethodSessionLoad} {
		b.Run(strings.TrimPrefix(method, "session/"), func(b *testing.B) {
			var heap uint64
			var cpu, first time.Duration
			for b.Loop() {
				b.StopTimer()
				store, err := persistence.OpenStore(dir)
				if err != nil {
					b.Fatal(err)
				}
				a := acpagent.New(acpagent.Config{Config: host.Config{Model: "replay/default", Store: store, NoBuiltinTools: true}})
				svc := acp.NewAgentService(a, acp.Options{})
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				done := make(chan struct{})
				go func() {
					svc.Serve(context.Background(), inR, outW)
					outW.Close()
					close(done)
				}()
				lines := bufio.NewReaderSize(outR, 1<<20)
				send := func(line string) {
					if _, err := io.WriteString(inW, line+"\n"); err != nil {
						b.Fatal(err)
					}
				}
				// until reads lines up to the response with id; it returns
				// how many notifications came before it, and when the first
				// replayed one (a user message) came.
				var firstAt time.Time
				until := func(id string) int {
					n := 0
					for {
						line, err := lines.ReadSlice('\n')
						if err != nil && err != bufio.ErrBufferFull {
							b.Fatal(err)
						}
						if bytes.HasPrefix(line, []byte(`{"id":`+id+`,`)) {
							return n
						}
						if firstAt.IsZero() && bytes.Contains(line, []byte(`"sessionUpdate":"user_message_chunk"`)) {
							firstAt = time.Now()
						}
						n++
					}
				}
				send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
				until("1")
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				params, _ := json.Marshal(map[string]any{"sessionId": id, "cwd": os.TempDir(), "mcpServers": []any{}})
				cpu0 := processCPU()
				b.StartTimer()
				start := time.Now()
				firstAt = time.Time{}
				send(`{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":` + string(params) + `}`)
				n := until("2")
				b.StopTimer()
				cpu += processCPU() - cpu0
				if !firstAt.IsZero() {
					first += firstAt.Sub(start)
				}
				// 100,000 entries and the slash-command announcement.
				if method == acp.MethodSessionLoad && n != 100_001 {
					b.Fatalf("replayed %d updates", n)
				}
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				heap = after.HeapInuse - min(after.HeapInuse, before.HeapInuse)
				inW.Close()
				io.Copy(io.Discard, lines)
				<-done
				b.StartTimer()
			}
			b.ReportMetric(float64(size)/1e6, "MB-file")
			b.ReportMetric(float64(heap)/1e6, "MB-heap")
			// The CPU time the process spent (the agent's, and the client's
			// reading): on a machine other work shares, a steadier figure
			// than the wall time.
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			if method == acp.MethodSessionLoad {
				// From the request to the first replayed update the client
				// reads (the replay streams while the file is decoded).
				b.ReportMetric(first.Seconds()/float64(b.N), "s-first-update")
			}
		})
	}
}

// processCPU is the user and system CPU time of this process so far, from
// /proc/self/stat (Linux; 0 elsewhere).
func processCPU() time.Duration {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces) in
	// parentheses: utime and stime are the 12th and 13th, in clock ticks
	// (100 per second on Linux).
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * (time.Second / 100)
}
