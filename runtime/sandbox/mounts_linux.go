//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Masks by mount. Landlock only grants: to keep a command from a path it
// grants around it, which leaves the directory holding the path without
// rights of its own, so nothing new can be created directly in it (a git
// root, any directory with a .env). Where the helper may mount (root, or
// a helper started in a user namespace of its own), each command's thread
// gets a private mount namespace instead, in which
//
//   - every denied path is covered by an empty mode-000 file or directory
//     from a tmpfs of the helper's, mounted read-only, nodev, nosuid,
//     noexec: the command cannot read it (no capabilities, so no override
//     of the mode), chmod it (read-only), rename or delete it (a mount
//     point: EBUSY), link it (another mount: EXDEV) or unmount it (the
//     seccomp filter and no capabilities);
//   - each root's .git (directory or gitdir file) is a read-only bind
//     mount of itself;
//   - a directory between a writable root and a configured denied path
//     inside it is bound onto itself, so no command can rename it away
//     and leave the path for the next command to find unmasked;
//
// and Landlock grants read on / and write on the roots whole. Everything
// is mounted on descriptors opened in the new namespace (never on a path
// resolved a second time), and the .env files are checked against the
// identity the scan found, so a directory renamed between the scan and
// the mount is caught. What cannot be masked is granted around, as
// before.

// mountsEnv turns masks by mount off when "off", "0" or "false": the
// helpers then grant around every denied path (the fallback of systems
// without user namespaces), for tests and comparisons.
const mountsEnv = "ACP_AGENT_SANDBOX_MOUNTS"

func mountsTurnedOff() bool {
	switch strings.ToLower(os.Getenv(mountsEnv)) {
	case "off", "0", "false", "no":
		return true
	}
	return false
}

// mountSupport says how the helpers mask denied paths here: "privileged"
// (the agent may mount: root), "user namespace" (helpers start in one of
// their own), or "" with the reason they cannot and grant around them.
// It reads the kernel's settings only; a helper that still cannot mount
// (a container's filter refusing user namespaces) falls back by itself.
func mountSupport() (how, why string) {
	if mountsTurnedOff() {
		return "", mountsEnv + " turns masks by mount off"
	}
	if hasCapSysAdmin() {
		return "privileged", ""
	}
	if v, ok := readSysctl("user/max_user_namespaces"); ok && v == 0 {
		return "", "user namespaces are off (user.max_user_namespaces = 0)"
	}
	if v, ok := readSysctl("kernel/unprivileged_userns_clone"); ok && v == 0 {
		return "", "unprivileged user namespaces are off (kernel.unprivileged_userns_clone = 0)"
	}
	if v, ok := readSysctl("kernel/apparmor_restrict_unprivileged_userns"); ok && v != 0 {
		return "", "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)"
	}
	return "user namespace", ""
}

func readSysctl(name string) (int, bool) {
	data, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(data)))
	return v, err == nil
}

// hasCapSysAdmin reports whether the calling thread may mount in its
// user namespace (the agent as root).
func hasCapSysAdmin() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[unix.CAP_SYS_ADMIN/32].Effective&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// helperCaps are what a helper started in a user namespace keeps across
// its exec (as ambient capabilities, in that namespace only): mounting,
// dropping the bounding set before a command, and reading the roots'
// directories whatever their mode, so a command cannot hide a .env from
// the next command's scan with chmod 000. Each command's thread drops
// them all before the command starts.
var helperCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_READ_SEARCH}

// masker masks paths for the calling, locked thread, which it has moved
// into a private mount namespace.
type masker struct {
	src      int // the tmpfs holding the masks ("f" and "d"), attached at /
	fileDev  uint64
	fileIno  uint64
	dirIno   uint64
	attached bool
}

