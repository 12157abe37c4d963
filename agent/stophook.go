package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/agent/llm"
)

// StopHookMarker separates an answer from what stop hooks added (seed 003).
const StopHookMarker = "[StopHook]"

// StopHookInput is what a stop hook is told about the turn that ended.
type StopHookInput struct {
	SessionID  string     `json:"sessionId"`
	CWD        string     `json:"cwd"`
	StopReason StopReason `json:"stopReason"`
	// Answer is the assistant's final message of the turn.
	Answer string `json:"answer"`
}

// StopHook runs when a turn ends normally; a non-blank message is appended
// to the answer after StopHookMarker. An error is logged and ignored: a
// hook never breaks a turn.
type StopHook func(ctx context.Context, in StopHookInput) (message string, err error)

// CommandStopHook is a stop hook that runs a shell command line (bash -c)
// in the session's directory with the input as JSON on stdin; its standard
// output is the message. It runs at most timeout (0: 30 s).
func CommandStopHook(line string, timeout time.Duration) StopHook {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return func(ctx context.Context, in StopHookInput) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		data, _ := json.Marshal(in)
		cmd := exec.CommandContext(ctx, "bash", "-c", line)
		cmd.Dir = in.CWD
		cmd.Stdin = strings.NewReader(string(data))
		cmd.WaitDelay = time.Second
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("stop hook %q: %w", line, err)
		}
		return string(out), nil
	}
}

// runStopHooks runs the hooks after a turn that ended normally and
// appends their messages (seed 003 executeAndAppend): nothing is loaded or
// run when there are none, and blank messages leave the answer unchanged.
// What the hooks add reaches everyone who sees the answer: the caller's
// PromptResult.Text, the client (one agent_message_chunk, so the chunks of
// the turn add up to exactly that text) and the stored transcript (an
// assistant entry with source "stop_hook", replayed by session/load and
// seen by the model on the next turn).
func (s *Session) runStopHooks(ctx context.Context, res *PromptResult) {
	if len(s.cfg.StopHooks) == 0 || res.StopReason != StopEndTurn {
		return
	}
	in := StopHookInput{SessionID: s.id, CWD: s.cfg.CWD, StopReason: res.StopReason, Answer: res.Text}
	var msgs []string
	for _, h := range s.cfg.StopHooks {
		msg, err := h(ctx, in)
		if err != nil {
			s.log.Warn("stop hook failed", "error", err)
			continue
		}
		if t := strings.TrimSpace(msg); t != "" {
			msgs = append(msgs, t)
			s.progress(t)
		}
	}
	if len(msgs) == 0 {
		return
	}
	full := appendStopHookMessages(res.Text, msgs)
	added := full[len(res.Text):]
	s.update(ctx, Update{Kind: UpdateMessage, Text: added})
	s.appendEntry(Entry{Kind: EntryAssistant, Content: []llm.Part{llm.TextPart(added)}, Text: added, Source: SourceStopHook, Time: time.Now()})
	res.Text = full
}

// SourceStopHook is the Source of the assistant entry holding what stop
// hooks added to an answer.
const SourceStopHook = "stop_hook"

// appendStopHookMessages is seed 003's executeAndAppend.
func appendStopHookMessages(final string, msgs []string) string {
	if len(msgs) == 0 {
		return final
	}
	sep := ""
	if final != "" {
		sep = "\n\n"
	}
	return final + sep + StopHookMarker + "\n" + strings.Join(msgs, "\n\n")
}

// progress tells the Go caller (SessionConfig.OnStopHookMessage) each
// hook message as it arrives; a panicking callback is logged and never
// stops the turn.
func (s *Session) progress(text string) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Warn("stop hook progress callback failed", "panic", r)
		}
	}()
	if s.cfg.OnStopHookMessage != nil {
		s.cfg.OnStopHookMessage(text)
	}
}
