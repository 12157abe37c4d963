// Package acptest is a line-level ACP client for tests. It writes raw lines
// to an agent, reads the agent's lines, and checks every message the agent
// writes: it must be one JSON-RPC 2.0 object per line, and its params or
// result must validate against the official ACP schema of the version the
// connection negotiated, for its method.
//
// v1 is checked against the v1 schemas. A connection becomes v2 when the
// agent answers an initialize with protocolVersion 2; from then on every
// message is checked against the SDK 2.4.0 v2 schema: the unstable file
// (which holds the stable one) with every open value required to be a
// custom one (starting with "_"), and, for the stable methods, the stable
// file too. A method outside the v2 method table, or a session/update of
// a custom kind, fails: a new kind of message needs its validation first.
//
// A Client is used by one test goroutine; its reader goroutine is owned by
// the Client and ends when the agent's output ends.
package acptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/acp/schemacheck"
)

// Message is one JSON-RPC message written by the agent.
type Message struct {
	Raw    []byte
	ID     json.RawMessage // nil for notifications
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *WireError
}

// WireError is a JSON-RPC error object.
type WireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// IsResponse reports whether m answers a request.
func (m Message) IsResponse() bool { return m.Method == "" }

// Update decodes a session/update notification.
func (m Message) Update(t testing.TB) acp.SessionNotification {
	t.Helper()
	if m.Method != acp.MethodSessionUpdate {
		t.Fatalf("expected a session/update, got %s", m.Raw)
	}
	var n acp.SessionNotification
	if err := json.Unmarshal(m.Params, &n); err != nil {
		t.Fatalf("decoding session/update %s: %v", m.Raw, err)
	}
	return n
}

// defs are the schema definitions of the messages the agent writes, by
// method, from acp's method table: the result of each method it serves
// and the params of each it calls.
type defs struct {
	responses map[string]acp.MethodSpec // by method of our request
	requests  map[string]acp.MethodSpec // by method the agent calls
}

func tableDefs(table []acp.MethodSpec) defs {
	d := defs{responses: map[string]acp.MethodSpec{}, requests: map[string]acp.MethodSpec{}}
	for _, m := range table {
		if m.Direction&acp.ToAgent != 0 && m.Result != "" {
			d.responses[m.Name] = m
		}
		if m.Direction&acp.ToClient != 0 && m.Params != "" {
			d.requests[m.Name] = m
		}
	}
	return d
}

var (
	messageDefs   = tableDefs(acp.Methods())
	messageDefsV2 = tableDefs(acp.MethodsV2())
)

// validateIn checks data against def in each schema file of schemas.
func (c *Client) validateIn(schemas acp.Schemas, def string, data json.RawMessage) error {
	if schemas&acp.SchemaV1 != 0 {
		if err := c.validate(def, data); err != nil {
			return fmt.Errorf("ACP schema (%s): %v", def, err)
		}
	}
	if schemas&acp.SchemaV1Unstable != 0 {
		if err := c.checker.ValidateUnstable(def, data); err != nil {
			return fmt.Errorf("ACP unstable schema (%s): %v", def, err)
		}
	}
	if schemas&acp.SchemaSDKUnstable != 0 {
		if err := c.checker.ValidateSDKUnstable(def, data); err != nil {
			return fmt.Errorf("SDK 2.4.0 unstable schema (%s): %v", def, err)
		}
	}
	return nil
}

// Client drives an agent over its stdin/stdout.
type Client struct {
	t       testing.TB
	w       io.Writer
	msgs    chan Message
	readErr chan error
	checker *schemacheck.Checker

	mu      sync.Mutex
	methods map[string]string // our request id -> method, to validate results
	valid   map[string]bool   // skeletons already validated, see validate
	nextID  int
	// version is the protocol the agent answered initialize with: 2
	// makes the connection v2 (see the package doc).
	version int
	// Timeout bounds every wait for a message; default 10 s.
	Timeout  time.Duration
	stop     func() // Pipe's shutdown
	endInput func() // Pipe's: closes the agent's input
	// caps are the client capabilities of the initialize sent through
	// Request (nil before one).
	caps *acp.ClientCapabilities
	// AnnouncesCommands says the agent sends available_commands_update
	// after session/new (NewSession then takes it); Commands is the last
	// one taken.
	AnnouncesCommands bool
	Commands          []acp.AvailableCommand
	// held are messages TakeCommands read past (other sessions'), given
	// out again, in order, before any newer one.
	held []Message
}

