package structured

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// scriptedModel answers the n-th request with answers[n] (the last one
// repeats), streamed in chunks of chunk bytes. If gate is set, Stream
// waits for it after the first chunk.
type scriptedModel struct {
	answers []string
	chunk   int
	gate    chan struct{}

	mu       sync.Mutex
	requests [][]llm.Message
}

func (m *scriptedModel) next(msgs []llm.Message) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, msgs)
	return m.answers[min(len(m.requests)-1, len(m.answers)-1)]
}

func (m *scriptedModel) Complete(_ context.Context, msgs []llm.Message) (string, error) {
	return m.next(msgs), nil
}

func (m *scriptedModel) Stream(ctx context.Context, msgs []llm.Message, yield func(string) error) error {
	text := m.next(msgs)
	n := max(m.chunk, 1)
	for off := 0; off < len(text); off += n {
		if err := yield(text[off:min(off+n, len(text))]); err != nil {
			return err
		}
		if off == 0 && m.gate != nil {
			select {
			case <-m.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

func collect(t *testing.T, s *Subscription[Event]) ([]Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []Event
	for e, err := range s.All(ctx) {
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

// Seed 004 §4: with streaming parse on (slash paths) and a structured
// output, the instant stream yields at least one event, the first with a
// non-nil value, and it does so before the model's stream has ended.
func TestSeed004_StreamingParseYieldsValueBeforeEnd(t *testing.T) {
	for _, mode := range []Mode{EmitPartial, EmitComplete} {
		t.Run(fmt.Sprint("mode", mode), func(t *testing.T) {
			p := &Prompt{Input: "Hello", Output: seedOutput()}
			om, err := p.OutputModel()
			require.NoError(t, err)
			answer := `{"thinking": "greet back", "reply": "Hi there!"}`
			m := &scriptedModel{answers: []string{answer}, chunk: 30, gate: make(chan struct{})}
			ctx := context.Background()
			r := Stream(ctx, m, p.ToMessages(false), om, WithMode(mode))
			sub := r.Subscribe()

			// The model is held after its first 30 bytes, so this event
			// arrives while the stream is still open.
			first, err := sub.Next(ctx)
			require.NoError(t, err)
			assert.NotNil(t, first.Value)
			if mode == EmitPartial {
				// "instant" mode: the root object opens first.
				assert.Equal(t, "", first.Path)
				assert.Equal(t, map[string]any{}, first.Value)
				assert.False(t, first.Complete)
				second, err := sub.Next(ctx)
				require.NoError(t, err)
				assert.Equal(t, Event{Path: "/thinking", Value: "greet back", Delta: "greet back", Complete: true}, second)
			} else {
				assert.Equal(t, Event{Path: "/thinking", Value: "greet back", Complete: true}, first)
			}
			close(m.gate)

			rest, err := collect(t, sub)
			require.NoError(t, err)
			all := append([]Event{first}, rest...)
			last := all[len(all)-1]
			assert.Equal(t, "", last.Path)
			assert.True(t, last.Complete)
			v, err := r.Wait(ctx)
			require.NoError(t, err)
			assert.Equal(t, map[string]any{"thinking": "greet back", "reply": "Hi there!"}, v)
			assert.Equal(t, answer, r.Text())
		})
	}
}

// Seed 004 §5: several responses obtained from the same request prompt,
// each consumed by several concurrent consumers, stay independent: every
// consumer sees its own response's whole event sequence, whenever it
// subscribed. Run under -race.
func TestSeed004_MultipleResponsesIndependentConsumption(t *testing.T) {
	const responses, consumers = 3, 4
	answers := make([]string, responses)
	for i := range answers {
		answers[i] = fmt.Sprintf(`{"thinking": "plan %d", "reply": "answer number %d %s"}`, i, i, "padding padding padding")
	}
	m := &scriptedModel{answers: answers, chunk: 3}
	p := &Prompt{Input: "Hello", Output: seedOutput()}
	om, err := p.OutputModel()
	require.NoError(t, err)
	msgs := p.ToMessages(false)
	ctx := context.Background()

	rs := make([]*Response, responses)
	for i := range rs {
		rs[i] = Stream(ctx, m, msgs, om, WithMode(EmitPartial))
	}
	got := make([][][]Event, responses)
	var wg sync.WaitGroup
	for i, r := range rs {
		got[i] = make([][]Event, consumers)
		for c := range consumers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if c == consumers-1 {
					// A late subscriber still gets everything.
					_, _ = r.Wait(ctx)
				}
				ev, err := collect(t, r.Subscribe())
				assert.NoError(t, err)
				got[i][c] = ev
			}()
		}
	}
	wg.Wait()

	values := map[string]bool{}
	for i, r := range rs {
		v, err := r.Wait(ctx)
		require.NoError(t, err)
		reply := v.(map[string]any)["reply"].(string)
		values[reply] = true
		all := r.Events().Items()
		require.NotEmpty(t, all)
		for c := range consumers {
			assert.Equal(t, all, got[i][c], "response %d consumer %d", i, c)
		}
		// Each response's events describe its own answer only.
		assert.Equal(t, v, all[len(all)-1].Value)
	}
	assert.Len(t, values, responses, "each response parsed its own answer")
	assert.Len(t, m.requests, responses)
}

func TestBroadcastSlowSubscriberBlocksNobody(t *testing.T) {
	b := NewBroadcast[int]()
	stalled := b.Subscribe()
	_, _ = stalled, b
	for i := range 1000 {
		require.NoError(t, b.Publish(i)) // never blocks, nobody reads yet
	}
	b.Close(nil)
	assert.ErrorIs(t, b.Publish(1), ErrBroadcastClosed)

	reader := b.Subscribe()
	n := 0
	for v, err := range reader.All(context.Background()) {
		require.NoError(t, err)
		assert.Equal(t, n, v)
		n++
	}
	assert.Equal(t, 1000, n)
	assert.Equal(t, 1000, b.Len())
	// The stalled subscriber still has its whole sequence.
	v, err := stalled.Next(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, v)
}

func TestBroadcastWaitAndErrors(t *testing.T) {
	b := NewBroadcast[string]()
	s := b.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := s.Next(ctx)
		got <- err
	}()
	cancel()
	assert.ErrorIs(t, <-got, context.Canceled)

	done := make(chan string, 1)
	go func() {
		v, _ := s.Next(context.Background())
		done <- v
	}()
	time.Sleep(10 * time.Millisecond) // let it wait
	require.NoError(t, b.Publish("x"))
	assert.Equal(t, "x", <-done)

	boom := errors.New("boom")
	b.Close(boom)
	b.Close(nil) // only the first close counts
	_, err := s.Next(context.Background())
	assert.ErrorIs(t, err, boom)
	var seen []error
	for _, err := range b.Subscribe().All(context.Background()) {
		seen = append(seen, err)
	}
	assert.Equal(t, []error{nil, boom}, seen)
}

func TestBroadcastConcurrentPublishers(t *testing.T) {
	b := NewBroadcast[int]()
	var wg sync.WaitGroup
	subs := make([][]int, 3)
	for i := range subs {
		s := b.Subscribe()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				v, err := s.Next(context.Background())
				if errors.Is(err, io.EOF) {
					return
				}
				assert.NoError(t, err)
				subs[i] = append(subs[i], v)
			}
		}()
	}
	var pw sync.WaitGroup
	for p := range 4 {
		pw.Add(1)
		go func() {
			defer pw.Done()
			for i := range 250 {
				_ = b.Publish(p*1000 + i)
			}
		}()
	}
	pw.Wait()
	b.Close(nil)
	wg.Wait()
	for i := range subs {
		assert.Equal(t, b.Items(), subs[i])
		assert.Len(t, subs[i], 1000)
	}
}

func TestResponseErrors(t *testing.T) {
	ctx := context.Background()
	om := mustModel(t, Object(Req("a", Integer(""))))

	r := NewResponse(om)
	_, _ = r.WriteString(`{"a": "x"}`)
	require.ErrorIs(t, r.Close(), ErrSchemaMismatch)
	_, err := r.Wait(ctx)
	assert.ErrorIs(t, err, ErrSchemaMismatch)
	ev, err := collect(t, r.Subscribe())
	assert.ErrorIs(t, err, ErrSchemaMismatch)
	assert.NotEmpty(t, ev, "events before the failure are delivered")

	failing := ModelFunc(func(context.Context, []llm.Message) (string, error) { return "", errors.New("down") })
	r = Stream(ctx, failing, nil, om)
	_, err = r.Wait(ctx)
	assert.ErrorContains(t, err, "down")

	r = NewResponse(nil)
	_, _ = r.WriteString(`[1, 2`)
	assert.ErrorIs(t, r.Close(), ErrIncomplete)
	assert.ErrorIs(t, r.CloseWithError(errors.New("ignored")), ErrIncomplete)
	_, err = r.WriteString("]")
	assert.ErrorIs(t, err, ErrClosed)

	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	_, err = NewResponse(nil).Wait(ctx2)
	assert.ErrorIs(t, err, context.Canceled)
}
