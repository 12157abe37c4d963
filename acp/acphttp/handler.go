package acphttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/telemetry"
)

// The transport's headers (ACP's Streamable HTTP RFD and the TypeScript
// SDK's transports).
const (
	HeaderConnectionID = "Acp-Connection-Id"
	HeaderSessionID    = "Acp-Session-Id"
	HeaderLastEventID  = "Last-Event-ID"
)

// Telemetry events of the transport (docs/telemetry.md).
const (
	EventConnectionOpened = "connection_opened" // attrs: transport
	EventConnectionClosed = "connection_closed" // attrs: transport, reason, counters
	EventSessionStream    = "session_stream"    // at the connection's end, per session: counters
	EventStreamResumed    = "stream_resumed"    // attrs: connection, cursor, replayed
	EventStreamDropped    = "stream_dropped"    // attrs: connection, reason
)

// Options configures a Handler. Zero values get the defaults below.
type Options struct {
	// Token is the bearer token every request must carry
	// (Authorization: Bearer TOKEN), compared in constant time. Required.
	Token string
	// AllowedOrigins are the browser origins (scheme://host[:port]) allowed
	// to send requests and open WebSockets. A request with another Origin
	// header is refused (403): no page in a browser can reach the agent,
	// not even one that the server's own name resolves to (DNS
	// rebinding). Clients that are not browsers send no Origin.
	AllowedOrigins []string
	// MaxConnections caps the ACP connections (HTTP and WebSocket) open
	// at once; default 256.
	MaxConnections int
	// MaxStreams caps the event streams (SSE GETs) open at once on all
	// connections; default 4096.
	MaxStreams int
	// MaxSessionStreams caps the session streams one connection keeps;
	// default 64.
	MaxSessionStreams int
	// MaxBodyBytes caps one message (a POST body, a WebSocket message);
	// default acp.DefaultMaxMessageBytes.
	MaxBodyBytes int
	// MaxBufferedBytes caps what one event stream holds for its client
	// before writers wait; default 1 MiB.
	MaxBufferedBytes int
	// StallTimeout is how long a client may take nothing while its stream
	// is full (or a write to its socket is blocked) before the stream is
	// dropped; default 30 s.
	StallTimeout time.Duration
	// RetentionMessages, RetentionBytes and RetentionTime bound what an
	// event stream keeps of what it delivered, for Last-Event-ID;
	// defaults 1024 messages, 1 MiB, 5 minutes.
	RetentionMessages int
	RetentionBytes    int
	RetentionTime     time.Duration
	// IdleTimeout ends an HTTP connection that has had no request and no
	// open event stream for that long; default 5 minutes. WebSocket
	// connections are pinged every KeepAlive instead.
	IdleTimeout time.Duration
	// KeepAlive is the interval of SSE comments and WebSocket pings;
	// default 15 s.
	KeepAlive time.Duration
	// InitTimeout bounds the wait for the initialize response; default
	// 30 s.
	InitTimeout time.Duration
	// BodyTimeout bounds the reading of one request body; default 60 s.
	BodyTimeout time.Duration
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Telemetry receives the transport's events; nil sends none.
	Telemetry telemetry.Emitter
}

func (o *Options) setDefaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxConnections, 256)
	def(&o.MaxStreams, 4096)
	def(&o.MaxSessionStreams, 64)
	def(&o.MaxBodyBytes, acp.DefaultMaxMessageBytes)
	def(&o.MaxBufferedBytes, 1<<20)
	def(&o.RetentionMessages, 1024)
	def(&o.RetentionBytes, 1<<20)
	defd(&o.StallTimeout, 30*time.Second)
	defd(&o.RetentionTime, 5*time.Minute)
	defd(&o.IdleTimeout, 5*time.Minute)
	defd(&o.KeepAlive, 15*time.Second)
	defd(&o.InitTimeout, 30*time.Second)
	defd(&o.BodyTimeout, 60*time.Second)
}

