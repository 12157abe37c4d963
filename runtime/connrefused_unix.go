//go:build unix

package runtime

import (
	"errors"
	"syscall"
)

// ConnectionRefused reports whether err is a dial that nothing listened
// for (a local model server not started), so an error can say what to
// check.
func ConnectionRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}
