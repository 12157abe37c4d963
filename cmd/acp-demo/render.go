package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/internal/unidiff"
)

// printer shows the agent's updates as a person would like to read them,
// answers its permission requests (approving, after showing what they
// change) and notes whether the test run passed. It is the connections'
// jsonrpc2 handler; its mutex orders its output.
type printer struct {
	mu    sync.Mutex
	out   io.Writer
	color bool
	root  string // the workspace: paths are shown relative to it

	kind      string // the kind of chunk being printed: "thought", "message" or ""
	calls     map[string]acp.ToolKind
	shown     map[string]bool // calls whose diff the permission request showed
	sandboxed bool            // the agent confines its commands here
	replaying bool
	// testPassed: a command ran and passed (the demo's test run).
	testPassed bool
	// capturing collects the agent's text instead of printing it (slash
	// commands, whose answer the demo compares).
	capturing bool
	buf       strings.Builder
}

func newPrinter(out io.Writer, color bool, root string) *printer {
	return &printer{out: out, color: color, root: root, calls: map[string]acp.ToolKind{}, shown: map[string]bool{}}
}

func (p *printer) paint(code, s string) string {
	if !p.color {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

func (p *printer) dim(s string) string   { return p.paint("2", s) }
func (p *printer) bold(s string) string  { return p.paint("1", s) }
func (p *printer) green(s string) string { return p.paint("32", s) }
func (p *printer) red(s string) string   { return p.paint("31", s) }
func (p *printer) cyan(s string) string  { return p.paint("36", s) }

func (p *printer) line(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLineLocked()
	fmt.Fprintf(p.out, format+"\n", args...)
}

func (p *printer) section(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLineLocked()
	fmt.Fprintf(p.out, "\n%s\n", p.bold("== "+name+" =="))
}

func (p *printer) endLine() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLineLocked()
}

func (p *printer) endLineLocked() {
	if p.kind != "" {
		fmt.Fprintln(p.out)
		p.kind = ""
	}
}

func (p *printer) capture() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.capturing = true
	p.buf.Reset()
}

func (p *printer) captured() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.capturing = false
	return p.buf.String()
}

// chunk prints streamed text of a kind, starting a line with its label
// when the kind changes.
func (p *printer) chunk(kind, label, text string) {
	if p.kind != kind {
		p.endLineLocked()
		p.kind = kind
		fmt.Fprint(p.out, label)
	}
	if kind == "thought" {
		text = p.dim(text)
	}
	fmt.Fprint(p.out, strings.ReplaceAll(text, "\n", "\n  "))
}

// rel shows path relative to the workspace.
func (p *printer) rel(path string) string {
	if r, err := filepath.Rel(p.root, path); err == nil && filepath.IsLocal(r) {
		return r
	}
	return path
}

// Handle serves the agent's requests and notifications.
func (p *printer) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	switch req.Method {
	case acp.MethodSessionUpdate:
		var n acp.SessionNotification
		if req.Params != nil && json.Unmarshal(*req.Params, &n) == nil {
			p.update(n.Update)
		}
	case acp.MethodSessionRequestPermission:
		var r acp.RequestPermissionRequest
		if req.Params == nil || json.Unmarshal(*req.Params, &r) != nil {
			_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: acp.CodeInvalidParams, Message: "bad permission request"})
			return
		}
		_ = conn.Reply(ctx, req.ID, p.permission(r))
	default:
		if !req.Notif {
			_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: acp.CodeMethodNotFound, Message: "acp-demo does not implement " + req.Method})
		}
	}
}

// permission shows what a tool call asks to do, with the diff of a
// change, and approves it once, as a user clicking "Allow" would.
func (p *printer) permission(r acp.RequestPermissionRequest) map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLineLocked()
	fmt.Fprintf(p.out, "%s %s\n", p.cyan("? permission:"), r.ToolCall.Title)
	if p.diffs(r.ToolCall.Content) {
		p.shown[string(r.ToolCall.ToolCallID)] = true
	}
	if r.ToolCall.Kind == acp.ToolKindExecute && p.sandboxed {
		fmt.Fprintf(p.out, "  %s\n", p.dim("it runs confined by the sandbox: it writes only in the project and its temporary directory, without network"))
	}
	choice := ""
	for _, o := range r.Options {
		if o.Kind == acp.PermissionOptionKindAllowOnce {
			choice = string(o.OptionID)
		}
	}
	fmt.Fprintf(p.out, "  %s\n", p.green("→ allowed once (the demo clicks Allow)"))
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": choice}}
}

// diffs prints the diff contents among content, coloured, and reports
// whether there were any.
func (p *printer) diffs(content []acp.ToolCallContent) bool {
	any := false
	for _, c := range content {
		d := c.Diff
		if d == nil {
			continue
		}
		any = true
		old := ""
		if d.OldText != nil {
			old = *d.OldText
		}
		for _, l := range strings.SplitAfter(unidiff.Unified(p.rel(d.Path), old, d.NewText, d.OldText == nil), "\n") {
			if l == "" {
				continue
			}
			l = strings.TrimSuffix(l, "\n")
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
				l = p.bold(l)
			case strings.HasPrefix(l, "+"):
				l = p.green(l)
			case strings.HasPrefix(l, "-"):
				l = p.red(l)
			case strings.HasPrefix(l, "@@"):
				l = p.cyan(l)
			}
			fmt.Fprintf(p.out, "    %s\n", l)
		}
	}
	return any
}

