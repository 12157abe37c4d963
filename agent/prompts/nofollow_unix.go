//go:build unix

package prompts

import "syscall"

// nofollow refuses a final symlink on the real path just checked.
const nofollow = syscall.O_NOFOLLOW
