package runtime

import (
	"errors"
	"syscall"
)

// wsaeConnRefused is Winsock's WSAECONNREFUSED, what a dial to a port
// nothing listens on fails with (syscall names only its Unix
// counterpart, an errno Windows never returns).
const wsaeConnRefused = syscall.Errno(10061)

// ConnectionRefused reports whether err is a dial that nothing listened
// for (a local model server not started), so an error can say what to
// check.
func ConnectionRefused(err error) bool {
	return errors.Is(err, wsaeConnRefused)
}
