package runtime

import "io/fs"

// LinkCount is the number of hard links of the file fi describes, or 1
// where FileInfo does not carry it (Windows).
func LinkCount(fi fs.FileInfo) uint64 { return linkCount(fi) }

// FileID is the file's inode number, or 0 where FileInfo does not carry
// one (Windows): with size and modification time, a key that tells a
// file replaced in place from the same file.
func FileID(fi fs.FileInfo) uint64 { return fileID(fi) }
