//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("sandbox launcher closed")

// errHelperDied marks a start that failed because the helper went away
// before answering; Start retries it once with a fresh helper.
var errHelperDied = errors.New("sandbox helper exited")

const (
	// maxIdle is how many idle helpers a Launcher keeps; more exit as
	// their commands end.
	maxIdle = 2
	// startTimeout bounds one start round trip, a helper's own start-up
	// included.
	startTimeout = 30 * time.Second
	// reapTimeout is how long a helper whose socket was closed may take to
	// exit before it is killed.
	reapTimeout = 5 * time.Second
)

// Launcher starts confined commands through helper processes: the
// agent's own binary re-executed in helper mode (Main), each serving one
// command at a time over a socketpair and kept for the next command.
// Paying a Go binary's start-up once per helper, not once per command,
// is what keeps a confined command within a few milliseconds of an
// unconfined one. Helpers start on demand, so concurrent commands get
// helpers of their own.
//
// A Launcher is safe for concurrent use. Close ends every helper (and the
// command it runs) and waits for every goroutine the Launcher started.
type Launcher struct {
	exe string
	seq atomic.Uint64
	// noMounts: the helpers grant around every denied path instead of
	// masking it by mount (ACP_AGENT_SANDBOX_MOUNTS=off).
	noMounts bool
	// noUserns is set once starting a helper in a user namespace failed
	// (a container's filter, a sysctl): later helpers start without.
	noUserns atomic.Bool

	mu      sync.Mutex
	closed  bool
	idle    []*helper
	helpers map[*helper]struct{}
	wg      sync.WaitGroup
}

// NewLauncher returns a Launcher whose helpers run exe, which must call
// Main first thing in its main. No process starts until the first Start.
//
// Where the agent may not mount (not root), helpers start in a user
// namespace of their own (the agent's uid and gid mapped to themselves,
// no setgroups, the capabilities to mount in that namespace only), so
// each command's denied paths can be masked by mount; where the kernel
// refuses that, they start without one and grant around them.
func NewLauncher(exe string) *Launcher {
	return &Launcher{exe: exe, helpers: make(map[*helper]struct{}), noMounts: mountsTurnedOff()}
}

// helper is one helper process and the agent's end of its socket.
type helper struct {
	l   *Launcher
	cmd *exec.Cmd
	fd  int

	wmu    sync.Mutex // serialises frames; guards closed
	closed bool

	mu   sync.Mutex
	cur  *Proc // the command it runs, nil when idle
	dead bool  // its reader ended: it takes no more commands
}

// helperSysProcAttr is how a helper starts: its own process group, so a
// terminal's ^C reaches the agent, which then ends its helpers;
// Pdeathsig SIGTERM if the agent dies, on which the helper kills its
// command and what that left behind before it exits (with SIGKILL it
// died at once, and a command's setsid daemon, reparented past it,
// outlived the agent); and, with userns, a user namespace of its
// own, with the capabilities it needs there kept across its exec. The
// helper writes its own uid and gid maps (helperArgs): the agent is not
// dumpable, so until the helper's exec its /proc files are root's and
// the agent could not write them.
func helperSysProcAttr(userns bool) *syscall.SysProcAttr {
	sys := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if userns {
		sys.Cloneflags = syscall.CLONE_NEWUSER
		sys.AmbientCaps = append(slices.Clone(helperCaps), unix.CAP_SETUID, unix.CAP_SETGID)
	}
	return sys
}

// helperArgs is a helper's argv: with userns, the uid and gid it maps
// itself to.
func helperArgs(exe string, userns bool) []string {
	if !userns {
		return []string{exe, HelperArg}
	}
	return []string{exe, HelperArg, strconv.Itoa(os.Geteuid()) + ":" + strconv.Itoa(os.Getegid())}
}

// useUserns reports whether the next helper should start in a user
// namespace: masks by mount are on, the agent may not mount itself, and
// no earlier start in one failed.
func (l *Launcher) useUserns() bool {
	return !l.noMounts && !l.noUserns.Load() && !hasCapSysAdmin()
}

