package sandbox

import (
	"errors"
	"os"
	"syscall"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("sandbox launcher closed")

// errNoSandbox is what every Start returns on Windows.
var errNoSandbox = errors.New("sandbox: commands cannot be confined on Windows")

// Probe reports that commands cannot be confined: Windows has no sandbox
// here yet (AppContainer and restricted tokens are not wired up).
func Probe() Status {
	return Status{Reason: "no sandbox on Windows yet; commands run unconfined"}
}

// Main does nothing: there is no helper mode on Windows.
func Main(args []string) {}

// CloseInheritedOnExec does nothing: Go starts Windows processes with
// only the handles it is given.
func CloseInheritedOnExec() {}

// Launcher cannot confine anything on Windows; Start always fails.
type Launcher struct{}

// NewLauncher returns a Launcher whose Start fails.
func NewLauncher(exe string) *Launcher { return &Launcher{} }

// Start fails: there is no sandbox here.
func (l *Launcher) Start(req Request, files []*os.File) (*Proc, error) { return nil, errNoSandbox }

// Close does nothing.
func (l *Launcher) Close() error { return nil }

// Warm does nothing: there is no helper to start ahead here.
func (l *Launcher) Warm(p Policy) {}

// StopSpare does nothing: there is no spare helper here.
func StopSpare() {}

// Proc is never returned on Windows.
type Proc struct{}

// Pid is 0.
func (p *Proc) Pid() int { return 0 }

// Masked is false.
func (p *Proc) Masked() bool { return false }

// GrantedAround is false.
func (p *Proc) GrantedAround() bool { return false }

// Signal does nothing.
func (p *Proc) Signal(sig syscall.Signal) error { return nil }

// Wait returns at once.
func (p *Proc) Wait() (syscall.WaitStatus, error) { return syscall.WaitStatus{}, errNoSandbox }
