//go:build unix

package runtime

import (
	"io/fs"
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

// FileOwner returns the uid owning the file info describes (from an
// fstat of a file already open: no second lookup by name), and false
// where info carries none.
func FileOwner(info fs.FileInfo) (uid int, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
