package acpagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/acp-agent/acp-agent/acp"
	"github.com/acp-agent/acp-agent/runtime"
)

// Caller sends a request to the ACP client and waits for its answer
// (*acp.ClientConn is one). A cancelled ctx abandons the call.
//
// ClientFS and ClientTerminal are the editor's runtimes: the built-in
// tools use them through tools.Editor when the client advertised fs/*
// and terminal/*.
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// ClientFS reads and writes text files through the editor
// (fs/read_text_file, fs/write_text_file), so the agent sees unsaved
// buffers and the editor tracks its edits. Build it only for methods the
// client advertised.
//
// An editor opens whatever path it is given, following symlinks and hard
// links. So before every call the path goes through the same checks the
// local runtime applies (runtime.LocalFS.CheckRead, CheckWrite: os.Root
// resolution, the real path against the roots and denied names, one hard
// link, a regular file), and the editor is given the real path that was
// checked. What stays open is a race: a component swapped for a symlink
// between the check and the editor's open (docs/security.md).
type ClientFS struct {
	c         Caller
	sessionID string
	check     *runtime.LocalFS
}

// NewClientFS returns a ClientFS for one session whose paths are checked
// by local (the session's confined filesystem) before the editor sees
// them. A nil local checks nothing: only for tests of the wire calls.
func NewClientFS(c Caller, sessionID string, local *runtime.LocalFS) *ClientFS {
	return &ClientFS{c: c, sessionID: sessionID, check: local}
}

// ReadTextFile reads path; line (1-based) and limit (lines) apply when
// positive, as in runtime.LocalFS.
func (f *ClientFS) ReadTextFile(ctx context.Context, path string, line, limit int) (string, error) {
	if f.check != nil {
		real, err := f.check.CheckRead(ctx, path)
		if err != nil {
			return "", err
		}
		path = real
	}
	req := &acp.ReadTextFileRequest{SessionID: acp.SessionId(f.sessionID), Path: path}
	if line > 0 {
		l := uint32(line)
		req.Line = &l
	}
	if limit > 0 {
		l := uint32(limit)
		req.Limit = &l
	}
	var resp acp.ReadTextFileResponse
	if err := f.c.Call(ctx, acp.MethodFSReadTextFile, req, &resp); err != nil {
		return "", fmt.Errorf("reading %s through the editor: %w", path, err)
	}
	return resp.Content, nil
}

// WriteTextFile writes content to path.
func (f *ClientFS) WriteTextFile(ctx context.Context, path, content string) error {
	if f.check != nil {
		real, err := f.check.CheckWrite(ctx, path, len(content))
		if err != nil {
			return err
		}
		path = real
	}
	req := &acp.WriteTextFileRequest{SessionID: acp.SessionId(f.sessionID), Path: path, Content: content}
	if err := f.c.Call(ctx, acp.MethodFSWriteTextFile, req, nil); err != nil {
		return fmt.Errorf("writing %s through the editor: %w", path, err)
	}
	return nil
}

// ClientTerminal runs commands in the editor's terminals (terminal/*), so
// the user watches them live. Build it only when the client advertised
// the terminal capability.
type ClientTerminal struct {
	c         Caller
	sessionID string
	// cleanupTimeout bounds the kill and release sent after the run.
	cleanupTimeout time.Duration
}

// NewClientTerminal returns a ClientTerminal for one session.
func NewClientTerminal(c Caller, sessionID string) *ClientTerminal {
	return &ClientTerminal{c: c, sessionID: sessionID, cleanupTimeout: 5 * time.Second}
}

