package acphttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// ClientOptions configures a Client.
type ClientOptions struct {
	// URL is the endpoint, http(s)://host:port/acp (also for WebSocket).
	URL string
	// Token is sent as Authorization: Bearer TOKEN.
	Token string
	// WebSocket selects the WebSocket profile instead of Streamable HTTP.
	WebSocket bool
	// HTTPClient makes the requests (default: a client with no timeout,
	// as event streams are long-lived).
	HTTPClient *http.Client
	// Header is added to every request.
	Header http.Header
	// OnNotification is called for every notification from the agent, in
	// the order of its stream, before a response that follows it on the
	// same stream is delivered. It must not block for long.
	OnNotification func(method string, params json.RawMessage)
	// OnRequest answers the agent's requests (session/request_permission,
	// fs/*, ...); nil answers -32601.
	OnRequest func(ctx context.Context, method string, params json.RawMessage) (any, error)
	// NoResume turns off the reconnection of a dropped event stream with
	// Last-Event-ID (Streamable HTTP).
	NoResume bool
}

// Client is an ACP client of the Streamable HTTP or WebSocket transport:
// JSON-RPC calls, the agent's notifications and requests. It follows the
// TypeScript SDK's client (connection stream, one event stream per
// session opened before its first message), and resumes a dropped event
// stream with Last-Event-ID. It is used by the tests and the load
// benchmark of acp-agent serve.
type Client struct {
	opts ClientOptions
	hc   *http.Client
	// streamHC makes the event streams' GETs: on a transport of their
	// own when hc's is an *http.Transport, so that a long-lived stream
	// never pins a connection a POST left idle, and the next request
	// finds one instead of dialing (see newStreamClient).
	streamHC *http.Client
	connID   string
	ctx      context.Context
	cancel   context.CancelFunc
	ws       *websocket.Conn
	wg       sync.WaitGroup
	nextID   atomic.Int64

	mu      sync.Mutex
	pending map[string]chan *RPCMessage
	streams map[string]*clientStream // by session id ("" the connection's)
	failed  map[string]error         // sessions whose stream was refused (409)
	closed  bool
	readErr error
	resumes int
	// bySession is the session of each call waiting for its response.
	bySession map[string]string
}

// RPCMessage is one JSON-RPC message as the client sees it.
type RPCMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// HTTPError is a request the server refused with an HTTP status.
type HTTPError struct {
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, strings.TrimSpace(e.Body))
}

type clientStream struct {
	sessionID  string
	cancel     context.CancelFunc
	cancelBody context.CancelFunc // the current GET; guarded by Client.mu
	interrupt  bool               // InterruptStream: lose events, then cut; guarded by Client.mu
	lose       int
	lastID     string
	ready      chan struct{} // closed once the GET is answered
	readyErr   error         // guarded by Client.mu: the stream may end after it was ready
}

// Dial opens a connection and initializes it with initParams; the
// initialize result is returned.
func Dial(ctx context.Context, opts ClientOptions, initParams any) (*Client, json.RawMessage, error) {
	c := &Client{opts: opts, hc: opts.HTTPClient, pending: map[string]chan *RPCMessage{},
		streams: map[string]*clientStream{}, failed: map[string]error{}, bySession: map[string]string{}}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	c.streamHC = c.hc
	if !opts.WebSocket {
		c.streamHC = newStreamClient(c.hc)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if opts.WebSocket {
		return c.dialWS(ctx, initParams)
	}
	id := c.nextID.Add(1)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "initialize", "params": initParams})
	resp, err := c.do(ctx, http.MethodPost, body, nil)
	if err != nil {
		c.cancel()
		return nil, nil, err
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.cancel()
		return nil, nil, &HTTPError{resp.StatusCode, string(data)}
	}
	c.connID = resp.Header.Get(HeaderConnectionID)
	var m RPCMessage
	if err := json.Unmarshal(data, &m); err != nil {
		c.cancel()
		return nil, nil, err
	}
	if m.Error != nil {
		c.cancel()
		return nil, nil, m.Error
	}
	if err := c.openStream(""); err != nil {
		c.cancel()
		c.wg.Wait()
		c.closeStreamConns()
		return nil, nil, err
	}
	return c, m.Result, nil
}