// Proc is a command started by a Launcher.
type Proc struct {
	h       *helper
	id      uint64
	pid     int
	masks   bool
	started chan startResult // one result, from the helper's reader
	done    chan struct{}    // closed once status and err are set
	status  syscall.WaitStatus
	err     error
}

type startResult struct {
	pid   int
	masks bool
	err   error
}

// Start runs req confined, with files as its stdin, stdout and stderr
// (and, when req.Cgroup, a cgroup directory as the fourth). The files
// stay the caller's: close them after Start returns.
func (l *Launcher) Start(req Request, files []*os.File) (*Proc, error) {
	if err := req.validate(); err != nil {
		return nil, err
	}
	want := 3
	if req.Cgroup {
		want = 4
	}
	if len(files) != want {
		return nil, fmt.Errorf("sandbox: start needs %d descriptors, got %d", want, len(files))
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	var err error
	for range 2 {
		var p *Proc
		p, err = l.try(req, fds)
		if !errors.Is(err, errHelperDied) {
			return p, err
		}
	}
	return nil, err
}

func (l *Launcher) try(req Request, fds []int) (*Proc, error) {
	h, err := l.get()
	if err != nil {
		return nil, err
	}
	p := &Proc{h: h, id: l.seq.Add(1), started: make(chan startResult, 1), done: make(chan struct{})}
	h.mu.Lock()
	dead := h.dead
	if !dead {
		h.cur = p
	}
	h.mu.Unlock()
	if dead {
		return nil, errHelperDied
	}
	if err := h.send(message{Op: "start", ID: p.id, Req: &req, NoMounts: l.noMounts}, fds); err != nil {
		// The reader reports the helper's end, which fails p.
		h.shutdown()
	}
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case r := <-p.started:
		if r.err != nil {
			return nil, r.err
		}
		p.pid, p.masks = r.pid, r.masks
		return p, nil
	case <-timer.C:
		h.kill()
		r := <-p.started
		if r.err == nil {
			<-p.done
		}
		return nil, fmt.Errorf("sandbox helper did not answer within %v", startTimeout)
	}
}

// get returns an idle helper or starts one.
func (l *Launcher) get() (*helper, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, ErrClosed
	}
	if n := len(l.idle); n > 0 {
		h := l.idle[n-1]
		l.idle = l.idle[:n-1]
		return h, nil
	}
	var p helperProc
	if sp := takeSpare(l.exe, l.useUserns()); sp != nil {
		p = *sp
		if p.usernsFailed {
			l.noUserns.Store(true)
		}
	} else {
		var err error
		if p, err = startHelperProcess(l.exe, l.useUserns()); err != nil {
			return nil, err
		}
		if p.usernsFailed {
			l.noUserns.Store(true)
		}
	}
	h := &helper{l: l, cmd: p.cmd, fd: p.fd}
	l.helpers[h] = struct{}{}
	l.wg.Add(1)
	go h.read()
	return h, nil
}

// helperProc is a helper process just started and the agent's end of
// its socket.
type helperProc struct {
	cmd *exec.Cmd
	fd  int
	exe string
	// userns: it was asked to start in a user namespace; usernsFailed:
	// that failed, and it started without one.
	userns, usernsFailed bool
}

