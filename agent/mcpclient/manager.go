package mcpclient

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// Errors returned by Manager methods; test with errors.Is.
var (
	// ErrUnknownTool: no current tool has the qualified name given to Call.
	ErrUnknownTool = errors.New("mcpclient: unknown tool")
	// ErrInvalidArguments: Call's arguments are not a JSON object.
	ErrInvalidArguments = errors.New("mcpclient: arguments must be a JSON object")
	// ErrClosed: the Manager was closed.
	ErrClosed = errors.New("mcpclient: manager closed")
	// ErrDisconnected: the server ended the session (in ServerStatus.Err).
	ErrDisconnected = errors.New("mcpclient: server disconnected")
)

// Supports reports which MCP transports besides stdio the package can use,
// for the agent's mcpCapabilities in ACP initialize.
func Supports() (http, sse bool) { return true, true }

// DefaultConnectTimeout is the per-server connect timeout when
// Options.ConnectTimeout is zero.
const DefaultConnectTimeout = 30 * time.Second

// Options configure a Manager. The zero value works.
type Options struct {
	// ClientName and ClientVersion are sent to servers in initialize
	// (defaults "acp-agent" and "dev").
	ClientName, ClientVersion string
	// Logger receives stdio servers' stderr lines (Info, "mcp server
	// stderr"), connect failures, disconnects and re-list failures (Warn),
	// each with an "mcp_server" attribute. Nil discards. Never stdout: that
	// is the ACP channel.
	Logger *slog.Logger
	// ConnectTimeout bounds connecting to and listing the tools of one
	// server, and each later re-listing; zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// HTTPClient is the base client for http and sse servers; its Transport
	// is wrapped to add each server's headers. Its Timeout must be zero, as
	// it would cut long-lived streams. Nil means a client with a transport
	// of the Manager's own, whose idle connections Close closes and which
	// never connects to a link-local or cloud metadata address
	// (policy.Dialer); a client given here is its owner's to guard so.
	HTTPClient *http.Client
	// Dir is the working directory of stdio servers; empty means ours.
	Dir string
	// OnToolsChanged is called after a server's tool list changed (it sent
	// notifications/tools/list_changed and re-listing gave a different list,
	// or the server went away). Calls come from a goroutine of the Manager,
	// one at a time; several changes in a row may give one call. It must not
	// call Close.
	OnToolsChanged func()
	// Elicit, if set, passes a server's elicitation request to the user
	// and returns the answer; ElicitForm and ElicitURL say which modes
	// servers are told the client supports (neither: Elicit is not used).
	// It may block until the user answers; ctx ends with the request.
	Elicit                func(ctx context.Context, server string, e Elicitation) (ElicitationResult, error)
	ElicitForm, ElicitURL bool
	// ElicitationComplete, if set, is told when a server says a URL-mode
	// elicitation it asked for has completed.
	ElicitationComplete func(server, elicitationID string)
}

// Elicitation is a server's request for user input: Mode "form" with
// RequestedSchema (the server's JSON schema, as sent), or "url" with URL
// and ElicitationID.
type Elicitation struct {
	Mode            string
	Message         string
	RequestedSchema json.RawMessage
	URL             string
	ElicitationID   string
}

// ElicitationResult is the user's answer: Action "accept" (with Content,
// for a form), "decline" or "cancel".
type ElicitationResult struct {
	Action  string
	Content map[string]any
}

// Tool is an MCP tool as offered to the model.
type Tool struct {
	Server string // the server's name from ACP
	Name   string // the server's tool name
	// QualifiedName is the collision-free, provider-safe name to offer the
	// model and to pass to Call; see "Qualified names" in the package doc.
	QualifiedName string
	Title         string // the tool's title, else its annotations' title, else Name
	Description   string
	// InputSchema is the JSON Schema object of the arguments; never null
	// ({"type":"object"} when the server gave none or not an object).
	// Shared between snapshots: do not modify.
	InputSchema json.RawMessage
	ReadOnly    bool // annotations.readOnlyHint
}

// Failure is a server that could not be connected.
type Failure struct {
	Server string // the server's name from ACP
	Err    error  // names the server and the step that failed
}

// ServerStatus describes one configured server.
type ServerStatus struct {
	Name      string
	Transport string // "stdio", "http", "sse", "acp" (a Channel), or the unsupported type's tag
	Connected bool
	Tools     int
	Err       error // why it is not connected (nil while connected or after Close)
}

