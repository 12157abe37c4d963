//go:build unix

package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/acp-agent/acp-agent/runtime/sandbox"
)

// procSys is nothing on Unix: a process group needs no handle.
type procSys struct{}

// attach does nothing on Unix: Setpgid already put the process in its
// own group.
func (p *Process) attach(*os.Process) error { return nil }

// detach does nothing on Unix.
func (p *Process) detach() error { return nil }

// terminate sends SIGTERM to the process group.
func (p *Process) terminate() error { return p.signalGroup(syscall.SIGTERM) }

// forceKill sends SIGKILL to the process group.
func (p *Process) forceKill() error { return p.signalGroup(syscall.SIGKILL) }

// setCmdLine does nothing: Unix programs get their arguments as a list.
func setCmdLine(*syscall.SysProcAttr, string) {}

// platformBaseEnv is nil: CommandEnv's own is the Unix one.
func platformBaseEnv() []string { return nil }

// processResult reads the wait status.
func processResult(ps *os.ProcessState) waitResult {
	if ps == nil {
		return waitResult{}
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return waitResult{}
	}
	return statusResult(ws)
}

func statusResult(ws syscall.WaitStatus) waitResult {
	if ws.Signaled() {
		return waitResult{known: true, signal: signalName(ws.Signal())}
	}
	return waitResult{known: true, code: ws.ExitStatus()}
}

// startConfined has one of the terminal's sandbox helpers run cmd: its
// output comes through a pipe this side drains, bounded by WaitDelay
// after the exit like exec.Cmd's.
func (t *LocalTerminal) startConfined(p *Process, cmd *exec.Cmd, network bool, cgroupFD int) (func() waitResult, error) {
	pol := t.sandbox.Policy
	pol.Network = pol.Network || network
	env := cmd.Env
	if pol.TempDir != "" {
		env = append(env, "TMPDIR="+pol.TempDir)
	}
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	files := []*os.File{devNull, pw, pw}
	// The copies to run after the start: stdout (and stderr, unless it
	// goes elsewhere) into the output, and the input, if any.
	copies := []func(){func() { _, _ = io.Copy(p.out, pr) }}
	var closeAfterStart, closeAtEnd []*os.File
	if cmd.Stderr != cmd.Stdout {
		er, ew, err := os.Pipe()
		if err != nil {
			pr.Close()
			pw.Close()
			return nil, err
		}
		files[2] = ew
		closeAfterStart, closeAtEnd = append(closeAfterStart, ew), append(closeAtEnd, er)
		copies = append(copies, func() { _, _ = io.Copy(cmd.Stderr, er) })
	}
	var stdinW *os.File
	if cmd.Stdin != nil {
		ir, iw, err := os.Pipe()
		if err != nil {
			pr.Close()
			pw.Close()
			closeFiles(closeAfterStart)
			closeFiles(closeAtEnd)
			return nil, err
		}
		files[0], stdinW = ir, iw
		closeAfterStart = append(closeAfterStart, ir)
	}
	if cgroupFD >= 0 {
		// A copy the File owns: cg keeps and closes its own.
		dup, err := syscall.Dup(cgroupFD)
		if err != nil {
			pr.Close()
			pw.Close()
			return nil, fmt.Errorf("cgroup: %w", err)
		}
		cg := os.NewFile(uintptr(dup), "cgroup")
		defer cg.Close()
		files = append(files, cg)
	}
	req := sandbox.Request{Policy: pol, Path: cmd.Path, Argv: cmd.Args, Env: env, Dir: cmd.Dir, Cgroup: cgroupFD >= 0}
	sp, err := t.launcher.Start(req, files)
	pw.Close()
	closeFiles(closeAfterStart)
	if err != nil {
		pr.Close()
		closeFiles(closeAtEnd)
		if stdinW != nil {
			stdinW.Close()
		}
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	p.pid, p.confined = sp.Pid(), sp
	p.confinement = &Confinement{Policy: pol, Mounts: sp.Masked(), GrantedAround: sp.GrantedAround()}
	if stdinW != nil {
		// The input goes in on its own: a command that never reads it
		// ends the write with EPIPE when it exits.
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			_, _ = io.Copy(stdinW, cmd.Stdin)
			stdinW.Close()
		}()
	}
	copied := make(chan struct{})
	var copying sync.WaitGroup
	for _, c := range copies {
		copying.Go(c)
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer close(copied)
		copying.Wait()
	}()
	return func() waitResult {
		ws, err := sp.Wait()
		timer := time.NewTimer(t.waitDelay)
		select {
		case <-copied:
		case <-timer.C:
		}
		timer.Stop()
		pr.Close()
		closeFiles(closeAtEnd)
		<-copied
		if err != nil {
			return waitResult{err: err}
		}
		return statusResult(ws)
	}, nil
}

// signalGroup signals the process group; a group that is already gone
// (ESRCH) is not an error.
//
// After the leader is reaped its pgid number can in principle be reused,
// but only once no member of the group is left; signalling then can reach
// an unrelated group that took the number. Signals after exit are
// therefore limited to finish (right after the reap, when a kill was
// requested) and Release.
func (p *Process) signalGroup(sig syscall.Signal) error {
	if p.confined != nil {
		// The helper signals the group only while the command runs, so
		// a reused pid is never reached.
		return p.confined.Signal(sig)
	}
	err := syscall.Kill(-p.pid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("signal process group %d with %v: %w", p.pid, sig, err)
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("SIG%d", int(s))
}
