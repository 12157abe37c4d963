//go:build !unix

package mcpclient

import (
	"errors"
	"os/exec"
)

// setProcessGroup is a no-op where process groups do not exist.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup is a no-op where process groups do not exist: only the
// child itself is stopped, by the SDK.
func killProcessGroup(int) {}

// exitWasClean reports whether a stdio server's shutdown error is one Close
// need not report: the process exited (it was not left running).
func exitWasClean(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}
