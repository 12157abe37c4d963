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

// BenchmarkFirstPromptBurst is issue 30's burst without a transport: 200
// sessions of one host, stored on a real directory (TMPDIR), whose first
// prompts are submitted at the same instant; the replay model answers
// after model-ms (a model's time to its first token). Reported: p50 and
// p99 of the time from a prompt's submission to its first chunk reaching
// the client, over the 200, for each model delay (medians over the
// iterations). What the first save
// (the session file's write, fsync, rename, the directory's fsync) adds
// beyond the model's time is the difference.
func BenchmarkFirstPromptBurst(b *testing.B) {
	for _, delay := range []int{0, 20, 100} {
		b.Run("model-"+strconv.Itoa(delay)+"ms", func(b *testing.B) {
			events := []any{map[string]any{"text": "hi"}}
			if delay > 0 {
				events = []any{map[string]any{"text": "hi", "delayMs": delay}}
			}
			data, _ := json.Marshal(map[string]any{"turns": []any{map[string]any{"events": events}}})
			scriptPath := filepath.Join(b.TempDir(), "script.json")
			if err := os.WriteFile(scriptPath, data, 0o600); err != nil {
				b.Fatal(err)
			}
			const n = 200
			var p50s, p99s []float64
			for b.Loop() {
				store, err := persistence.OpenStore(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				h := host.New(host.Config{Model: "replay/" + scriptPath, Mode: policy.ModeFullAccess, Version: "test", Store: store})
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
				var wg sync.WaitGroup
				start := make(chan struct{})
				sent := make([]time.Time, n)
				done := make(chan error, n)
				for i := range n {
					wg.Go(func() {
						<-start
						sent[i] = time.Now()
						if err := sessions[i].Prompt(context.Background(), []llm.Part{llm.TextPart("go")}, func(_ agent.PromptResult, err error) { done <- err }); err != nil {
							done <- err
						}
					})
				}
				close(start)
				wg.Wait()
				lat := make([]float64, n)
				for range n {
					if err := <-done; err != nil {
						b.Fatal(err)
					}
				}
				for i := range n {
					lat[i] = float64((<-clients[i].first).Sub(sent[i]).Microseconds()) / 1000
				}
				slices.Sort(lat)
				p50s, p99s = append(p50s, lat[n/2]), append(p99s, lat[n*99/100-1])
				for _, s := range sessions {
					s.Close()
				}
				h.Close()
			}
			slices.Sort(p50s)
			slices.Sort(p99s)
			b.ReportMetric(p50s[len(p50s)/2], "first-chunk-p50-ms")
			b.ReportMetric(p99s[len(p99s)/2], "first-chunk-p99-ms")
		})
	}
}
