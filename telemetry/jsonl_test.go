package telemetry

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readLines decodes every line of path as an Event, failing on any line
// that is not one.
func readLines(t *testing.T, path string) []Event {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Event
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e), "line %d: %q", len(out)+1, sc.Text())
		out = append(out, e)
	}
	require.NoError(t, sc.Err())
	return out
}

func TestJSONLConcurrentEmitsGiveOneValidLineEach(t *testing.T) {
	path := filepath.Join(t.TempDir(), "telemetry.jsonl")
	sink, err := OpenJSONL(path)
	require.NoError(t, err)
	var mem MemorySink
	r := NewRecorder(sink, &mem)

	const n = 50
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			r.Emit(context.Background(), EventPromptRetry, "sess_"+strconv.Itoa(i%3), strconv.Itoa(i),
				AttrAttempt, strconv.Itoa(i), AttrMaxAttempts, "50", AttrReason, "line\nbreak \"quoted\" ✓")
		})
	}
	close(start)
	wg.Wait()
	require.NoError(t, sink.Close())
	assert.Zero(t, sink.Errors())

	lines := readLines(t, path)
	require.Len(t, lines, n)
	want := map[string]Event{}
	for _, e := range mem.Events() {
		want[e.RequestID] = e
	}
	got := map[string]Event{}
	for _, e := range lines {
		got[e.RequestID] = e
	}
	assert.Equal(t, want, got, "each line decodes to the event that was emitted")
}

func TestJSONLFile(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, path string)
	}{
		{"created with mode 0600", func(t *testing.T, path string) {
			s, err := OpenJSONL(path)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
		}},
		{"reopening appends", func(t *testing.T, path string) {
			for round := range 3 {
				s, err := OpenJSONL(path)
				require.NoError(t, err)
				r := NewRecorder(s)
				r.Emit(context.Background(), EventSessionNew, "sess_"+strconv.Itoa(round), "", AttrCwd, "/w")
				r.Emit(context.Background(), EventSessionDelete, "sess_"+strconv.Itoa(round), "")
				require.NoError(t, s.Close())
			}
			lines := readLines(t, path)
			require.Len(t, lines, 6)
			assert.Equal(t, "sess_0", lines[0].SessionID)
			assert.Equal(t, "sess_2", lines[5].SessionID)
		}},
		{"line is the event's JSON", func(t *testing.T, path string) {
			s, err := OpenJSONL(path)
			require.NoError(t, err)
			r := NewRecorder(s)
			r.Now = fixedClock(t0, 0)
			r.Emit(context.Background(), EventPromptFailed, "sess_1", "9", AttrError, "boom")
			require.NoError(t, s.Close())
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, `{"name":"prompt_failed","sessionId":"sess_1","requestId":"9","attributes":{"error":"boom"},"timestamp":"2026-01-02T03:04:05.000000006Z"}`+"\n", string(b))
		}},
		{"emit after close is counted, not panicked", func(t *testing.T, path string) {
			s, err := OpenJSONL(path)
			require.NoError(t, err)
			require.NoError(t, s.Close())
			require.NoError(t, s.Close(), "second close")
			assert.NotPanics(t, func() { s.Emit(Event{Name: EventPromptStarted}) })
			assert.Equal(t, int64(1), s.Errors())
			assert.Empty(t, readLines(t, path))
		}},
		{"write error is counted", func(t *testing.T, path string) {
			s, err := OpenJSONL(path)
			require.NoError(t, err)
			// Close the file under the sink to make the next write fail.
			require.NoError(t, s.f.Close())
			s.Emit(Event{Name: EventPromptStarted})
			s.Emit(Event{Name: EventPromptStarted})
			assert.Equal(t, int64(2), s.Errors())
			assert.Error(t, s.Close())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, filepath.Join(t.TempDir(), "telemetry.jsonl"))
		})
	}
}

func TestOpenJSONLRefuses(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		path   string
		stdout bool // make os.Stdout the file at path
		isErr  error
	}{
		{"empty path", "", false, nil},
		{"dash", "-", false, ErrStdout},
		{"stdout's file", filepath.Join(dir, "stdout"), true, ErrStdout},
		{"missing directory", filepath.Join(dir, "no", "such", "t.jsonl"), false, nil},
		{"a directory", dir, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.stdout {
				f, err := os.Create(tt.path)
				require.NoError(t, err)
				defer f.Close()
				saved := os.Stdout
				os.Stdout = f
				defer func() { os.Stdout = saved }()
			}
			s, err := OpenJSONL(tt.path)
			require.Error(t, err)
			assert.Nil(t, s)
			if tt.isErr != nil {
				assert.ErrorIs(t, err, tt.isErr)
			}
		})
	}
}

func TestNilJSONLSinkDoesNothing(t *testing.T) {
	var s *JSONLSink
	assert.NotPanics(t, func() {
		s.Emit(Event{Name: "x"})
		assert.Zero(t, s.Errors())
		assert.NoError(t, s.Close())
	})
}
