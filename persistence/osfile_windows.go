package persistence

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// openNonblock: Windows has no FIFOs in the file system.
const openNonblock = 0

// openNoFollow opens path as os.OpenFile would, with two differences
// Windows needs:
//
//   - every handle shares delete access (FILE_SHARE_DELETE), so the store
//     can rename a rewritten session over a file it (or a lister) has
//     open and delete a lock file while holding it, as on Unix;
//   - a final symlink or other reparse point is opened as itself
//     (FILE_FLAG_OPEN_REPARSE_POINT) and refused, Windows' O_NOFOLLOW.
//
// O_APPEND gives a handle with FILE_APPEND_DATA and without
// FILE_WRITE_DATA: Windows then puts every write at the end of the file.
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	if flag&os.O_APPEND != 0 {
		access &^= windows.GENERIC_WRITE
		access |= windows.FILE_APPEND_DATA | windows.FILE_WRITE_ATTRIBUTES | windows.FILE_WRITE_EA | windows.STANDARD_RIGHTS_WRITE | windows.SYNCHRONIZE
	}
	create := uint32(windows.OPEN_EXISTING)
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		create = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		create = windows.OPEN_ALWAYS
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL | windows.FILE_FLAG_OPEN_REPARSE_POINT)
	if perm&0o200 == 0 && create != windows.OPEN_EXISTING {
		attrs |= windows.FILE_ATTRIBUTE_READONLY
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(p, access, share, nil, create, attrs, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&(windows.FILE_ATTRIBUTE_REPARSE_POINT|windows.FILE_ATTRIBUTE_DIRECTORY) != 0 {
		windows.CloseHandle(h)
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("a link or directory, not a regular file (refused: not followed)")}
	}
	f := os.NewFile(uintptr(h), path)
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// lockFile takes an exclusive lock on the file's first byte without
// blocking (LockFileEx); errLockHeld when another handle holds it. The
// lock belongs to the handle and ends when it closes.
func lockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return errLockHeld
	}
	return err
}

// unlockFile drops the lock.
func unlockFile(f *os.File) error {
	ol := new(windows.Overlapped)
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}

// replaceRetryFor bounds how long replaceFile retries a rename that a
// sharing violation refused: virus scanners, indexers and backup agents
// open new files briefly, and Windows refuses to rename over a file that
// another process holds without FILE_SHARE_DELETE.
const replaceRetryFor = 2 * time.Second

// replaceFile renames oldpath over newpath. It first asks for a POSIX
// rename (FileRenameInfoEx with FILE_RENAME_FLAG_POSIX_SEMANTICS, Windows
// 10 1709 and later on NTFS), which replaces newpath even while another
// handle with FILE_SHARE_DELETE has it open, as rename(2) does; then,
// where that is not available (FAT, network shares, Wine), MoveFileEx
// with MOVEFILE_REPLACE_EXISTING and MOVEFILE_WRITE_THROUGH (which returns
// once the rename is on disk). Sharing violations are retried for a
// while.
func replaceFile(oldpath, newpath string) error {
	from, err := windows.UTF16PtrFromString(oldpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	to, err := windows.UTF16FromString(newpath)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	deadline := time.Now().Add(replaceRetryFor)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		if err = posixRename(from, to); err != nil {
			err = windows.MoveFileEx(from, &to[0], windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
		}
		if err == nil || !retryable(err) || time.Now().After(deadline) {
			break
		}
		time.Sleep(delay)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// FILE_RENAME_INFO flags (winbase.h).
const (
	fileRenameReplaceIfExists = 0x1
	fileRenamePosixSemantics  = 0x2
)

// posixRename renames the file from to the absolute path to (UTF-16,
// NUL-terminated) with POSIX semantics, and flushes the file so the
// rename is on disk when it returns.
func posixRename(from *uint16, to []uint16) error {
	h, err := windows.CreateFile(from, windows.DELETE|windows.SYNCHRONIZE|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	// FILE_RENAME_INFO: Flags (a DWORD in a union with a BOOLEAN), the
	// root directory handle, the name's length in bytes, then the name.
	nameBytes := 2 * (len(to) - 1)
	var hdr struct {
		Flags          uint32
		RootDirectory  windows.Handle
		FileNameLength uint32
	}
	off := int(unsafe.Offsetof(hdr.FileNameLength)) + 4
	buf := make([]byte, off+nameBytes+2)
	info := (*struct {
		Flags          uint32
		RootDirectory  windows.Handle
		FileNameLength uint32
	})(unsafe.Pointer(&buf[0]))
	info.Flags = fileRenameReplaceIfExists | fileRenamePosixSemantics
	info.FileNameLength = uint32(nameBytes)
	copy(unsafe.Slice((*uint16)(unsafe.Pointer(&buf[off])), len(to)), to)
	if err := windows.SetFileInformationByHandle(h, windows.FileRenameInfoEx, &buf[0], uint32(len(buf))); err != nil {
		return err
	}
	return windows.FlushFileBuffers(h)
}

// retryable are the errors another process's brief open causes.
func retryable(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case windows.ERROR_ACCESS_DENIED, windows.ERROR_SHARING_VIOLATION, windows.ERROR_LOCK_VIOLATION:
		return true
	}
	return false
}

// syncDirectory does nothing: Windows cannot flush a directory handle,
// and MOVEFILE_WRITE_THROUGH already made the rename durable; NTFS
// journals the directory entries of creations and removals.
func syncDirectory(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("persistence: sync directory %s: %w", dir, err)
	}
	return nil
}

// truncateFile cuts the session file f, opened for appending, to size.
// An append-only handle (no FILE_WRITE_DATA) cannot change the file's
// end, so a second handle to the same file, checked to be the same file
// by volume and file index, does it.
func truncateFile(f *os.File, size int64) error {
	var want windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &want); err != nil {
		return fmt.Errorf("truncate %s: %w", f.Name(), err)
	}
	w, err := openNoFollow(f.Name(), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("truncate %s: %w", f.Name(), err)
	}
	defer w.Close()
	var got windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(w.Fd()), &got); err != nil {
		return fmt.Errorf("truncate %s: %w", f.Name(), err)
	}
	if got.VolumeSerialNumber != want.VolumeSerialNumber || got.FileIndexHigh != want.FileIndexHigh || got.FileIndexLow != want.FileIndexLow {
		return fmt.Errorf("truncate %s: the file was replaced", f.Name())
	}
	return w.Truncate(size)
}

// closeBeforeReplace: a rewrite closes its old handle before renaming the
// new file over it (see File.Rewrite.)
const closeBeforeReplace = true

// reopenAfterRename: a file renamed while open is opened again under its
// new name before it is used: truncateFile opens a second handle by the
// file's name, which an *os.File keeps from its open.
const reopenAfterRename = true
