package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/agent/tools"
	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/internal/unidiff"
)

// exitError carries the exit status of "acp-agent exec".
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// Exit statuses of exec, by stop reason.
const (
	exitOK        = 0
	exitError1    = 1
	exitUsage     = 2
	exitTruncated = 3 // max_tokens, max_turn_requests
	exitRefusal   = 4
	exitCancelled = 130
)

// Permission levels of exec: there is nobody to ask, so the flag decides.
const (
	allowNone  = "none"  // reject every tool call that asks
	allowEdits = "edits" // allow file edits, reject commands and the rest
	allowAll   = "all"   // allow everything that asks
)

// runExec is "acp-agent exec": one turn in the current directory, without
// an editor. It runs the same ACP service as the editor mode, in process,
// and is its client: the session sees a client without fs/terminal
// capabilities (so tools use the local runtimes) that answers permission
// requests from --allow.
func runExec(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args []string) error {
	// The built-in tools' schemas are inferred on another core while the
	// flags, the config and the agent are set up, rather than in
	// session/new.
	var prep sync.WaitGroup
	prep.Go(tools.PrepareSchemas)
	defer prep.Wait()
	// One turn, then the process ends: the heap may grow further between
	// collections (GOGC 800: a minimum goal of 32 MB, not 4), so that a
	// search over a large tree (15 MB of read buffers and listings) runs
	// no collection of what the process will soon drop: GOGC 400 still
	// ran one, at its end, 2-5 ms of the turn. The GOGC environment
	// variable still rules.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(execGCPercent)
	}
	var (
		jsonOut bool
		allow   string
		cwd     string
	)
	// What acp-agent login stored fills in what the environment leaves
	// unset, as in the editor mode.
	st, err := parseSettings("acp-agent exec", args, stdout, stderr, withCredentials(os.Getenv), func(fs *flag.FlagSet) {
		fs.BoolVar(&jsonOut, "json", false, "print every session/update and the prompt result as raw JSON lines")
		fs.StringVar(&allow, "allow", allowNone, "what tool calls that need permission may do: none, edits (file changes), or all (edits and commands)")
		fs.StringVar(&cwd, "cwd", "", "working directory of the session (default: the current directory)")
	})
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{exitUsage, err}
	}
	if st.version {
		return printVersion(stdout)
	}
	if st.configErr != nil {
		// Here the user reads stderr: say it and stop.
		return &exitError{exitUsage, st.configErr}
	}
	switch allow {
	case allowNone, allowEdits, allowAll:
	default:
		return &exitError{exitUsage, fmt.Errorf("--allow: %q is not one of none, edits, all", allow)}
	}
	text := strings.Join(st.fs.Args(), " ")
	if text == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return &exitError{exitError1, fmt.Errorf("reading the prompt from stdin: %w", err)}
		}
		if strings.TrimSpace(string(data)) == "" {
			return &exitError{exitUsage, errors.New(`no prompt: "-" reads it from stdin, which was empty`)}
		}
		text = string(data)
	}
	if strings.TrimSpace(text) == "" {
		return &exitError{exitUsage, errors.New(`no prompt: acp-agent exec [flags] "PROMPT" (or "-" to read it from stdin)`)}
	}
	if cwd == "" {
		cwd = "."
	}
	// ACP wants an absolute cwd; on the command line a relative one is
	// relative to where exec runs.
	if cwd, err = filepath.Abs(cwd); err != nil {
		return &exitError{exitError1, err}
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return &exitError{exitUsage, fmt.Errorf("--cwd: %s is not a directory", cwd)}
	}
	st.discover = false // one turn on one model: no picker to fill
	st.oneShot = true   // its session is prompted at once
	a, log, cleanup, err := st.newAgent(stderr)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	defer cleanup()
	defer a.Close()

	svc := acp.NewAgentService(a, acp.Options{MaxMessageBytes: st.maxLine, Logger: log})
	agentIn, toAgent := io.Pipe()
	fromAgent, agentOut := io.Pipe()
	serveCtx, stopServe := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServe()
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := svc.Serve(serveCtx, agentIn, agentOut); err != nil {
			log.Debug("exec: service ended", "error", err)
		}
		agentOut.Close()
	})
	// What the model and the workspace wrote is read in a terminal; --json
	// keeps stdout exact (JSON escapes the controls).
	var out io.Writer = terminalText{stdout}
	if jsonOut {
		out = stdout
	}
	c := &execClient{w: toAgent, r: bufio.NewReaderSize(fromAgent, 1<<20), log: log,
		out: out, errOut: terminalText{stderr}, json: jsonOut, allow: allow, cwd: cwd, rejected: map[string]bool{}}
	lines := make(chan []byte, 256)
	wg.Go(func() { c.readLines(lines) })
	code, runErr := c.run(ctx, lines, cwd, text)
	toAgent.Close() // EOF: the service finishes, and its output ends
	for range lines {
		// Drain what the agent still writes, so the reader reaches EOF.
	}
	wg.Wait()
	fromAgent.Close()
	if ce := (*callError)(nil); errors.As(runErr, &ce) && ce.method == acp.MethodSessionNew && ce.code == acp.CodeAuthRequired {
		// No usable model (no key, an unknown provider, a bad replay
		// script): the setup is to fix, as with a bad config file.
		return &exitError{exitUsage, runErr}
	}
	if runErr != nil {
		return &exitError{exitError1, runErr}
	}
	if code != exitOK {
		return &exitError{code: code, err: errSilent}
	}
	return nil
}