// startHelperProcess starts a helper running exe, in a user namespace of
// its own if userns and the kernel allows it.
func startHelperProcess(exe string, userns bool) (helperProc, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return helperProc{}, fmt.Errorf("sandbox helper socket: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "sandbox-helper")
	// Nothing of the agent's environment: the helper needs none, and each
	// command brings its own. GORACE passes so race-enabled test builds
	// can skip the race runtime's one-second sleep at exit.
	env := []string{}
	if v, ok := os.LookupEnv("GORACE"); ok {
		env = append(env, "GORACE="+v)
	}
	newCmd := func(userns bool) *exec.Cmd {
		return &exec.Cmd{
			Path:        exe,
			Args:        helperArgs(exe, userns),
			Env:         env,
			Stderr:      os.Stderr,
			ExtraFiles:  []*os.File{theirs},
			SysProcAttr: helperSysProcAttr(userns),
		}
	}
	p := helperProc{exe: exe, userns: userns, fd: fds[0]}
	p.cmd = newCmd(userns)
	err = p.cmd.Start()
	if err != nil && userns {
		// No user namespace here after all: grant around, from now on.
		p.usernsFailed = true
		p.cmd = newCmd(false)
		err = p.cmd.Start()
	}
	theirs.Close()
	if err != nil {
		unix.Close(fds[0])
		return helperProc{}, fmt.Errorf("start sandbox helper %s: %w", exe, err)
	}
	return p, nil
}

// The process's spare helper: started ahead of a command (Warm),
// so that the first command of a session finds a helper that has
// already started (a Go binary's start-up, several milliseconds) and has
// listed the workspace's secrets files; taken by the first Launcher that
// needs a helper and has none idle. Until taken it is no Launcher's and
// no goroutine reads it; it ends with the agent (Pdeathsig SIGTERM, and
// the end of its socket when the process exits), or with StopSpare. There is at
// most one, so sessions that never run a command cost one helper per
// process, not one each.
var spare struct {
	mu sync.Mutex
	p  *helperProc
	// roots and cache are the roots the spare was told last and where
	// it keeps their listing: a session opened on the same workspace
	// does not make it list them again.
	roots []string
	cache string
}

// Warm makes sure a helper is ready for the Launcher's first command:
// unless the Launcher has an idle one, the process's spare helper starts
// now if there is none, and lists the secrets files under p's writable
// roots (the workspace roots of the commands to come) while the agent
// does other work, starting from what p.SecretsCache kept. A helper that
// cannot start here is not an error: the first command starts one as it
// would have, and fails as it would have.
func (l *Launcher) Warm(p Policy) {
	roots := p.WritableRoots
	l.mu.Lock()
	skip := l.closed || len(l.idle) > 0
	l.mu.Unlock()
	if skip {
		return
	}
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.p == nil {
		h, err := startHelperProcess(l.exe, l.useUserns())
		if err != nil {
			return
		}
		spare.p, spare.roots = &h, nil
	}
	if len(roots) > 0 && (!slices.Equal(roots, spare.roots) || p.SecretsCache != spare.cache) {
		spare.roots, spare.cache = slices.Clone(roots), p.SecretsCache
		// Where the helper is gone, the write fails and the first
		// command finds it dead and starts another.
		_ = writeFrame(spare.p.fd, message{Op: "warm", Req: &Request{Policy: Policy{
			WritableRoots: roots, ExtraWritable: p.ExtraWritable, TempDir: p.TempDir, DeniedPaths: p.DeniedPaths, SecretsCache: p.SecretsCache}}}, nil)
	}
}

// takeSpare returns the spare helper if it runs exe as asked (in a user
// namespace or not), and nil otherwise.
func takeSpare(exe string, userns bool) *helperProc {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	p := spare.p
	if p == nil || p.exe != exe || p.userns != userns {
		return nil
	}
	spare.p = nil
	return p
}

// StopSpare ends the process's spare helper, if any, and waits for it.
func StopSpare() {
	spare.mu.Lock()
	p := spare.p
	spare.p = nil
	spare.mu.Unlock()
	if p == nil {
		return
	}
	_ = unix.Shutdown(p.fd, unix.SHUT_RDWR)
	timer := time.AfterFunc(reapTimeout, func() { _ = p.cmd.Process.Kill() })
	_ = p.cmd.Wait()
	timer.Stop()
	_ = unix.Close(p.fd)
}

// put takes back a helper whose command ended.
func (l *Launcher) put(h *helper) {
	l.mu.Lock()
	keep := !l.closed && len(l.idle) < maxIdle
	if keep {
		l.idle = append(l.idle, h)
	}
	l.mu.Unlock()
	if !keep {
		h.shutdown()
	}
}

// Close ends every helper, killing the commands they run, and waits for
// them and for the Launcher's goroutines.
func (l *Launcher) Close() error {
	l.mu.Lock()
	l.closed = true
	l.idle = nil
	hs := make([]*helper, 0, len(l.helpers))
	for h := range l.helpers {
		hs = append(hs, h)
	}
	l.mu.Unlock()
	for _, h := range hs {
		h.shutdown()
	}
	l.wg.Wait()
	return nil
}

func (h *helper) send(m message, fds []int) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if h.closed {
		return errHelperDied
	}
	return writeFrame(h.fd, m, fds)
}

