package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acp-agent/acp-agent/agent"
	"github.com/acp-agent/acp-agent/internal/markdown"
	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime"
)

// MaxBackgroundCommands bounds the background commands one session runs
// at once.
const MaxBackgroundCommands = 8

// maxBackgroundWait bounds how long background_command waits for output.
const maxBackgroundWait = 60 * time.Second

// startupGrace is how long run_command waits for a background command's
// first output (or its early exit) before it answers.
const startupGrace = 500 * time.Millisecond

// background is a workspace's background commands. They run on local
// terminals (confined when the sandbox is on, even if the editor runs the
// other commands) and end with the workspace.
type background struct {
	mu    sync.Mutex
	next  int
	procs []*bgProc
	term  *runtime.LocalTerminal // for an editor workspace: made on first use
	// tempDir is term's sandbox temporary directory.
	tempDir string
}

// bgProc is one background command.
type bgProc struct {
	id      string
	line    string
	cwd     string
	started time.Time
	p       *runtime.Process
	mu      sync.Mutex
	offset  int64 // output already given to the model
}

// terminal is where background commands run: the workspace's local (and
// confined) terminal, or, where the editor runs commands, one of their
// own with the same sandbox.
func (w *Workspace) bgTerminal(outside bool) (*runtime.LocalTerminal, error) {
	if outside {
		return w.escapeTerm, nil
	}
	if w.localTerm != nil {
		return w.localTerm, nil
	}
	w.bg.mu.Lock()
	defer w.bg.mu.Unlock()
	if w.bg.term == nil {
		opts, tmp, err := w.terminalOptions()
		if err != nil {
			return nil, err
		}
		w.bg.term, w.bg.tempDir = runtime.NewLocalTerminal(opts), tmp
	}
	return w.bg.term, nil
}

// startBackground starts c and returns at once with its id (after up to
// startupGrace for a quick failure or first output to show).
func (w *Workspace) startBackground(ctx context.Context, c command) (agent.ToolResult, error) {
	w.bg.mu.Lock()
	running := 0
	for _, b := range w.bg.procs {
		if b.p.Status() == nil {
			running++
		}
	}
	w.bg.mu.Unlock()
	if running >= MaxBackgroundCommands {
		return agent.ToolResult{}, fmt.Errorf("%d background commands are running, the most a session may run; stop one with background_command first", running)
	}
	term, err := w.bgTerminal(c.outside)
	if err != nil {
		return agent.ToolResult{}, err
	}
	// The command outlives this tool call: it ends when stopped, at its
	// timeout, or when the session's workspace closes.
	spec := w.commandSpec(c.line, c.cwd)
	spec.OutputByteLimit, spec.Timeout = w.cfg.OutputByteLimit, c.timeout
	spec.SandboxNetwork = w.cfg.SandboxNetworkInFullAccess && agent.RunningMode(ctx) == policy.ModeFullAccess
	p, err := term.Start(context.WithoutCancel(ctx), spec)
	if err != nil {
		return agent.ToolResult{}, err
	}
	w.bg.mu.Lock()
	w.bg.next++
	b := &bgProc{id: fmt.Sprintf("bg%d", w.bg.next), line: c.line, cwd: c.cwd, started: time.Now(), p: p}
	w.bg.procs = append(w.bg.procs, b)
	w.bg.mu.Unlock()
	select {
	case <-p.Done():
	case <-time.After(startupGrace):
	case <-ctx.Done():
	}
	text := fmt.Sprintf("Started %s in the background as %s (pid %d). Read its output with background_command {\"action\":\"output\",\"id\":%q}; stop it with {\"action\":\"stop\",\"id\":%q}.\n",
		c.line, b.id, p.Pid(), b.id, b.id)
	return agent.ToolResult{Text: text + b.read()}, nil
}

// read returns the output since the last read and the state.
func (b *bgProc) read() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out, next, dropped, exit := b.p.OutputSince(b.offset)
	b.offset = next
	var s strings.Builder
	if dropped > 0 {
		fmt.Fprintf(&s, "[%d bytes of output were dropped before they were read]\n", dropped)
	}
	s.WriteString(out)
	if out != "" && !strings.HasSuffix(out, "\n") {
		s.WriteByte('\n')
	}
	s.WriteString(b.state(exit))
	return s.String()
}

