//go:build unix

package runtime

import (
	"io"
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

// readEntry reads the walked file e into *buf with raw system calls
// (no os.File, poller or finalizer per file): openat relative to the
// parent directory's descriptor, one path component, never through a
// symlink (O_NOFOLLOW), never blocking on a FIFO; then fstat, which must
// show a regular file with one link (unless hard-link reads are allowed)
// within the size cap; then reads. What is opened is the entry of that
// very directory at that name.
func (w *walk) readEntry(e entry, buf *[]byte) ([]byte, bool) {
	fd, err := syscall.Openat(e.dir.fd, e.d.Name(), syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG ||
		(!w.f.hardLinkReads && st.Nlink > 1) || st.Size > w.f.maxSize {
		return nil, false
	}
	// Exactly the size fstat gave: a file searched is the file as that
	// fstat saw it (bytes appended since are not searched), and no read
	// is spent to learn that EOF has come. A file that shrank ends early.
	size := int(st.Size)
	if cap(*buf) < size {
		*buf = make([]byte, size)
	}
	b := (*buf)[:size]
	n := 0
	for n < size {
		m, err := syscall.Read(fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return b[:n], true
}

// noFollowFlag refuses a final symlink.
const noFollowFlag = syscall.O_NOFOLLOW

// readAt reads a small regular file name of the directory dirFD (an
// ignore file), never through a symlink, never blocking on a FIFO.
func readAt(dirFD int, name string) ([]byte, bool) {
	fd, err := syscall.Openat(dirFD, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIgnoreFileBytes {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFileBytes))
	return data, err == nil
}
