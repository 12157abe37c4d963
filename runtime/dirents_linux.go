//go:build linux

package runtime

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// direntBufs recycles getdents buffers across the directories of a walk.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readStartDir lists a walk's start directory.
func readStartDir(f *os.File) ([]fs.DirEntry, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	entries, err := readDirFD(int(f.Fd()), fileDev(fi))
	if err != nil {
		return nil, &fs.PathError{Op: "getdents", Path: f.Name(), Err: err}
	}
	return entries, nil
}

// openListedDir opens the subdirectory e: one openat relative to its
// parent's descriptor, never through a symlink (O_NOFOLLOW), only a
// directory (O_DIRECTORY: a FIFO swapped in cannot block), accepted only
// if it is the very inode the parent's listing showed; then lists it.
func openListedDir(e entry) (*dirHandle, []fs.DirEntry, bool) {
	fd, err := unix.Openat(e.dir.fd, e.d.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || !sameInodeAsListed(uint64(st.Ino), uint64(st.Dev), e.d) {
		unix.Close(fd)
		return nil, nil, false
	}
	entries, err := readDirFD(fd, uint64(st.Dev))
	if err != nil {
		unix.Close(fd)
		return nil, nil, false
	}
	h := &dirHandle{fd: fd, close: func() { unix.Close(fd) }}
	h.refs.Store(1)
	return h, entries, true
}

// readDirFD lists the open directory fd with getdents64, taking each
// entry's type and inode number from the listing itself. ReadDir on a
// directory opened in an os.Root lstats every entry: one system call per
// file that a search would only repeat with its own fstat. An entry whose
// type the filesystem does not report (DT_UNKNOWN) is lstatted relative
// to fd. dev is the directory's device, which its entries share unless
// they are mount points.
func readDirFD(fd int, dev uint64) ([]fs.DirEntry, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var out []fs.DirEntry
	// The entries are allocated together, a slab at a time.
	var slab []rawDirent
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		// One slab for this batch's entries, at most one per record.
		if recs := countDirents(buf[:n]); cap(slab)-len(slab) < recs {
			slab = make([]rawDirent, 0, recs)
		}
		for b := buf[:n]; len(b) >= 19; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			if reclen < 19 || reclen > len(b) {
				return nil, unix.EIO
			}
			rec := b[:reclen]
			b = b[reclen:]
			name := rec[19:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if len(name) == 0 || string(name) == "." || string(name) == ".." {
				continue
			}
			slab = append(slab, rawDirent{name: string(name), ino: binary.NativeEndian.Uint64(rec[0:8]), dev: dev, parentFD: fd})
			d := &slab[len(slab)-1]
			typ, known := direntMode(rec[18])
			if !known {
				var st unix.Stat_t
				if err := unix.Fstatat(fd, d.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
					slab = slab[:len(slab)-1]
					continue // gone since the listing
				}
				typ = statMode(st.Mode)
				d.ino, d.dev = uint64(st.Ino), uint64(st.Dev)
			}
			d.typ = typ
			out = append(out, d)
		}
	}
}

// countDirents counts the records of a getdents64 batch.
func countDirents(b []byte) int {
	n := 0
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		b = b[reclen:]
		n++
	}
	return n
}

// direntMode is the fs type of a dirent's d_type.
func direntMode(t byte) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// statMode is the fs type of a stat mode.
func statMode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// rawDirent is an entry of a getdents listing. It carries no FileInfo:
// a walk needs only the type, and the inode to confirm what it opens.
type rawDirent struct {
	name     string
	typ      fs.FileMode
	ino, dev uint64
	parentFD int // valid while the listed directory is open
}

func (d *rawDirent) Name() string               { return d.name }
func (d *rawDirent) IsDir() bool                { return d.typ.IsDir() }
func (d *rawDirent) Type() fs.FileMode          { return d.typ }
func (d *rawDirent) Info() (fs.FileInfo, error) { return nil, errNoDirentInfo }

var errNoDirentInfo = errors.New("dirent info not loaded")

// sameInodeAsListed reports whether ino on dev, from fstat of what was
// opened at d's name, is the inode the listing showed. A mount point's
// listed inode is that of the directory it covers, so one on another
// device is asked again of the parent directory (still open while its
// entries are visited), as an lstat would answer.
func sameInodeAsListed(ino, dev uint64, d fs.DirEntry) bool {
	rd, ok := d.(*rawDirent)
	if !ok {
		return false
	}
	if dev == rd.dev {
		return ino == rd.ino
	}
	// Another device: a mount point (a rename cannot move a directory
	// across filesystems), whose listed inode is the covered directory's.
	var pst unix.Stat_t
	return unix.Fstatat(rd.parentFD, rd.name, &pst, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		uint64(pst.Ino) == ino && uint64(pst.Dev) == dev
}

// fileDev is the device of the file fi describes.
func fileDev(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev)
	}
	return 0
}
