package acphttp

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/acp"
)

// event is one message of an event stream, framed as a server-sent event
// with its cursor as the SSE id.
type event struct {
	id    uint64
	frame []byte // "id: N\ndata: {...}\n\n"; immutable
	at    time.Time
}

// eventStream is one outgoing stream of a connection: the connection
// stream ("") or a session's. It holds the messages the client has not
// taken yet (pending, bounded: a writer waits for room, and a client that
// takes nothing for the stall timeout has its stream dropped) and, for
// resumption, the last ones it took (retained, bounded by count, bytes and
// age). At most one receiver (an SSE GET) takes from it at a time.
//
// Cursors are the connection's message counter, so they increase within a
// stream and never repeat across its streams: a Last-Event-ID is valid
// for a stream when everything after it is still held.
type eventStream struct {
	conn      *httpConn
	sessionID string

	mu     sync.Mutex
	events []event
	// delivered is the index in events of the first message the client
	// has not taken: events[:delivered] are retained, the rest pending.
	delivered      int
	pendingBytes   int
	retainedBytes  int
	floor          uint64 // messages with ids <= floor may be gone
	lastID         uint64
	receiver       *receiver
	lastProgress   time.Time // the client last took messages (or the stream was opened)
	lastActive     time.Time // for eviction
	dropped        error     // set after a stall: writes fail until reset
	closed         bool
	progress       chan struct{} // closed and replaced when messages are taken, or the stream changes state
	messages       int64
	bytes          int64
	resumes        int64
	drops          int64
	droppedReason_ string
}

// receiver is an attached SSE GET.
type receiver struct {
	gone chan struct{} // closed when the stream detaches it (replaced or dropped)
	wake chan struct{} // capacity 1: there is something to send
	note string        // a comment to send first (why the stream was dropped)
}

func newEventStream(c *httpConn, sessionID string) *eventStream {
	now := time.Now()
	s := &eventStream{conn: c, sessionID: sessionID, lastProgress: now, lastActive: now,
		progress: make(chan struct{})}
	s.floor = c.seq.Load()
	s.lastID = s.floor
	return s
}

// errStreamDropped is wrapped by the error of a stream dropped for a slow
// client; it wraps acp.ErrClosed, which writers treat as the end of the
// stream.
var errStreamDropped = fmt.Errorf("%w: event stream dropped", acp.ErrClosed)

// appendFrame frames data as a server-sent event with cursor id. JSON as
// encoded here has no line breaks; any that a message had (whitespace
// between tokens) would end the data field, so each line gets its own.
func appendFrame(buf []byte, id uint64, data []byte) []byte {
	buf = append(buf, "id: "...)
	buf = strconv.AppendUint(buf, id, 10)
	buf = append(buf, '\n')
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		buf = append(append(append(buf, "data: "...), data[:i]...), '\n')
		data = data[i+1:]
	}
	buf = append(append(append(buf, "data: "...), data...), "\n\n"...)
	return buf
}

// write appends msgs (all of this stream) in order, waiting while the
// client is too far behind. It fails once the stream was dropped or
// closed, and drops the stream itself when the client takes nothing for
// the stall timeout while it waits.
func (s *eventStream) write(msgs []acp.Message) error {
	opts := &s.conn.h.opts
	// One buffer holds the frames of this write; events are slices of it.
	size := 0
	for _, m := range msgs {
		size += len(m.Data) + 32
	}
	buf := make([]byte, 0, size)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		for {
			if err := s.writableLocked(); err != nil {
				return err
			}
			if s.pendingBytes == 0 || s.pendingBytes+len(m.Data) <= opts.MaxBufferedBytes {
				break
			}
			if err := s.waitLocked(); err != nil {
				return err
			}
		}
		id := s.conn.seq.Add(1)
		start := len(buf)
		buf = appendFrame(buf, id, m.Data)
		// Appended at once, so a writer waiting for room cannot slip in
		// between the messages of one Write.
		now := time.Now()
		if s.pendingBytes == 0 {
			// The client is behind from now on: the stall timeout counts
			// from here, or from the last message it takes.
			s.lastProgress = now
		}
		ev := event{id: id, frame: buf[start:len(buf):len(buf)], at: now}
		s.events = append(s.events, ev)
		s.pendingBytes += len(ev.frame)
		s.lastID = id
		s.lastActive = now
		s.messages++
		s.bytes += int64(len(ev.frame))
		s.conn.stats.messagesOut.Add(1)
		s.conn.stats.bytesOut.Add(int64(len(ev.frame)))
		s.conn.h.stats.messagesOut.Add(1)
	}
	s.wakeLocked()
	return nil
}

