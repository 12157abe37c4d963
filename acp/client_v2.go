package acp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/acp-agent/acp-agent/acp/acpv2"
)

// ClientConnV2 is a v2 session's view of its client: the session's
// ordered update stream (one outbox, as for v1) and the requests the agent
// may make of the client (v2 has no fs/* or terminal/*: only permission
// requests and elicitations). Its methods are safe for concurrent use.
type ClientConnV2 struct {
	sessionClient
	caps acpv2.ClientCapabilities

	mu sync.Mutex
	// state is the last state_update the session sent (session/status
	// reports it).
	state *acpv2.StateUpdate
	// calls are the session's requests to the client in flight, cancelled
	// all at once when the session closes.
	calls  map[*struct{}]context.CancelCauseFunc
	closed error
}

// errSessionClosed is the cause of what a session/close cancels.
var errSessionClosed = errors.New("the session was closed")

// Capabilities returns what the client of this session's connection
// advertised in initialize.
func (c *ClientConnV2) Capabilities() acpv2.ClientCapabilities { return c.caps }

// Update queues a session/update for the session; updates are written in
// the order they were queued, by the session's outbox. It blocks while
// the outbox is full (backpressure on the producer) until ctx is done.
func (c *ClientConnV2) Update(ctx context.Context, u acpv2.SessionUpdate) error {
	c.note(&u)
	return c.out.send(ctx, outItem{v2: &u})
}

// Post queues a session/update like Update but never waits for room, for
// updates sent from places that must not block.
func (c *ClientConnV2) Post(u acpv2.SessionUpdate) error {
	c.note(&u)
	return c.out.post(outItem{v2: &u})
}

func (c *ClientConnV2) note(u *acpv2.SessionUpdate) {
	if u.StateUpdate != nil {
		c.mu.Lock()
		c.state = u.StateUpdate
		c.mu.Unlock()
	}
}

// State returns the last state_update the session sent, or nil.
func (c *ClientConnV2) State() *acpv2.StateUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Call sends a request to the client and waits for its response, as
// ClientConn.Call does ($/cancel_request when ctx ends first). Closing
// the session cancels it.
func (c *ClientConnV2) Call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	key := new(struct{})
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return c.closed
	}
	if c.calls == nil {
		c.calls = make(map[*struct{}]context.CancelCauseFunc)
	}
	c.calls[key] = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.calls, key)
		c.mu.Unlock()
	}()
	return c.sessionClient.Call(ctx, method, params, result)
}

// cancelCalls cancels the session's calls in flight and refuses new
// ones: the session is closing.
func (c *ClientConnV2) cancelCalls(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed == nil {
		c.closed = cause
	}
	for _, cancel := range c.calls {
		cancel(cause)
	}
}

// RequestPermission asks the user to allow something (a tool call, a
// command): session/request_permission.
func (c *ClientConnV2) RequestPermission(ctx context.Context, req *acpv2.RequestPermissionRequest) (*acpv2.RequestPermissionResponse, error) {
	req.SessionID = c.SessionID()
	var resp acpv2.RequestPermissionResponse
	if err := c.Call(ctx, acpv2.MethodSessionRequestPermission, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// OpenChild opens a session the agent creates itself (a subagent of c's
// session) on c's connection under id, as ClientConn.OpenChild does: open
// builds it with its own ClientConnV2, whose updates wait until Release.
func (c *ClientConnV2) OpenChild(id string, open func(*ClientConnV2) (SessionV2, error)) (*ClientConnV2, error) {
	child := c.conn.newClientV2()
	child.setSessionID(id)
	sess, err := open(child)
	if err != nil {
		return nil, err
	}
	ss := newServiceSession(id, &child.sessionClient)
	ss.v2, ss.v2client = sess, child
	if err := c.conn.registerHeld(ss); err != nil {
		return nil, err
	}
	return child, nil
}

func (c *serverConn) newClientV2() *ClientConnV2 {
	c.mu.Lock()
	var caps acpv2.ClientCapabilities
	if c.v2 != nil {
		caps = c.v2.caps
	}
	c.mu.Unlock()
	return &ClientConnV2{sessionClient: c.newSessionClient(), caps: caps}
}

// appendUpdateLineV2 appends the wire line of a v2 session/update. A text
// chunk (the streaming hot path) is written directly, as v1's are;
// everything else goes through the generic encoding, which
// TestUpdateLineV2MatchesGenericEncoding holds the fast path to.
func appendUpdateLineV2(dst []byte, sessionID string, u *acpv2.SessionUpdate) ([]byte, error) {
	dst = append(dst, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":`...)
	dst = appendJSONString(dst, sessionID)
	dst = append(dst, `,"update":`...)
	if tag, c := textChunkV2(u); c != nil {
		dst = append(dst, `{"sessionUpdate":"`...)
		dst = append(dst, tag...)
		dst = append(dst, `","messageId":`...)
		dst = appendJSONString(dst, c.MessageID)
		dst = append(dst, `,"content":{"type":"text","text":`...)
		dst = appendJSONString(dst, c.Content.Text.Text)
		return append(dst, "}}}}\n"...), nil
	}
	b, err := json.Marshal(u)
	if err != nil {
		return dst, err
	}
	dst = append(dst, b...)
	return append(dst, "}}\n"...), nil
}

// textChunkV2 returns a plain text chunk update (no _meta, no
// annotations) and its tag, or nil.
func textChunkV2(u *acpv2.SessionUpdate) (string, *acpv2.ContentChunk) {
	var tag string
	var c *acpv2.ContentChunk
	switch {
	case u.AgentMessageChunk != nil:
		tag, c = acpv2.SessionUpdateTagAgentMessageChunk, u.AgentMessageChunk
	case u.AgentThoughtChunk != nil:
		tag, c = acpv2.SessionUpdateTagAgentThoughtChunk, u.AgentThoughtChunk
	case u.UserMessageChunk != nil:
		tag, c = acpv2.SessionUpdateTagUserMessageChunk, u.UserMessageChunk
	default:
		return "", nil
	}
	if c.Meta != nil || c.Content.Text == nil || c.Content.Text.Annotations != nil || c.Content.Text.Meta != nil {
		return "", nil
	}
	return tag, c
}
