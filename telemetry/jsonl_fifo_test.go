//go:build linux

package telemetry

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJSONLStalledReaderDoesNotBlockForever fills a FIFO nobody reads: the
// writes give up after the timeout, are counted, and once the reader drains
// the pipe the next event starts on a fresh line.
func TestJSONLStalledReaderDoesNotBlockForever(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	rd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer rd.Close()

	s, err := OpenJSONL(path)
	require.NoError(t, err)
	s.timeout = 50 * time.Millisecond

	big := strings.Repeat("x", 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s.Errors() == 0 {
			s.Emit(Event{Name: EventPromptFailed, Attributes: map[string]string{AttrError: big}})
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Emit blocked on a stalled pipe")
	}
	assert.Equal(t, int64(1), s.Errors())
	assert.True(t, s.broken, "the write that timed out was partial")

	// Drain what is in the pipe, write one more event, and check that it
	// is a whole line of its own.
	var all []byte
	buf := make([]byte, 1<<16)
	require.NoError(t, rd.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	for {
		n, err := rd.Read(buf)
		all = append(all, buf[:n]...)
		if err != nil {
			break // the deadline: the pipe is empty
		}
	}
	s.Emit(Event{Name: EventPromptCompleted, RequestID: "last"})
	require.NoError(t, s.Close())
	require.NoError(t, rd.SetReadDeadline(time.Now().Add(5*time.Second)))
	for {
		n, err := rd.Read(buf)
		all = append(all, buf[:n]...)
		if err != nil {
			break // EOF: the sink closed the only writer
		}
	}
	sc := bufio.NewScanner(strings.NewReader(string(all)))
	sc.Buffer(nil, 1<<20)
	var last string
	for sc.Scan() {
		last = sc.Text()
	}
	var e Event
	require.NoError(t, json.Unmarshal([]byte(last), &e), "last line %q", last)
	assert.Equal(t, "last", e.RequestID)
	assert.Equal(t, int64(1), s.Errors())
}
