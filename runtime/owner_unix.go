//go:build unix

package runtime

import (
	"os"
	"syscall"
)

// OwnedByUser reports whether path (not followed if a symlink) belongs to
// the user the agent runs as: git's safe.directory rule, for a
// repository found above the workspace (another local user can make
// /tmp/.git).
func OwnedByUser(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
