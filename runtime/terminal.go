package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-agent/acp-agent/policy"
	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// Defaults for TerminalOptions and CommandSpec.
const (
	// DefaultOutputByteLimit is the tail kept when CommandSpec.OutputByteLimit is 0.
	DefaultOutputByteLimit = 1 << 20
	// DefaultKillGrace is the time between SIGTERM and SIGKILL.
	DefaultKillGrace = 2 * time.Second
	// DefaultWaitDelay bounds how long Wait keeps draining output after
	// the process exits while descendants still hold the pipe.
	DefaultWaitDelay = time.Second
)

// Errors returned by LocalTerminal.Start.
var (
	// ErrTerminalClosed is returned by Start after Close.
	ErrTerminalClosed = errors.New("terminal closed")
	// ErrInvalidCommand is what a malformed CommandSpec unwraps to.
	ErrInvalidCommand = errors.New("invalid command")
)

// TerminalOptions configure a LocalTerminal.
type TerminalOptions struct {
	// Env is the base environment ("NAME=value") of every process. nil
	// means a minimal environment: PATH=policy.DefaultPath, HOME (the
	// agent's, or "/"), LANG=C.UTF-8 and TERM=dumb. Either way, names that
	// look like secrets (containing API_KEY, APIKEY, TOKEN, SECRET,
	// PASSWORD, PASSWD, CREDENTIAL, PRIVATE_KEY, ACCESS_KEY, AUTH, COOKIE,
	// DSN or ending in _KEY or _PAT, case-insensitively) are removed: a
	// command the model writes must not be able to print the agent's
	// provider key. The filter is a heuristic; pass an explicit Env to be
	// sure of what is inherited.
	//
	// The PATH of this environment is also the fixed path used to resolve
	// CommandSpec.Command (see policy.NewLookPath), so the program that
	// runs is the one the policy resolved.
	Env []string
	// KillGrace is the time between SIGTERM and SIGKILL to the process
	// group; 0 means DefaultKillGrace.
	KillGrace time.Duration
	// WaitDelay bounds how long Wait waits for output after the process
	// exited while descendants still hold the pipe (exec.Cmd.WaitDelay);
	// 0 means DefaultWaitDelay.
	WaitDelay time.Duration
	// CgroupParent, if set, is a cgroup v2 directory the agent may create
	// children in (Linux only). Each process then starts in its own child
	// cgroup, and killing it also writes cgroup.kill, which reaches
	// descendants that left the process group with setsid. Start fails if
	// the child cgroup cannot be created. Empty means process groups only.
	CgroupParent string
	// Sandbox, if set, confines every process: a helper process of the
	// terminal's sandbox.Launcher applies the policy and runs the command
	// (started on the first command, kept for the next ones; Close ends
	// them).
	Sandbox *Sandbox
}

// Sandbox is how a LocalTerminal confines its processes.
type Sandbox struct {
	// Exe is the agent's own binary, which runs the helper (sandbox.Main
	// must be called from its main).
	Exe    string
	Policy sandbox.Policy
}

// CommandSpec describes one process to start.
type CommandSpec struct {
	// Command is the program; a name without a slash is looked up in the
	// fixed PATH of the terminal's environment, never in the agent's PATH
	// or the cwd. It becomes argv[0] as written.
	Command string
	Args    []string
	// Cwd is the absolute working directory; required.
	Cwd string
	// Env adds or overrides variables; every name must pass
	// policy.CheckEnv.
	Env map[string]string
	// OutputByteLimit is how many bytes of combined output are kept (the
	// tail); 0 means DefaultOutputByteLimit.
	OutputByteLimit int
	// Timeout kills the process group when it elapses; 0 means none.
	Timeout time.Duration
	// SandboxNetwork lets this command use the network inside the
	// terminal's sandbox even when its policy keeps the network off.
	SandboxNetwork bool
	// Stdin, if not nil, is the process's standard input (else
	// /dev/null).
	Stdin []byte
	// Stderr, if set, gets the process's standard error, which then stays
	// out of the output (that holds stdout only). It must not block.
	Stderr io.Writer
	// Output, if set, is called with each piece of the output (what the
	// output holds) as it is written, on the goroutine copying it, to
	// show it as it comes. It must not block and must not keep p.
	Output func(p []byte)
	// Stop, if not nil, stops the command when it is closed: the process
	// group is killed as Process.Kill does, and Run returns the output so
	// far and how the process ended (where the end of ctx makes Run fail).
	Stop <-chan struct{}
	// CmdLine, on Windows, is the whole command line the program gets,
	// instead of Args quoted and joined (cmd.exe parses its own /c line,
	// which Go's quoting would change). Ignored elsewhere.
	CmdLine string
}

