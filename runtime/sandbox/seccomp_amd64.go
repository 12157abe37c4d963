//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

// The filter's architecture: x86_64. The i386 entry (int $0x80) reports
// AUDIT_ARCH_I386; the x32 one reports x86_64 with __X32_SYSCALL_BIT set
// in the number.
const (
	nativeArch = unix.AUDIT_ARCH_X86_64
	x32Bit     = 0x40000000
	// maxReviewed is the last system call number the filter's rules were
	// reviewed against (rseq_slice_yield, Linux 6.19's table).
	maxReviewed = unix.SYS_RSEQ_SLICE_YIELD
)

// archDenied are the administration calls only this architecture has.
var archDenied = []uintptr{unix.SYS_IOPL, unix.SYS_IOPERM}
