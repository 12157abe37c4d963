package acphttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
)

// upgrade switches a GET to a WebSocket: one connection, full duplex,
// one JSON-RPC message per text frame (binary frames are ignored). The
// 101 response carries the connection's Acp-Connection-Id. The handler
// goroutine stays until the connection has ended.
func (h *Handler) upgrade(w http.ResponseWriter, r *http.Request) {
	if h.isClosing() {
		httpError(w, "the agent is shutting down", http.StatusServiceUnavailable)
		return
	}
	id := uuid.NewString()
	c := &wsConn{h: h, id: id, opened: time.Now(), ended: make(chan struct{}), done: make(chan struct{}),
		sessions: map[string]*wsSessionCounters{}}
	if err := h.register(id, c); err != nil {
		w.Header().Set("Retry-After", "10")
		httpError(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set(HeaderConnectionID, id)
	// The Origin was checked by Authorize, more strictly than Accept
	// would (it allows an Origin naming the Host, which DNS rebinding
	// fakes).
	bw := &batchWriter{hijacker: w.(http.Hijacker)}
	ws, err := websocket.Accept(hijackWrapper{w, bw}, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		h.forget(c, fmt.Errorf("upgrade failed: %w", err))
		return
	}
	// Oversized messages are skipped by Read and answered -32600.
	ws.SetReadLimit(-1)
	c.ws, c.bw = ws, bw
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.pinger.Add(1)
	go c.ping()
	if err := h.handOver(r.Context(), c); err != nil {
		c.Close()
		return
	}
	h.emit(EventConnectionOpened, "", "connection", id, "transport", "websocket")
	<-c.done
}

// wsConn is one WebSocket connection: the acp.Stream of its acp.Server
// connection. It carries every session, so SessionID is not needed to
// route; a message the client sends has SessionID "".
type wsConn struct {
	h      *Handler
	id     string
	opened time.Time
	ws     *websocket.Conn
	bw     *batchWriter
	ctx    context.Context // ends with the connection: bounds reads and pings
	cancel context.CancelFunc
	pinger sync.WaitGroup

	ended     chan struct{}
	endOnce   sync.Once
	endErr    error
	done      chan struct{}
	closeOnce sync.Once

	stats    connCounters
	mu       sync.Mutex
	sessions map[string]*wsSessionCounters
}

type wsSessionCounters struct{ messages, bytes atomic.Int64 }

// Read implements acp.Stream.
func (c *wsConn) Read(context.Context) (acp.Message, error) {
	for {
		typ, rd, err := c.ws.Reader(c.ctx)
		if err != nil {
			select {
			case <-c.ended:
				return acp.Message{}, fmt.Errorf("%w: %v", io.EOF, c.endErr)
			default:
			}
			switch websocket.CloseStatus(err) {
			case websocket.StatusNormalClosure, websocket.StatusGoingAway:
				return acp.Message{}, io.EOF
			}
			return acp.Message{}, fmt.Errorf("%w: %v", io.EOF, err)
		}
		if typ != websocket.MessageText {
			if _, err := io.Copy(io.Discard, rd); err != nil {
				return acp.Message{}, fmt.Errorf("%w: %v", io.EOF, err)
			}
			c.h.log.Debug("ignoring a binary WebSocket message", "connection", c.id)
			continue
		}
		max := c.h.opts.MaxBodyBytes
		data, err := io.ReadAll(io.LimitReader(rd, int64(max)+1))
		if err == nil && len(data) > max {
			// Skipped, not fatal: the server answers -32600 and reads on.
			_, err = io.Copy(io.Discard, rd)
			if err == nil {
				return acp.Message{}, fmt.Errorf("%w: message over %d bytes (--max-message-bytes)", acp.ErrInvalidRequest, max)
			}
		}
		if err != nil {
			return acp.Message{}, fmt.Errorf("%w: %v", io.EOF, err)
		}
		c.stats.messagesIn.Add(1)
		c.stats.bytesIn.Add(int64(len(data)))
		return acp.Message{Data: data}, nil
	}
}

// Write implements acp.Stream: one text frame per message. A write the
// client does not take within the stall timeout ends the connection
// (the socket holds what it has not read; nothing more is buffered).
func (c *wsConn) Write(_ context.Context, msgs ...acp.Message) error {
	// The frames of a burst are collected and written with one system
	// call (batchWriter); the client must take them within the stall
	// timeout.
	c.bw.begin(c.h.opts.StallTimeout)
	var err error
	for _, m := range msgs {
		if err = c.ws.Write(context.Background(), websocket.MessageText, m.Data); err != nil {
			break
		}
	}
	if ferr := c.bw.end(); err == nil {
		err = ferr
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			reason := fmt.Sprintf("the client took no message for %s", c.h.opts.StallTimeout)
			c.stats.drops.Add(1)
			c.h.stats.drops.Add(1)
			c.h.log.Warn("dropped a WebSocket connection: its client is not reading", "connection", c.id, "reason", reason)
			c.h.emit(EventStreamDropped, msgs[0].SessionID, "connection", c.id, "reason", reason)
			c.endInput(errors.New(reason))
		}
		return fmt.Errorf("%w: %v", acp.ErrClosed, err)
	}
	for _, m := range msgs {
		c.stats.messagesOut.Add(1)
		c.stats.bytesOut.Add(int64(len(m.Data)))
		c.h.stats.messagesOut.Add(1)
		if m.SessionID != "" {
			c.mu.Lock()
			sc := c.sessions[m.SessionID]
			if sc == nil && len(c.sessions) < 4*c.h.opts.MaxSessionStreams {
				sc = &wsSessionCounters{}
				c.sessions[m.SessionID] = sc
			}
			c.mu.Unlock()
			if sc != nil {
				sc.messages.Add(1)
				sc.bytes.Add(int64(len(m.Data)))
			}
		}
	}
	return nil
}

// ping checks that the client is there: one that does not answer within
// the keep-alive interval is gone.
func (c *wsConn) ping() {
	defer c.pinger.Done()
	t := time.NewTicker(c.h.opts.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(c.ctx, c.h.opts.KeepAlive)
			err := c.ws.Ping(ctx)
			cancel()
			if err != nil && c.ctx.Err() == nil {
				c.endInput(fmt.Errorf("no answer to a ping within %s", c.h.opts.KeepAlive))
				return
			}
		}
	}
}