func (c *Client) dialWS(ctx context.Context, initParams any) (*Client, json.RawMessage, error) {
	u := "ws" + strings.TrimPrefix(c.opts.URL, "http")
	hdr := c.header()
	ws, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c.hc, HTTPHeader: hdr})
	if err != nil {
		c.cancel()
		if resp != nil {
			body, _ := io.ReadAll(resp.Body)
			return nil, nil, &HTTPError{resp.StatusCode, string(body)}
		}
		return nil, nil, err
	}
	ws.SetReadLimit(-1)
	c.ws = ws
	c.connID = resp.Header.Get(HeaderConnectionID)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			_, data, err := ws.Read(c.ctx)
			if err != nil {
				c.fail(err)
				return
			}
			c.dispatch(data, "")
		}
	}()
	var res json.RawMessage
	if err := c.Call(ctx, "initialize", initParams, &res); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, res, nil
}

// ConnectionID is the server's Acp-Connection-Id.
func (c *Client) ConnectionID() string { return c.connID }

// Resumes counts the event streams resumed with Last-Event-ID.
func (c *Client) Resumes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resumes
}

func (c *Client) header() http.Header {
	h := http.Header{}
	for k, vs := range c.opts.Header {
		h[k] = append([]string(nil), vs...)
	}
	if c.opts.Token != "" {
		h.Set("Authorization", "Bearer "+c.opts.Token)
	}
	return h
}

// newStreamClient returns the client of the event streams. An HTTP/1.1
// event stream holds its TCP connection for as long as it is open; on
// the transport the POSTs use, each stream would take the connection the
// request before it left idle (initialize's, session/new's), so nearly
// every prompt would dial a new one: with many clients at once, each
// first prompt waited for its dial and for the server to accept it. The
// streams' transport is a clone of hc's (same proxy, TLS, dialer and
// limits), owned by this Client; a RoundTripper that is not an
// *http.Transport is used as it is.
func newStreamClient(hc *http.Client) *http.Client {
	rt := hc.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	tr, ok := rt.(*http.Transport)
	if !ok {
		return hc
	}
	sc := *hc
	sc.Transport = tr.Clone()
	return &sc
}

func (c *Client) do(ctx context.Context, method string, body []byte, extra http.Header) (*http.Response, error) {
	return c.doWith(ctx, c.hc, method, body, extra)
}

func (c *Client) doWith(ctx context.Context, hc *http.Client, method string, body []byte, extra http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.opts.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = c.header()
	for k, vs := range extra {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.connID != "" && req.Header.Get(HeaderConnectionID) == "" {
		req.Header.Set(HeaderConnectionID, c.connID)
	}
	return hc.Do(req)
}

// openStream opens the event stream of sessionID ("" the connection's)
// unless it is open, and waits until the server has answered the GET.
func (c *Client) openStream(sessionID string) error {
	c.mu.Lock()
	if err := c.failed[sessionID]; err != nil {
		c.mu.Unlock()
		return err
	}
	s := c.streams[sessionID]
	if s == nil {
		ctx, cancel := context.WithCancel(c.ctx)
		s = &clientStream{sessionID: sessionID, cancel: cancel, ready: make(chan struct{})}
		c.streams[sessionID] = s
		c.wg.Add(1)
		go c.runStream(ctx, s)
	}
	c.mu.Unlock()
	<-s.ready
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.readyErr
}

// runStream reads an event stream, reconnecting with Last-Event-ID after
// an unexpected end (a few tries, with a short backoff).
func (c *Client) runStream(ctx context.Context, s *clientStream) {
	defer c.wg.Done()
	readyOnce := sync.OnceFunc(func() { close(s.ready) })
	defer readyOnce()
	for attempt := 0; ; attempt++ {
		hdr := http.Header{"Accept": {"text/event-stream"}}
		if s.sessionID != "" {
			hdr.Set(HeaderSessionID, s.sessionID)
		}
		if s.lastID != "" {
			hdr.Set(HeaderLastEventID, s.lastID)
		}
		actx, acancel := context.WithCancel(ctx)
		c.mu.Lock()
		s.cancelBody = acancel
		c.mu.Unlock()
		resp, err := c.doWith(actx, c.streamHC, http.MethodGet, nil, hdr)
		if err == nil && resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
			resp.Body.Close()
			err = &HTTPError{resp.StatusCode, string(body)}
		}
		if err != nil {
			acancel()
			if ctx.Err() != nil {
				return
			}
			var he *HTTPError
			if errors.As(err, &he) && he.Status == http.StatusConflict && s.sessionID != "" {
				c.failSession(s, err)
				c.setReadyErr(s, err)
				return
			}
			if attempt < 5 && s.lastID != "" && !c.opts.NoResume {
				time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
				continue
			}
			c.setReadyErr(s, err)
			c.streamEnded(s, err)
			return
		}
		if s.lastID != "" {
			c.mu.Lock()
			c.resumes++
			c.mu.Unlock()
		}
		readyOnce()
		attempt = 0
		err = c.readSSE(resp.Body, s)
		resp.Body.Close()
		acancel()
		if ctx.Err() != nil {
			return
		}
		if c.opts.NoResume || s.lastID == "" {
			c.streamEnded(s, fmt.Errorf("event stream ended: %v", err))
			return
		}
	}
}

