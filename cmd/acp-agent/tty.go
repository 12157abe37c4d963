package main

import (
	"io"
	"os"

	"github.com/acp-agent/acp-agent/runtime/term"
)

// isTerminal reports whether r is a terminal (someone typing), not a pipe
// from an editor or /dev/null.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f)
}
