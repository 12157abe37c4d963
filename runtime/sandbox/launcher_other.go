//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"runtime"
	"syscall"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("sandbox launcher closed")

// Launcher cannot confine anything on this system; Start always fails.
type Launcher struct{}

// NewLauncher returns a Launcher whose Start fails.
func NewLauncher(exe string) *Launcher { return &Launcher{} }

// Start fails: there is no sandbox here.
func (l *Launcher) Start(req Request, files []*os.File) (*Proc, error) {
	return nil, errors.New("sandbox: commands cannot be confined on " + runtime.GOOS)
}

// Close does nothing.
func (l *Launcher) Close() error { return nil }

// Proc is never returned here.
type Proc struct{}

// Pid is 0.
func (p *Proc) Pid() int { return 0 }

// Signal does nothing.
func (p *Proc) Signal(sig syscall.Signal) error { return nil }

// Wait returns at once.
func (p *Proc) Wait() (syscall.WaitStatus, error) { return 0, errors.New("no sandbox") }
