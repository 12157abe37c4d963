package host_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/agent/host"
	"github.com/acp-agent/acp-agent/agent/llm"
	"github.com/acp-agent/acp-agent/persistence"
	"github.com/acp-agent/acp-agent/policy"
)

// firstChunkClient notes when the first chunk of an answer reaches it.
type firstChunkClient struct {
	*client
	once  sync.Once
	first chan time.Time
}

func (c *firstChunkClient) Update(ctx context.Context, u agent.Update) error {
	if u.Kind == agent.UpdateMessage {
		c.once.Do(func() { c.first <- time.Now() })
	}
	return nil
}

// BenchmarkFirstPromptBurst is issue 30's burst without a transport:
// sessions of one host, stored on a real directory (TMPDIR), whose first
// prompts are submitted at the same instant (burst-200: 200 sessions) or
// one after the other (one-at-a-time: 30 sessions, each prompt once the
// one before it ended); the replay model answers after model-ms (a
// model's time to its first token); slow-disk-50ms makes every first
// save 50 ms longer (the test hook sleeps where a slow fsync would).
// Reported: p50 and p99 of the time
// from a prompt's submission to its first chunk reaching the client
// (medians over the iterations). What the first save (the session
// file's write, fsync, rename, the directory's fsync) adds beyond the
// model's time is the difference.
func BenchmarkFirstPromptBurst(b *testing.B) {
	for _, mode := range []struct {
		name   string
		n      int
		burst  bool
		slow   time.Duration
		delays []int
	}{
		{"burst-200", 200, true, 0, []int{0, 20, 100}},
		{"one-at-a-time", 30, false, 0, []int{0, 20, 100}},
		{"one-at-a-time/slow-disk-50ms", 30, false, 50 * time.Millisecond, []int{0, 100}},
	} {
		for _, delay := range mode.delays {
			b.Run(mode.name+"/model-"+strconv.Itoa(delay)+"ms", func(b *testing.B) {
				benchFirstPrompts(b, mode.n, mode.burst, mode.slow, delay)
			})
		}
	}
}

func benchFirstPrompts(b *testing.B, n int, burst bool, slow time.Duration, delay int) {
	events := []any{map[string]any{"text": "hi"}}
	if delay > 0 {
		events = []any{map[string]any{"text": "hi", "delayMs": delay}}
	}
	data, _ := json.Marshal(map[string]any{"turns": []any{map[string]any{"events": events}}})
	scriptPath := filepath.Join(b.TempDir(), "script.json")
	if err := os.WriteFile(scriptPath, data, 0o600); err != nil {
		b.Fatal(err)
	}
	var p50s, p99s []float64
	for b.Loop() {
		store, err := persistence.OpenStore(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		h := host.New(host.WithSaveHook(host.Config{Model: "replay/" + scriptPath, Mode: policy.ModeFullAccess, Version: "test", Store: store},
			func() { time.Sleep(slow) }))
		if err := h.Usable(); err != nil {
			b.Fatal(err)
		}
		cwd := b.TempDir()
		sessions := make([]*host.Session, n)
		clients := make([]*firstChunkClient, n)
		for i := range n {
			clients[i] = &firstChunkClient{client: &client{}, first: make(chan time.Time, 1)}
			if sessions[i], err = h.NewSession(context.Background(), host.NewRequest{CWD: cwd}, clients[i]); err != nil {
				b.Fatal(err)
			}
		}
		sent := make([]time.Time, n)
		done := make(chan error, n)
		prompt := func(i int) {
			sent[i] = time.Now()
			if err := sessions[i].Prompt(context.Background(), []llm.Part{llm.TextPart("go")}, func(_ agent.PromptResult, err error) { done <- err }); err != nil {
				done <- err
			}
		}
		if burst {
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() { <-start; prompt(i) })
			}
			close(start)
			wg.Wait()
			for range n {
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
		} else {
			for i := range n {
				prompt(i)
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
		}
		lat := make([]float64, n)
		for i := range n {
			lat[i] = float64((<-clients[i].first).Sub(sent[i]).Microseconds()) / 1000
		}
		slices.Sort(lat)
		p50s, p99s = append(p50s, lat[n/2]), append(p99s, lat[(n*99+99)/100-1])
		for _, s := range sessions {
			s.Close()
		}
		h.Close()
	}
	slices.Sort(p50s)
	slices.Sort(p99s)
	b.ReportMetric(p50s[len(p50s)/2], "first-chunk-p50-ms")
	b.ReportMetric(p99s[len(p99s)/2], "first-chunk-p99-ms")
}