// ExitStatus is how a process ended.
type ExitStatus struct {
	// ExitCode is set when the process exited normally.
	ExitCode *int
	// Signal is the name ("SIGKILL") of the signal that ended the process,
	// or "".
	Signal string
	// TimedOut reports that the terminal killed the process because its
	// time ran out: CommandSpec.Timeout elapsed or the Start context ended.
	TimedOut bool
}

// LocalTerminal runs commands as local processes, each in its own process
// group, with stdin from /dev/null and stdout and stderr merged into one
// bounded tail buffer.
//
// Killing a process signals its whole group: SIGTERM, then SIGKILL after
// KillGrace. A descendant that calls setsid (or setpgid) leaves the group
// and survives that kill; WaitDelay still bounds Wait if it holds the
// output pipe, and Pdeathsig only covers the direct child. Set
// CgroupParent to reach such descendants through cgroup.kill. A confined
// command's helper kills every descendant as soon as the command ends.
//
// LocalTerminal is safe for concurrent use. Every goroutine it starts
// ends before Close returns.
type LocalTerminal struct {
	env          []string
	sandbox      *Sandbox
	launcher     *sandbox.Launcher // with sandbox: its helpers
	lookPathPath string
	killGrace    time.Duration
	waitDelay    time.Duration
	cgroupParent string

	mu     sync.Mutex
	closed bool
	procs  map[*Process]struct{}
	wg     sync.WaitGroup
}

// NewLocalTerminal returns a terminal with opts applied.
func NewLocalTerminal(opts TerminalOptions) *LocalTerminal {
	env := opts.Env
	if env == nil {
		env = minimalEnv()
	}
	env = withGitSafety(withoutSecrets(env))
	t := &LocalTerminal{
		env:          env,
		lookPathPath: envValue(env, "PATH"),
		killGrace:    opts.KillGrace,
		waitDelay:    opts.WaitDelay,
		cgroupParent: opts.CgroupParent,
		sandbox:      opts.Sandbox,
		procs:        make(map[*Process]struct{}),
	}
	if t.sandbox != nil {
		// No helper starts here: one costs a Go program's start-up and a
		// listing of the workspace's secrets files, CPU that a turn
		// running no command should keep. Warm starts it ahead of the
		// first command.
		t.launcher = sandbox.NewLauncher(t.sandbox.Exe)
	}
	if t.lookPathPath == "" {
		t.lookPathPath = policy.DefaultPath
	}
	if t.killGrace <= 0 {
		t.killGrace = DefaultKillGrace
	}
	if t.waitDelay <= 0 {
		t.waitDelay = DefaultWaitDelay
	}
	return t
}

// Warm makes sure a sandbox helper is ready for the terminal's first
// command (sandbox.Launcher.Warm): the caller calls it once a command may
// be coming, early enough for a helper to start (a few milliseconds) and
// list the workspace's secrets files before it. It does nothing without a
// sandbox, once the terminal has an idle helper, or after Close; it is
// safe to call concurrently and more than once.
func (t *LocalTerminal) Warm() {
	if t.launcher != nil {
		t.launcher.Warm(t.sandbox.Policy)
	}
}

