//go:build linux && arm64

package sandbox

import "golang.org/x/sys/unix"

// The filter's architecture: aarch64. 32-bit ARM (compat) calls report
// AUDIT_ARCH_ARM; there is no x32-like ABI.
const (
	nativeArch = unix.AUDIT_ARCH_AARCH64
	x32Bit     = 0
	// maxReviewed is the last system call number the filter's rules were
	// reviewed against (rseq_slice_yield, Linux 6.19's table).
	maxReviewed = unix.SYS_RSEQ_SLICE_YIELD
)

var archDenied []uintptr