func (s *eventStream) wakeLocked() {
	if s.receiver != nil {
		signal(s.receiver.wake)
	}
}

// writableLocked is nil while writes are accepted.
func (s *eventStream) writableLocked() error {
	switch {
	case s.closed:
		return acp.ErrClosed
	case s.dropped != nil:
		return s.dropped
	}
	return nil
}

// waitLocked waits (mu released meanwhile) until the client takes
// something or the stream changes; past the stall timeout without
// progress it drops the stream.
func (s *eventStream) waitLocked() error {
	stall := s.conn.h.opts.StallTimeout
	left := stall - time.Since(s.lastProgress)
	if left <= 0 {
		s.dropLocked(fmt.Sprintf("the client took no message for %s with %d bytes waiting", stall, s.pendingBytes))
		return s.dropped
	}
	ch := s.progress
	// What this write appended so far must go out for room to come.
	s.wakeLocked()
	s.mu.Unlock()
	t := time.NewTimer(left)
	select {
	case <-ch:
	case <-t.C:
	case <-s.conn.done:
	}
	t.Stop()
	s.mu.Lock()
	return nil
}

// dropLocked gives up on a client that stopped reading: what is pending
// goes, the receiver (if any) is detached, and writes fail until the
// session is re-attached (reset). The connection stream cannot be
// re-attached: dropping it ends the connection.
func (s *eventStream) dropLocked(reason string) {
	if s.dropped != nil || s.closed {
		return
	}
	s.dropped = fmt.Errorf("%w: %s", errStreamDropped, reason)
	s.droppedReason_ = reason
	s.drops++
	s.conn.stats.drops.Add(1)
	s.conn.h.stats.drops.Add(1)
	// Everything up to the last message is gone or was delivered: a
	// cursor from before cannot be resumed.
	s.floor = s.lastID
	s.events, s.delivered, s.pendingBytes, s.retainedBytes = nil, 0, 0, 0
	s.detachLocked()
	s.changedLocked()
	s.conn.h.log.Warn("dropped an event stream: its client is not reading", "connection", s.conn.id, "session", s.sessionID, "reason", reason)
	s.conn.h.emit(EventStreamDropped, s.sessionID, "connection", s.conn.id, "reason", reason)
	if s.sessionID == "" {
		// Nothing of the connection can be answered any more.
		go s.conn.endInput(fmt.Errorf("connection stream dropped: %s", reason))
	}
}

// changedLocked wakes the writers waiting for room.
func (s *eventStream) changedLocked() {
	close(s.progress)
	s.progress = make(chan struct{})
}

func (s *eventStream) detachLocked() {
	if s.receiver != nil {
		close(s.receiver.gone)
		s.receiver = nil
		s.conn.receiverDetached()
	}
}

// errReceiverBusy, errCursorGone and errDropped are why an SSE GET is
// refused with 409.
var (
	errReceiverBusy = errors.New("this event stream already has a receiver; resume with Last-Event-ID to replace it")
	errCursorGone   = errors.New("Last-Event-ID is outside the retention window of this event stream (or unknown); re-attach the session with session/resume or session/load")
)