// execGCPercent is exec's GOGC (runExec).
const execGCPercent = 800

// errSilent is the error of an exit status that was already explained on
// stderr.
var errSilent = errors.New("")

// execClient is the minimal ACP client of exec.
type execClient struct {
	w      io.Writer
	r      *bufio.Reader
	log    *slog.Logger
	out    io.Writer // the answer
	errOut io.Writer // thoughts, the summary
	json   bool
	allow  string
	cwd    string // diffs name files relative to it
	nextID int
	// rejected are the tool calls --allow rejected, whose failure is
	// shown as that.
	rejected map[string]bool

	midLine  bool // the answer's last output did not end a line
	thinking bool // thoughts were printed last, without a final newline
}

// wireMsg is any JSON-RPC message.
type wireMsg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func (c *execClient) send(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.w.Write(append(data, '\n'))
	return err
}

func (c *execClient) request(method string, params any) (string, error) {
	c.nextID++
	id := fmt.Sprint(c.nextID)
	return id, c.send(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
}

// next reads the next message; lines are delivered by a reader goroutine
// so a cancelled ctx can interrupt the wait.
func (c *execClient) next(lines <-chan []byte) (wireMsg, error) {
	line, ok := <-lines
	if !ok {
		return wireMsg{}, errors.New("the agent stopped unexpectedly")
	}
	var m wireMsg
	if err := json.Unmarshal(line, &m); err != nil {
		return wireMsg{}, fmt.Errorf("agent wrote a bad line: %w", err)
	}
	return m, nil
}

// call sends a request and waits for its response (updates before it are
// handled).
func (c *execClient) call(lines <-chan []byte, method string, params, result any) error {
	id, err := c.request(method, params)
	if err != nil {
		return err
	}
	for {
		m, err := c.next(lines)
		if err != nil {
			return err
		}
		if m.Method != "" {
			c.handle(m)
			continue
		}
		if string(m.ID) != id {
			continue
		}
		if m.Error != nil {
			return &callError{method: method, message: m.Error.Message, code: m.Error.Code}
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	}
}

// callError is the agent's error answer to one of exec's requests.
type callError struct {
	method, message string
	code            int64
}

func (e *callError) Error() string {
	return fmt.Sprintf("%s: %s (code %d)", e.method, e.message, e.code)
}

// readLines delivers the agent's lines until its output ends (after
// runExec closes the agent's stdin). It is run and waited for by runExec.
func (c *execClient) readLines(lines chan<- []byte) {
	defer close(lines)
	for {
		line, err := c.r.ReadBytes('\n')
		if len(line) > 0 {
			lines <- line
		}
		if err != nil {
			return
		}
	}
}

func (c *execClient) run(ctx context.Context, lines <-chan []byte, cwd, text string) (int, error) {
	// Notices are printed on stderr, apart from the answer.
	caps := acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Notices: &acp.NoticeCapabilities{}}}
	if err := c.call(lines, acp.MethodInitialize, &acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionV1, ClientCapabilities: caps}, nil); err != nil {
		return 0, err
	}
	var ns acp.NewSessionResponse
	if err := c.call(lines, acp.MethodSessionNew, &acp.NewSessionRequest{CWD: cwd, MCPServers: []acp.McpServer{}}, &ns); err != nil {
		return 0, err
	}
	id, err := c.request(acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: ns.SessionID, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		return 0, err
	}
	cancelled := false
	for {
		var m wireMsg
		select {
		case <-ctx.Done():
			if !cancelled {
				cancelled = true
				fmt.Fprintln(c.errOut, "\nacp-agent: cancelling...")
				_ = c.send(map[string]any{"jsonrpc": "2.0", "method": acp.MethodSessionCancel, "params": &acp.CancelNotification{SessionID: ns.SessionID}})
			}
			m, err = c.next(lines)
		case line, ok := <-lines:
			if !ok {
				return 0, errors.New("the agent stopped unexpectedly")
			}
			if err = json.Unmarshal(line, &m); err != nil {
				err = fmt.Errorf("agent wrote a bad line: %w", err)
			}
		}
		if err != nil {
			return 0, err
		}
		if m.Method != "" {
			c.handle(m)
			continue
		}
		if string(m.ID) != id {
			continue
		}
		if m.Error != nil {
			c.endLine()
			fmt.Fprintf(c.errOut, "acp-agent: %s (code %d)\n", m.Error.Message, m.Error.Code)
			return exitError1, nil
		}
		var pr acp.PromptResponse
		if err := json.Unmarshal(m.Result, &pr); err != nil {
			return 0, err
		}
		if c.json {
			fmt.Fprintf(c.out, "%s\n", m.Result)
		} else {
			c.endLine()
			c.summary(pr)
		}
		return exitCode(pr.StopReason), nil
	}
}

