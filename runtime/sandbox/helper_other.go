//go:build !linux

package sandbox

import "runtime"

// Probe reports that commands cannot be confined on this system.
func Probe() Status {
	return Status{Reason: "Landlock is Linux-only; commands on " + runtime.GOOS + " are not confined"}
}

// Main does nothing where there is no sandbox.
func Main(args []string) {}

// CloseInheritedOnExec does nothing here.
func CloseInheritedOnExec() {}
