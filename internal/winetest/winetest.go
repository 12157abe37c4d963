// Package winetest adapts the Windows test binaries that CI runs under
// Wine on Linux (.ci/wine-tests): test files import it, and call
// NeedsRealWindows in the tests Wine cannot show, saying why. Built with
// -tags winetest (and -ldflags=-checklinkname=0, see fallback_wine.go),
// Active is true; in every other build the package does nothing.
package winetest

import "testing"

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