func exitCode(r acp.StopReason) int {
	switch r {
	case acp.StopReasonEndTurn:
		return exitOK
	case acp.StopReasonMaxTokens, acp.StopReasonMaxTurnRequests:
		return exitTruncated
	case acp.StopReasonRefusal:
		return exitRefusal
	case acp.StopReasonCancelled:
		return exitCancelled
	}
	return exitError1
}

// handle serves a request or notification from the agent.
func (c *execClient) handle(m wireMsg) {
	switch m.Method {
	case acp.MethodSessionUpdate:
		if c.json {
			fmt.Fprintf(c.out, "%s\n", m.Params)
			return
		}
		var n acp.SessionNotification
		if err := json.Unmarshal(m.Params, &n); err != nil {
			c.log.Warn("exec: bad session/update", "error", err)
			return
		}
		c.render(n.Update)
	case acp.MethodSessionRequestPermission:
		var req acp.RequestPermissionRequest
		_ = json.Unmarshal(m.Params, &req)
		choice, allowed := c.decide(&req)
		if !c.json {
			c.endLine()
			verdict := "allowed"
			if !allowed {
				verdict = "rejected"
			}
			fmt.Fprintf(c.errOut, "[permission] %s: %s by --allow %s\n", req.ToolCall.Title, verdict, c.allow)
			// What an editor would show before the approval: the change.
			c.printDiffs(c.errOut, req.ToolCall.Content)
		}
		result := map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": choice}}
		if !allowed {
			c.rejected[string(req.ToolCall.ToolCallID)] = true
			// Nobody was asked: the model is told the flag decided.
			result["_meta"] = map[string]any{"acp-agent": map[string]any{"reason": c.rejectReason(req.ToolCall.Kind)}}
		}
		_ = c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	default:
		if m.ID != nil {
			_ = c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
				"code": acp.CodeMethodNotFound, "message": "acp-agent exec does not offer " + m.Method}})
		}
	}
}

// decide picks the permission option --allow allows: the offered allow_once
// or reject_once option.
func (c *execClient) decide(req *acp.RequestPermissionRequest) (option string, allowed bool) {
	allow := c.allow == allowAll
	if c.allow == allowEdits {
		switch req.ToolCall.Kind {
		case acp.ToolKindEdit, acp.ToolKindDelete, acp.ToolKindMove:
			allow = true
		}
	}
	want := acp.PermissionOptionKindRejectOnce
	if allow {
		want = acp.PermissionOptionKindAllowOnce
	}
	for _, o := range req.Options {
		if o.Kind == want {
			return string(o.OptionID), allow
		}
	}
	return string(want), allow
}

// rejectReason says why --allow rejected a call of kind, for the model
// and the transcript.
func (c *execClient) rejectReason(kind acp.ToolKind) string {
	if c.allow == allowEdits {
		return "acp-agent exec runs with --allow edits, which allows file edits only; the user can rerun with --allow all"
	}
	return "acp-agent exec runs with --allow none, so nothing that needs permission runs; the user can rerun with --allow edits or --allow all"
}

