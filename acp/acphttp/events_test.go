package acphttp

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acp-agent/acp-agent/acp"
)

func testConn(t *testing.T, o Options) *httpConn {
	t.Helper()
	o.Token = "test-token"
	h, err := NewHandler(o)
	require.NoError(t, err)
	t.Cleanup(func() { h.Close() })
	return newHTTPConn(h, "conn")
}

func msgs(from, to int) []acp.Message {
	var out []acp.Message
	for i := from; i <= to; i++ {
		out = append(out, acp.Message{Data: []byte(`{"n":` + strconv.Itoa(i) + `}`), SessionID: "s"})
	}
	return out
}

// drain takes and acknowledges everything pending for r and returns the
// frames.
func drain(t *testing.T, s *eventStream, r *receiver) string {
	t.Helper()
	buf, last, _, err := s.take(r, nil, 1<<20)
	require.NoError(t, err)
	if last != 0 {
		s.ack(r, last)
	}
	return string(buf)
}

// TestEventStreamResumesWithinItsWindow: a Last-Event-ID replays the
// messages after it while the stream still holds them; one older than
// the retention window, or one the stream never sent, is refused.
func TestEventStreamResumesWithinItsWindow(t *testing.T) {
	c := testConn(t, Options{RetentionMessages: 3})
	s, err := c.stream("s")
	require.NoError(t, err)
	require.NoError(t, s.write(msgs(1, 5)))
	r := &receiver{gone: make(chan struct{}), wake: make(chan struct{}, 1)}
	require.NoError(t, s.attach(r, ""))
	got := drain(t, s, r)
	assert.Equal(t, 5, strings.Count(got, "data: "))
	assert.Contains(t, got, "id: 5\ndata: {\"n\":5}\n\n")

	r2 := &receiver{gone: make(chan struct{}), wake: make(chan struct{}, 1)}
	assert.ErrorIs(t, s.attach(r2, "1"), errCursorGone, "messages 2 is no longer held")
	assert.ErrorIs(t, s.attach(r2, "9"), errCursorGone, "never sent")
	assert.ErrorIs(t, s.attach(r2, "x"), errCursorGone)
	require.NoError(t, s.attach(r2, "2"), "3, 4 and 5 are held")
	select {
	case <-r.gone:
	default:
		t.Fatal("the resumed stream replaces the old receiver")
	}
	got = drain(t, s, r2)
	assert.Equal(t, "id: 3\ndata: {\"n\":3}\n\nid: 4\ndata: {\"n\":4}\n\nid: 5\ndata: {\"n\":5}\n\n", got)

	// Without a cursor a second receiver is refused while one is attached.
	r3 := &receiver{gone: make(chan struct{}), wake: make(chan struct{}, 1)}
	assert.ErrorIs(t, s.attach(r3, ""), errReceiverBusy)
}

// TestEventStreamBackpressure: a writer waits while the client is a
// buffer behind, and the stream is dropped when the client takes nothing
// for the stall timeout; writes then fail fast until it is reset.
func TestEventStreamBackpressure(t *testing.T) {
	c := testConn(t, Options{MaxBufferedBytes: 100, StallTimeout: 200 * time.Millisecond})
	s, err := c.stream("s")
	require.NoError(t, err)
	r := &receiver{gone: make(chan struct{}), wake: make(chan struct{}, 1)}
	require.NoError(t, s.attach(r, ""))
	done := make(chan error, 1)
	go func() { done <- s.write(msgs(1, 20)) }()
	select {
	case err := <-done:
		t.Fatalf("the write did not wait for room: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	// The client takes some: the writer goes on, and waits again.
	drain(t, s, r)
	start := time.Now()
	err = <-done
	require.Error(t, err, "the client stopped taking")
	assert.True(t, errors.Is(err, acp.ErrClosed))
	assert.Contains(t, err.Error(), "took no message for 200ms")
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	select {
	case <-r.gone:
	default:
		t.Fatal("the receiver is detached")
	}
	assert.Error(t, s.write(msgs(21, 21)), "writes fail at once")
	assert.Error(t, s.droppedErr())
	s.reset()
	assert.NoError(t, s.write(msgs(22, 22)))
	st := s.counters()
	assert.EqualValues(t, 1, st.Drops)
}

// TestAppendFrameSplitsLines: a line break inside a message (whitespace
// between JSON tokens) cannot end the SSE data field early.
func TestAppendFrameSplitsLines(t *testing.T) {
	assert.Equal(t, "id: 7\ndata: {\"a\":\ndata: 1}\n\n", string(appendFrame(nil, 7, []byte("{\"a\":\n1}"))))
	assert.Equal(t, "id: 8\ndata: {}\n\n", string(appendFrame(nil, 8, []byte("{}"))))
}