func (b *bgProc) state(exit *runtime.ExitStatus) string {
	switch {
	case exit == nil:
		return fmt.Sprintf("[%s is running, for %s]", b.id, time.Since(b.started).Round(time.Second))
	case exit.TimedOut:
		return fmt.Sprintf("[%s was killed at its timeout]", b.id)
	case exit.ExitCode != nil:
		return fmt.Sprintf("[%s exited with code %d]", b.id, *exit.ExitCode)
	}
	return fmt.Sprintf("[%s was killed by %s]", b.id, exit.Signal)
}

func (w *Workspace) findBackground(id string) (*bgProc, error) {
	w.bg.mu.Lock()
	defer w.bg.mu.Unlock()
	i := slices.IndexFunc(w.bg.procs, func(b *bgProc) bool { return b.id == id })
	if i < 0 {
		return nil, fmt.Errorf("there is no background command %q; list them with {\"action\":\"list\"}", id)
	}
	return w.bg.procs[i], nil
}

type backgroundArgs struct {
	Action      string `json:"action" schema:"enum=list|output|stop"`
	ID          string `json:"id,omitempty" jsonschema:"the id run_command returned (output, stop)"`
	WaitSeconds int    `json:"wait_seconds,omitempty" jsonschema:"output: wait up to this long for new output or the exit" schema:"minimum=0,maximum=60"`
}

// backgroundTool follows and stops the commands run_command started in
// the background. It touches only those, so it asks no permission.
func (w *Workspace) backgroundTool() agent.Tool {
	return agent.NewTool(agent.TypedTool[backgroundArgs]{
		Name: ToolBackground,
		Description: "Follow the commands run_command started with background: true. " +
			"action \"list\": every background command and its state; \"output\": the output of id since the last read (wait_seconds waits for new output or the exit); " +
			"\"stop\": end id (SIGTERM, then SIGKILL) and return its last output.\n" +
			`Example: {"action": "output", "id": "bg1", "wait_seconds": 10}`,
		ShortDescription: "Follow or stop a background command",
		Describe: func(a backgroundArgs) (agent.ToolCallInfo, error) {
			title := map[string]string{"list": "List background commands", "output": "Output of " + markdown.Code(a.ID), "stop": "Stop " + markdown.Code(a.ID)}[a.Action]
			kind := agent.ToolKindRead
			if a.Action == "stop" {
				kind = agent.ToolKindExecute
			}
			return agent.ToolCallInfo{Kind: kind, Title: title, Action: policy.ActionRead}, nil
		},
		Run: func(ctx context.Context, a backgroundArgs) (agent.ToolResult, error) {
			if a.Action == "list" {
				return agent.ToolResult{Text: w.listBackground()}, nil
			}
			if a.ID == "" {
				return agent.ToolResult{}, fmt.Errorf("%s needs the id run_command returned", a.Action)
			}
			b, err := w.findBackground(a.ID)
			if err != nil {
				return agent.ToolResult{}, err
			}
			if a.Action == "stop" {
				if err := b.p.Kill(); err != nil {
					return agent.ToolResult{}, fmt.Errorf("stopping %s: %w", b.id, err)
				}
				select {
				case <-b.p.Done():
				case <-ctx.Done():
					return agent.ToolResult{}, context.Cause(ctx)
				}
				return agent.ToolResult{Text: b.read()}, nil
			}
			wait := min(time.Duration(a.WaitSeconds)*time.Second, maxBackgroundWait)
			b.waitForOutput(ctx, wait)
			return agent.ToolResult{Text: b.read()}, nil
		},
	})
}

// waitForOutput waits up to d for output after the last read, or the
// exit.
func (b *bgProc) waitForOutput(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		b.mu.Lock()
		out, _, dropped, _ := b.p.OutputSince(b.offset)
		b.mu.Unlock()
		if out != "" || dropped > 0 {
			return
		}
		select {
		case <-b.p.Done():
			return
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (w *Workspace) listBackground() string {
	w.bg.mu.Lock()
	procs := slices.Clone(w.bg.procs)
	w.bg.mu.Unlock()
	if len(procs) == 0 {
		return "No background commands."
	}
	var s strings.Builder
	for _, b := range procs {
		fmt.Fprintf(&s, "%s: %s (in %s) %s\n", b.id, b.line, w.display(b.cwd), b.state(b.p.Status()))
	}
	return s.String()
}
