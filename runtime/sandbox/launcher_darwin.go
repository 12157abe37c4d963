package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// sandboxExec is macOS's Seatbelt front end: it applies a profile to
// itself and execs the command, so the command and everything it starts
// are confined.
const sandboxExec = "/usr/bin/sandbox-exec"

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("sandbox launcher closed")

// Probe reports whether commands can be confined: sandbox-exec must be
// there (deprecated by Apple but present through current macOS).
func Probe() Status {
	if fi, err := os.Stat(sandboxExec); err != nil || !fi.Mode().IsRegular() {
		return Status{Reason: sandboxExec + " is missing, so commands cannot be confined with Seatbelt"}
	}
	return Status{Available: true, Mechanism: "Seatbelt, sandbox-exec"}
}

// Main does nothing: sandbox-exec is the helper on macOS.
func Main(args []string) {}

// CloseInheritedOnExec marks every descriptor above stderr close-on-exec,
// so nothing the agent inherited without the flag passes on to commands.
func CloseInheritedOnExec() {
	entries, _ := os.ReadDir("/dev/fd")
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// Launcher starts commands under sandbox-exec with the profile generated
// from each request's policy (SeatbeltProfile). There is no helper to
// keep: every command is one sandbox-exec process that becomes the
// command. Safe for concurrent use.
type Launcher struct {
	mu     sync.Mutex
	closed bool
	procs  map[*Proc]struct{}
}

// NewLauncher returns a Launcher; exe is not needed on macOS.
func NewLauncher(exe string) *Launcher { return &Launcher{procs: make(map[*Proc]struct{})} }

// Warm does nothing: there is no helper to start ahead here.
func (l *Launcher) Warm(p Policy) {}

// StopSpare does nothing: there is no spare helper here.
func StopSpare() {}

// Proc is a command started by a Launcher.
type Proc struct {
	l   *Launcher
	cmd *exec.Cmd

	mu     sync.Mutex
	reaped bool
}

// Start runs req confined, with files as its stdin, stdout and stderr.
// The files stay the caller's: close them after Start returns.
func (l *Launcher) Start(req Request, files []*os.File) (*Proc, error) {
	if err := req.validate(); err != nil {
		return nil, err
	}
	if len(files) != 3 || req.Cgroup {
		return nil, fmt.Errorf("sandbox: start needs 3 descriptors and no cgroup on macOS, got %d", len(files))
	}
	if _, err := os.Stat(sandboxExec); err != nil {
		return nil, errNoSeatbelt
	}
	profile, err := SeatbeltProfile(SeatbeltPolicy(req.Policy, filepath.EvalSymlinks))
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:   sandboxExec,
		Args:   append([]string{"sandbox-exec", "-p", profile, req.Path}, req.Argv[1:]...),
		Env:    req.Env,
		Dir:    req.Dir,
		Stdin:  files[0],
		Stdout: files[1],
		Stderr: files[2],
		// A session of its own, as on Linux: no controlling terminal
		// to write escape sequences to (acp-agent exec in a terminal).
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	p := &Proc{l: l, cmd: cmd}
	l.procs[p] = struct{}{}
	return p, nil
}

// Close kills every command still running. Their Wait calls return.
func (l *Launcher) Close() error {
	l.mu.Lock()
	l.closed = true
	procs := make([]*Proc, 0, len(l.procs))
	for p := range l.procs {
		procs = append(procs, p)
	}
	l.mu.Unlock()
	for _, p := range procs {
		_ = p.Signal(syscall.SIGKILL)
	}
	return nil
}

// Masked is false: Seatbelt denies paths itself, without mounts.
func (p *Proc) Masked() bool { return false }

// GrantedAround is false: Seatbelt denies paths themselves.
func (p *Proc) GrantedAround() bool { return false }

// Pid is the command's process id (sandbox-exec execs it), also its
// process group id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Signal signals the command's process group while the command has not
// been reaped, so a reused pid is never reached.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return nil
	}
	if err := syscall.Kill(-p.Pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Wait waits for the command, then kills whatever it left in its process
// group, as the Linux helper does.
func (p *Proc) Wait() (syscall.WaitStatus, error) {
	err := p.cmd.Wait()
	p.mu.Lock()
	_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
	p.reaped = true
	p.mu.Unlock()
	p.l.mu.Lock()
	delete(p.l.procs, p)
	p.l.mu.Unlock()
	var ws syscall.WaitStatus
	if ps := p.cmd.ProcessState; ps != nil {
		if st, ok := ps.Sys().(syscall.WaitStatus); ok {
			return st, nil
		}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		err = nil
	}
	if err == nil {
		err = errors.New("sandbox: no wait status")
	}
	return ws, err
}