// Manager holds the sessions with the MCP servers of one ACP session. See
// the package doc for its concurrency contract.
type Manager struct {
	opts      Options
	log       *slog.Logger
	httpBase  *http.Client
	ownHTTP   *http.Transport // nil when the caller gave HTTPClient
	servers   []*server       // in configured order; fixed after Connect
	changed   chan struct{}   // cap 1: OnToolsChanged is due
	done      chan struct{}   // closed by Close to stop the notifier
	closing   atomic.Bool
	wg        sync.WaitGroup // goroutines started after connecting
	closeOnce sync.Once
	closeErr  error

	mu     sync.RWMutex
	tools  []Tool // sorted by QualifiedName; replaced, never modified
	byName map[string]toolRef
}

// toolRef says where a qualified name goes.
type toolRef struct {
	srv  *server
	name string
}

// server is one configured MCP server.
type server struct {
	name string
	kind string
	log  *slog.Logger
	// secrets are the parts of an http or sse server's URL that may hold
	// credentials (urlSecrets), never shown in its errors.
	secrets []string

	// Set while connecting, read-only afterwards.
	cs     *mcp.ClientSession // nil if connecting failed
	life   context.Context    // the session's; Close cancels it
	cancel context.CancelFunc
	pid    int           // stdio child's pid, 0 otherwise
	stderr *lineLogger   // stdio only
	relist chan struct{} // cap 1: the server said its tools changed
	gone   chan struct{} // closed when the session ended

	// Guarded by Manager.mu.
	connected bool
	err       error
	tools     []Tool // without QualifiedName
}

// Connect starts or connects every server concurrently and lists their
// tools. It returns a Manager holding the servers that worked and a Failure
// for each that did not; a failing server never fails the others. ctx (and
// Options.ConnectTimeout, per server) bound the connecting only, not the
// sessions. The Manager is never nil and must be closed.
func Connect(ctx context.Context, servers []Server, opts Options) (*Manager, []Failure) {
	m := newManager(opts)
	var wg sync.WaitGroup
	for _, cfg := range servers {
		s := &server{
			name:    cfg.Name(),
			kind:    cmp.Or(cfg.Tag(), "stdio"),
			relist:  make(chan struct{}, 1),
			gone:    make(chan struct{}),
			secrets: urlSecrets(cfg),
		}
		s.log = m.log.With("mcp_server", s.name)
		m.servers = append(m.servers, s)
		wg.Go(func() { s.err = redactError(m.connectServer(ctx, s, cfg), s.secrets) })
	}
	wg.Wait()

	var failures []Failure
	m.mu.Lock()
	for _, s := range m.servers {
		if s.err != nil {
			s.log.Warn("mcp server failed to connect", "error", s.err)
			failures = append(failures, Failure{Server: s.name, Err: s.err})
			continue
		}
		s.connected = true
	}
	m.rebuildLocked()
	m.mu.Unlock()

	if m.opts.OnToolsChanged != nil {
		m.wg.Go(m.notifier)
	}
	for _, s := range m.servers {
		if s.cs != nil {
			m.wg.Go(func() {
				_ = s.cs.Wait()
				close(s.gone)
			})
			m.wg.Go(func() { m.serve(s) })
		}
	}
	return m, failures
}