// readSSE dispatches the events of one response body.
func (c *Client) readSSE(body io.Reader, s *clientStream) error {
	r := bufio.NewReaderSize(body, 64<<10)
	var data []byte
	var id string
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if data != nil {
				lost, cut := c.interrupted(s)
				if cut {
					// What this reader already holds was in transit too:
					// handling it would move lastID past the lost events.
					return errStreamCut
				}
				if !lost {
					c.dispatch(data, s.sessionID)
					if id != "" {
						s.lastID = id
					}
				}
			}
			data, id = nil, ""
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("data:")):
			v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
		case bytes.HasPrefix(line, []byte("id:")):
			id = strings.TrimSpace(string(line[3:]))
		}
	}
}

// updatePrefix starts a session/update as acp-agent encodes it: those are
// most messages, and are handed on without decoding.
var updatePrefix = []byte(`{"jsonrpc":"2.0","method":"session/update","params":`)

// dispatch handles one message from the agent.
func (c *Client) dispatch(data []byte, streamSession string) {
	if bytes.HasPrefix(data, updatePrefix) && bytes.HasSuffix(data, []byte("}")) {
		if c.opts.OnNotification != nil {
			c.opts.OnNotification("session/update", data[len(updatePrefix):len(data)-1])
		}
		return
	}
	var m RPCMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return
	}
	switch {
	case m.Method != "" && len(m.ID) > 0:
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.answer(&m, streamSession)
		}()
	case m.Method != "":
		if c.opts.OnNotification != nil {
			c.opts.OnNotification(m.Method, m.Params)
		}
	default:
		var res struct {
			SessionID string `json:"sessionId"`
		}
		if len(m.Result) > 0 && json.Unmarshal(m.Result, &res) == nil && res.SessionID != "" && c.ws == nil {
			// A new session: its stream opens in the background, as the
			// SDK's client does.
			go c.openStream(res.SessionID) //nolint:errcheck // reported to its calls
		}
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		delete(c.bySession, string(m.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- &m
		}
	}
}

func (c *Client) answer(m *RPCMessage, streamSession string) {
	var result any
	var err error = &RPCError{Code: -32601, Message: "method not found: " + m.Method}
	if c.opts.OnRequest != nil {
		result, err = c.opts.OnRequest(c.ctx, m.Method, m.Params)
	}
	out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	var re *RPCError
	switch {
	case err == nil:
		out["result"] = result
	case errors.As(err, &re):
		out["error"] = re
	default:
		out["error"] = &RPCError{Code: -32603, Message: err.Error()}
	}
	data, _ := json.Marshal(out)
	if err := c.send(c.ctx, data, streamSession); err != nil {
		c.fail(err)
	}
}

// send posts (or writes) one message; sessionID names its session for
// Acp-Session-Id.
func (c *Client) send(ctx context.Context, data []byte, sessionID string) error {
	if c.ws != nil {
		return c.ws.Write(ctx, websocket.MessageText, data)
	}
	var hdr http.Header
	if sessionID != "" {
		hdr = http.Header{HeaderSessionID: {sessionID}}
	}
	resp, err := c.do(ctx, http.MethodPost, data, hdr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
		return &HTTPError{resp.StatusCode, string(body)}
	}
	return nil
}

func sessionOf(params any) string {
	data, err := json.Marshal(params)
	if err != nil || len(data) == 0 || data[0] != '{' {
		return ""
	}
	var p struct {
		SessionID any `json:"sessionId"`
	}
	_ = json.Unmarshal(data, &p)
	s, _ := p.SessionID.(string)
	return s
}

