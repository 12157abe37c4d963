package runtime

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

const openReadFlags = os.O_RDONLY

// linkCount is 1: Windows' FileInfo does not carry a link count, so the
// checks that refuse hard links ask the handle (handleLinkCount,
// linkCountAt).
func linkCount(fs.FileInfo) uint64 { return 1 }

// handleLinkCount is the number of hard links of the open file
// (GetFileInformationByHandle), or 1 if Windows does not say.
func handleLinkCount(f *os.File, _ fs.FileInfo) uint64 {
	var info windows.ByHandleFileInformation
	if windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info) != nil {
		return 1
	}
	return uint64(info.NumberOfLinks)
}

// linkCountAt is the link count of the regular file name in dir, read
// from a handle opened through the Root.
func linkCountAt(dir *os.Root, name string, _ fs.FileInfo) uint64 {
	f, err := dir.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return 1
	}
	defer f.Close()
	return handleLinkCount(f, nil)
}

// entryName is the name the existing entry name of dir really has:
// Windows opens a file by its 8.3 short name too (NTFS's ENV~1, Wine's
// and Samba's _ENV~3EE for .env), and a rename onto that name replaces
// the long-named file, so a write or removal checks and uses the long
// name. It asks the open handle (GetFinalPathNameByHandle, normalized),
// which names exactly the file opened. A name without a '~' is no short
// name and is taken as it is (no open, and no failure where a file
// system cannot say a handle's name).
// GetFinalPathNameByHandle's flags (winbase.h): the normalized name, with
// a drive letter.
const (
	fileNameNormalized = 0x0
	volumeNameDOS      = 0x0
)

func entryName(dir *os.Root, name string) (string, error) {
	if !strings.Contains(name, "~") {
		return name, nil
	}
	f, err := dir.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(windows.Handle(f.Fd()), &buf[0], uint32(len(buf)), fileNameNormalized|volumeNameDOS)
	if err != nil {
		return "", err
	}
	if int(n) >= len(buf) {
		return "", windows.ERROR_INSUFFICIENT_BUFFER
	}
	full := windows.UTF16ToString(buf[:n])
	i := strings.LastIndexAny(full, `\/`)
	if i < 0 || i == len(full)-1 {
		return "", errors.New("no file name in " + full)
	}
	return full[i+1:], nil
}

// LongPathName is the existing path p with every 8.3 short name in it
// (C:\Users\RUNNER~1) replaced by the long one (GetLongPathName); symbolic
// links are not followed. A path that does not exist is an error.
func LongPathName(p string) (string, error) {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return "", err
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetLongPathName(u, &buf[0], uint32(len(buf)))
	if err != nil {
		return "", &os.PathError{Op: "GetLongPathName", Path: p, Err: err}
	}
	if int(n) >= len(buf) {
		return "", &os.PathError{Op: "GetLongPathName", Path: p, Err: windows.ERROR_INSUFFICIENT_BUFFER}
	}
	return windows.UTF16ToString(buf[:n]), nil
}

// fileID is 0: Windows' FileInfo has no file index.
func fileID(fs.FileInfo) uint64 { return 0 }

// birthTime is the file's creation time: Windows keeps no status change
// time (see CreatedAt).
func birthTime(fi fs.FileInfo) int64 {
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		return d.CreationTime.Nanoseconds()
	}
	return 0
}

// readEntry reads the walked file e through its parent Root, if it is
// the file the listing showed and a readable one.
func (w *walk) readEntry(e entry, buf *[]byte) ([]byte, bool) {
	f, err := e.dir.root.OpenFile(e.d.Name(), openReadFlags, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !sameAsListed(fi, e) || w.f.checkReadable(fi, w.abs(e.rel)) != nil {
		return nil, false
	}
	data, err := w.f.readStat(f, fi, w.abs(e.rel))
	if err != nil {
		return nil, false
	}
	*buf = data
	return data, true
}

// openNoFollow opens path for reading as os.Open would, except that a
// final symlink, junction or other reparse point is opened as itself
// (FILE_FLAG_OPEN_REPARSE_POINT) and refused: Windows' O_NOFOLLOW. The
// handle shares delete access, as Go's own do.
func openNoFollow(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("a symbolic link or other reparse point (not followed)")}
	}
	return os.NewFile(uintptr(h), path), nil
}

// syncDirFile does nothing: Windows cannot flush a directory handle
// (FlushFileBuffers needs write access, which a directory handle does
// not have), and NTFS journals directory changes itself.
func syncDirFile(*os.File) error { return nil }

// readAt reads a small regular file name of the directory dir (an
// ignore file) through the directory's Root, if name is a regular file
// and not a link (the handle opened is the entry Lstat shows).
func readAt(dir *dirHandle, name string) ([]byte, bool) {
	if dir.root == nil {
		return nil, false
	}
	lfi, err := dir.root.Lstat(name)
	if err != nil || !lfi.Mode().IsRegular() || lfi.Size() > maxIgnoreFileBytes {
		return nil, false
	}
	f, err := dir.root.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !os.SameFile(fi, lfi) {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxIgnoreFileBytes))
	return data, err == nil
}