func newManager(opts Options) *Manager {
	opts.ClientName = cmp.Or(opts.ClientName, "acp-agent")
	opts.ClientVersion = cmp.Or(opts.ClientVersion, "dev")
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	m := &Manager{
		opts:    opts,
		log:     opts.Logger,
		changed: make(chan struct{}, 1),
		done:    make(chan struct{}),
		byName:  map[string]toolRef{},
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	m.httpBase = opts.HTTPClient
	if m.httpBase == nil {
		m.ownHTTP = http.DefaultTransport.(*http.Transport).Clone()
		// The client names the server, and over serve it is a remote
		// one: the agent dials it itself, outside any sandbox, with the
		// client's headers. By address or by a name resolving there, no
		// connection goes where the machine's credentials are handed out.
		m.ownHTTP.DialContext = policy.Dialer().DialContext
		m.httpBase = &http.Client{Transport: m.ownHTTP}
	}
	return m
}

// connectServer connects s, lists its tools and fills s's connection fields.
// On failure it leaves nothing running and returns an error naming s.
func (m *Manager) connectServer(ctx context.Context, s *server, cfg Server) error {
	ctx, cancel := context.WithTimeout(ctx, m.opts.ConnectTimeout)
	defer cancel()
	fail := func(step string, err error) error {
		return fmt.Errorf("mcp server %q: %s: %w", s.name, step, err)
	}

	// The session's life must outlast ctx, except that ctx must still be
	// able to abort connecting: cancel life when ctx ends, until connected.
	life, cancelLife := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancelLife)

	var (
		t   mcp.Transport
		cmd *exec.Cmd // stdio only
	)
	switch {
	case cfg.Stdio != nil:
		if cfg.Stdio.Command == "" {
			return fail("starting", errors.New("no command"))
		}
		s.stderr = &lineLogger{log: s.log}
		cmd = stdioCommand(cfg.Stdio, m.opts.Dir, s.stderr)
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}
	case cfg.HTTP != nil:
		hc, err := httpClientFor(life, m.httpBase, cfg.HTTP.URL, cfg.HTTP.Headers)
		if err != nil {
			return fail("connecting", err)
		}
		t = &mcp.StreamableClientTransport{Endpoint: cfg.HTTP.URL, HTTPClient: hc}
	case cfg.SSE != nil:
		hc, err := httpClientFor(life, m.httpBase, cfg.SSE.URL, cfg.SSE.Headers)
		if err != nil {
			return fail("connecting", err)
		}
		t = &mcp.SSEClientTransport{Endpoint: cfg.SSE.URL, HTTPClient: hc}
	case cfg.Channel != nil:
		if cfg.Channel.Channel == nil {
			return fail("connecting", errors.New("no channel"))
		}
		t = &channelTransport{ch: cfg.Channel.Channel, log: s.log}
	default:
		return fail("connecting", fmt.Errorf("unsupported transport %q", cfg.Tag()))
	}

	dt := &detachedTransport{inner: t, life: life}
	caps := &mcp.ClientCapabilities{}
	var elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	if m.opts.Elicit != nil && (m.opts.ElicitForm || m.opts.ElicitURL) {
		caps.Elicitation = &mcp.ElicitationCapabilities{}
		if m.opts.ElicitForm {
			caps.Elicitation.Form = &mcp.FormElicitationCapabilities{}
		}
		if m.opts.ElicitURL {
			caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
		}
		elicit = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			p := req.Params
			e := Elicitation{Mode: cmp.Or(p.Mode, "form"), Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
			if (e.Mode == "form" && !m.opts.ElicitForm) || (e.Mode == "url" && !m.opts.ElicitURL) {
				return nil, fmt.Errorf("elicitation mode %q is not supported", e.Mode)
			}
			if p.RequestedSchema != nil {
				raw, err := json.Marshal(p.RequestedSchema)
				if err != nil {
					return nil, err
				}
				e.RequestedSchema = raw
			}
			res, err := m.opts.Elicit(ctx, s.name, e)
			if err != nil {
				return nil, err
			}
			return &mcp.ElicitResult{Action: res.Action, Content: res.Content}, nil
		}
	}
	var complete func(context.Context, *mcp.ElicitationCompleteNotificationRequest)
	if m.opts.ElicitationComplete != nil {
		complete = func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			if req.Params != nil {
				m.opts.ElicitationComplete(s.name, req.Params.ElicitationID)
			}
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: m.opts.ClientName, Version: m.opts.ClientVersion}, &mcp.ClientOptions{
		Logger:                     s.log,
		Capabilities:               caps,
		ElicitationHandler:         elicit,
		ElicitationCompleteHandler: complete,
		// This runs on the connection's read loop, so it must not call the
		// server: it only wakes serve, which re-lists.
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case s.relist <- struct{}{}:
			default:
			}
		},
	})

	cs, err := client.Connect(ctx, dt, nil)
	if cmd != nil && cmd.Process != nil { // started, even if connecting failed later
		s.pid = cmd.Process.Pid
	}
	cleanup := func() {
		// Cancel life first: it aborts the SDK's pending HTTP requests,
		// which closing would otherwise wait for.
		cancelLife()
		if cs != nil {
			_ = cs.Close()
		} else if dt.conn != nil {
			_ = dt.conn.Close()
		}
		s.reap()
	}
	if err != nil {
		cleanup()
		return fail("connecting", timeoutCause(ctx, err, m.opts.ConnectTimeout))
	}
	tools, err := listTools(ctx, cs)
	if err != nil {
		cleanup()
		return fail("listing tools", timeoutCause(ctx, err, m.opts.ConnectTimeout))
	}
	if !stop() {
		// ctx ended just as we finished; life was cancelled with it.
		cleanup()
		return fail("connecting", timeoutCause(ctx, ctx.Err(), m.opts.ConnectTimeout))
	}
	s.cs, s.life, s.cancel = cs, life, cancelLife
	s.tools = convertTools(s.name, tools)
	return nil
}

