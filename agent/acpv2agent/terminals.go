package acpv2agent

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/acp/acpv2"
	"github.com/acp-agent/acp-agent/agent/tools"
)

// A session's display-only terminals: v2 clients have no terminals of
// their own, so the commands the tools run in the agent's confined local
// terminal are shown as agent-owned terminals: terminal_update when one
// starts (its command, cwd, and that it can be cancelled), its output as
// terminal_output_chunks, and terminal_update with its exit status when it
// ends. The output is coalesced: at most one chunk per
// terminalFlushInterval, and at most terminalMaxPending bytes held between
// two (what comes beyond that is dropped, and the chunk says how much);
// each terminal's chunks are sent by a goroutine of its own, through the
// session's outbox (whose backpressure it takes, never the command), which
// the terminal's Exited waits for.

const (
	terminalFlushInterval = 50 * time.Millisecond
	terminalMaxPending    = 64 << 10
)

// terminals are a v2 session's running terminals, by id.
type terminals struct {
	cl *v2Client

	mu   sync.Mutex
	live map[string]*terminal
}

var _ tools.CommandDisplay = (*terminals)(nil)

// terminal is one command shown.
type terminal struct {
	ts   *terminals
	id   string
	ctx  context.Context // the sends'
	stop chan struct{}   // closed by terminal/cancel
	once sync.Once

	mu      sync.Mutex
	pending []byte
	dropped int
	kick    chan struct{} // output is pending (cap 1)
	done    chan struct{} // closed by Exited
	flushed chan struct{} // closed by the flusher when it has sent all
}

// ShowCommand implements tools.CommandDisplay: the terminal is announced
// (in order with the tool call's updates: the caller's goroutine sends
// it), and its flusher started.
func (ts *terminals) ShowCommand(ctx context.Context, line, cwd string) tools.CommandView {
	t := &terminal{ts: ts, id: "terminal-" + uuid.NewString(), ctx: context.WithoutCancel(ctx),
		stop: make(chan struct{}), kick: make(chan struct{}, 1), done: make(chan struct{}), flushed: make(chan struct{})}
	ts.mu.Lock()
	if ts.live == nil {
		ts.live = make(map[string]*terminal)
	}
	ts.live[t.id] = t
	ts.mu.Unlock()
	ts.cl.sendOrLog(t.ctx, acpv2.SessionUpdate{TerminalUpdate: &acpv2.TerminalUpdate{TerminalID: t.id,
		Command: acpv2.Some(line), CWD: acpv2.Some(cwd),
		Capabilities: acpv2.Some(acpv2.TerminalCapabilities{Cancel: &acpv2.TerminalCancelCapabilities{}})}})
	go t.flusher()
	return t
}

// cancel serves terminal/cancel: a live terminal's command is stopped
// (its terminal_update with the exit status confirms it).
func (ts *terminals) cancel(id string) error {
	ts.mu.Lock()
	t, ok := ts.live[id]
	ts.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: terminalId: %q is not a running terminal of this session (unknown, or it has exited)", acp.ErrInvalidParams, id)
	}
	t.once.Do(func() { close(t.stop) })
	return nil
}

func (t *terminal) ID() string { return t.id }

func (t *terminal) Stop() <-chan struct{} { return t.stop }

// Output implements tools.CommandView: held for the flusher, bounded.
func (t *terminal) Output(p []byte) {
	t.mu.Lock()
	room := terminalMaxPending - len(t.pending)
	if len(p) > room {
		t.dropped += len(p) - max(room, 0)
		p = p[:max(room, 0)]
	}
	t.pending = append(t.pending, p...)
	t.mu.Unlock()
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// flusher sends what is pending, at most once per interval, until
// Exited; then what is left.
func (t *terminal) flusher() {
	defer close(t.flushed)
	timer := time.NewTimer(terminalFlushInterval)
	defer timer.Stop()
	for {
		select {
		case <-t.kick:
		case <-t.done:
			t.flush()
			return
		}
		t.flush()
		timer.Reset(terminalFlushInterval)
		select {
		case <-timer.C:
		case <-t.done:
			t.flush()
			return
		}
	}
}

func (t *terminal) flush() {
	t.mu.Lock()
	data, dropped := t.pending, t.dropped
	t.pending, t.dropped = nil, 0
	t.mu.Unlock()
	if dropped > 0 {
		data = fmt.Appendf(data, "\r\n[... %d bytes of output not shown ...]\r\n", dropped)
	}
	if len(data) == 0 {
		return
	}
	t.ts.cl.sendOrLog(t.ctx, acpv2.SessionUpdate{TerminalOutputChunk: &acpv2.TerminalOutputChunk{TerminalID: t.id,
		Data: base64.StdEncoding.EncodeToString(data)}})
}

// Exited implements tools.CommandView: the output is sent, then the exit
// status; the terminal can no longer be cancelled.
func (t *terminal) Exited(e tools.CommandExit) {
	t.ts.mu.Lock()
	delete(t.ts.live, t.id)
	t.ts.mu.Unlock()
	close(t.done)
	<-t.flushed
	st := acpv2.TerminalExitStatus{Signal: e.Signal}
	if e.ExitCode != nil {
		code := int64(*e.ExitCode)
		st.ExitCode = &code
	}
	t.ts.cl.sendOrLog(t.ctx, acpv2.SessionUpdate{TerminalUpdate: &acpv2.TerminalUpdate{TerminalID: t.id,
		ExitStatus: acpv2.Some(st), Capabilities: acpv2.Null[acpv2.TerminalCapabilities]()}})
}

// sendOrLog sends an update from outside the session's updates (a
// terminal's), logging a failure.
func (c *v2Client) sendOrLog(ctx context.Context, u acpv2.SessionUpdate) {
	if err := c.send(ctx, u); err != nil {
		c.a.log.Debug("sending update", "session", c.conn.SessionID(), "error", err)
	}
}