// endInput ends the connection's input (DELETE, a dead or stalled
// client): Read fails, and the acp.Server winds the connection down.
func (c *wsConn) endInput(why error) {
	c.endOnce.Do(func() {
		c.endErr = why
		close(c.ended)
		// A Read blocked in the socket returns.
		if c.cancel != nil {
			c.cancel()
		}
	})
}

// Close implements acp.Stream: the socket is closed (with a close frame
// saying why, when the client still listens).
func (c *wsConn) Close() error {
	c.closeOnce.Do(func() {
		reason := "closed"
		select {
		case <-c.ended:
			if c.endErr != nil {
				reason = c.endErr.Error()
			}
		default:
		}
		if c.cancel != nil {
			if len(reason) > 120 { // a close frame's reason is at most 123 bytes
				reason = reason[:120]
			}
			c.ws.Close(websocket.StatusGoingAway, reason)
			c.cancel()
			c.pinger.Wait()
		}
		close(c.done)
		c.h.forget(c, c.endErr)
	})
	return nil
}

func (c *wsConn) snapshot() ConnStats {
	st := ConnStats{ID: c.id, Transport: "websocket", Opened: c.opened,
		MessagesIn: c.stats.messagesIn.Load(), BytesIn: c.stats.bytesIn.Load(),
		MessagesOut: c.stats.messagesOut.Load(), BytesOut: c.stats.bytesOut.Load(), Drops: c.stats.drops.Load()}
	c.mu.Lock()
	for id, sc := range c.sessions {
		st.Sessions = append(st.Sessions, StreamStats{SessionID: id, Messages: sc.messages.Load(), Bytes: sc.bytes.Load()})
	}
	c.mu.Unlock()
	sort.Slice(st.Sessions, func(i, j int) bool { return st.Sessions[i].SessionID < st.Sessions[j].SessionID })
	return st
}

// hijackWrapper hands websocket.Accept a connection whose writes go
// through a batchWriter.
type hijackWrapper struct {
	http.ResponseWriter
	bw *batchWriter
}

func (h hijackWrapper) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := h.bw.hijacker.Hijack()
	if err != nil {
		return nil, nil, err
	}
	// What the HTTP server buffered for the handshake goes out first.
	if err := brw.Writer.Flush(); err != nil {
		return nil, nil, err
	}
	h.bw.Conn = conn
	return h.bw, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(h.bw, 4096)), nil
}

// batchWriter is the WebSocket's connection: between begin and end, what
// the library writes (it flushes every frame) is collected, and end
// writes it in one system call, with the stall timeout as deadline.
// Outside a burst (pings, pongs, the close frame) writes go straight
// through. Bursts may overlap; the last one to end writes, and a large
// burst is written as it grows.
type batchWriter struct {
	net.Conn
	hijacker http.Hijacker

	mu    sync.Mutex // guards open and buf; taken before wmu
	open  int
	buf   []byte
	wmu   sync.Mutex // orders the writes to Conn
	stall time.Duration
}

func (b *batchWriter) begin(stall time.Duration) {
	b.mu.Lock()
	b.open++
	b.stall = stall
	b.mu.Unlock()
}

// Write implements net.Conn.
func (b *batchWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.open > 0 {
		b.buf = append(b.buf, p...)
		if len(b.buf) < 64<<10 {
			b.mu.Unlock()
			return len(p), nil
		}
		return len(p), b.flushLocked(b.stall)
	}
	b.wmu.Lock()
	b.mu.Unlock()
	defer b.wmu.Unlock()
	return b.Conn.Write(p)
}

// end closes a burst; the last open one writes what was collected.
func (b *batchWriter) end() error {
	b.mu.Lock()
	b.open--
	if b.open > 0 || len(b.buf) == 0 {
		b.mu.Unlock()
		return nil
	}
	return b.flushLocked(b.stall)
}

// flushLocked writes buf; it is called with mu held and releases it.
func (b *batchWriter) flushLocked(stall time.Duration) error {
	data := b.buf
	b.buf = nil
	b.wmu.Lock()
	b.mu.Unlock()
	defer b.wmu.Unlock()
	if stall > 0 {
		b.Conn.SetWriteDeadline(time.Now().Add(stall))
		defer b.Conn.SetWriteDeadline(time.Time{})
	}
	_, err := b.Conn.Write(data)
	return err
}
