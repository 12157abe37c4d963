//go:build unix

package runtime

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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

// entryName is name: a Unix directory entry has no second name that
// opens it (a case or Unicode variant on a case-insensitive volume is
// caught by the policy's own comparison).
func entryName(_ *os.Root, name string) (string, error) { return name, nil }

// LongPathName is p: Unix file systems give no file a second, short
// name (Windows' 8.3 names; see the Windows file).
func LongPathName(p string) (string, error) { return p, nil }

// syncDirFile fsyncs a directory: a rename or removal in it is durable
// only then.
func syncDirFile(d *os.File) error { return d.Sync() }

// handleLinkCount is linkCount: on Unix the FileInfo of an open file
// has it.
func handleLinkCount(_ *os.File, fi fs.FileInfo) uint64 { return linkCount(fi) }

// linkCountAt is linkCount: on Unix Lstat's FileInfo has it.
func linkCountAt(_ *os.Root, _ string, fi fs.FileInfo) uint64 { return linkCount(fi) }

// birthTime is 0: Unix stamps carry the status change time (see
// CreatedAt).
func birthTime(fs.FileInfo) int64 { return 0 }

// fileID is the inode number.
func fileID(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// readEntry reads the walked file e into *buf with raw system calls
// (no os.File, poller or finalizer per file): openat relative to the
// parent directory's descriptor, one path component, never through a
// symlink (O_NOFOLLOW), never blocking on a FIFO; then fstat, which must
// show a regular file with one link (unless hard-link reads are allowed)
// within the size cap; then reads. What is opened is the entry of that
// very directory at that name.
func (w *walk) readEntry(e entry, buf *[]byte) ([]byte, bool) {
	// x/sys/unix rather than syscall: darwin's syscall package has no
	// Openat.
	fd, err := unix.Openat(e.dir.fd, e.d.Name(), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG ||
		(!w.f.hardLinkReads && st.Nlink > 1) || st.Size > w.f.maxSize {
		return nil, false
	}
	// Exactly the size fstat gave: a file searched is the file as that
	// fstat saw it (bytes appended since are not searched), and no read
	// is spent to learn that EOF has come. A file that shrank ends early.
	// A file larger than sniffReadLen is read in two: its start, which
	// must not be binary (a NUL in its first binarySniffLen bytes, as
	// readInto checks), then the rest; a binary file (a tree's archives,
	// images, object files) is neither read whole nor grows the buffer.
	size := int(st.Size)
	first := min(size, sniffReadLen)
	b := growBuf(buf, first)
	n, ok := readFull(fd, b)
	if !ok || n < first || size == first || bytes.IndexByte(b[:min(n, binarySniffLen)], 0) >= 0 {
		return b[:n], ok
	}
	b = growBufKeep(buf, size, n)
	m, ok := readFull(fd, b[n:])
	return b[:n+m], ok
}

// sniffReadLen is how much of a larger file readEntry reads before it
// checks that the file is not binary: one read for most source files.
const sniffReadLen = 64 << 10

// readFull reads into b until it is full or the file ends, and reports
// how much it read; false on a read error.
func readFull(fd int, b []byte) (int, bool) {
	n := 0
	for n < len(b) {
		m, err := unix.Read(fd, b[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, true
}

// openNoFollow opens path for reading, refusing a final symlink
// (O_NOFOLLOW) and never blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, openReadFlags|syscall.O_NOFOLLOW, 0)
}

// readAt reads a small regular file name of the directory dir (an
// ignore file), never through a symlink, never blocking on a FIFO.
func readAt(dir *dirHandle, name string) ([]byte, bool) {
	fd, err := unix.Openat(dir.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
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
