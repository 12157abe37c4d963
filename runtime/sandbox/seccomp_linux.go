//go:build linux && (amd64 || arm64)

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter, written as an allow-list question: which system
// calls can create an endpoint another process can reach, or reach
// another process, the kernel's administration or a new namespace? Those
// are refused; the rest of the calls this package has reviewed are
// allowed; everything else is refused:
//
//   - Another architecture's calls (i386 through int $0x80, and x32 on
//     x86_64, which shares the audit architecture and sets
//     __X32_SYSCALL_BIT): the process is killed outright (SIGSYS), as
//     libseccomp and Chromium do for a foreign ABI. The rules below are
//     written in native numbers; a second table of numbers would be a
//     second filter to keep right, and no confined command needs them
//     (32-bit programs do not run confined).
//   - A number above the last one reviewed (maxReviewed): ENOSYS, so a
//     call a newer kernel adds is refused until someone reviews it (C
//     libraries fall back on ENOSYS).
//   - clone3: ENOSYS. Its flags are in memory the filter cannot read, so
//     it could create namespaces; glibc falls back to clone, whose flags
//     are checked.
//   - Always EPERM: other processes (ptrace, process_vm_readv/writev,
//     pidfd_getfd, process_madvise, process_mrelease, kcmp,
//     migrate_pages, move_pages, prlimit64 of another process), typing
//     into a terminal (ioctl TIOCSTI, TIOCLINUX), io_uring (its
//     operations bypass this filter), bpf, perf_event_open, userfaultfd,
//     fanotify_init, the keyrings (keyctl, add_key, request_key: the
//     user's session keys), namespaces (setns; clone and unshare with a
//     CLONE_NEW* flag), mounts (mount, umount2, pivot_root, chroot,
//     move_mount, open_tree(_attr), fsopen, fsconfig, fsmount, fspick,
//     mount_setattr), open_by_handle_at, personality other than the
//     plain ones (ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, ...), and the
//     administration calls a dropped capability already refuses (modules,
//     kexec, reboot, swap, acct, syslog, quotas, clocks, iopl/ioperm).
//   - Signals to the helper (EPERM): the thread a command is forked from
//     stays in the helper for the command's life (the command's
//     Pdeathsig is tied to it) and shares the command's Landlock domain,
//     which the signal scope lets through: SIGKILL or SIGSTOP aimed at
//     that one thread would take the whole helper, and with it the
//     killing of what the command leaves behind. So kill, tkill, tgkill,
//     rt_sigqueueinfo, rt_tgsigqueueinfo and pidfd_open naming the
//     helper's pid or that thread's id, fcntl F_SETOWN naming either
//     (SIGIO, or F_SETSIG's signal, goes to the owner), and the owner
//     calls whose pid the filter cannot read (F_SETOWN_EX, ioctl
//     FIOSETOWN, SIOCSPGRP) are refused, and so is pidfd_send_signal
//     (a /proc/<tid> directory is a pidfd for it; C libraries and Go
//     fall back to kill). The helper's other threads, its leader above
//     all, are outside the domain, and Landlock refuses signals to them
//     (run never forks from the leader).
//   - With the network off, EPERM for every endpoint: socket, connect,
//     bind, listen, accept(4), sendto with an address, socketpair other
//     than AF_UNIX stream or seqpacket (a datagram pair's socket can
//     send to any path: Landlock before ABI 9 cannot stop it), SysV IPC
//     and POSIX message queues (other processes' memory and queues by
//     key). What is left are connected pairs, which reach only each
//     other, and pipes.
//
// Arguments are compared on their low 32 bits where the kernel reads an
// int (socketpair's family and type, clone and unshare flags, ioctl's
// request, personality, prlimit64's pid), so bits above cannot hide a
// value; sendto's address is a pointer and compared whole.

// Return values of the filter.
const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retKill   = unix.SECCOMP_RET_KILL_PROCESS
	retEPERM  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// argLow and argHigh are the offsets of the low and high 32 bits of
// argument i (little-endian: amd64 and arm64).
func argLow(i int) uint32  { return offArgs + 8*uint32(i) }
func argHigh(i int) uint32 { return argLow(i) + 4 }

// Namespace flags of clone and unshare (CLONE_NEWTIME shares its bit with
// clone's exit signal, so only unshare can pass it).
const (
	cloneNewTime = 0x00000080
	nsFlags      = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
)

// ioctl requests that type into a terminal, and that name the process a
// socket signals (their pid is in memory the filter cannot read).
const (
	tiocsti   = 0x5412
	tioclinux = 0x541c
	fiosetown = 0x8901
	siocspgrp = 0x8902
)

// fcntl commands that name the process a file signals.
const (
	fSetown   = unix.F_SETOWN
	fSetownEx = unix.F_SETOWN_EX
)

// guard names the task outside a command that shares its Landlock
// domain: the helper (pid) and the thread the command was forked from
// (tid), which the filter keeps the command from signalling. Neither is
// ever 0 (kill(0) is the caller's own process group).
type guard struct{ pid, tid uint32 }