// Process is a started command.
type Process struct {
	t        *LocalTerminal
	name     string
	pid      int
	confined *sandbox.Proc // nil unless run by a sandbox helper
	// confinement is how confined ran it (set before Start returns).
	confinement *Confinement
	out         *tailBuffer
	cgroup      *cgroup // nil without CgroupParent
	sys         procSys // what the OS keeps per process (a Windows job)

	killOnce sync.Once
	killReq  chan struct{} // closed by the first kill request
	killErr  error         // set inside killOnce
	timedOut atomic.Bool

	done    chan struct{} // closed after status is set
	mu      sync.Mutex
	status  *ExitStatus
	waitErr error

	releaseOnce sync.Once
	releaseErr  error
}

// Start starts spec. ctx bounds the process's whole life, not just the
// start: when ctx ends the process group is killed as if Timeout had
// elapsed, so pass the session's context, not a request's.
func (t *LocalTerminal) Start(ctx context.Context, spec CommandSpec) (*Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start %q: %w", spec.Command, err)
	}
	if spec.Command == "" {
		return nil, fmt.Errorf("start: empty command: %w", ErrInvalidCommand)
	}
	if !filepath.IsAbs(spec.Cwd) {
		return nil, fmt.Errorf("start %q: cwd %q is not absolute: %w", spec.Command, spec.Cwd, ErrInvalidCommand)
	}
	if spec.OutputByteLimit < 0 || spec.Timeout < 0 {
		return nil, fmt.Errorf("start %q: negative output limit or timeout: %w", spec.Command, ErrInvalidCommand)
	}
	names := make([]string, 0, len(spec.Env))
	for n := range spec.Env {
		names = append(names, n)
	}
	slices.Sort(names)
	if err := policy.CheckEnv(names); err != nil {
		return nil, fmt.Errorf("start %q: %w", spec.Command, err)
	}
	path, err := policy.NewLookPath(t.lookPathPath, spec.Cwd)(spec.Command)
	if err != nil {
		return nil, fmt.Errorf("start %q: %w", spec.Command, err)
	}
	limit := spec.OutputByteLimit
	if limit == 0 {
		limit = DefaultOutputByteLimit
	}
	out := newTailBuffer(limit)
	out.tee = spec.Output
	cmd := &exec.Cmd{
		Path: path,
		Args: append([]string{spec.Command}, spec.Args...),
		Dir:  spec.Cwd,
		Env:  mergeEnv(t.env, spec.Env, names),
		// Stdin nil reads /dev/null. The same writer for stdout and
		// stderr makes exec use one pipe and one copying goroutine,
		// which Wait joins (bounded by WaitDelay).
		Stdout:    out,
		Stderr:    out,
		WaitDelay: t.waitDelay,
	}
	if spec.Stdin != nil {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	if spec.Stderr != nil {
		cmd.Stderr = spec.Stderr
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	// Holding mu across the fork means Close either sees this process or
	// makes Start fail; no process escapes Close.
	if t.closed {
		return nil, fmt.Errorf("start %q: %w", spec.Command, ErrTerminalClosed)
	}
	var cg *cgroup
	cgroupFD := -1
	if t.cgroupParent != "" {
		cg, err = newCgroup(t.cgroupParent)
		if err != nil {
			return nil, fmt.Errorf("start %q: %w", spec.Command, err)
		}
		cgroupFD = cg.fd
	}
	p := &Process{
		t:       t,
		name:    spec.Command,
		out:     out,
		cgroup:  cg,
		killReq: make(chan struct{}),
		done:    make(chan struct{}),
	}
	var wait func() waitResult
	if t.sandbox != nil {
		wait, err = t.startConfined(p, cmd, spec.SandboxNetwork, cgroupFD)
	} else {
		wait, err = t.startLocal(p, cmd, spec.CmdLine, cgroupFD)
	}
	if cg != nil {
		cg.closeFD()
	}
	if err != nil {
		if cg != nil {
			_ = cg.destroy()
		}
		return nil, fmt.Errorf("start %q: %w", spec.Command, err)
	}
	t.procs[p] = struct{}{}
	waitRes := make(chan waitResult, 1)
	t.wg.Add(2)
	go func() {
		defer t.wg.Done()
		waitRes <- wait()
	}()
	go p.supervise(ctx, spec.Timeout, spec.Stop, waitRes)
	return p, nil
}

// waitResult is how a process ended: its exit code or the name of the
// signal that ended it when known, and an error that is not about the
// status.
type waitResult struct {
	known  bool
	code   int
	signal string
	err    error
}

// startLocal forks cmd from the agent.
func (t *LocalTerminal) startLocal(p *Process, cmd *exec.Cmd, cmdLine string, cgroupFD int) (func() waitResult, error) {
	cmd.SysProcAttr = sysProcAttr(cgroupFD)
	setCmdLine(cmd.SysProcAttr, cmdLine)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p.pid = cmd.Process.Pid
	// Where the OS needs it (Windows), the process is put in its kill
	// group before it runs.
	if err := p.attach(cmd.Process); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	return func() waitResult {
		err := cmd.Wait()
		res := processResult(cmd.ProcessState)
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) || errors.Is(err, exec.ErrWaitDelay) {
			err = nil // the status says it all
		}
		res.err = err
		return res
	}, nil
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// supervise turns the timeout, ctx and Kill into signals and records the
// exit status. It owns the escalation timer, so no timer goroutine
// outlives the process.
func (p *Process) supervise(ctx context.Context, timeout time.Duration, stop <-chan struct{}, waitRes <-chan waitResult) {
	defer p.t.wg.Done()
	var timeoutC, graceC <-chan time.Time
	if timeout > 0 {
		tm := time.NewTimer(timeout)
		defer tm.Stop()
		timeoutC = tm.C
	}
	var grace *time.Timer
	defer func() {
		if grace != nil {
			grace.Stop()
		}
	}()
	killReq, ctxDone := p.killReq, ctx.Done()
	for {
		select {
		case res := <-waitRes:
			p.finish(res)
			return
		case <-timeoutC:
			timeoutC = nil
			p.requestKill(true)
		case <-ctxDone:
			ctxDone = nil
			p.requestKill(true)
		case <-stop:
			stop = nil
			p.requestKill(false)
		case <-killReq:
			killReq = nil
			grace = time.NewTimer(p.t.killGrace)
			graceC = grace.C
		case <-graceC:
			graceC = nil
			p.hardKill()
		}
	}
}

// requestKill sends SIGTERM to the group once and starts the grace period.
func (p *Process) requestKill(timedOut bool) {
	p.killOnce.Do(func() {
		if timedOut {
			p.timedOut.Store(true)
		}
		p.killErr = p.terminate()
		close(p.killReq)
	})
}

func (p *Process) killRequested() bool {
	select {
	case <-p.killReq:
		return true
	default:
		return false
	}
}

// hardKill sends SIGKILL to the group and, with a cgroup, kills every
// member of the cgroup (including setsid escapees).
func (p *Process) hardKill() {
	_ = p.forceKill()
	if p.cgroup != nil {
		_ = p.cgroup.kill()
	}
}

func (p *Process) finish(res waitResult) {
	st := &ExitStatus{TimedOut: p.timedOut.Load()}
	if res.known {
		if res.signal != "" {
			st.Signal = res.signal
		} else {
			code := res.code
			st.ExitCode = &code
		}
	}
	if p.killRequested() {
		// The leader is gone; take the rest of the group (and cgroup)
		// with it now rather than after the grace period.
		p.hardKill()
	}
	p.mu.Lock()
	p.status = st
	p.waitErr = res.err
	p.mu.Unlock()
	close(p.done)
}

// Pid returns the process id, which is also its process group id.
func (p *Process) Pid() int { return p.pid }

// Output returns a snapshot of the retained output, whether earlier
// output was dropped to stay within the limit, and the exit status (nil
// while the process runs). The output starts on a UTF-8 rune boundary and
// an incomplete trailing rune is held back. Safe for concurrent use.
func (p *Process) Output() (output string, truncated bool, exit *ExitStatus) {
	output, truncated = p.out.snapshot()
	return output, truncated, p.Status()
}

// Status is the exit status, or nil while the process runs. Safe for
// concurrent use.
func (p *Process) Status() *ExitStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status == nil {
		return nil
	}
	st := *p.status
	return &st
}

