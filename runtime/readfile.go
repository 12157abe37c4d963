package runtime

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/acp-agent/acp-agent/policy"
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
	return readRegular(path, within, "", nil, limit)
}

// ReadWorkspaceFile reads, like ReadRegularFile with within, a file a
// workspace supplies for the model's context (a rules file, a command, a
// skill's files), under the rules the file tools apply to the workspace
// root: its real path must also be inside root, no name on that path
// below root may be one the tools refuse (policy.DeniedName: .git, .env,
// .env.*), it must not be under one of denied (policy.FS.DeniedPaths:
// the paths the sandbox denies, as given or resolved, unless root is
// inside one), and the file must have one link (a hard link may be a
// file from outside the workspace, which no path shows).
func ReadWorkspaceFile(path, within, root string, denied []string, limit int64) (data []byte, size int64, err error) {
	if within == "" {
		within = root
	}
	return readRegular(path, within, root, denied, limit)
}

// ErrRefused is wrapped by ReadWorkspaceFile for a file the file tools'
// rules refuse.
var ErrRefused = errors.New("the file tools' rules refuse it")

// InsideRoot reports whether dir's real path is root's real path or
// inside it, with no name on the way that policy.DeniedName refuses and
// not under one of denied (as ReadWorkspaceFile): a directory of a
// workspace that must not lead out of it (a commands or skills directory
// that is a symlink elsewhere).
func InsideRoot(dir, root string, denied []string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	return underRoot(real, root, denied)
}

// underRoot checks the real path real against root and denied.
func underRoot(real, root string, denied []string) error {
	if b, err := filepath.EvalSymlinks(root); err == nil {
		root = b
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || (rel != "." && !filepath.IsLocal(rel)) {
		return fmt.Errorf("%w %s", ErrOutside, root)
	}
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if policy.DeniedName(c) {
			return fmt.Errorf("%w: %s is a name the tools never read", ErrRefused, c)
		}
	}
	if len(denied) > 0 {
		p := policy.FS{Roots: []string{root}, DeniedPaths: deniedSpellings(denied)}
		if _, _, err := p.Resolve(real, policy.AccessRead); err != nil {
			return fmt.Errorf("%w: it is under a path the tools never read", ErrRefused)
		}
	}
	return nil
}

func readRegular(path, within, root string, denied []string, limit int64) (data []byte, size int64, err error) {
	open := path
	if within != "" {
		if b, err := filepath.EvalSymlinks(within); err == nil {
			within = b
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, 0, err
		}
		if err := inside(real, within, root, denied); err != nil {
			return nil, 0, err
		}
		open = real
	}
	f, err := openNoFollow(open)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if within != "" {
		// A directory on the checked path may have been swapped for a
		// symlink (to ~/.ssh, say) between the check and the open, which
		// O_NOFOLLOW does not see: the file held is checked again.
		real, err := heldPath(f, open, fdPath)
		if err != nil {
			return nil, 0, fmt.Errorf("%w: %v", ErrOutside, err)
		}
		if err := inside(real, within, root, denied); err != nil {
			return nil, 0, err
		}
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, errors.New("it is not a regular file")
	}
	// The open handle's count: Windows' FileInfo carries none.
	if n := handleLinkCount(f, fi); root != "" && n > 1 {
		return nil, 0, fmt.Errorf("%w: it has %d hard links (it may be a file from outside the workspace)", ErrRefused, n)
	}
	data, err = io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return nil, 0, err
	}
	return data, max(fi.Size(), int64(len(data))), nil
}

// inside checks the real path real against within (it must be inside)
// and, with root set, against root and denied (underRoot).
func inside(real, within, root string, denied []string) error {
	if rel, err := filepath.Rel(within, real); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("%w %s", ErrOutside, within)
	}
	if root != "" {
		return underRoot(real, root, denied)
	}
	return nil
}