var (
	checkerOnce sync.Once
	checker     *schemacheck.Checker
	checkerErr  error
)

// New starts reading agentOut. Closing the writer side of agentIn is the
// test's business (see Close).
func New(t testing.TB, agentIn io.Writer, agentOut io.Reader) *Client {
	t.Helper()
	checkerOnce.Do(func() { checker, checkerErr = schemacheck.Load() })
	if checkerErr != nil {
		t.Fatalf("loading ACP schema: %v", checkerErr)
	}
	c := &Client{
		t: t, w: agentIn, checker: checker,
		msgs: make(chan Message, 1<<16), readErr: make(chan error, 1),
		methods: make(map[string]string), valid: make(map[string]bool), Timeout: 10 * time.Second,
	}
	go c.read(agentOut)
	return c
}

func (c *Client) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				c.readErr <- fmt.Errorf("agent wrote a line without a newline: %q", line)
				close(c.msgs)
				return
			}
			m, verr := c.parse(line[:len(line)-1])
			if verr != nil {
				c.readErr <- verr
				close(c.msgs)
				return
			}
			c.msgs <- m
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.readErr <- err
			}
			close(c.msgs)
			return
		}
	}
}

// parse checks one line the agent wrote and decodes it.
func (c *Client) parse(line []byte) (Message, error) {
	var env struct {
		JSONRPC *string          `json:"jsonrpc"`
		ID      json.RawMessage  `json:"id"`
		Method  string           `json:"method"`
		Params  json.RawMessage  `json:"params"`
		Result  json.RawMessage  `json:"result"`
		Error   *json.RawMessage `json:"error"`
	}
	if !utf8.Valid(line) {
		return Message{}, fmt.Errorf("agent wrote a line that is not UTF-8: %q", line)
	}
	if err := json.Unmarshal(line, &env); err != nil {
		return Message{}, fmt.Errorf("agent wrote a line that is not a JSON object: %q: %v", line, err)
	}
	if env.JSONRPC == nil || *env.JSONRPC != "2.0" {
		return Message{}, fmt.Errorf("agent message without jsonrpc 2.0: %s", line)
	}
	m := Message{Raw: append([]byte(nil), line...), ID: env.ID, Method: env.Method, Params: env.Params, Result: env.Result}
	if c.negotiate(env.ID, env.Result) == 2 {
		err := c.parseV2(&m, env.Error, line)
		return m, err
	}
	switch {
	case env.Method != "":
		spec, ok := messageDefs.requests[env.Method]
		if !ok {
			return m, fmt.Errorf("agent sent unknown method %q: %s", env.Method, line)
		}
		if env.Method == acp.MethodSessionUpdate && isExtensionUpdate(env.Params) {
			// acp-agent's opt-in updates have their own schema.
			if err := c.checker.ValidateExtension("SessionNotification", env.Params); err != nil {
				return m, fmt.Errorf("agent extension update does not match testdata/acp-agent-schema: %v\n%s", err, line)
			}
			break
		}
		if env.Method == acp.MethodSessionUpdate && sdkUnstableUpdates[updateTag(env.Params)] {
			if err := c.advertised(updateTag(env.Params)); err != nil {
				return m, fmt.Errorf("%v\n%s", err, line)
			}
			if err := c.checker.ValidateSDKUnstable("SessionNotification", env.Params); err != nil {
				return m, fmt.Errorf("agent update does not match the SDK 2.4.0 unstable schema: %v\n%s", err, line)
			}
			break
		}
		if env.Method == acp.MethodSessionUpdate && isSDKUpdate(env.Params) {
			// Variants of the newer SDK schema (compaction), sent only to
			// clients that advertise them.
			if err := c.checker.ValidateSDK("SessionNotification", env.Params); err != nil {
				return m, fmt.Errorf("agent update does not match the SDK 2.4.0 schema: %v\n%s", err, line)
			}
			break
		}
		if err := c.validateIn(spec.Schemas, spec.Params, env.Params); err != nil {
			return m, fmt.Errorf("agent %s params do not match the %v\n%s", env.Method, err, line)
		}
	case env.Error != nil:
		if err := c.checker.Validate("Error", *env.Error); err != nil {
			return m, fmt.Errorf("agent error does not match the ACP schema: %v\n%s", err, line)
		}
		m.Error = new(WireError)
		if err := json.Unmarshal(*env.Error, m.Error); err != nil {
			return m, err
		}
	case env.Result != nil:
		c.mu.Lock()
		method := c.methods[string(env.ID)]
		c.mu.Unlock()
		if spec, ok := messageDefs.responses[method]; ok {
			if err := c.validateIn(spec.Schemas, spec.Result, env.Result); err != nil {
				return m, fmt.Errorf("agent %s result does not match the %v\n%s", method, err, line)
			}
		}
	default:
		return m, fmt.Errorf("agent message is neither request nor response: %s", line)
	}
	return m, nil
}