// The personalities a confined command may take (Docker's list): Linux,
// 32-bit Linux, 2.6-as-3.x uname, both, and the query.
var plainPersonalities = []uint32{0x0, 0x8, 0x20000, 0x20008, 0xffffffff}

// rule decides one system call; its body always returns.
type rule struct {
	nr   uintptr
	body []unix.SockFilter
}

func ret(action uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: action}
}

func load(off uint32) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
}

func jump(op uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k, Jt: jt, Jf: jf}
}

// always is a rule with one answer.
func always(nr uintptr, action uint32) rule { return rule{nr, []unix.SockFilter{ret(action)}} }

// denyBits refuses nr when the low half of argument arg has any of mask.
func denyBits(nr uintptr, arg int, mask uint32) rule {
	return rule{nr, []unix.SockFilter{
		load(argLow(arg)),
		jump(unix.BPF_JSET, mask, 0, 1),
		ret(retEPERM),
		ret(retAllow),
	}}
}

// onlyValues allows nr only when the low half of argument arg is one of
// vals.
func onlyValues(nr uintptr, arg int, vals ...uint32) rule {
	return matchValues(nr, arg, retAllow, retEPERM, vals)
}

// denyValues refuses nr when the low half of argument arg is one of vals.
func denyValues(nr uintptr, arg int, vals ...uint32) rule {
	return matchValues(nr, arg, retEPERM, retAllow, vals)
}

// matchValues answers match when the low half of argument arg is one of
// vals, otherwise other.
func matchValues(nr uintptr, arg int, match, other uint32, vals []uint32) rule {
	n := len(vals)
	body := []unix.SockFilter{load(argLow(arg))}
	for i, v := range vals {
		body = append(body, jump(unix.BPF_JEQ, v, uint8(n-i), 0))
	}
	return rule{nr, append(body, ret(other), ret(match))}
}

// signalsTo refuses a call whose first argument (a thread group, for
// tgkill and rt_tgsigqueueinfo) is the helper, or whose second (the
// thread) is the helper or its forking thread.
func signalsTo(nr uintptr, g guard) rule {
	return rule{nr, []unix.SockFilter{
		load(argLow(0)),
		jump(unix.BPF_JEQ, g.pid, 4, 0),
		load(argLow(1)),
		jump(unix.BPF_JEQ, g.pid, 2, 0),
		jump(unix.BPF_JEQ, g.tid, 1, 0),
		ret(retAllow),
		ret(retEPERM),
	}}
}

// fcntlOwner refuses fcntl F_SETOWN_EX (its owner is in memory), and
// F_SETOWN naming the helper or its forking thread.
func fcntlOwner(g guard) rule {
	return rule{unix.SYS_FCNTL, []unix.SockFilter{
		load(argLow(1)),
		jump(unix.BPF_JEQ, fSetownEx, 5, 0),
		jump(unix.BPF_JEQ, fSetown, 0, 3),
		load(argLow(2)),
		jump(unix.BPF_JEQ, g.pid, 2, 0),
		jump(unix.BPF_JEQ, g.tid, 1, 0),
		ret(retAllow),
		ret(retEPERM),
	}}
}

// onlyNull allows nr only when pointer argument arg is NULL.
func onlyNull(nr uintptr, arg int) rule {
	return rule{nr, []unix.SockFilter{
		load(argLow(arg)),
		jump(unix.BPF_JEQ, 0, 0, 2),
		load(argHigh(arg)),
		jump(unix.BPF_JEQ, 0, 1, 0),
		ret(retEPERM),
		ret(retAllow),
	}}
}

// connectedPairsOnly allows socketpair for AF_UNIX stream and seqpacket
// pairs only.
func connectedPairsOnly() rule {
	return rule{unix.SYS_SOCKETPAIR, []unix.SockFilter{
		load(argLow(0)),
		jump(unix.BPF_JEQ, unix.AF_UNIX, 0, 4),
		load(argLow(1)),
		{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: 0xf}, // SOCK_TYPE_MASK
		jump(unix.BPF_JEQ, unix.SOCK_STREAM, 2, 0),
		jump(unix.BPF_JEQ, unix.SOCK_SEQPACKET, 1, 0),
		ret(retEPERM),
		ret(retAllow),
	}}
}