// OutputSince returns the output written after offset (0: from the
// start) that is still retained, the offset to pass next time, how many
// bytes after offset were dropped to stay within the limit, and the exit
// status (nil while the process runs): the way to follow a long-running
// process's output piece by piece. Safe for concurrent use.
func (p *Process) OutputSince(offset int64) (output string, next, dropped int64, exit *ExitStatus) {
	// Read after the status: output written before the exit is all there
	// once the status is set.
	exit = p.Status()
	output, next, dropped = p.out.since(offset)
	return output, next, dropped, exit
}

// Done is closed once the process has exited and its output is drained.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait returns the exit status once the process has exited and its output
// is drained, or ctx's error if ctx ends first (the process keeps
// running). Draining is bounded by WaitDelay after the exit, so
// descendants holding the pipe cannot block Wait.
func (p *Process) Wait(ctx context.Context) (ExitStatus, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return ExitStatus{}, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waitErr != nil {
		return *p.status, fmt.Errorf("wait %q: %w", p.name, p.waitErr)
	}
	return *p.status, nil
}

// Kill sends SIGTERM to the process group, and SIGKILL (plus cgroup.kill
// with a cgroup) after KillGrace if the process has not exited. It does
// not wait. Kill is idempotent and a no-op once the process has exited;
// a group that no longer exists is not an error.
func (p *Process) Kill() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	p.requestKill(false)
	return p.killErr
}