// negotiate notes the version an initialize result answers, and returns
// the connection's version.
func (c *Client) negotiate(id, result json.RawMessage) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if result != nil && c.methods[string(id)] == acp.MethodInitialize {
		var r struct {
			ProtocolVersion int `json:"protocolVersion"`
		}
		if json.Unmarshal(result, &r) == nil && c.version == 0 {
			c.version = r.ProtocolVersion
		}
	}
	return c.version
}

// parseV2 checks a message of a v2 connection.
func (c *Client) parseV2(m *Message, errMember *json.RawMessage, line []byte) error {
	switch {
	case m.Method != "":
		spec, ok := messageDefsV2.requests[m.Method]
		if !ok {
			return fmt.Errorf("agent sent %q, which is not in the v2 method table: %s", m.Method, line)
		}
		if m.Method == acp.MethodSessionUpdate {
			if tag := updateTag(m.Params); strings.HasPrefix(tag, "_") {
				return fmt.Errorf("agent sent a custom session/update %q, which has no schema to validate it: %s", tag, line)
			}
		}
		if err := c.validateV2(spec, spec.Params, m.Params); err != nil {
			return fmt.Errorf("agent %s params do not match the %v\n%s", m.Method, err, line)
		}
	case errMember != nil:
		if err := c.checker.ValidateV2("Error", *errMember); err != nil {
			return fmt.Errorf("agent error does not match the v2 schema: %v\n%s", err, line)
		}
		m.Error = new(WireError)
		return json.Unmarshal(*errMember, m.Error)
	case m.Result != nil:
		c.mu.Lock()
		method := c.methods[string(m.ID)]
		c.mu.Unlock()
		if spec, ok := messageDefsV2.responses[method]; ok {
			if err := c.validateV2(spec, spec.Result, m.Result); err != nil {
				return fmt.Errorf("agent %s result does not match the %v\n%s", method, err, line)
			}
		}
	default:
		return fmt.Errorf("agent message is neither request nor response: %s", line)
	}
	return nil
}

// validateV2 checks data against def: in the unstable v2 schema with open
// values closed to custom ones, and for a stable method in the stable
// schema as well.
func (c *Client) validateV2(spec acp.MethodSpec, def string, data json.RawMessage) error {
	if err := c.cached("v2u:"+def, data, func() error { return c.checker.ValidateV2UnstableStrict(def, data) }); err != nil {
		return fmt.Errorf("SDK 2.4.0 v2 schema, unstable file, custom values marked (%s): %v", def, err)
	}
	if spec.Schemas&acp.SchemaV2 != 0 {
		if err := c.cached("v2:"+def, data, func() error { return c.checker.ValidateV2(def, data) }); err != nil {
			return fmt.Errorf("SDK 2.4.0 v2 schema (%s): %v", def, err)
		}
	}
	return nil
}