// seccompRules are the filter's rules for a command with or without the
// network, started by the helper thread g, sorted by number.
func seccompRules(network bool, g guard) []rule {
	var rules []rule
	deny := func(nrs ...uintptr) {
		for _, nr := range nrs {
			rules = append(rules, always(nr, retEPERM))
		}
	}
	// Other processes.
	deny(unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
		unix.SYS_PROCESS_MADVISE, unix.SYS_PROCESS_MRELEASE, unix.SYS_KCMP, unix.SYS_MIGRATE_PAGES, unix.SYS_MOVE_PAGES)
	rules = append(rules, onlyValues(unix.SYS_PRLIMIT64, 0, 0))
	rules = append(rules, denyValues(unix.SYS_IOCTL, 1, tiocsti, tioclinux, fiosetown, siocspgrp))
	// The helper and the thread the command was forked from.
	for _, nr := range []uintptr{unix.SYS_KILL, unix.SYS_TKILL, unix.SYS_RT_SIGQUEUEINFO, unix.SYS_PIDFD_OPEN} {
		rules = append(rules, denyValues(nr, 0, g.pid, g.tid))
	}
	rules = append(rules, signalsTo(unix.SYS_TGKILL, g), signalsTo(unix.SYS_RT_TGSIGQUEUEINFO, g), fcntlOwner(g))
	deny(unix.SYS_PIDFD_SEND_SIGNAL)
	// Kernel interfaces that bypass the filter or widen the attack surface.
	deny(unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD, unix.SYS_FANOTIFY_INIT)
	// The keyrings.
	deny(unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY)
	// Namespaces.
	deny(unix.SYS_SETNS)
	rules = append(rules, always(unix.SYS_CLONE3, retENOSYS))
	rules = append(rules, denyBits(unix.SYS_CLONE, 0, nsFlags))
	rules = append(rules, denyBits(unix.SYS_UNSHARE, 0, nsFlags|cloneNewTime))
	// Mounts and file handles.
	deny(unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT, unix.SYS_MOVE_MOUNT,
		unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT,
		unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR, unix.SYS_OPEN_BY_HANDLE_AT)
	rules = append(rules, onlyValues(unix.SYS_PERSONALITY, 0, plainPersonalities...))
	// Administration (the capabilities are gone; this is the second lock).
	deny(unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE,
		unix.SYS_DELETE_MODULE, unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_SYSLOG,
		unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD, unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME)
	deny(archDenied...)
	if !network {
		deny(unix.SYS_SOCKET, unix.SYS_CONNECT, unix.SYS_BIND, unix.SYS_LISTEN, unix.SYS_ACCEPT, unix.SYS_ACCEPT4)
		rules = append(rules, connectedPairsOnly(), onlyNull(unix.SYS_SENDTO, 4))
		deny(unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
			unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
			unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMDT, unix.SYS_SHMCTL,
			unix.SYS_MQ_OPEN, unix.SYS_MQ_UNLINK, unix.SYS_MQ_TIMEDSEND, unix.SYS_MQ_TIMEDRECEIVE,
			unix.SYS_MQ_NOTIFY, unix.SYS_MQ_GETSETATTR)
	}
	slices.SortFunc(rules, func(a, b rule) int { return int(a.nr) - int(b.nr) })
	return rules
}

// seccompProgram assembles the filter: the architecture check, the ABI
// and range checks, then one block per rule (each ends in a return, so
// the accumulator still holds the number at the next rule), then allow.
func seccompProgram(network bool, g guard) ([]unix.SockFilter, error) {
	if g.pid == 0 || g.tid == 0 {
		return nil, errors.New("seccomp: no helper thread to guard")
	}
	prog := []unix.SockFilter{
		load(offArch),
		jump(unix.BPF_JEQ, nativeArch, 1, 0),
		ret(retKill),
		load(offNr),
	}
	if x32Bit != 0 {
		prog = append(prog, jump(unix.BPF_JSET, x32Bit, 0, 1), ret(retKill))
	}
	prog = append(prog, jump(unix.BPF_JGT, maxReviewed, 0, 1), ret(retENOSYS))
	rules := seccompRules(network, g)
	for i, r := range rules {
		if i > 0 && rules[i-1].nr == r.nr {
			return nil, fmt.Errorf("seccomp: two rules for system call %d", r.nr)
		}
		if r.nr > maxReviewed || len(r.body) > 255 {
			return nil, fmt.Errorf("seccomp: bad rule for system call %d", r.nr)
		}
		prog = append(prog, jump(unix.BPF_JEQ, uint32(r.nr), 0, uint8(len(r.body))))
		prog = append(prog, r.body...)
	}
	prog = append(prog, ret(retAllow))
	if len(prog) > unix.BPF_MAXINSNS {
		return nil, errors.New("seccomp: filter too long")
	}
	return prog, nil
}

// loadSeccomp installs the filter on the calling thread only (no TSYNC):
// the helper's other threads stay free, and the command forked from this
// thread inherits it. g is the helper thread the command is forked from
// (this one, or the second stage's parent). no_new_privs must already be
// set.
func loadSeccomp(network bool, g guard) error {
	prog, err := seccompProgram(network, g)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	return nil
}

// seccompSupport says why the kernel cannot take the filter, or "" when
// it can: seccomp filters with the kill-process and errno actions.
func seccompSupport() string {
	for _, action := range []uint32{retKill, unix.SECCOMP_RET_ERRNO} {
		a := action
		_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&a)))
		if errno != 0 {
			return fmt.Sprintf("the kernel has no seccomp filters with action %#x (%v)", action, errno)
		}
	}
	return ""
}