// shutdown closes the socket both ways: the helper reads EOF, kills its
// command and exits; this side's reader reads EOF too and reaps it.
func (h *helper) shutdown() {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	if !h.closed {
		h.closed = true
		_ = unix.Shutdown(h.fd, unix.SHUT_RDWR)
	}
}

// kill ends a helper that stopped answering (its command dies with it
// through Pdeathsig).
func (h *helper) kill() {
	_ = h.cmd.Process.Kill()
	h.shutdown()
}

// read owns the helper: it turns its frames into the current command's
// start result and exit status, and when the socket ends, fails the
// command in progress, reaps the helper and forgets it.
func (h *helper) read() {
	defer h.l.wg.Done()
	var started bool
	for {
		var m message
		fds, err := readFrame(h.fd, &m)
		closeAll(fds)
		if err != nil {
			break
		}
		h.mu.Lock()
		p := h.cur
		h.mu.Unlock()
		if p == nil || m.ID != p.id {
			continue
		}
		switch {
		// The helper goes back to the pool before the caller hears of
		// the end, so a command that follows at once reuses it.
		case m.Err != "":
			h.setIdle()
			h.l.put(h)
			p.started <- startResult{err: errors.New(m.Err)}
		case m.Pid > 0 && !started:
			started = true
			p.started <- startResult{pid: m.Pid, masks: m.Masks}
		case m.Exit != nil && started:
			started = false
			h.setIdle()
			h.l.put(h)
			p.status = syscall.WaitStatus(*m.Exit)
			close(p.done)
		}
	}
	h.shutdown()
	h.mu.Lock()
	p := h.cur
	h.cur, h.dead = nil, true
	h.mu.Unlock()
	h.l.mu.Lock()
	delete(h.l.helpers, h)
	for i, x := range h.l.idle {
		if x == h {
			h.l.idle = append(h.l.idle[:i], h.l.idle[i+1:]...)
			break
		}
	}
	h.l.mu.Unlock()
	if p != nil {
		if started {
			p.err = errHelperDied
			close(p.done)
		} else {
			p.started <- startResult{err: errHelperDied}
		}
	}
	timer := time.AfterFunc(reapTimeout, func() { _ = h.cmd.Process.Kill() })
	_ = h.cmd.Wait()
	timer.Stop()
	_ = unix.Close(h.fd)
}

func (h *helper) setIdle() {
	h.mu.Lock()
	h.cur = nil
	h.mu.Unlock()
}

// Pid is the command's process id; it leads its own process group.
func (p *Proc) Pid() int { return p.pid }

// Masked reports whether the command's denied paths were masked by mount
// (and .git made read-only), rather than granted around.
func (p *Proc) Masked() bool { return p.masks }

// GrantedAround reports whether the command's denied paths and .git were
// kept from it by granting rights around them (the fallback without
// mounts): nothing new can be created directly in a directory that holds
// one.
func (p *Proc) GrantedAround() bool { return !p.masks }

// Signal sends sig to the command's process group while the command runs;
// after it ended it does nothing.
func (p *Proc) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.h.send(message{Op: "signal", ID: p.id, Sig: int(sig)}, nil); err != nil && !errors.Is(err, errHelperDied) {
		return err
	}
	return nil
}

// Wait returns the command's wait status once it exited and everything it
// started was killed. If the helper died first, the error says so.
func (p *Proc) Wait() (syscall.WaitStatus, error) {
	<-p.done
	return p.status, p.err
}

var _ io.Closer = (*Launcher)(nil)