// isSDKUpdate reports whether session/update params carry a variant the
// v1 schema does not have but SDK 2.4.0's does (compaction, notices).
func isSDKUpdate(params json.RawMessage) bool {
	var p struct {
		Update struct {
			Tag string `json:"sessionUpdate"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	return p.Update.Tag == "compaction_update" || p.Update.Tag == "compaction_summary_chunk" || p.Update.Tag == acp.SessionUpdateNotice
}

// sdkUnstableUpdates are the session/update variants of the SDK 2.4.0
// unstable schema only, each sent only to clients that advertise it.
var sdkUnstableUpdates = map[string]bool{
	acp.SessionUpdateSubagentUpdate: true, acp.SessionUpdatePlanUpdate: true, acp.SessionUpdatePlanRemoved: true,
	acp.SessionUpdateSessionMessage: true, acp.SessionUpdateSessionMessageChunk: true,
}

// advertised checks that the client asked for an update of the SDK
// 2.4.0 unstable schema: the agent must not send it otherwise.
func (c *Client) advertised(tag string) error {
	c.mu.Lock()
	caps := c.caps
	c.mu.Unlock()
	if caps == nil {
		return nil // initialize was not sent through this client
	}
	switch tag {
	case acp.SessionUpdatePlanUpdate, acp.SessionUpdatePlanRemoved:
		if caps.Plan == nil {
			return fmt.Errorf("agent sent %s to a client without clientCapabilities.plan", tag)
		}
	default:
		if caps.Subagents == nil {
			return fmt.Errorf("agent sent %s to a client without clientCapabilities.subagents", tag)
		}
	}
	return nil
}

// updateTag is the sessionUpdate tag of session/update params.
func updateTag(params json.RawMessage) string {
	var p struct {
		Update struct {
			Tag string `json:"sessionUpdate"`
		} `json:"update"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Update.Tag
}

// isExtensionUpdate reports whether session/update params carry one of
// acp-agent's extension variants.
func isExtensionUpdate(params json.RawMessage) bool {
	var p struct {
		Update struct {
			Tag string `json:"sessionUpdate"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	return p.Update.Tag == acp.SessionUpdateExecutionStateUpdate || p.Update.Tag == acp.SessionUpdateRetryUpdate
}

// freeText are members whose string values the schema does not constrain
// (no enum, pattern or format), so their content cannot change the outcome
// of validation.
var freeText = map[string]bool{"text": true, "messageId": true, "sessionId": true}

// validate checks data against def. Streams of chunks differ only in their
// text, and schema validation is slow under the race detector, so a message
// is validated once per skeleton: the message with free-text strings
// blanked. This is exact, because blanked values are unconstrained strings.
func (c *Client) validate(def string, data json.RawMessage) error {
	return c.cached(def, data, func() error { return c.checker.Validate(def, data) })
}

// cached runs check unless a message of data's skeleton passed it under
// key (see validate).
func (c *Client) cached(key string, data json.RawMessage, check func() error) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	skeleton, err := json.Marshal(blankFreeText(v))
	if err != nil {
		return err
	}
	key += string(skeleton)
	c.mu.Lock()
	seen := c.valid[key]
	c.mu.Unlock()
	if seen {
		return nil
	}
	if err := check(); err != nil {
		return err
	}
	c.mu.Lock()
	c.valid[key] = true
	c.mu.Unlock()
	return nil
}

func blankFreeText(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if _, isString := x.(string); isString && freeText[k] {
				v[k] = ""
			} else {
				v[k] = blankFreeText(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = blankFreeText(x)
		}
	}
	return v
}

// SendLine writes one raw line (a newline is appended).
func (c *Client) SendLine(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatalf("writing to agent: %v", err)
	}
}

// Request sends a request and returns its id (as JSON).
func (c *Client) Request(method string, params any) string {
	c.t.Helper()
	if method == acp.MethodInitialize {
		var init acp.InitializeRequest
		if data, err := json.Marshal(params); err == nil && json.Unmarshal(data, &init) == nil {
			c.mu.Lock()
			c.caps = &init.ClientCapabilities
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	c.nextID++
	id := strconv.Itoa(c.nextID)
	c.methods[id] = method
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	return id
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Respond answers a request the agent made.
func (c *Client) Respond(id json.RawMessage, result any) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// RespondError answers a request the agent made with an error.
func (c *Client) RespondError(id json.RawMessage, code int64, msg string) {
	c.t.Helper()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}

func (c *Client) send(v any) {
	c.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		c.t.Fatalf("encoding message: %v", err)
	}
	c.SendLine(string(data))
}

// Next returns the next message from the agent, failing the test after
// Timeout or if the agent's output ended or broke the protocol.
func (c *Client) Next() Message {
	c.t.Helper()
	m, ok := c.NextWithin(c.Timeout)
	if !ok {
		c.t.Fatalf("no message from the agent within %s", c.Timeout)
	}
	return m
}

// NextWithin returns the next message, or false if none came within d.
func (c *Client) NextWithin(d time.Duration) (Message, bool) {
	c.t.Helper()
	c.mu.Lock()
	if len(c.held) > 0 {
		m := c.held[0]
		c.held = c.held[1:]
		c.mu.Unlock()
		return m, true
	}
	c.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			select {
			case err := <-c.readErr:
				c.t.Fatalf("agent output: %v", err)
			default:
				c.t.Fatalf("agent output ended")
			}
		}
		return m, true
	case <-timer.C:
		return Message{}, false
	}
}

// Call sends a request and reads messages until its response, which it
// returns with the messages that came before it (notifications and agent
// requests).
func (c *Client) Call(method string, params any) (resp Message, before []Message) {
	c.t.Helper()
	id := c.Request(method, params)
	return c.Await(id)
}

// Await reads messages until the response to id.
func (c *Client) Await(id string) (resp Message, before []Message) {
	c.t.Helper()
	for {
		m := c.Next()
		if m.IsResponse() && string(m.ID) == id {
			return m, before
		}
		before = append(before, m)
	}
}

// MustResult decodes a successful response into v.
func MustResult(t testing.TB, m Message, v any) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("expected a result, got error %d %q", m.Error.Code, m.Error.Message)
	}
	if v != nil {
		if err := json.Unmarshal(m.Result, v); err != nil {
			t.Fatalf("decoding result %s: %v", m.Result, err)
		}
	}
}

// ExpectEOF waits until the agent's output ends.
func (c *Client) ExpectEOF(d time.Duration) { c.Rest(d) }

// Rest waits until the agent's output ends and returns the messages it
// wrote until then (those not read yet): what a client was shown before
// the agent was killed, say.
func (c *Client) Rest(d time.Duration) []Message {
	c.t.Helper()
	c.mu.Lock()
	rest := c.held
	c.held = nil
	c.mu.Unlock()
	deadline := time.After(d)
	for {
		select {
		case m, ok := <-c.msgs:
			if !ok {
				return rest
			}
			rest = append(rest, m)
		case <-deadline:
			c.t.Fatalf("agent output did not end within %s", d)
		}
	}
}

// Initialize runs initialize with the given client capabilities (nil for
// none) and returns the response.
func (c *Client) Initialize(caps *acp.ClientCapabilities) acp.InitializeResponse {
	c.t.Helper()
	req := &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionV1}
	if caps != nil {
		req.ClientCapabilities = *caps
	}
	resp, _ := c.Call(acp.MethodInitialize, req)
	var r acp.InitializeResponse
	MustResult(c.t, resp, &r)
	return r
}

// InitializeV2 runs initialize asking for ACP v2 (with info and the given
// capabilities) and returns the response; the connection is v2 from then
// on when the agent answers 2.
func (c *Client) InitializeV2(caps *acpv2.ClientCapabilities) acpv2.InitializeResponse {
	c.t.Helper()
	req := &acpv2.InitializeRequest{ProtocolVersion: 2, Info: acpv2.Implementation{Name: "acptest", Version: "1"}}
	if caps != nil {
		req.Capabilities = *caps
	}
	resp, _ := c.Call(acp.MethodInitialize, req)
	var r acpv2.InitializeResponse
	MustResult(c.t, resp, &r)
	if r.ProtocolVersion != 2 {
		c.t.Fatalf("initialize asking for v2 was answered with version %d", r.ProtocolVersion)
	}
	return r
}

// NewSessionV2 runs session/new on a v2 connection in cwd and returns the
// session id.
func (c *Client) NewSessionV2(cwd string) string {
	c.t.Helper()
	resp, _ := c.Call(acpv2.MethodSessionNew, &acpv2.NewSessionRequest{CWD: cwd})
	var r acpv2.NewSessionResponse
	MustResult(c.t, resp, &r)
	return r.SessionID
}

// UpdateV2 decodes a v2 session/update notification.
func (m Message) UpdateV2(t testing.TB) acpv2.UpdateSessionNotification {
	t.Helper()
	if m.Method != acpv2.MethodSessionUpdate {
		t.Fatalf("expected a session/update, got %s", m.Raw)
	}
	var n acpv2.UpdateSessionNotification
	if err := json.Unmarshal(m.Params, &n); err != nil {
		t.Fatalf("decoding session/update %s: %v", m.Raw, err)
	}
	return n
}

// NewSession runs session/new in cwd and returns the session id.
//
// With AnnouncesCommands set, the agent is expected to announce its slash
// commands right after the response (available_commands_update):
// NewSession takes that update and keeps it in Commands, so tests of
// other things do not see it.
func (c *Client) NewSession(cwd string) string {
	c.t.Helper()
	resp, _ := c.Call(acp.MethodSessionNew, &acp.NewSessionRequest{CWD: cwd, MCPServers: []acp.McpServer{}})
	var r acp.NewSessionResponse
	MustResult(c.t, resp, &r)
	if c.AnnouncesCommands {
		c.TakeCommands(r.SessionID)
	}
	return r.SessionID
}

// TakeCommands reads the session's available_commands_update, which must
// be the session's next message, and keeps it in Commands. What other
// sessions were sent meanwhile (a title after an earlier prompt's answer,
// say) is kept for Next, in order.
func (c *Client) TakeCommands(sessionID string) {
	c.t.Helper()
	c.TakeCommandsAnswering(sessionID, nil)
}

// TakeCommandsAnswering is TakeCommands that passes the agent's requests
// about no other session to answer meanwhile (an MCP server reached
// through the client, listed again while the session opens); a nil
// answer makes such a request fail the test.
func (c *Client) TakeCommandsAnswering(sessionID string, answer func(Message)) {
	c.t.Helper()
	var other []Message
	for {
		m := c.Next()
		if sid, ok := sessionOf(m); ok && sid != sessionID {
			other = append(other, m)
			continue
		}
		if answer != nil && m.Method != "" && len(m.ID) > 0 {
			answer(m)
			continue
		}
		n := m.Update(c.t)
		if n.Update.AvailableCommandsUpdate == nil || n.SessionID != sessionID {
			c.t.Fatalf("expected the session's available_commands_update, got %s", m.Raw)
		}
		c.mu.Lock()
		c.Commands = n.Update.AvailableCommandsUpdate.AvailableCommands
		c.held = append(other, c.held...)
		c.mu.Unlock()
		return
	}
}

// sessionOf is the session a notification or request of the agent is
// about (its params' sessionId).
func sessionOf(m Message) (string, bool) {
	if m.Method == "" {
		return "", false
	}
	var p struct {
		SessionID *string `json:"sessionId"`
	}
	if json.Unmarshal(m.Params, &p) != nil || p.SessionID == nil {
		return "", false
	}
	return *p.SessionID, true
}

// Pipe connects an in-process agent service to a Client over io.Pipes and
// stops it when the test ends (closing the agent's input, then waiting for
// Serve to return).
func Pipe(t testing.TB, svc *acp.AgentService) *Client {
	t.Helper()
	return pipe(t, func(r io.Reader, w io.Writer) error { return svc.Serve(context.Background(), r, w) })
}

// Connect opens one more connection to srv: a LineStream over io.Pipes
// served by srv.ServeConn, with a Client on the other end. The connection
// ends when the test does (or at Stop), like Pipe's.
func Connect(t testing.TB, srv *acp.Server) *Client {
	t.Helper()
	return pipe(t, func(r io.Reader, w io.Writer) error {
		return srv.ServeConn(context.Background(), acp.NewLineStream(r, w, 0))
	})
}

func pipe(t testing.TB, serve func(io.Reader, io.Writer) error) *Client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(inR, outW)
		outW.Close()
		done <- err
	}()
	c := New(t, inW, outR)
	c.endInput = func() { inW.Close() }
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			inW.Close()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Errorf("Serve did not return within 5s of stdin EOF")
			}
			// Drain so the reader goroutine ends.
			for range c.msgs {
			}
		})
	}
	t.Cleanup(c.Stop)
	return c
}

// EndInput closes the agent's input of a Pipe client and returns at once:
// the test goes on reading what the agent writes while it shuts down
// (Stop would read those messages itself, to drain the pipe).
func (c *Client) EndInput() {
	if c.endInput != nil {
		c.endInput()
	}
}

// Stop ends the agent of a Pipe client as an editor closing it would:
// its input ends, and Stop waits until the service has shut down (its
// sessions closed). Further calls do nothing.
func (c *Client) Stop() {
	if c.stop != nil {
		c.stop()
	}
}