func (p *printer) update(u acp.SessionUpdate) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.capturing {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			p.buf.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
		return
	}
	switch {
	case u.UserMessageChunk != nil:
		if t := u.UserMessageChunk.Content.Text; t != nil {
			p.chunk("user", p.bold("you: "), t.Text)
		}
	case u.AgentThoughtChunk != nil:
		if t := u.AgentThoughtChunk.Content.Text; t != nil {
			p.chunk("thought", p.dim("thinking: "), t.Text)
		}
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil {
			p.chunk("message", p.bold("agent: "), t.Text)
		}
	case u.ToolCall != nil:
		p.endLineLocked()
		tc := u.ToolCall
		p.calls[string(tc.ToolCallID)] = tc.Kind
		fmt.Fprintf(p.out, "%s %s %s\n", p.cyan("▶"), tc.Title, p.dim("("+string(tc.Kind)+")"))
		if tc.Status == acp.ToolCallStatusCompleted || tc.Status == acp.ToolCallStatusFailed {
			p.result(string(tc.ToolCallID), tc.Status, tc.Content)
		}
	case u.ToolCallUpdate != nil:
		tu := u.ToolCallUpdate
		if tu.Status == acp.ToolCallStatusCompleted || tu.Status == acp.ToolCallStatusFailed {
			p.endLineLocked()
			p.result(string(tu.ToolCallID), tu.Status, tu.Content)
		}
	case u.Plan != nil:
		p.endLineLocked()
		fmt.Fprintln(p.out, p.bold("plan:"))
		for _, e := range u.Plan.Entries {
			mark := map[acp.PlanEntryStatus]string{acp.PlanEntryStatusCompleted: p.green("[x]"), acp.PlanEntryStatusInProgress: p.cyan("[~]")}[e.Status]
			if mark == "" {
				mark = "[ ]"
			}
			fmt.Fprintf(p.out, "  %s %s\n", mark, e.Content)
		}
	case u.UsageUpdate != nil:
		p.endLineLocked()
		uu := u.UsageUpdate
		s := fmt.Sprintf("context: %d of %d tokens", uu.Used, uu.Size)
		if uu.Cost != nil {
			s += fmt.Sprintf(" · %.4f %s", uu.Cost.Amount, uu.Cost.Currency)
		}
		fmt.Fprintln(p.out, p.dim(s))
	case u.Notice != nil:
		p.endLineLocked()
		fmt.Fprintf(p.out, "%s %s: %s\n", p.cyan("notice ("+string(u.Notice.Severity)+")"), u.Notice.Title, u.Notice.Description)
	case u.AvailableCommandsUpdate != nil:
		if p.replaying {
			return
		}
		p.endLineLocked()
		var names []string
		for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
			names = append(names, "/"+c.Name)
		}
		fmt.Fprintln(p.out, p.dim("slash commands: "+strings.Join(names, " ")))
	case u.SessionInfoUpdate != nil:
		if t, ok := u.SessionInfoUpdate.Title.Get(); ok {
			p.endLineLocked()
			fmt.Fprintln(p.out, p.dim("title: "+t))
		}
	}
}

// result prints a finished tool call: its output (cut to a few lines) or
// its diff.
func (p *printer) result(id string, status acp.ToolCallStatus, content []acp.ToolCallContent) {
	mark := p.green("  ✓")
	if status == acp.ToolCallStatusFailed {
		mark = p.red("  ✗")
	}
	var lines []string
	for _, c := range content {
		if c.Content != nil && c.Content.Content.Text != nil {
			// A terminal shows a code block's text, not its fences.
			text, _ := markdown.CodeBlockText(c.Content.Content.Text.Text)
			lines = append(lines, strings.Split(strings.TrimRight(text, "\n"), "\n")...)
		}
	}
	if p.calls[id] == acp.ToolKindExecute && status == acp.ToolCallStatusCompleted && !p.replaying {
		p.testPassed = true
	}
	switch {
	case p.calls[id] == acp.ToolKindRead && len(lines) > 0:
		// A file read: its size, not its text.
		fmt.Fprintf(p.out, "%s %s\n", mark, p.dim(fmt.Sprintf("read %d lines", len(lines))))
		return
	case p.calls[id] == acp.ToolKindThink && status == acp.ToolCallStatusCompleted:
		return // the plan itself is shown
	case p.shown[id] && status == acp.ToolCallStatusCompleted && !p.replaying:
		// The replay asks nothing: its diff is shown below instead.
		fmt.Fprintf(p.out, "%s %s\n", mark, p.dim("applied, as shown above"))
		return
	}
	const max = 8
	if len(lines) > max {
		lines = append(lines[:max], fmt.Sprintf("… %d more lines", len(lines)-max))
	}
	fmt.Fprintln(p.out, mark)
	for _, l := range lines {
		fmt.Fprintf(p.out, "    %s\n", p.dim(l))
	}
	p.diffs(content)
}
