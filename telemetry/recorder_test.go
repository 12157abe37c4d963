package telemetry

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixedClock returns a clock that starts at start and advances by step on
// every call.
func fixedClock(start time.Time, step time.Duration) func() time.Time {
	var mu sync.Mutex
	t := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now := t
		t = t.Add(step)
		return now
	}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

func TestRecorderFansOutToEverySink(t *testing.T) {
	tests := []struct {
		name  string
		sinks int
	}{
		{"one sink", 1},
		{"two sinks", 2},
		{"five sinks", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mems := make([]*MemorySink, tt.sinks)
			sinks := make([]Sink, tt.sinks)
			for i := range mems {
				mems[i] = &MemorySink{}
				sinks[i] = mems[i]
			}
			r := NewRecorder(sinks...)
			r.Now = fixedClock(t0, 0)
			r.Emit(context.Background(), EventSessionNew, "sess_1", "", AttrCwd, "/work")
			r.Emit(context.Background(), EventPromptRequested, "sess_1", "7")

			want := []Event{
				{Name: EventSessionNew, SessionID: "sess_1", Attributes: map[string]string{"cwd": "/work"}, Timestamp: t0},
				{Name: EventPromptRequested, SessionID: "sess_1", RequestID: "7", Timestamp: t0},
			}
			for i, m := range mems {
				assert.Equal(t, want, m.Events(), "sink %d", i)
			}
		})
	}
}

func TestRecorderSkipsNilSinks(t *testing.T) {
	var mem MemorySink
	var nilMem *MemorySink
	r := NewRecorder(nil, &mem, nilMem)
	r.Emit(context.Background(), EventSessionDelete, "sess_1", "")
	assert.Equal(t, []string{EventSessionDelete}, mem.Names())
}

func TestNilRecorderDoesNothing(t *testing.T) {
	tests := []struct {
		name string
		rec  Emitter
	}{
		{"nil pointer", (*Recorder)(nil)},
		{"zero value", &Recorder{}},
		{"no sinks", NewRecorder()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NotPanics(t, func() {
				tt.rec.Emit(context.Background(), EventPromptFailed, "s", "r", AttrError, "boom", "odd")
				//lint:ignore SA1012 a nil ctx must be tolerated
				tt.rec.Emit(nil, EventPromptStarted, "", "")
			})
		})
	}
}

func TestRecorderAttributes(t *testing.T) {
	tests := []struct {
		name  string
		attrs []string
		want  map[string]string
	}{
		{"none gives nil map", nil, nil},
		{"one pair", []string{"cwd", "/w"}, map[string]string{"cwd": "/w"}},
		{"several pairs", []string{"attempt", "1", "maxAttempts", "3", "reason", "transient"},
			map[string]string{"attempt": "1", "maxAttempts": "3", "reason": "transient"}},
		{"odd count reports BADKEY", []string{"lonely"}, map[string]string{BadKey: "lonely"}},
		{"odd count keeps the pairs", []string{"cwd", "/w", "extra"}, map[string]string{"cwd": "/w", BadKey: "extra"}},
		{"later duplicate wins", []string{"k", "1", "k", "2"}, map[string]string{"k": "2"}},
		{"empty key and value kept", []string{"", ""}, map[string]string{"": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mem MemorySink
			r := NewRecorder(&mem)
			require.NotPanics(t, func() {
				r.Emit(context.Background(), EventPromptRetry, "s", "", tt.attrs...)
			})
			evs := mem.Events()
			require.Len(t, evs, 1)
			assert.Equal(t, tt.want, evs[0].Attributes)
		})
	}
}

func TestRecorderClockInjectionGivesDeterministicTimestamps(t *testing.T) {
	var mem MemorySink
	r := NewRecorder(&mem)
	r.Now = fixedClock(t0, time.Millisecond)
	for range 3 {
		r.Emit(context.Background(), EventPromptStarted, "s", "1")
	}
	var got []time.Time
	for _, e := range mem.Events() {
		got = append(got, e.Timestamp)
	}
	assert.Equal(t, []time.Time{t0, t0.Add(time.Millisecond), t0.Add(2 * time.Millisecond)}, got)
}

func TestRecorderTimestampsAreUTC(t *testing.T) {
	tests := []struct {
		name string
		now  func() time.Time
	}{
		{"injected non-UTC clock", func() time.Time { return t0.In(time.FixedZone("X", 5*3600)) }},
		{"default clock", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mem MemorySink
			r := NewRecorder(&mem)
			r.Now = tt.now
			before := time.Now()
			r.Emit(context.Background(), EventPromptStarted, "s", "1")
			ts := mem.Events()[0].Timestamp
			assert.Equal(t, time.UTC, ts.Location())
			if tt.now == nil {
				assert.False(t, ts.Before(before.Truncate(time.Second)))
			} else {
				assert.True(t, ts.Equal(t0))
			}
		})
	}
}

func TestRecorderEmitsWhenContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var mem MemorySink
	NewRecorder(&mem).Emit(ctx, EventPromptCancelled, "s", "1")
	assert.Equal(t, []string{EventPromptCancelled}, mem.Names())
}

func TestRecorderIsolatesPanickingSink(t *testing.T) {
	var before, after MemorySink
	bad := SinkFunc(func(Event) { panic("bad sink") })
	r := NewRecorder(&before, bad, &after)
	require.NotPanics(t, func() {
		r.Emit(context.Background(), EventPromptCompleted, "s", "1")
	})
	assert.Equal(t, []string{EventPromptCompleted}, before.Names())
	assert.Equal(t, []string{EventPromptCompleted}, after.Names())
}

func TestEventJSON(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{
			"all fields",
			Event{Name: EventPromptRetry, SessionID: "sess_1", RequestID: "7",
				Attributes: map[string]string{"attempt": "1", "maxAttempts": "2", "reason": "transient"}, Timestamp: t0},
			`{"name":"prompt_retry","sessionId":"sess_1","requestId":"7","attributes":{"attempt":"1","maxAttempts":"2","reason":"transient"},"timestamp":"2026-01-02T03:04:05.000000006Z"}`,
		},
		{
			"empty optional fields left out",
			Event{Name: EventPromptStarted, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
			`{"name":"prompt_started","timestamp":"2026-01-02T03:04:05.000000000Z"}`,
		},
		{
			"timestamp converted to UTC",
			Event{Name: EventSessionDelete, SessionID: "s", Timestamp: time.Date(2026, 1, 2, 5, 4, 5, 123, time.FixedZone("X", 2*3600))},
			`{"name":"session_delete","sessionId":"s","timestamp":"2026-01-02T03:04:05.000000123Z"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.ev)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))

			var back Event
			require.NoError(t, json.Unmarshal(b, &back))
			want := tt.ev
			want.Timestamp = want.Timestamp.UTC()
			assert.Equal(t, want, back)
		})
	}
}

func TestEventUnmarshalRejectsBadTimestamp(t *testing.T) {
	tests := []struct{ name, in string }{
		{"missing", `{"name":"x"}`},
		{"not RFC 3339", `{"name":"x","timestamp":"yesterday"}`},
		{"not a string", `{"name":"x","timestamp":5}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Event
			assert.Error(t, json.Unmarshal([]byte(tt.in), &e))
		})
	}
}

func TestEventNamesAreDistinctAndDocumented(t *testing.T) {
	names := EventNames()
	require.Len(t, names, 11)
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "duplicate %s", n)
		seen[n] = true
	}
	doc, err := os.ReadFile("../docs/telemetry.md")
	require.NoError(t, err)
	for _, n := range names {
		assert.Contains(t, string(doc), "`"+n+"`", "docs/telemetry.md does not describe %s", n)
	}
}

// TestNothingIsWrittenToStdout checks that no sink writes to the protocol
// stream: os.Stdout is swapped for a pipe while every sink is used.
func TestNothingIsWrittenToStdout(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stdout
	os.Stdout = pw
	defer func() { os.Stdout = saved }()

	var logBuf strings.Builder
	jsonl, err := OpenJSONL(t.TempDir() + "/t.jsonl")
	require.NoError(t, err)
	var mem MemorySink
	r := NewRecorder(SlogSink{Logger: NewLogger(&logBuf, 0, true)}, jsonl, &mem)
	for _, n := range EventNames() {
		r.Emit(context.Background(), n, "sess_1", "1", "k", "v")
	}
	require.NoError(t, jsonl.Close())
	os.Stdout = saved
	require.NoError(t, pw.Close())
	var out strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := pr.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	require.NoError(t, pr.Close())
	assert.Empty(t, out.String())
	assert.Contains(t, logBuf.String(), "prompt_requested")
}

func BenchmarkRecorderEmitMemory(b *testing.B) {
	var mem MemorySink
	r := NewRecorder(&mem)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r.Emit(ctx, EventPromptRetry, "sess_0123456789abcdef", "42",
			AttrAttempt, "1", AttrMaxAttempts, "3", AttrReason, "transient")
	}
}