// timeoutCause makes our own connect timeout readable in the error.
func timeoutCause(ctx context.Context, err error, d time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %v: %w", d, err)
	}
	return err
}

// reap finishes off a stdio server after its session was closed (which
// reaped the child): kill what is left of its process group and log the
// last, unterminated stderr line.
func (s *server) reap() {
	runtime.KillGroup(s.pid)
	if s.stderr != nil {
		s.stderr.Flush()
	}
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// convertTools converts a server's tool list, dropping repeated names.
func convertTools(server string, tools []*mcp.Tool) []Tool {
	out := make([]Tool, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		title := t.Title
		if title == "" && t.Annotations != nil {
			title = t.Annotations.Title
		}
		out = append(out, Tool{
			Server:      server,
			Name:        t.Name,
			Title:       cmp.Or(title, t.Name),
			Description: t.Description,
			InputSchema: inputSchema(t.InputSchema),
			ReadOnly:    t.Annotations != nil && t.Annotations.ReadOnlyHint,
		})
	}
	return out
}

// inputSchema returns the JSON of a tool's schema, or a fresh
// {"type":"object"} when it is missing or not an object.
func inputSchema(v any) json.RawMessage {
	if v != nil {
		if b, err := json.Marshal(v); err == nil && isJSONObject(b) {
			return b
		}
	}
	return json.RawMessage(`{"type":"object"}`)
}

func isJSONObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// rebuildLocked recomputes the tool table from the connected servers'
// tools. m.mu must be held for writing.
func (m *Manager) rebuildLocked() {
	var (
		keys []toolKey
		refs []toolRef
		defs []Tool
	)
	for _, s := range m.servers {
		if !s.connected {
			continue
		}
		for _, t := range s.tools {
			keys = append(keys, toolKey{s.name, t.Name})
			refs = append(refs, toolRef{s, t.Name})
			defs = append(defs, t)
		}
	}
	// Two servers configured under one name would give equal keys, but the
	// naming rule needs distinct ones: the n-th repeat's server part gets
	// "\x00n" appended, which sanitizes to "_n" (see the package doc).
	seen := make(map[toolKey]int, len(keys))
	for i, k := range keys {
		if n := seen[k]; n > 0 {
			keys[i].server = fmt.Sprintf("%s\x00%d", k.server, n)
		}
		seen[k]++
	}
	names := qualifiedNames(keys)
	tools := make([]Tool, len(defs))
	byName := make(map[string]toolRef, len(defs))
	for i := range defs {
		tools[i] = defs[i]
		tools[i].QualifiedName = names[i]
		byName[names[i]] = refs[i]
	}
	slices.SortFunc(tools, func(a, b Tool) int { return cmp.Compare(a.QualifiedName, b.QualifiedName) })
	m.tools, m.byName = tools, byName
}

// Tools returns the current tools of all connected servers, sorted by
// QualifiedName. The slice is the caller's; nil after Close.
func (m *Manager) Tools() []Tool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.tools)
}

// Servers reports, in configured order, each server's state.
func (m *Manager) Servers() []ServerStatus {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]ServerStatus, len(m.servers))
	for i, s := range m.servers {
		out[i] = ServerStatus{Name: s.name, Transport: s.kind, Connected: s.connected, Tools: len(s.tools), Err: s.err}
	}
	return out
}

// Call calls the tool with the given qualified name. args must be a JSON
// object; empty or null means {}. A result with IsError set is not a Go
// error; an unknown tool, invalid arguments, a protocol error from the
// server, a broken connection or the end of ctx is (errors name the server
// and the tool; ctx's error is wrapped). Ending ctx sends the server a
// cancellation.
func (m *Manager) Call(ctx context.Context, qualifiedName string, args json.RawMessage) (Result, error) {
	if m.closing.Load() {
		return Result{}, ErrClosed
	}
	m.mu.RLock()
	ref, ok := m.byName[qualifiedName]
	m.mu.RUnlock()
	if !ok {
		return Result{}, fmt.Errorf("%w: %q", ErrUnknownTool, qualifiedName)
	}
	args = bytes.TrimSpace(args)
	switch {
	case len(args) == 0 || string(args) == "null":
		args = json.RawMessage("{}")
	case !isJSONObject(args) || !json.Valid(args):
		return Result{}, fmt.Errorf("mcp server %q: calling tool %q: %w", ref.srv.name, ref.name, ErrInvalidArguments)
	}
	res, err := ref.srv.cs.CallTool(ctx, &mcp.CallToolParams{Name: ref.name, Arguments: args})
	if err == nil && res == nil {
		err = errors.New("no result")
	}
	if err != nil {
		// The model reads this: no token of the server's URL.
		return Result{}, redactError(fmt.Errorf("mcp server %q: calling tool %q: %w", ref.srv.name, ref.name, err), ref.srv.secrets)
	}
	return convertResult(res), nil
}