// Release kills the process if it is still running, waits for it to exit
// (bounded by KillGrace plus WaitDelay), kills whatever is left of its
// process group and cgroup, and forgets it. Output and status stay
// readable. Release is idempotent.
func (p *Process) Release() error {
	p.releaseOnce.Do(func() {
		killErr := p.Kill()
		<-p.done
		errs := []error{killErr, p.forceKill()}
		if p.cgroup != nil {
			errs = append(errs, p.cgroup.destroy())
		}
		errs = append(errs, p.detach())
		p.t.mu.Lock()
		delete(p.t.procs, p)
		p.t.mu.Unlock()
		p.releaseErr = errors.Join(errs...)
	})
	return p.releaseErr
}

// Close makes Start fail, kills every process still known (all grace
// periods run concurrently), releases them, and waits for every goroutine
// the terminal started.
func (t *LocalTerminal) Close() error {
	t.mu.Lock()
	t.closed = true
	procs := make([]*Process, 0, len(t.procs))
	for p := range t.procs {
		procs = append(procs, p)
	}
	t.mu.Unlock()
	var errs []error
	for _, p := range procs {
		errs = append(errs, p.Kill())
	}
	for _, p := range procs {
		errs = append(errs, p.Release())
	}
	if t.launcher != nil {
		errs = append(errs, t.launcher.Close())
	}
	t.wg.Wait()
	return errors.Join(errs...)
}

func minimalEnv() []string { return CommandEnv(policy.DefaultPath, nil) }

// withoutSecrets drops malformed entries and secret-looking names.
func withoutSecrets(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || isSecretName(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// mergeEnv returns base with the names in extra replaced, then extra in
// sorted name order.
func mergeEnv(base []string, extra map[string]string, sortedNames []string) []string {
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, over := extra[name]; !over {
			out = append(out, kv)
		}
	}
	for _, n := range sortedNames {
		out = append(out, n+"="+extra[n])
	}
	return out
}
