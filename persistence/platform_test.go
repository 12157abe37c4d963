package persistence

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

// abs turns a slash path into an absolute path of this OS ("/x" is
// C:\x on Windows).
func abs(p string) string {
	if goruntime.GOOS == "windows" {
		return `C:` + filepath.FromSlash(p)
	}
	return p
}

// assertMode checks Unix permission bits. Windows has none (Go reports
// 0o666 or 0o777); there the files are private through the ACL of the
// user's profile directory they are created in.
func assertMode(t *testing.T, want os.FileMode, fi os.FileInfo) {
	t.Helper()
	if goruntime.GOOS != "windows" {
		assert.Equal(t, want, fi.Mode().Perm())
	}
}

// diedOfKill reports whether a process ended as Process.Kill ends it:
// SIGKILL on Unix, TerminateProcess (exit code 1) on Windows.
func diedOfKill(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	if goruntime.GOOS == "windows" {
		return ee.ExitCode() == 1
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signal() == syscall.SIGKILL
}