// newMasker unshares the thread's mount namespace (making every mount
// private, so nothing propagates back to the host) and makes the tmpfs
// the masks come from. It fails where the thread may not mount.
func newMasker() (*masker, error) {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return nil, fmt.Errorf("unshare mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return nil, fmt.Errorf("private mounts: %w", err)
	}
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("tmpfs: %w", err)
	}
	defer unix.Close(fs)
	if err := unix.FsconfigSetString(fs, "mode", "0700"); err != nil {
		return nil, fmt.Errorf("tmpfs: %w", err)
	}
	if err := unix.FsconfigSetString(fs, "size", "4k"); err != nil {
		return nil, fmt.Errorf("tmpfs: %w", err)
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return nil, fmt.Errorf("tmpfs: %w", err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC)
	if err != nil {
		return nil, fmt.Errorf("tmpfs: %w", err)
	}
	m := &masker{src: mnt}
	fail := func(what string, err error) (*masker, error) {
		m.close()
		return nil, fmt.Errorf("mask %s: %w", what, err)
	}
	f, err := unix.Openat(mnt, "f", unix.O_CREAT|unix.O_EXCL|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("file", err)
	}
	var st unix.Stat_t
	err = unix.Fstat(f, &st)
	unix.Close(f)
	if err != nil {
		return fail("file", err)
	}
	m.fileDev, m.fileIno = st.Dev, st.Ino
	if err := unix.Mkdirat(mnt, "d", 0); err != nil {
		return fail("directory", err)
	}
	if err := unix.Fstatat(mnt, "d", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fail("directory", err)
	}
	m.dirIno = st.Ino
	if err := unix.MountSetattr(mnt, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fail("read-only", err)
	}
	// Clones come only from a mount in the caller's namespace before
	// Linux 6.15, so the tmpfs is attached for the time of the set-up,
	// on the namespace's root, where no absolute path sees it (lookups
	// start below it), and detached in close.
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("attach", err)
	}
	err = unix.MoveMount(mnt, "", root, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	unix.Close(root)
	if err != nil {
		return fail("attach", err)
	}
	m.attached = true
	return m, nil
}

// close detaches the masks' tmpfs (the masks stay) and closes its
// descriptor.
func (m *masker) close() {
	if m.attached {
		_ = unix.Unmount("/proc/self/fd/"+strconv.Itoa(m.src), unix.MNT_DETACH)
		m.attached = false
	}
	unix.Close(m.src)
}

// isMask reports whether st is one of the masks.
func (m *masker) isMask(st *unix.Stat_t) bool {
	return st.Dev == m.fileDev && (st.Ino == m.fileIno || st.Ino == m.dirIno)
}

// maskFD covers what fd names with the mask of its kind. It does nothing
// when fd already names a mask.
func (m *masker) maskFD(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if m.isMask(&st) {
		return nil
	}
	src := "f"
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		src = "d"
	}
	return m.attach(src, fd)
}

// attach mounts a clone of the mask src onto fd.
func (m *masker) attach(src string, fd int) error {
	c, err := unix.OpenTree(m.src, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("clone mask: %w", err)
	}
	defer unix.Close(c)
	if err := unix.MoveMount(c, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("mount mask: %w", err)
	}
	return nil
}

// maskPath masks the file or directory path leads to (symlinks
// followed: the configured denied paths are the user's). A missing path
// needs no mask.
func (m *masker) maskPath(path string) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return m.maskFD(fd)
}

// errMoved says a secrets file is no longer what the scan found where it
// found it.
var errMoved = errors.New("moved since the scan")

// maskSecret masks what the scan found, if it is still what the scan
// found there: the file the path names (never through a final link), or
// with follow, the file a link leads to. Anything else is errMoved (the
// caller scans again).
func (m *masker) maskSecret(s secretFile) error {
	flags := unix.O_PATH | unix.O_CLOEXEC
	if !s.follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(s.path, flags, 0)
	if err != nil {
		return errMoved
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if m.isMask(&st) {
		return nil
	}
	if st.Dev != s.dev || st.Ino != s.ino {
		return errMoved
	}
	return m.maskFD(fd)
}

// pin binds dir onto itself, so it cannot be renamed (a mount point is
// EBUSY) while the command runs. Recursive: what is mounted below it,
// masks included, stays.
func (m *masker) pin(dir string) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return bindOnto(fd, 0)
}

// readOnly makes the .git of root (a directory, or the gitdir file of a
// worktree or submodule) a read-only bind mount of itself and reports
// whether it did. A .git that is a link is not covered: the link itself
// could be replaced; the caller grants around it.
func (m *masker) readOnly(root string) bool {
	fd, err := unix.Open(filepath.Join(root, ".git"), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR, unix.S_IFREG:
		return bindOnto(fd, unix.MOUNT_ATTR_RDONLY) == nil
	case unix.S_IFLNK:
		// What it leads to is made read-only too, for what that is
		// worth while the link stays replaceable.
		if t, err := unix.Open(filepath.Join(root, ".git"), unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
			var tst unix.Stat_t
			if unix.Fstat(t, &tst) == nil && tst.Mode&unix.S_IFMT == unix.S_IFDIR {
				_ = bindOnto(t, unix.MOUNT_ATTR_RDONLY)
			}
			unix.Close(t)
		}
	}
	return false
}