// Call sends a request and waits for its response, decoded into result
// (when not nil). An error answer is an *RPCError, a refusal an
// *HTTPError.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id := c.nextID.Add(1)
	key := strconv.FormatInt(id, 10)
	data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	sid := sessionOf(params)
	if sid != "" && c.ws == nil {
		if err := c.openStream(sid); err != nil {
			return err
		}
	}
	ch := make(chan *RPCMessage, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errors.New("acphttp client: closed")
	}
	c.pending[key] = ch
	if sid != "" {
		c.bySession[key] = sid
	}
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, key)
		delete(c.bySession, key)
		c.mu.Unlock()
	}
	if err := c.send(ctx, data, sid); err != nil {
		forget()
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if result != nil && len(m.Result) > 0 {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		forget()
		return ctx.Err()
	case <-c.ctx.Done():
		return c.err()
	}
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	sid := sessionOf(params)
	return c.send(ctx, data, sid)
}

// SendRaw posts raw bytes as a message (tests of malformed input).
func (c *Client) SendRaw(ctx context.Context, data []byte, sessionID string) error {
	return c.send(ctx, data, sessionID)
}

// InterruptStream cuts the event stream of sessionID as a network failure
// would, after losing the next lose events in transit (read from the
// socket, never handled); the client reconnects with the Last-Event-ID of
// the last event it handled. For tests.
func (c *Client) InterruptStream(sessionID string, lose int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.streams[sessionID]; s != nil {
		s.lose = lose
		s.interrupt = true
		if lose == 0 && s.cancelBody != nil {
			s.cancelBody()
		}
	}
}

// setReadyErr records why s ended, for openStream: it may end after it
// was ready, while another openStream of it reads the error.
func (c *Client) setReadyErr(s *clientStream, err error) {
	c.mu.Lock()
	s.readyErr = err
	c.mu.Unlock()
}

// errStreamCut ends a stream InterruptStream cut.
var errStreamCut = errors.New("event stream cut (InterruptStream)")

// interrupted reports whether the event just read is lost in transit,
// and cuts the stream once enough were.
func (c *Client) interrupted(s *clientStream) (lost, cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.interrupt {
		return false, false
	}
	if s.lose > 0 {
		s.lose--
		return true, false
	}
	s.interrupt = false
	if s.cancelBody != nil {
		s.cancelBody()
	}
	return true, true
}

func (c *Client) failSession(s *clientStream, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed[s.sessionID] = err
	delete(c.streams, s.sessionID)
	for key, sid := range c.bySession {
		if sid == s.sessionID {
			if ch := c.pending[key]; ch != nil {
				delete(c.pending, key)
				ch <- &RPCMessage{Error: &RPCError{Code: -32603, Message: err.Error()}}
			}
			delete(c.bySession, key)
		}
	}
}

// Reattach forgets a refused session stream, so that session/load or
// session/resume can open it again.
func (c *Client) Reattach(sessionID string) {
	c.mu.Lock()
	delete(c.failed, sessionID)
	c.mu.Unlock()
}

func (c *Client) streamEnded(s *clientStream, err error) {
	c.mu.Lock()
	if c.streams[s.sessionID] == s {
		delete(c.streams, s.sessionID)
	}
	c.mu.Unlock()
	if s.sessionID == "" {
		c.fail(err)
	}
}

func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.readErr == nil {
		c.readErr = err
	}
	c.mu.Unlock()
	c.cancel()
}

func (c *Client) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr != nil {
		return fmt.Errorf("acphttp client: connection lost: %w", c.readErr)
	}
	return errors.New("acphttp client: closed")
}

// Close ends the connection (DELETE, or the WebSocket's close) and waits
// for the client's goroutines.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	var err error
	if c.ws != nil {
		err = c.ws.Close(websocket.StatusNormalClosure, "")
	} else if c.connID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var resp *http.Response
		resp, err = c.do(ctx, http.MethodDelete, nil, nil)
		if err == nil {
			resp.Body.Close()
		}
		cancel()
	}
	c.cancel()
	c.wg.Wait()
	c.closeStreamConns()
	return err
}

// closeStreamConns closes the connections of the streams' own transport.
func (c *Client) closeStreamConns() {
	if c.streamHC != c.hc {
		c.streamHC.CloseIdleConnections()
	}
}

// LastID is the id of the last request Call sent.
func (c *Client) LastID() int64 { return c.nextID.Load() }
