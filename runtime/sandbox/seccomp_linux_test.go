//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// runFilter evaluates a classic BPF seccomp program on one system call,
// as the kernel does (the subset the filter uses), and returns its action.
func runFilter(t *testing.T, prog []unix.SockFilter, arch uint32, nr int, args ...uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[0:], uint32(nr))
	binary.LittleEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(data[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_ALU | unix.BPF_AND | unix.BPF_K:
			acc &= in.K
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var cond bool
			switch in.Code &^ (unix.BPF_JMP | unix.BPF_K) {
			case unix.BPF_JEQ:
				cond = acc == in.K
			case unix.BPF_JGT:
				cond = acc > in.K
			case unix.BPF_JSET:
				cond = acc&in.K != 0
			}
			if cond {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		default:
			t.Fatalf("instruction %d: unexpected code %#x", pc, in.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// Every rule of the filter, decided on synthetic system calls: the
// architecture and ABI checks, the range check, each refusal and what
// stays allowed around it (values next to the refused ones, high bits
// the kernel ignores).
func TestSeccompProgramDecisions(t *testing.T) {
	const helper, thread = 4242, 4250
	g := guard{pid: helper, tid: thread}
	off, err := seccompProgram(false, g)
	require.NoError(t, err)
	on, err := seccompProgram(true, g)
	require.NoError(t, err)
	_, err = seccompProgram(false, guard{})
	require.Error(t, err, "a filter without a helper thread to guard")
	const hi = 1 << 32
	for _, tc := range []struct {
		name    string
		network bool
		arch    uint32
		nr      int
		args    []uint64
		want    uint32
	}{
		{"read", false, nativeArch, unix.SYS_READ, nil, retAllow},
		{"foreign arch", false, unix.AUDIT_ARCH_I386, 3, nil, retKill},
		{"foreign arch, network on", true, unix.AUDIT_ARCH_ARM, 3, nil, retKill},
		{"above the reviewed table", false, nativeArch, maxReviewed + 1, nil, retENOSYS},
		{"last reviewed", false, nativeArch, maxReviewed, nil, retAllow},
		{"ptrace", true, nativeArch, unix.SYS_PTRACE, nil, retEPERM},
		{"process_vm_writev", true, nativeArch, unix.SYS_PROCESS_VM_WRITEV, nil, retEPERM},
		{"io_uring_setup", true, nativeArch, unix.SYS_IO_URING_SETUP, nil, retEPERM},
		{"keyctl", true, nativeArch, unix.SYS_KEYCTL, nil, retEPERM},
		{"clone3", true, nativeArch, unix.SYS_CLONE3, nil, retENOSYS},
		{"clone thread", true, nativeArch, unix.SYS_CLONE, []uint64{unix.CLONE_VM | unix.CLONE_THREAD | unix.CLONE_SIGHAND}, retAllow},
		{"clone newuser", true, nativeArch, unix.SYS_CLONE, []uint64{unix.CLONE_NEWUSER}, retEPERM},
		{"unshare files", true, nativeArch, unix.SYS_UNSHARE, []uint64{unix.CLONE_FILES}, retAllow},
		{"unshare newtime", true, nativeArch, unix.SYS_UNSHARE, []uint64{cloneNewTime}, retEPERM},
		{"unshare newnet", true, nativeArch, unix.SYS_UNSHARE, []uint64{unix.CLONE_NEWNET}, retEPERM},
		{"ioctl TIOCSTI", true, nativeArch, unix.SYS_IOCTL, []uint64{0, tiocsti}, retEPERM},
		{"ioctl TIOCSTI high bits", true, nativeArch, unix.SYS_IOCTL, []uint64{0, hi | tiocsti}, retEPERM},
		{"ioctl TCGETS", true, nativeArch, unix.SYS_IOCTL, []uint64{0, unix.TCGETS}, retAllow},
		{"ioctl FIOSETOWN", true, nativeArch, unix.SYS_IOCTL, []uint64{0, fiosetown}, retEPERM},
		{"ioctl SIOCSPGRP", true, nativeArch, unix.SYS_IOCTL, []uint64{0, siocspgrp}, retEPERM},
		{"kill the helper", true, nativeArch, unix.SYS_KILL, []uint64{helper, 9}, retEPERM},
		{"kill the helper's thread", true, nativeArch, unix.SYS_KILL, []uint64{thread, 9}, retEPERM},
		{"kill the thread, high bits", true, nativeArch, unix.SYS_KILL, []uint64{hi | thread, 9}, retEPERM},
		{"kill another", true, nativeArch, unix.SYS_KILL, []uint64{thread + 1, 9}, retAllow},
		{"kill own group", true, nativeArch, unix.SYS_KILL, []uint64{0, 15}, retAllow},
		{"tkill the thread", true, nativeArch, unix.SYS_TKILL, []uint64{thread, 19}, retEPERM},
		{"tkill another", true, nativeArch, unix.SYS_TKILL, []uint64{thread - 1, 19}, retAllow},
		{"tgkill the helper", true, nativeArch, unix.SYS_TGKILL, []uint64{helper, helper + 1, 9}, retEPERM},
		{"tgkill the thread", true, nativeArch, unix.SYS_TGKILL, []uint64{1, thread, 9}, retEPERM},
		{"tgkill the leader", true, nativeArch, unix.SYS_TGKILL, []uint64{1, helper, 9}, retEPERM},
		{"tgkill another", true, nativeArch, unix.SYS_TGKILL, []uint64{77, 78, 9}, retAllow},
		{"rt_sigqueueinfo the thread", true, nativeArch, unix.SYS_RT_SIGQUEUEINFO, []uint64{thread, 9, 0}, retEPERM},
		{"rt_tgsigqueueinfo the helper", true, nativeArch, unix.SYS_RT_TGSIGQUEUEINFO, []uint64{helper, thread, 9, 0}, retEPERM},
		{"rt_tgsigqueueinfo another", true, nativeArch, unix.SYS_RT_TGSIGQUEUEINFO, []uint64{77, 78, 9, 0}, retAllow},
		{"pidfd_open the thread", true, nativeArch, unix.SYS_PIDFD_OPEN, []uint64{thread, unix.PIDFD_THREAD}, retEPERM},
		{"pidfd_open another", true, nativeArch, unix.SYS_PIDFD_OPEN, []uint64{77, 0}, retAllow},
		{"pidfd_send_signal", true, nativeArch, unix.SYS_PIDFD_SEND_SIGNAL, []uint64{3, 9, 0, 0}, retEPERM},
		{"fcntl F_SETOWN the thread", true, nativeArch, unix.SYS_FCNTL, []uint64{3, unix.F_SETOWN, thread}, retEPERM},
		{"fcntl F_SETOWN the helper", true, nativeArch, unix.SYS_FCNTL, []uint64{3, unix.F_SETOWN, helper}, retEPERM},
		{"fcntl F_SETOWN another", true, nativeArch, unix.SYS_FCNTL, []uint64{3, unix.F_SETOWN, 77}, retAllow},
		{"fcntl F_SETOWN_EX", true, nativeArch, unix.SYS_FCNTL, []uint64{3, unix.F_SETOWN_EX, 0x7fff0000}, retEPERM},
		{"fcntl F_SETSIG", true, nativeArch, unix.SYS_FCNTL, []uint64{3, unix.F_SETSIG, 9}, retAllow},
		{"fcntl F_GETFL on the thread's number", true, nativeArch, unix.SYS_FCNTL, []uint64{3, unix.F_GETFL, thread}, retAllow},
		{"prlimit self", true, nativeArch, unix.SYS_PRLIMIT64, []uint64{0}, retAllow},
		{"prlimit other", true, nativeArch, unix.SYS_PRLIMIT64, []uint64{1234}, retEPERM},
		{"personality query", true, nativeArch, unix.SYS_PERSONALITY, []uint64{0xffffffff}, retAllow},
		{"personality no-randomize", true, nativeArch, unix.SYS_PERSONALITY, []uint64{0x0040000}, retEPERM},
		{"socket, network off", false, nativeArch, unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM}, retEPERM},
		{"socket, network on", true, nativeArch, unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_DGRAM}, retAllow},
		{"connect, network off", false, nativeArch, unix.SYS_CONNECT, nil, retEPERM},
		{"socketpair stream", false, nativeArch, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_STREAM | unix.SOCK_CLOEXEC}, retAllow},
		{"socketpair seqpacket", false, nativeArch, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_SEQPACKET}, retAllow},
		{"socketpair dgram", false, nativeArch, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM}, retEPERM},
		{"socketpair dgram high bits", false, nativeArch, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, hi | unix.SOCK_DGRAM}, retEPERM},
		{"socketpair raw", false, nativeArch, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_RAW}, retEPERM},
		{"socketpair tipc", false, nativeArch, unix.SYS_SOCKETPAIR, []uint64{unix.AF_TIPC, unix.SOCK_SEQPACKET}, retEPERM},
		{"socketpair dgram, network on", true, nativeArch, unix.SYS_SOCKETPAIR, []uint64{unix.AF_UNIX, unix.SOCK_DGRAM}, retAllow},
		{"sendto without address", false, nativeArch, unix.SYS_SENDTO, []uint64{3, 0, 1, 0, 0, 0}, retAllow},
		{"sendto with address", false, nativeArch, unix.SYS_SENDTO, []uint64{3, 0, 1, 0, 0x7fff0000, 16}, retEPERM},
		{"sendto with a high address", false, nativeArch, unix.SYS_SENDTO, []uint64{3, 0, 1, 0, hi, 16}, retEPERM},
		{"sendmsg", false, nativeArch, unix.SYS_SENDMSG, nil, retAllow},
		{"shmget, network off", false, nativeArch, unix.SYS_SHMGET, nil, retEPERM},
		{"mq_open, network off", false, nativeArch, unix.SYS_MQ_OPEN, nil, retEPERM},
		{"shmget, network on", true, nativeArch, unix.SYS_SHMGET, nil, retAllow},
	} {
		prog := off
		if tc.network {
			prog = on
		}
		got := runFilter(t, prog, tc.arch, tc.nr, tc.args...)
		assert.Equal(t, fmt.Sprintf("%#x", tc.want), fmt.Sprintf("%#x", got), tc.name)
	}
	if x32Bit != 0 {
		assert.Equal(t, uint32(retKill), runFilter(t, off, nativeArch, x32Bit|unix.SYS_SOCKET, unix.AF_INET), "x32")
		assert.Equal(t, uint32(retKill), runFilter(t, on, nativeArch, x32Bit|unix.SYS_READ), "x32 with the network on")
	}
}
