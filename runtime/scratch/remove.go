package scratch

import (
	"io/fs"
	"os"
	"path/filepath"
)

// RemoveAll removes path and what it holds, as os.RemoveAll does, also
// when a command left read-only directories there (Go's module cache,
// `chmod -R a-w`): os.RemoveAll cannot unlink the entries of a directory
// without write permission, and a scratch directory that is never removed
// is retried at every start. On failure it gives the owner write and
// search permission on every directory below path (symlinks are not
// followed: WalkDir does not descend into them and only directories are
// changed) and tries once more.
func RemoveAll(path string) error {
	err := os.RemoveAll(path)
	if err == nil {
		return nil
	}
	filepath.WalkDir(path, func(p string, d fs.DirEntry, werr error) error {
		if werr != nil || !d.IsDir() {
			// An unreadable directory is made readable below, by its
			// parent's visit; its own error is not ours to stop on.
			if werr != nil && d != nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		}
		if info, ierr := d.Info(); ierr == nil && info.Mode().Perm()&0o700 != 0o700 {
			os.Chmod(p, info.Mode().Perm()|0o700)
		}
		return nil
	})
	return os.RemoveAll(path)
}
