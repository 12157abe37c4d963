//go:build linux

package sandbox

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Raw Landlock system calls on the calling thread. go-landlock's own
// restrict step applies to every thread of the process through
// AllThreadsSyscall (or libcap's psx under cgo); the helper instead
// restricts the one locked thread that then execs the command, which
// needs neither and works in race-enabled (cgo) builds too.

// Landlock filesystem rights (linux/landlock.h).
const (
	llExecute    = unix.LANDLOCK_ACCESS_FS_EXECUTE
	llWriteFile  = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	llReadFile   = unix.LANDLOCK_ACCESS_FS_READ_FILE
	llReadDir    = unix.LANDLOCK_ACCESS_FS_READ_DIR
	llTruncate   = unix.LANDLOCK_ACCESS_FS_TRUNCATE
	llIoctlDev   = 1 << 15 // LANDLOCK_ACCESS_FS_IOCTL_DEV (ABI 5)
	llReferBits  = unix.LANDLOCK_ACCESS_FS_REFER
	llNetBindTCP = unix.LANDLOCK_ACCESS_NET_BIND_TCP
	llNetConnTCP = unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	llScopeAbstr = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	llScopeSig   = unix.LANDLOCK_SCOPE_SIGNAL
)

func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

func landlockCreate(attr *unix.LandlockRulesetAttr) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(attr)), unsafe.Sizeof(*attr), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

func landlockAddPath(ruleset int, rights uint64, parentFD int) error {
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(parentFD)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

func landlockRestrictSelf(ruleset int) error {
	_, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(ruleset), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
