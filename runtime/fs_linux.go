//go:build linux

package runtime

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// fdPath asks the kernel for the current name of file's descriptor via
// /proc/self/fd. That name follows renames and is never a symlink, so it
// is the authoritative answer to "what did we actually open". It reports
// false when /proc is not mounted or the file has been unlinked (the
// kernel then appends " (deleted)"), and the caller falls back to the
// portable check.
func fdPath(file *os.File) (string, bool) {
	rc, err := file.SyscallConn()
	if err != nil {
		return "", false
	}
	var p string
	var rerr error
	// Control, not Fd: Fd would switch the descriptor to blocking mode.
	err = rc.Control(func(fd uintptr) {
		p, rerr = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	})
	if err != nil || rerr != nil || !filepath.IsAbs(p) || strings.HasSuffix(p, " (deleted)") {
		return "", false
	}
	return p, true
}
