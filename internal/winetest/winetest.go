// Package winetest adapts the Windows test binaries that CI runs under
// Wine on Linux (.ci/wine-tests): test files import it, and call
// NeedsRealWindows in the tests Wine cannot show, saying why. Built with
// -tags winetest (and -ldflags=-checklinkname=0, see fallback_wine.go),
// Active is true; in every other build the package does nothing.
package winetest

import (
	"testing"
	"time"
)

// NeedsRealWindows skips t under Wine, where what it checks cannot be
// shown; why says what Wine lacks. Elsewhere (Linux, macOS, real
// Windows) the test runs.
func NeedsRealWindows(t testing.TB, why string) {
	t.Helper()
	if Active {
		t.Skip("needs real Windows (Wine: " + why + ")")
	}
}

// Symlinks is the reason for tests that create symbolic links: Wine 8's
// CreateSymbolicLinkW reports success and creates nothing.
const Symlinks = "CreateSymbolicLink reports success without creating the link"

// CtrlEvents is the reason for tests that ask a process to stop as
// Ctrl+Break does: Wine 8's GenerateConsoleCtrlEvent sends no
// CTRL_BREAK_EVENT (nor any event to a process group of its own).
const CtrlEvents = "GenerateConsoleCtrlEvent sends no CTRL_BREAK_EVENT"

// Start starts a process with start, which makes its command afresh each
// time (an exec.Cmd starts once, and a failed Start closes its pipes).
// Under Wine, CreateProcess now and then fails with "Internal error." on
// a loaded machine: the new process died before Wine had set it up, and
// nothing ran. Start then tries again, up to five times, saying so with
// logf (t.Logf; nil in a child process with no test). Any other error,
// and every error outside Wine, is returned as it is: a process that ran
// and failed is the test's business.
func Start(logf func(format string, args ...any), start func() error) error {
	for attempt := 1; ; attempt++ {
		err := start()
		if err == nil || !startFailed(err) || attempt == 5 {
			return err
		}
		if logf != nil {
			logf("Wine could not start the process (%v): trying again", err)
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
}