// render prints one update readably: the answer on stdout, thoughts and
// tool activity around it.
func (c *execClient) render(u acp.SessionUpdate) {
	if c.thinking && u.AgentThoughtChunk == nil {
		fmt.Fprintln(c.errOut)
		c.thinking = false
	}
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil {
			fmt.Fprint(c.out, t.Text)
			c.midLine = !strings.HasSuffix(t.Text, "\n")
		}
	case u.AgentThoughtChunk != nil:
		if t := u.AgentThoughtChunk.Content.Text; t != nil {
			fmt.Fprint(c.errOut, t.Text)
			c.thinking = !strings.HasSuffix(t.Text, "\n")
		}
	case u.ToolCall != nil:
		c.endLine()
		kind := ""
		if u.ToolCall.Kind != "" {
			kind = " (" + string(u.ToolCall.Kind) + ")"
		}
		fmt.Fprintf(c.out, "▶ %s%s\n", u.ToolCall.Title, kind)
		if u.ToolCall.Status == acp.ToolCallStatusFailed || u.ToolCall.Status == acp.ToolCallStatusCompleted {
			c.toolResult(string(u.ToolCall.ToolCallID), string(u.ToolCall.Status), u.ToolCall.Content)
		}
	case u.ToolCallUpdate != nil:
		switch st := u.ToolCallUpdate.Status; st {
		case acp.ToolCallStatusCompleted, acp.ToolCallStatusFailed:
			c.toolResult(string(u.ToolCallUpdate.ToolCallID), string(st), u.ToolCallUpdate.Content)
		}
	case u.Notice != nil:
		c.endLine()
		fmt.Fprintf(c.errOut, "[%s] %s", u.Notice.Severity, u.Notice.Title)
		if u.Notice.Description != "" {
			fmt.Fprintf(c.errOut, ": %s", u.Notice.Description)
		}
		fmt.Fprintln(c.errOut)
	case u.Plan != nil:
		c.endLine()
		fmt.Fprintln(c.out, "Plan:")
		for _, e := range u.Plan.Entries {
			mark := map[acp.PlanEntryStatus]string{acp.PlanEntryStatusCompleted: "[x]", acp.PlanEntryStatusInProgress: "[~]"}[e.Status]
			if mark == "" {
				mark = "[ ]"
			}
			fmt.Fprintf(c.out, "  %s %s\n", mark, e.Content)
		}
	}
}

// toolResult prints a finished tool call's content: text cut to a few
// lines, diffs whole (unified, as diff -u prints them).
func (c *execClient) toolResult(id, status string, content []acp.ToolCallContent) {
	mark := "✓"
	if status == string(acp.ToolCallStatusFailed) {
		mark = "✗"
	}
	if status == string(acp.ToolCallStatusFailed) && c.rejected[id] {
		fmt.Fprintf(c.out, "  ✗ not run: rejected by --allow %s\n", c.allow)
		return
	}
	var lines []string
	for _, tc := range content {
		switch {
		case tc.Content != nil && tc.Content.Content.Text != nil:
			// A terminal shows a code block's text, not its fences.
			text, _ := markdown.CodeBlockText(tc.Content.Content.Text.Text)
			lines = append(lines, strings.Split(strings.TrimRight(text, "\n"), "\n")...)
		case tc.Terminal != nil:
			lines = append(lines, "terminal "+tc.Terminal.TerminalID)
		}
	}
	const maxLines = 12
	if len(lines) > maxLines {
		lines = append(lines[:maxLines], fmt.Sprintf("… (%d more lines)", len(lines)-maxLines))
	}
	fmt.Fprintf(c.out, "  %s %s\n", mark, status)
	for _, l := range lines {
		fmt.Fprintf(c.out, "    %s\n", l)
	}
	c.printDiffs(c.out, content)
}

// printDiffs prints the diff contents of a tool call as unified diffs.
func (c *execClient) printDiffs(w io.Writer, content []acp.ToolCallContent) {
	for _, tc := range content {
		d := tc.Diff
		if d == nil {
			continue
		}
		name := d.Path
		if rel, err := filepath.Rel(c.cwd, d.Path); err == nil && filepath.IsLocal(rel) {
			name = rel
		}
		old := ""
		if d.OldText != nil {
			old = *d.OldText
		}
		text := unidiff.Unified(name, old, d.NewText, d.OldText == nil)
		if text == "" {
			text = fmt.Sprintf("%s: unchanged\n", name)
		}
		for _, l := range strings.SplitAfter(text, "\n") {
			if l != "" {
				fmt.Fprintf(w, "    %s", l)
			}
		}
	}
}

func (c *execClient) endLine() {
	if c.midLine {
		fmt.Fprintln(c.out)
		c.midLine = false
	}
}

func (c *execClient) summary(pr acp.PromptResponse) {
	s := "stop: " + string(pr.StopReason)
	if u := pr.Usage; u != nil {
		s += fmt.Sprintf(" · tokens: %d in, %d out", u.InputTokens, u.OutputTokens)
	}
	fmt.Fprintln(c.errOut, s)
}