// Handler serves ACP's Streamable HTTP and WebSocket transport on one
// endpoint and hands each new connection to an acp.Server as an
// acp.Stream: it is the server's acp.Listener (Accept). See doc.go.
type Handler struct {
	opts     Options
	log      *slog.Logger
	tokenSum [32]byte
	origins  map[string]bool

	accepted chan acp.Stream
	closing  chan struct{}
	closed   sync.Once
	reaper   sync.WaitGroup

	mu    sync.Mutex
	conns map[string]conn
	// gone remembers why recently ended connections ended, for a clear
	// 404.
	gone      map[string]string
	goneOrder []string

	stats handlerCounters
}

// conn is an open connection of either transport.
type conn interface {
	acp.Stream
	snapshot() ConnStats
}

type handlerCounters struct {
	connectionsTotal, messagesOut, resumes, drops, refused atomic.Int64
	streamsOpen                                            atomic.Int64
	streamSlots                                            atomic.Int64 // event streams being served, counted against MaxStreams
}

// ErrClosed is returned by Accept once the handler is closed.
var ErrClosed = errors.New("acphttp: handler closed")

// NewHandler returns a handler; serve its connections with
// acp.Server.Serve(ctx, h), and Close it to stop accepting.
func NewHandler(opts Options) (*Handler, error) {
	if opts.Token == "" {
		return nil, errors.New("acphttp: a bearer token is required")
	}
	opts.setDefaults()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{opts: opts, log: log, tokenSum: sha256.Sum256([]byte(opts.Token)),
		origins: map[string]bool{}, accepted: make(chan acp.Stream), closing: make(chan struct{}),
		conns: map[string]conn{}, gone: map[string]string{}}
	for _, o := range opts.AllowedOrigins {
		h.origins[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	h.reaper.Add(1)
	go h.reap()
	return h, nil
}

// Accept implements acp.Listener: the next connection, once its client
// has sent initialize (HTTP) or upgraded (WebSocket).
func (h *Handler) Accept(ctx context.Context) (acp.Stream, error) {
	select {
	case s := <-h.accepted:
		return s, nil
	case <-h.closing:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close stops accepting connections (new ones are refused with 503) and
// stops the reaper. Open connections go on until their acp.Server
// connection ends them (cancelling the context given to Serve ends them
// all).
func (h *Handler) Close() error {
	h.closed.Do(func() { close(h.closing) })
	h.reaper.Wait()
	return nil
}

func (h *Handler) isClosing() bool {
	select {
	case <-h.closing:
		return true
	default:
		return false
	}
}

// handOver gives a new connection to Accept.
func (h *Handler) handOver(ctx context.Context, s acp.Stream) error {
	select {
	case h.accepted <- s:
		return nil
	case <-h.closing:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// register adds a new connection under the connection limit.
func (h *Handler) register(id string, c conn) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.conns) >= h.opts.MaxConnections {
		h.stats.refused.Add(1)
		return fmt.Errorf("too many connections: %d are open, the limit (--max-connections); close one or try again later", h.opts.MaxConnections)
	}
	h.conns[id] = c
	h.stats.connectionsTotal.Add(1)
	return nil
}

// forget removes an ended connection and reports its counters.
func (h *Handler) forget(c conn, why error) {
	st := c.snapshot()
	reason := "closed"
	if why != nil {
		reason = why.Error()
	}
	h.mu.Lock()
	if h.conns[st.ID] == c {
		delete(h.conns, st.ID)
		h.gone[st.ID] = reason
		h.goneOrder = append(h.goneOrder, st.ID)
		if len(h.goneOrder) > 4096 {
			delete(h.gone, h.goneOrder[0])
			h.goneOrder = h.goneOrder[1:]
		}
	}
	h.mu.Unlock()
	for _, s := range st.Sessions {
		h.emit(EventSessionStream, s.SessionID, "connection", st.ID, "messages", itoa(s.Messages), "bytes", itoa(s.Bytes),
			"resumes", itoa(s.Resumes), "drops", itoa(s.Drops))
	}
	h.emit(EventConnectionClosed, "", "connection", st.ID, "transport", st.Transport, "reason", reason,
		"messagesIn", itoa(st.MessagesIn), "bytesIn", itoa(st.BytesIn), "messagesOut", itoa(st.MessagesOut),
		"bytesOut", itoa(st.BytesOut), "resumes", itoa(st.Resumes), "drops", itoa(st.Drops),
		"sessions", strconv.Itoa(len(st.Sessions)), "seconds", strconv.FormatFloat(time.Since(st.Opened).Seconds(), 'f', 1, 64))
	h.log.Info("connection ended", "connection", st.ID, "transport", st.Transport, "reason", reason)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func (h *Handler) emit(name, sessionID string, attrs ...string) {
	if h.opts.Telemetry != nil {
		h.opts.Telemetry.Emit(context.Background(), name, sessionID, "", attrs...)
	}
}

// lookupHTTP returns the open HTTP connection id names, or writes the
// 400/404 answer and returns nil.
func (h *Handler) lookupHTTP(w http.ResponseWriter, id string) *httpConn {
	if id == "" {
		httpError(w, "Missing "+HeaderConnectionID+": initialize first (a POST of initialize without it)", http.StatusBadRequest)
		return nil
	}
	h.mu.Lock()
	c, ok := h.conns[id]
	reason, wasGone := h.gone[id]
	h.mu.Unlock()
	if hc, isHTTP := c.(*httpConn); ok && isHTTP {
		return hc
	}
	switch {
	case ok:
		httpError(w, "Acp-Connection-Id names a WebSocket connection", http.StatusBadRequest)
	case wasGone:
		httpError(w, "Unknown Acp-Connection-Id: the connection has ended ("+reason+"); initialize a new one", http.StatusNotFound)
	default:
		httpError(w, "Unknown Acp-Connection-Id", http.StatusNotFound)
	}
	return nil
}

// target returns the connection a request names and its Acp-Session-Id,
// or writes the 400/404 answer.
func (h *Handler) target(w http.ResponseWriter, r *http.Request) (*httpConn, string, bool) {
	c := h.lookupHTTP(w, r.Header.Get(HeaderConnectionID))
	if c == nil {
		return nil, "", false
	}
	sid := r.Header.Get(HeaderSessionID)
	if sid != "" {
		if err := acp.ValidateSessionID(sid); err != nil {
			httpError(w, "malformed "+HeaderSessionID+": "+err.Error(), http.StatusBadRequest)
			return nil, "", false
		}
	}
	return c, sid, true
}

// httpError answers with a plain-text error (what the SDK's clients show).
func httpError(w http.ResponseWriter, msg string, code int) {
	http.Error(w, msg, code)
}

// ServeHTTP implements http.Handler for the ACP endpoint.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if code, msg := h.Authorize(w, r); code != 0 {
		h.stats.refused.Add(1)
		httpError(w, msg, code)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		if isWebSocketUpgrade(r) {
			h.upgrade(w, r)
			return
		}
		h.events(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpError(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// tokenParam reports whether the query parameter k (lower case) carries
// credentials in common APIs: a token there ends up in proxy and server
// logs and in browser history, so it is refused, never read. (Switches
// here, not maps: nothing to build at package init for a stdio start.)
func tokenParam(k string) bool {
	switch k {
	case "token", "access_token", "accesstoken", "auth", "authorization", "bearer", "api_key", "apikey", "key", "acp_token":
		return true
	}
	return false
}

// Authorize checks a request's credentials and origin; a non-zero code
// is the HTTP status to refuse it with. The token must come in the
// Authorization header; one in the URL is refused even when it is right.
func (h *Handler) Authorize(w http.ResponseWriter, r *http.Request) (int, string) {
	if code, msg := h.RefuseURLCredentials(r); code != 0 {
		return code, msg
	}
	return h.authorizeHeader(w, r)
}

// RefuseURLCredentials answers 400 to a request whose URL carries
// credentials (a parameter named like one, or the token as a parameter's
// value or name): what Authorize refuses first, for endpoints that do
// not need the token (/healthz).
func (h *Handler) RefuseURLCredentials(r *http.Request) (int, string) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return http.StatusBadRequest, "malformed query string"
	}
	for k, vs := range q {
		leaked := tokenParam(strings.ToLower(k))
		// The token as a value, or as a name (?TOKEN, ?TOKEN=1): in the
		// URL either way.
		for _, v := range append([]string{k}, vs...) {
			if sum := sha256.Sum256([]byte(v)); subtle.ConstantTimeCompare(sum[:], h.tokenSum[:]) == 1 {
				leaked = true
			}
		}
		if leaked {
			return http.StatusBadRequest, "credentials in the URL are refused: send the token as Authorization: Bearer TOKEN (if it was the real token, rotate it: URLs end up in logs)"
		}
	}
	return 0, ""
}

// authorizeHeader checks the Origin and the Authorization header.
func (h *Handler) authorizeHeader(w http.ResponseWriter, r *http.Request) (int, string) {
	if origin := r.Header.Get("Origin"); origin != "" && !h.origins[strings.ToLower(strings.TrimRight(origin, "/"))] {
		return http.StatusForbidden, fmt.Sprintf("Origin %q is not allowed (serve --allow-origin)", origin)
	}
	auth := r.Header.Values("Authorization")
	scheme, token, ok := "", "", false
	if len(auth) == 1 {
		scheme, token, ok = strings.Cut(auth[0], " ")
	}
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		w.Header().Set("WWW-Authenticate", `Bearer realm="acp-agent"`)
		return http.StatusUnauthorized, "missing bearer token: send Authorization: Bearer TOKEN (the token is in the file serve printed at its first start)"
	}
	// Hashing first makes the comparison constant-time in the length too.
	if sum := sha256.Sum256([]byte(strings.TrimSpace(token))); subtle.ConstantTimeCompare(sum[:], h.tokenSum[:]) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="acp-agent", error="invalid_token"`)
		return http.StatusUnauthorized, "invalid bearer token"
	}
	return 0, ""
}

func isWebSocketUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// envelope is what the transport reads of a POSTed message to route it;
// the acp.Server checks the rest.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (e *envelope) isRequest() bool { return e.Method != "" && len(e.ID) > 0 && string(e.ID) != "null" }

// paramsSessionID is params.sessionId when it is a string.
func (e *envelope) paramsSessionID() string {
	if len(e.Params) == 0 || e.Params[0] != '{' {
		return ""
	}
	var p struct {
		SessionID any `json:"sessionId"`
	}
	if json.Unmarshal(e.Params, &p) != nil {
		return ""
	}
	s, _ := p.SessionID.(string)
	return s
}

// sessionScoped reports whether a POST of method must name the session
// in Acp-Session-Id (the TypeScript SDK's list).
func sessionScoped(method string) bool {
	switch method {
	case acp.MethodSessionCancel, acp.MethodSessionClose, acp.MethodSessionDelete,
		acp.MethodSessionFork, acp.MethodSessionLoad, acp.MethodSessionPrompt,
		acp.MethodSessionResume, acp.MethodSessionSetConfigOption, acp.MethodSessionSetMode,
		"session/set_model":
		return true
	}
	return false
}

// readBody reads a POST's body within the size limit and the body
// timeout; a non-zero code is the error answered.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, string) {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "application/json" {
		return nil, http.StatusUnsupportedMediaType, "Unsupported Media Type: POST application/json"
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(h.opts.MaxBodyBytes)))
	_ = rc.SetReadDeadline(time.Time{})
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, http.StatusRequestEntityTooLarge, fmt.Sprintf("message over %d bytes (--max-message-bytes)", h.opts.MaxBodyBytes)
	case err != nil:
		return nil, http.StatusBadRequest, "reading the body: " + err.Error()
	}
	return body, 0, ""
}

// batchError is the answer to a JSON-RPC batch, as the SDK gives it.
var batchError = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported"}}`)

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	body, code, msg := h.readBody(w, r)
	if code != 0 {
		httpError(w, msg, code)
		return
	}
	trimmed := bytes.TrimSpace(body)
	switch {
	case !json.Valid(trimmed):
		httpError(w, "Invalid JSON", http.StatusBadRequest)
		return
	case trimmed[0] == '[':
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(batchError)
		return
	case trimmed[0] != '{':
		httpError(w, "Invalid JSON-RPC message: not an object", http.StatusBadRequest)
		return
	}
	var env envelope
	_ = json.Unmarshal(trimmed, &env) // valid JSON; odd field types are the server's to answer
	if env.Method == acp.MethodInitialize && env.isRequest() {
		if r.Header.Get(HeaderConnectionID) != "" {
			httpError(w, "Initialize not allowed on an existing connection", http.StatusBadRequest)
			return
		}
		h.initialize(w, r, trimmed, &env)
		return
	}
	c, sid, ok := h.target(w, r)
	if !ok {
		return
	}
	psid := env.paramsSessionID()
	switch {
	case sid == "" && (psid != "" || sessionScoped(env.Method)):
		httpError(w, "Missing "+HeaderSessionID+": it must name the session of this "+env.Method, http.StatusBadRequest)
		return
	case sid != "" && psid != "" && sid != psid:
		httpError(w, "Mismatched "+HeaderSessionID+": the header names "+sid+", params.sessionId "+psid, http.StatusBadRequest)
		return
	}
	m := acp.Message{Data: trimmed, SessionID: sid}
	if env.Method == acp.MethodSessionLoad {
		// Answered on the connection stream, as the SDK routes it; the
		// replay goes on the session's.
		m.SessionID = ""
	}
	if sid != "" && env.isRequest() {
		if s := c.existing(sid); s != nil {
			if err := s.droppedErr(); err != nil {
				if env.Method != acp.MethodSessionLoad && env.Method != acp.MethodSessionResume {
					httpError(w, "the event stream of session "+sid+" was dropped ("+strings.TrimPrefix(err.Error(), errStreamDropped.Error()+": ")+
						"); re-attach it with session/load or session/resume", http.StatusConflict)
					return
				}
				s.reset()
			}
		}
	}
	if err := c.deliver(r.Context(), m); err != nil {
		if errors.Is(err, errConnEnded) {
			httpError(w, "Unknown Acp-Connection-Id: the connection has ended", http.StatusNotFound)
		}
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// initialize opens a connection: the acp.Server answers initialize, and
// the answer is this POST's body, with the new connection's id.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, body []byte, env *envelope) {
	if h.isClosing() {
		httpError(w, "the agent is shutting down", http.StatusServiceUnavailable)
		return
	}
	c := newHTTPConn(h, uuid.NewString())
	resp := make(chan []byte, 1)
	c.initID, c.initResp = compact(env.ID), resp
	if err := h.register(c.id, c); err != nil {
		w.Header().Set("Retry-After", "10")
		httpError(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	if err := h.handOver(r.Context(), c); err != nil {
		c.Close()
		httpError(w, "the agent is shutting down", http.StatusServiceUnavailable)
		return
	}
	h.emit(EventConnectionOpened, "", "connection", c.id, "transport", "http")
	if err := c.deliver(r.Context(), acp.Message{Data: body}); err != nil {
		c.endInput(errors.New("the client went away during initialize"))
		return
	}
	t := time.NewTimer(h.opts.InitTimeout)
	defer t.Stop()
	var data []byte
	select {
	case data = <-resp:
	case <-r.Context().Done():
		c.endInput(errors.New("the client went away during initialize"))
		return
	case <-t.C:
		c.endInput(errors.New("initialize was not answered in time"))
		httpError(w, "initialize was not answered in time", http.StatusGatewayTimeout)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	var failed struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &failed) == nil && len(failed.Error) > 0 && string(failed.Error) != "null" {
		// A connection whose initialize failed is of no use.
		c.endInput(errors.New("initialize failed"))
		w.WriteHeader(http.StatusBadRequest)
		w.Write(data)
		return
	}
	w.Header().Set(HeaderConnectionID, c.id)
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get(HeaderConnectionID)
	if id == "" {
		httpError(w, "Missing "+HeaderConnectionID, http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	c, ok := h.conns[id]
	h.mu.Unlock()
	if !ok {
		h.lookupHTTP(w, id) // the 404, with the reason if known
		return
	}
	switch c := c.(type) {
	case *httpConn:
		c.endInput(errors.New("ended by the client (DELETE)"))
	case *wsConn:
		c.endInput(errors.New("ended by the client (DELETE)"))
	}
	w.WriteHeader(http.StatusAccepted)
}

// streamAdmitted is called when an event stream is admitted under the
// limit, before it is opened (tests hold streams there).
var streamAdmitted = func() {}

// events serves an SSE GET: the connection stream (Acp-Connection-Id
// only) or a session's (with Acp-Session-Id), resumed after Last-Event-ID
// if one is given.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(strings.ToLower(strings.Join(r.Header.Values("Accept"), ",")), "text/event-stream") {
		httpError(w, "Not Acceptable: GET needs Accept: text/event-stream (or Upgrade: websocket)", http.StatusNotAcceptable)
		return
	}
	c, sid, ok := h.target(w, r)
	if !ok {
		return
	}
	// A slot is taken before the stream is: a check of the open count
	// followed by the attach let concurrent GETs past the limit.
	if h.stats.streamSlots.Add(1) > int64(h.opts.MaxStreams) {
		h.stats.streamSlots.Add(-1)
		h.stats.refused.Add(1)
		w.Header().Set("Retry-After", "10")
		httpError(w, fmt.Sprintf("too many open event streams: %d, the limit (--max-streams)", h.opts.MaxStreams), http.StatusServiceUnavailable)
		return
	}
	defer h.stats.streamSlots.Add(-1)
	streamAdmitted()
	s, err := c.stream(sid)
	if err != nil {
		httpError(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	rcv := &receiver{gone: make(chan struct{}), wake: make(chan struct{}, 1)}
	if err := s.attach(rcv, strings.TrimSpace(r.Header.Get(HeaderLastEventID))); err != nil {
		code := http.StatusConflict
		if errors.Is(err, acp.ErrClosed) {
			code = http.StatusNotFound
		}
		httpError(w, err.Error(), code)
		return
	}
	defer s.detach(rcv)
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(h.opts.StallTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	first := []byte(": acp-agent event stream\n\n")
	if rcv.note != "" {
		first = []byte(": " + strings.ReplaceAll(rcv.note, "\n", " ") + "\n\n")
	}
	if !send(first) {
		return
	}
	keep := time.NewTicker(h.opts.KeepAlive)
	defer keep.Stop()
	var buf []byte
	for {
		var last uint64
		var ended bool
		buf, last, ended, err = s.take(rcv, buf[:0], 256<<10)
		if err != nil {
			return
		}
		if last != 0 {
			if !send(buf) {
				return
			}
			s.ack(rcv, last)
			if cap(buf) > 1<<20 {
				buf = nil
			}
			continue
		}
		if ended {
			return
		}
		select {
		case <-rcv.wake:
		case <-rcv.gone:
			return
		case <-r.Context().Done():
			return
		case <-keep.C:
			if !send([]byte(":\n\n")) {
				return
			}
		}
	}
}

// reap ends HTTP connections that have had no request and no event
// stream for the idle timeout: a client that went away without DELETE.
func (h *Handler) reap() {
	defer h.reaper.Done()
	every := h.opts.IdleTimeout / 4
	if every < 100*time.Millisecond {
		every = 100 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-h.closing:
			return
		case now := <-t.C:
			h.mu.Lock()
			var idle []*httpConn
			for _, c := range h.conns {
				if hc, ok := c.(*httpConn); ok {
					if since := hc.idleSince(); !since.IsZero() && now.Sub(since) > h.opts.IdleTimeout {
						idle = append(idle, hc)
					}
				}
			}
			h.mu.Unlock()
			for _, c := range idle {
				c.endInput(fmt.Errorf("idle for %s: no request and no open event stream", h.opts.IdleTimeout))
			}
		}
	}
}
