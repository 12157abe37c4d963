//go:build unix

package runtime

import (
	"io/fs"
	"os"
	"syscall"
)

// openReadFlags opens files for reading without blocking: a FIFO planted
// in a root would otherwise hang open(2) until a writer appears. Regular
// files and directories ignore O_NONBLOCK.
const openReadFlags = os.O_RDONLY | syscall.O_NONBLOCK

// linkCount is the number of hard links of the file fi describes, or 1
// when the platform does not say.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
