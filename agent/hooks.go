package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// HookEvent is when a Hook runs.
type HookEvent string

const (
	// HookBeforeTool runs before a tool call is authorized and run; it
	// may block the call, and the model gets the reason.
	HookBeforeTool HookEvent = "before_tool"
	// HookAfterTool runs after a tool call ran; what it says is added to
	// the result the model gets.
	HookAfterTool HookEvent = "after_tool"
	// HookPromptSubmit runs when a prompt's turn starts, before the model
	// sees it; it may block the prompt (the user gets the reason) or add
	// context to it.
	HookPromptSubmit HookEvent = "prompt_submit"
	// HookSessionStart runs once, when the session's first turn starts;
	// what it says is added to the first prompt as context.
	HookSessionStart HookEvent = "session_start"
)

// HookInput is what a hook is told, as JSON on its stdin.
type HookInput struct {
	Event     HookEvent       `json:"event"`
	SessionID string          `json:"sessionId"`
	CWD       string          `json:"cwd"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    string          `json:"result,omitempty"`
	IsError   bool            `json:"isError,omitempty"`
	Prompt    string          `json:"prompt,omitempty"`
}

// HookOutcome is what a hook decided: Block (before_tool and
// prompt_submit only) with a Reason, or Context to add.
type HookOutcome struct {
	Block   bool
	Reason  string
	Context string
}

// Hook is a callback at one event. Tools, for the tool events, limits it
// to those tools (nil: every tool). An error is logged and ignored: a
// failing hook never blocks.
type Hook struct {
	Event HookEvent
	Tools []string
	Run   func(ctx context.Context, in HookInput) (HookOutcome, error)
}

// maxHookOutput bounds what a hook's output may add.
const maxHookOutput = 16 << 10

// CommandHook runs line with bash -c in the session's directory, the
// input as JSON on stdin, for at most timeout (0: 30 s). Exit status 0:
// its stdout is context; 2: blocked, with its stderr (else stdout) as the
// reason; anything else (or the timeout) is an error.
func CommandHook(event HookEvent, line string, tools []string, timeout time.Duration) Hook {
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	return Hook{Event: event, Tools: tools, Run: func(ctx context.Context, in HookInput) (HookOutcome, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		data, _ := json.Marshal(in)
		cmd := exec.CommandContext(ctx, "bash", "-c", line)
		cmd.Dir = in.CWD
		cmd.Stdin = bytes.NewReader(data)
		cmd.WaitDelay = time.Second
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return HookOutcomeOf(event, line, stdout.String(), stderr.String(), 0, nil)
		case ctx.Err() != nil:
			return HookOutcome{}, fmt.Errorf("%s hook %q: timed out after %v", event, line, timeout)
		case errors.As(err, &ee) && ee.ExitCode() >= 0:
			return HookOutcomeOf(event, line, stdout.String(), stderr.String(), ee.ExitCode(), nil)
		}
		return HookOutcomeOf(event, line, stdout.String(), stderr.String(), -1, err)
	}}
}

// DefaultHookTimeout is how long a hook may run when its spec says
// nothing.
const DefaultHookTimeout = 30 * time.Second

// HookOutcomeOf is what a command hook's end means: exit status 0, its
// stdout is context; 2, blocked, with its stderr (else stdout) as the
// reason; anything else (or err) is an error naming the line.
func HookOutcomeOf(event HookEvent, line, stdout, stderr string, exit int, err error) (HookOutcome, error) {
	out := llm.Truncate(strings.TrimSpace(stdout), maxHookOutput)
	switch {
	case err == nil && exit == 0:
		return HookOutcome{Context: out}, nil
	case err == nil && exit == 2:
		reason := llm.Truncate(strings.TrimSpace(stderr), maxHookOutput)
		if reason == "" {
			reason = out
		}
		if reason == "" {
			reason = "no reason given"
		}
		return HookOutcome{Block: true, Reason: reason}, nil
	case err == nil:
		err = fmt.Errorf("exit status %d", exit)
	}
	return HookOutcome{}, fmt.Errorf("%s hook %q: %w: %s", event, line, err, llm.Truncate(strings.TrimSpace(stderr), 512))
}

// runHooks runs the hooks of event (for tool, if a tool event) in order;
// the first block wins, contexts are joined.
func (s *Session) runHooks(ctx context.Context, in HookInput) HookOutcome {
	var out HookOutcome
	var contexts []string
	for _, h := range s.cfg.Hooks {
		if h.Event != in.Event || (in.Tool != "" && h.Tools != nil && !slices.Contains(h.Tools, in.Tool)) {
			continue
		}
		in.SessionID, in.CWD = s.id, s.cfg.CWD
		o, err := h.Run(ctx, in)
		if err != nil {
			s.log.Warn("hook failed", "event", in.Event, "error", err)
			continue
		}
		if o.Context != "" {
			contexts = append(contexts, o.Context)
		}
		if o.Block {
			out.Block, out.Reason = true, o.Reason
			break
		}
	}
	out.Context = strings.Join(contexts, "\n\n")
	return out
}

// promptHooks runs the session-start hooks (on the first turn) and the
// prompt hooks for it: context they give is added to its message; a block
// ends the turn before the model sees it, with the reason.
func (s *Session) promptHooks(ctx context.Context, it *item) (blocked string) {
	if len(s.cfg.Hooks) == 0 {
		return ""
	}
	var extra []string
	s.mu.Lock()
	first := !s.hooksStarted
	s.hooksStarted = true
	s.mu.Unlock()
	if first {
		if o := s.runHooks(ctx, HookInput{Event: HookSessionStart}); o.Context != "" {
			extra = append(extra, o.Context)
		}
	}
	o := s.runHooks(ctx, HookInput{Event: HookPromptSubmit, Prompt: it.text})
	if o.Block {
		return o.Reason
	}
	if o.Context != "" {
		extra = append(extra, o.Context)
	}
	if len(extra) > 0 {
		it.content = append(slices.Clone(it.content), llm.TextPart("[Context from hooks]\n"+strings.Join(extra, "\n\n")))
	}
	return ""
}

// HooksSpec is the hooks section of a config file (or of a project's
// .acp-agent/hooks.json): command lines by event.
type HooksSpec struct {
	BeforeTool   []HookSpec `json:"beforeTool"`
	AfterTool    []HookSpec `json:"afterTool"`
	PromptSubmit []HookSpec `json:"promptSubmit"`
	SessionStart []HookSpec `json:"sessionStart"`
}

// HookSpec is one command hook.
type HookSpec struct {
	Command string   `json:"command"`
	Tools   []string `json:"tools"`
	Timeout string   `json:"timeout"`
	// OutsideSandbox (project hooks only; the user's own hooks always run
	// unconfined) asks to run the hook outside the sandbox: the user is
	// asked every time it runs, with Justification.
	OutsideSandbox bool   `json:"outsideSandbox"`
	Justification  string `json:"justification"`
}

// ResolvedHookSpec is a checked HookSpec with its event.
type ResolvedHookSpec struct {
	Event   HookEvent
	Spec    HookSpec
	Timeout time.Duration // 0: DefaultHookTimeout
}

// Hooks turns the spec into command hooks; a hook without a command or
// with a bad timeout is an error. A nil spec has none.
func (h *HooksSpec) Hooks() ([]Hook, error) {
	specs, err := h.Resolve()
	if err != nil {
		return nil, err
	}
	var out []Hook
	for _, r := range specs {
		out = append(out, CommandHook(r.Event, r.Spec.Command, r.Spec.Tools, r.Timeout))
	}
	return out, nil
}

// Resolve checks the spec: every hook has a command and a good timeout.
// A nil spec has none.
func (h *HooksSpec) Resolve() ([]ResolvedHookSpec, error) {
	if h == nil {
		return nil, nil
	}
	var out []ResolvedHookSpec
	for _, g := range []struct {
		event HookEvent
		name  string
		list  []HookSpec
	}{
		{HookBeforeTool, "beforeTool", h.BeforeTool}, {HookAfterTool, "afterTool", h.AfterTool},
		{HookPromptSubmit, "promptSubmit", h.PromptSubmit}, {HookSessionStart, "sessionStart", h.SessionStart},
	} {
		for i, fh := range g.list {
			if strings.TrimSpace(fh.Command) == "" {
				return nil, fmt.Errorf("hooks.%s[%d]: command is required", g.name, i)
			}
			var timeout time.Duration
			if fh.Timeout != "" {
				d, err := time.ParseDuration(fh.Timeout)
				if err != nil || d <= 0 {
					return nil, fmt.Errorf("hooks.%s[%d]: timeout %q is not a positive duration", g.name, i, fh.Timeout)
				}
				timeout = d
			}
			if fh.OutsideSandbox && strings.TrimSpace(fh.Justification) == "" {
				return nil, fmt.Errorf("hooks.%s[%d]: outsideSandbox needs a justification (shown to the user)", g.name, i)
			}
			out = append(out, ResolvedHookSpec{Event: g.event, Spec: fh, Timeout: timeout})
		}
	}
	return out, nil
}