// serve runs for one connected server until Close: it re-lists tools when
// the server says they changed, and drops the server when its session ends.
func (m *Manager) serve(s *server) {
	for {
		select {
		case <-s.life.Done():
			return
		case <-s.gone:
			if m.closing.Load() {
				return
			}
			s.log.Warn("mcp server disconnected")
			s.reap()
			m.mu.Lock()
			s.connected = false
			s.err = fmt.Errorf("mcp server %q: %w", s.name, ErrDisconnected)
			s.tools = nil
			m.rebuildLocked()
			m.mu.Unlock()
			m.notifyChanged()
			return
		case <-s.relist:
			m.relist(s)
		}
	}
}

func (m *Manager) relist(s *server) {
	ctx, cancel := context.WithTimeout(s.life, m.opts.ConnectTimeout)
	tools, err := listTools(ctx, s.cs)
	cancel()
	if err != nil {
		if s.life.Err() == nil {
			s.log.Warn("mcp server: re-listing tools failed; keeping the old list", "error", redactError(err, s.secrets))
		}
		return
	}
	converted := convertTools(s.name, tools)
	m.mu.Lock()
	changed := s.connected && !slices.EqualFunc(s.tools, converted, sameTool)
	if changed {
		s.tools = converted
		m.rebuildLocked()
	}
	m.mu.Unlock()
	if changed {
		m.notifyChanged()
	}
}

func sameTool(a, b Tool) bool {
	return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description &&
		a.ReadOnly == b.ReadOnly && bytes.Equal(a.InputSchema, b.InputSchema)
}

func (m *Manager) notifyChanged() {
	if m.opts.OnToolsChanged == nil {
		return
	}
	select {
	case m.changed <- struct{}{}:
	default: // a call is already due; it will see this change too
	}
}

// notifier serializes OnToolsChanged calls.
func (m *Manager) notifier() {
	for {
		select {
		case <-m.done:
			return
		case <-m.changed:
			m.opts.OnToolsChanged()
		}
	}
}

// Close shuts every server down (see the package doc for the stdio
// ladder) and returns after every goroutine the Manager started has ended.
// It returns the servers' shutdown errors, each naming its server: a stdio
// server that had to be SIGKILLed or could not be stopped, or an http/sse
// session that failed to end. A stdio server's exit status, and its ending
// by SIGTERM, are only logged. Errors of servers that had already gone away
// are not reported again.
// Close is idempotent; later calls return the first call's result.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.closing.Store(true)
		m.mu.RLock()
		wasConnected := make(map[*server]bool, len(m.servers))
		for _, s := range m.servers {
			wasConnected[s] = s.connected
		}
		m.mu.RUnlock()

		var (
			wg   sync.WaitGroup
			emu  sync.Mutex
			errs []error
		)
		for _, s := range m.servers {
			if s.cs == nil {
				continue // connecting failed and cleaned up already
			}
			wg.Go(func() {
				// An http server gets httpCloseGrace to answer the SDK's
				// session DELETE; then life's end aborts it.
				timer := time.AfterFunc(httpCloseGrace, s.cancel)
				err := s.cs.Close()
				timer.Stop()
				s.cancel()
				s.reap()
				if err != nil && s.pid != 0 && runtime.ExitedCleanly(err) {
					s.log.Info("mcp server exited", "status", err)
					err = nil
				}
				if err != nil && wasConnected[s] {
					emu.Lock()
					errs = append(errs, fmt.Errorf("mcp server %q: closing: %w", s.name, err))
					emu.Unlock()
				}
			})
		}
		wg.Wait()
		close(m.done)
		m.wg.Wait()
		if m.ownHTTP != nil {
			m.ownHTTP.CloseIdleConnections()
		}

		m.mu.Lock()
		for _, s := range m.servers {
			s.connected = false
			s.tools = nil
			if s.cs != nil {
				s.err = nil
			}
		}
		m.tools, m.byName = nil, map[string]toolRef{}
		m.mu.Unlock()
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}