// attach makes r the stream's receiver. With a Last-Event-ID (cursor), the
// messages after it are delivered again (a resumption) and r replaces a
// receiver that may still be attached (a half-open connection); without
// one, r gets what was never delivered, and another receiver makes it
// fail.
func (s *eventStream) attach(r *receiver, cursor string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return acp.ErrClosed
	}
	s.trimLocked(time.Now())
	if cursor != "" {
		id, err := strconv.ParseUint(cursor, 10, 64)
		if err != nil || s.dropped != nil || id < s.floor || id > s.lastID {
			return errCursorGone
		}
		s.detachLocked()
		i := 0
		for i < len(s.events) && s.events[i].id <= id {
			i++
		}
		s.delivered = i
		s.recountLocked()
		s.resumes++
		s.conn.stats.resumes.Add(1)
		s.conn.h.stats.resumes.Add(1)
		s.conn.h.emit(EventStreamResumed, s.sessionID, "connection", s.conn.id, "cursor", cursor,
			"replayed", strconv.Itoa(len(s.events)-i))
	} else if s.receiver != nil {
		return errReceiverBusy
	}
	if s.dropped != nil {
		r.note = s.droppedReason_ + "; re-attach the session with session/load or session/resume"
	}
	s.receiver = r
	s.conn.receiverAttached()
	s.lastProgress = time.Now()
	s.lastActive = s.lastProgress
	s.changedLocked()
	s.wakeLocked()
	return nil
}

// detach ends r's turn as receiver, if it still has it.
func (s *eventStream) detach(r *receiver) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.receiver == r {
		s.detachLocked()
		s.lastActive = time.Now()
	}
}

// take returns the frames r should send next, up to max bytes, with the
// id of the last one (0: nothing now); ended reports a closed stream with
// nothing left to send. It fails once r is no longer the receiver.
func (s *eventStream) take(r *receiver, buf []byte, max int) (_ []byte, last uint64, ended bool, _ error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.receiver != r {
		return buf, 0, false, acp.ErrClosed
	}
	for i := s.delivered; i < len(s.events) && len(buf) < max; i++ {
		buf = append(buf, s.events[i].frame...)
		last = s.events[i].id
	}
	return buf, last, s.closed && last == 0, nil
}

// ack records that r delivered everything up to id.
func (s *eventStream) ack(r *receiver, id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.receiver != r {
		return
	}
	for s.delivered < len(s.events) && s.events[s.delivered].id <= id {
		n := len(s.events[s.delivered].frame)
		s.pendingBytes -= n
		s.retainedBytes += n
		s.delivered++
	}
	now := time.Now()
	s.lastProgress, s.lastActive = now, now
	s.trimLocked(now)
	s.changedLocked()
}

// trimLocked drops delivered messages beyond the retention window.
func (s *eventStream) trimLocked(now time.Time) {
	o := &s.conn.h.opts
	n := 0
	for n < s.delivered {
		ev := &s.events[n]
		if s.delivered-n <= o.RetentionMessages && s.retainedBytes <= o.RetentionBytes && now.Sub(ev.at) <= o.RetentionTime {
			break
		}
		s.retainedBytes -= len(ev.frame)
		s.floor = ev.id
		n++
	}
	if n > 0 {
		clear(s.events[:n])
		s.events = s.events[n:]
		s.delivered -= n
	}
}

func (s *eventStream) recountLocked() {
	s.pendingBytes, s.retainedBytes = 0, 0
	for i, ev := range s.events {
		if i < s.delivered {
			s.retainedBytes += len(ev.frame)
		} else {
			s.pendingBytes += len(ev.frame)
		}
	}
}

// reset re-opens a dropped session stream for a re-attaching session
// (session/load or session/resume): writes are accepted again.
func (s *eventStream) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped == nil {
		return
	}
	s.dropped, s.droppedReason_ = nil, ""
	s.lastProgress = time.Now()
	s.changedLocked()
}

// droppedErr is the reason the stream was dropped, or nil.
func (s *eventStream) droppedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// close ends the stream: its receiver ends after sending what it has,
// and writes fail.
func (s *eventStream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	s.changedLocked()
	s.wakeLocked()
}

// idle reports whether the stream can be forgotten: no receiver, nothing
// pending, not dropped (a dropped stream must keep refusing until its
// session is re-attached).
func (s *eventStream) idle() (bool, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.receiver == nil && s.delivered == len(s.events) && s.dropped == nil, s.lastActive
}

// counters returns the stream's telemetry.
func (s *eventStream) counters() StreamStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return StreamStats{SessionID: s.sessionID, Messages: s.messages, Bytes: s.bytes, Resumes: s.resumes, Drops: s.drops,
		PendingBytes: s.pendingBytes, RetainedMessages: s.delivered, Receiver: s.receiver != nil, Dropped: s.dropped != nil}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
