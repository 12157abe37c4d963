//go:build unix

package rules

import "syscall"

// nofollow refuses a final symlink: the path opened is the real one, so a
// link swapped in after the check is not followed.
const nofollow = syscall.O_NOFOLLOW