// protect makes the file or directory at path (never through a final
// symlink) a read-only bind mount of itself and reports whether it did.
func (m *masker) protect(path string) bool {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR, unix.S_IFREG:
		return bindOnto(fd, unix.MOUNT_ATTR_RDONLY) == nil
	}
	return false
}

// bindOnto mounts a recursive clone of what fd names onto it, with attr
// set on every mount of the clone.
func bindOnto(fd int, attr uint64) error {
	c, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	defer unix.Close(c)
	if attr != 0 {
		if err := unix.MountSetattr(c, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attr}); err != nil {
			return fmt.Errorf("mount attributes: %w", err)
		}
	}
	if err := unix.MoveMount(c, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	return nil
}

// maskRounds bounds the scans of one command's set-up: a .env that keeps
// moving while the helper masks it (a concurrent command renaming its
// directory back and forth) refuses the command rather than leave it
// unmasked.
const maskRounds = 4

// maskedPolicy is what the masks left to Landlock.
type maskedPolicy struct {
	// unmasked are the denied paths that could not be masked: Landlock
	// grants around them.
	unmasked []string
	// gitReadOnly are the roots whose .git is read-only by mount.
	gitReadOnly map[string]bool
	// unprotected are the protected paths not made read-only by mount
	// (missing, a symlink, or a mount that failed): Landlock grants write
	// around them.
	unprotected []string
}

// apply masks the denied paths (configured, as written and resolved),
// the secrets files under the roots (secrets: what the scan found, which
// it scans for again when one moved before its mask), and makes each
// root's .git read-only (unless allowGit). writable are every path the
// command may write.
//
// A command may rename any directory of a writable path, and a command
// that cannot read a .env could then move the directory holding it while
// another command's helper scans, so that the scan misses it (the scan
// is not atomic). So every directory a command could rename (its parent
// is writable) that holds a denied path or a .env below it is pinned:
// bound onto itself, so renaming it fails (EBUSY) in every command that
// had that path masked. Moving a file across such a directory's edge
// with rename(2) gets EXDEV (mv copies instead).
func (m *masker) apply(denied, protected []string, secrets []secretFile, roots, writable []string, allowGit bool) (maskedPolicy, error) {
	out := maskedPolicy{gitReadOnly: map[string]bool{}}
	pinned := map[string]bool{}
	// pinAbove pins the directories above path that a command could
	// rename, outermost first (an inner pin goes into the outer one).
	pinAbove := func(path string) bool {
		var dirs []string
		for a := filepath.Dir(path); a != filepath.Dir(a); a = filepath.Dir(a) {
			parent := filepath.Dir(a)
			if slices.ContainsFunc(writable, func(w string) bool { return within(w, parent) }) {
				dirs = append(dirs, a)
			}
		}
		ok := true
		for _, a := range slices.Backward(dirs) {
			if pinned[a] {
				continue
			}
			if err := m.pin(a); err != nil {
				ok = false
				continue
			}
			pinned[a] = true
		}
		return ok
	}
	for _, d := range denied {
		real, err := filepath.EvalSymlinks(d)
		if err != nil {
			continue // missing: nothing to deny
		}
		// Unpinned, it could be renamed away by this command for the
		// next one; masked or not, grant around it then.
		if !pinAbove(real) || m.maskPath(d) != nil {
			out.unmasked = append(out.unmasked, d, real)
		}
	}
	// A protected path (in a writable path) that exists becomes a
	// read-only bind mount of itself, its directories that a command
	// could rename pinned: it cannot be written, replaced, removed or
	// renamed (a mount point: EBUSY). A mount cannot cover a name that
	// is missing or a symlink; those are granted around.
	for _, x := range protected {
		if !pinAbove(x) || !m.protect(x) {
			out.unprotected = append(out.unprotected, x)
		}
	}
	for round := 1; ; round++ {
		moved := false
		if round > 1 {
			// In the command's mount namespace, where the cache (under a
			// denied path) is masked: not read or written from here.
			secrets = helperSecrets.find(roots, "")
		}
		for _, s := range secrets {
			if !s.opaque && !pinAbove(s.path) {
				out.unmasked = append(out.unmasked, s.paths()...)
			}
			switch err := m.maskSecret(s); {
			case errors.Is(err, errMoved):
				moved = true
			case err != nil:
				out.unmasked = append(out.unmasked, s.paths()...)
			}
		}
		if !moved {
			break
		}
		if round == maskRounds {
			return out, errors.New("the workspace's .env files kept moving while the sandbox masked them")
		}
	}
	if !allowGit {
		for _, r := range roots {
			if m.readOnly(r) {
				out.gitReadOnly[r] = true
			}
		}
	}
	return out, nil
}
