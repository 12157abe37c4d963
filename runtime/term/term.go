// Package term answers whether a file is a terminal and reads a secret
// from one without echoing it. Safe for concurrent use on different
// files.
package term

import (
	"io"
	"os"
	"strings"
)

// IsTerminal reports whether f is a terminal (someone typing), not a
// pipe, a file or /dev/null.
func IsTerminal(f *os.File) bool { return isTerminal(f) }

// ReadSecret reads one line from in without echoing it when in is a
// terminal, and trims the line ending.
func ReadSecret(in *os.File) (string, error) {
	restore, err := noEcho(in)
	if err == nil {
		defer restore()
	}
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				break
			}
			b.WriteByte(buf[0])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return strings.TrimRight(b.String(), "\r"), nil
}
