//go:build !linux && !darwin

package runtime

import "os"

// stampOf: FileInfo has no status change time here (Windows), nor an
// inode.
func stampOf(path string) (Stamp, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return Stamp{}, false
	}
	return Stamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Ino: fileID(fi), Mode: uint32(fi.Mode())}, true
}

// stampAt is stampOf(path): no relative stat here.
func stampAt(dirfd int, name, path string) (Stamp, bool) { return stampOf(path) }
