//go:build !linux

package main

import "errors"

// sandboxSelfCheck: there is no sandbox to check here.
func sandboxSelfCheck() (masked bool, err error) {
	return false, errors.New("no sandbox on this system")
}