// Run creates a terminal for spec, calls started with its id (so the tool
// call can embed it), waits for the exit at most spec.Timeout (then kills
// it), reads its output, and always releases it. ctx ends the run like the
// timeout does, but its error is returned.
func (t *ClientTerminal) Run(ctx context.Context, spec runtime.CommandSpec, started func(terminalID string)) (runtime.CommandResult, error) {
	sid := acp.SessionId(t.sessionID)
	req := &acp.CreateTerminalRequest{SessionID: sid, Command: spec.Command, Args: spec.Args, CWD: spec.Cwd}
	for k, v := range spec.Env {
		req.Env = append(req.Env, acp.EnvVariable{Name: k, Value: v})
	}
	// The editor's git must refuse planted bare repositories too
	// (gitenv.go); any GIT_CONFIG_* of the editor's own is replaced.
	for _, kv := range runtime.GitSafetyEnv(0) {
		name, value, _ := strings.Cut(kv, "=")
		req.Env = append(req.Env, acp.EnvVariable{Name: name, Value: value})
	}
	// The editor adds its own environment, where the agent's came from:
	// the provider's key and the other variables named like secrets,
	// which local commands never get, are sent empty so that the
	// editor's values are not what the command sees.
	for _, name := range secretNames() {
		if _, set := spec.Env[name]; !set {
			req.Env = append(req.Env, acp.EnvVariable{Name: name, Value: ""})
		}
	}
	if spec.OutputByteLimit > 0 {
		n := uint64(spec.OutputByteLimit)
		req.OutputByteLimit = &n
	}
	var created acp.CreateTerminalResponse
	if err := t.c.Call(ctx, acp.MethodTerminalCreate, req, &created); err != nil {
		return runtime.CommandResult{}, fmt.Errorf("starting the command in the editor's terminal: %w", err)
	}
	id := created.TerminalID
	res := runtime.CommandResult{TerminalID: string(id)}
	// Release always, even when ctx is done: the editor frees the
	// terminal only when told.
	cleanup := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), t.cleanupTimeout)
	}
	defer func() {
		cctx, cancel := cleanup()
		defer cancel()
		_ = t.c.Call(cctx, acp.MethodTerminalRelease, &acp.ReleaseTerminalRequest{SessionID: sid, TerminalID: id}, nil)
	}()
	if started != nil {
		started(string(id))
	}

	// A timeout is wait_for_exit abandoned plus terminal/kill.
	waitCtx, cancel := ctx, context.CancelFunc(func() {})
	if spec.Timeout > 0 {
		waitCtx, cancel = context.WithTimeout(ctx, spec.Timeout)
	}
	var exit acp.WaitForTerminalExitResponse
	werr := t.c.Call(waitCtx, acp.MethodTerminalWaitForExit, &acp.WaitForTerminalExitRequest{SessionID: sid, TerminalID: id}, &exit)
	timedOut := werr != nil && errors.Is(waitCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	if werr != nil {
		cctx, cancel := cleanup()
		_ = t.c.Call(cctx, acp.MethodTerminalKill, &acp.KillTerminalRequest{SessionID: sid, TerminalID: id}, nil)
		cancel()
		if !timedOut {
			if ctx.Err() != nil {
				return res, context.Cause(ctx)
			}
			return res, fmt.Errorf("waiting for the command: %w", werr)
		}
		res.TimedOut = true
	}
	// The output after the exit (or the kill) is the final one.
	octx, ocancel := cleanup()
	defer ocancel()
	var out acp.TerminalOutputResponse
	if err := t.c.Call(octx, acp.MethodTerminalOutput, &acp.TerminalOutputRequest{SessionID: sid, TerminalID: id}, &out); err != nil {
		return res, fmt.Errorf("reading the command's output: %w", err)
	}
	res.Output, res.Truncated = out.Output, out.Truncated
	status := out.ExitStatus
	if werr == nil {
		status = &acp.TerminalExitStatus{ExitCode: exit.ExitCode, Signal: exit.Signal}
	}
	if status != nil {
		if status.ExitCode != nil {
			c := int(*status.ExitCode)
			res.ExitCode = &c
		}
		res.Signal = status.Signal
	}
	return res, nil
}

// secretNames are the names of the agent's environment variables that
// look like they hold credentials (runtime.IsSecretName), sorted. Names
// that match only for an AUTHOR or an AUTH_SOCK (GIT_AUTHOR_NAME,
// XAUTHORITY, SSH_AUTH_SOCK), for TOKENIZERS (Hugging Face's
// TOKENIZERS_PARALLELISM, which an empty value turns off), for pass's
// PASSWORD_STORE (PASSWORD_STORE_DIR) or openSUSE's XAUTHLOCALHOSTNAME
// hold none, and the editor's commands keep them (git commits with the
// author, ssh reaches the user's agent, as in the editor's own
// terminal).
func secretNames() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		u := strings.ToUpper(name)
		for _, notSecret := range []string{"AUTHOR", "AUTH_SOCK", "TOKENIZERS", "PASSWORD_STORE", "XAUTHLOCALHOSTNAME"} {
			u = strings.ReplaceAll(u, notSecret, "")
		}
		if runtime.IsSecretName(u) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
