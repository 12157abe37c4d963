package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrOutside is wrapped by ReadRegularFile for a file that resolves to a
// place outside where it must be.
var ErrOutside = errors.New("it leads outside")

// ReadRegularFile reads at most limit bytes of a small file the workspace
// or the user supplies (rules files, command files, ignore files, hook
// files) and returns them with the file's size, which may be more than
// limit. It must be a regular file. With within set, path may pass
// through symlinks but must really be inside within (a symlink to ~/.ssh
// is refused); without, its last component must not be a symlink. Either
// way the file opened is not reached through a final symlink, so one
// swapped in after the check is not followed.
func ReadRegularFile(path, within string, limit int64) (data []byte, size int64, err error) {
	open := path
	if within != "" {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, 0, err
		}
		if b, err := filepath.EvalSymlinks(within); err == nil {
			within = b
		}
		if rel, err := filepath.Rel(within, real); err != nil || !filepath.IsLocal(rel) {
			return nil, 0, fmt.Errorf("%w %s", ErrOutside, within)
		}
		open = real
	}
	f, err := os.OpenFile(open, openReadFlags|noFollowFlag, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, errors.New("it is not a regular file")
	}
	data, err = io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, 0, err
	}
	return data, max(fi.Size(), int64(len(data))), nil
}
