package runtime

import (
	"io/fs"
	"os"
)

// LinkCount is the number of hard links of the file fi describes, or 1
// where FileInfo does not carry it (Windows).
func LinkCount(fi fs.FileInfo) uint64 { return linkCount(fi) }

// FileID is the file's inode number, or 0 where FileInfo does not carry
// one (Windows): with size and modification time, a key that tells a
// file replaced in place from the same file.
func FileID(fi fs.FileInfo) uint64 { return fileID(fi) }

// Stamp is what says a regular file has not changed since it was read:
// size, modification time, status change time (which a program cannot
// set: touch sets only the access and modification times), inode and
// mode, as git's index keeps them. CTime and Ino are 0 where the
// platform's FileInfo has none (Windows).
type Stamp struct {
	Size  int64
	MTime int64 // Unix nanoseconds
	CTime int64 // Unix nanoseconds
	Ino   uint64
	Mode  uint32
}

// CreatedAt returns when the file at path was created (Unix nanoseconds)
// on platforms whose stamps carry no status change time (Windows: the
// file's creation time, which programs can set, but only to look older),
// and 0 elsewhere, or when it is unknown.
func CreatedAt(path string) int64 {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0
	}
	return birthTime(fi)
}

// StampOf returns the stamp of the regular file at path, not following a
// symlink; ok is false for anything else or an error. It allocates
// nothing on Linux and macOS (a workspace scan stats every file).
func StampOf(path string) (st Stamp, ok bool) { return stampOf(path) }
