// Attacks on the sandbox's seccomp filter, built with the machine's C
// compiler by the tests (runtime/sandbox and cmd/acp-agent) and run as a
// confined command. Each case runs in a child of its own: it exits 0 when
// the attack worked (the system call the filter must refuse succeeded, or
// the host endpoint was reached), and anything else, or death by a signal
// (SIGSYS: the filter killed it), means it was refused. The program prints
// one line per case:
//
//	RESULT <name> ESCAPED|blocked <detail>
//
// and "ATTACKS-DONE" at the end. The host side checks its own endpoints
// too (listeners, the shared memory segment, the pty), so a case that
// lies about its outcome is still caught.
//
// Usage: attacks key=value... with udp4, udp6, tcp4 (ports on loopback),
// unix (a stream socket path), dgram (a datagram socket path), pid (a
// process outside the sandbox), shmkey (a SysV shared memory key holding
// "HOST-SHM"), scratch (a directory the mount cases try to mount over;
// without it they do nothing), only (run the cases whose name starts
// with this). Never run it unconfined as root without "only": the cases
// that the sandbox must refuse do succeed there.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static int udp4, udp6, tcp4, target, shmkey;
static const char *unixpath = "", *dgrampath = "", *only = "", *scratch = "";

// lowmem is memory below 4 GiB: the 32-bit system call interfaces only
// see the low half of a pointer.
static char *lowmem;

// i386 system call numbers (arch/x86/entry/syscalls/syscall_32.tbl).
enum {
	I386_WRITE = 4, I386_MOUNT = 21, I386_PTRACE = 26, I386_KILL = 37,
	I386_IPC = 117, I386_PERSONALITY = 136, I386_SOCKETCALL = 102,
	I386_KEYCTL = 288, I386_UNSHARE = 310, I386_PRLIMIT64 = 340,
	I386_PROCESS_VM_READV = 347, I386_SOCKET = 359,
	I386_SOCKETPAIR = 360, I386_CONNECT = 362, I386_USERFAULTFD = 374,
	I386_SHMGET = 395, I386_IO_URING_SETUP = 425,
};
// socketcall(2) operations.
enum { SC_SOCKET = 1, SC_CONNECT = 3, SC_SENDTO = 11 };
#define X32_BIT 0x40000000L

// sys32 makes an i386 system call from this 64-bit process.
static long sys32(long nr, long a, long b, long c, long d, long e) {
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
			 : "memory", "r8", "r9", "r10", "r11");
	return (int)ret;
}

// socketcall32 runs socketcall(op, args) with the arguments in low memory.
static long socketcall32(int op, const uint32_t *args, int n) {
	uint32_t *a = (uint32_t *)(lowmem + 0x1000);
	memcpy(a, args, n * sizeof *a);
	return sys32(I386_SOCKETCALL, op, (long)(uintptr_t)a, 0, 0, 0);
}

static uint32_t low(const void *p) { return (uint32_t)(uintptr_t)p; }

// Addresses in low memory.
static struct sockaddr_in *sin4(int port) {
	struct sockaddr_in *s = (void *)(lowmem + 0x2000);
	memset(s, 0, sizeof *s);
	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	s->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return s;
}
static struct sockaddr_in6 *sin6(int port) {
	struct sockaddr_in6 *s = (void *)(lowmem + 0x2100);
	memset(s, 0, sizeof *s);
	s->sin6_family = AF_INET6;
	s->sin6_port = htons(port);
	s->sin6_addr = in6addr_loopback;
	return s;
}
static struct sockaddr_un *sun(const char *path) {
	struct sockaddr_un *s = (void *)(lowmem + 0x2200);
	memset(s, 0, sizeof *s);
	s->sun_family = AF_UNIX;
	strncpy(s->sun_path, path, sizeof s->sun_path - 1);
	return s;
}
static char *msg(void) {
	strcpy(lowmem + 0x3000, "ESCAPE");
	return lowmem + 0x3000;
}

// ok turns a system call's result into the case's exit status: 0 (the
// attack worked) when it succeeded.
static int ok(long r) { return r < 0 ? 1 : 0; }

// --- i386 and x32: the same network attacks through the other ABIs.

static int i386_udp4_socketcall(void) {
	uint32_t a[] = {AF_INET, SOCK_DGRAM, 0};
	long fd = socketcall32(SC_SOCKET, a, 3);
	if (fd < 0) return 1;
	uint32_t s[] = {fd, low(msg()), 6, 0, low(sin4(udp4)), sizeof(struct sockaddr_in)};
	return ok(socketcall32(SC_SENDTO, s, 6));
}
static int i386_udp4_socket(void) {
	long fd = sys32(I386_SOCKET, AF_INET, SOCK_DGRAM, 0, 0, 0);
	if (fd < 0) return 1;
	if (sys32(I386_CONNECT, fd, low(sin4(udp4)), sizeof(struct sockaddr_in), 0, 0) < 0) return 1;
	return ok(sys32(I386_WRITE, fd, low(msg()), 6, 0, 0) == 6 ? 0 : -1);
}
static int i386_udp6_socketcall(void) {
	if (!udp6) return 1;
	uint32_t a[] = {AF_INET6, SOCK_DGRAM, 0};
	long fd = socketcall32(SC_SOCKET, a, 3);
	if (fd < 0) return 1;
	uint32_t s[] = {fd, low(msg()), 6, 0, low(sin6(udp6)), sizeof(struct sockaddr_in6)};
	return ok(socketcall32(SC_SENDTO, s, 6));
}
static int i386_udp6_socket(void) {
	if (!udp6) return 1;
	long fd = sys32(I386_SOCKET, AF_INET6, SOCK_DGRAM, 0, 0, 0);
	if (fd < 0) return 1;
	if (sys32(I386_CONNECT, fd, low(sin6(udp6)), sizeof(struct sockaddr_in6), 0, 0) < 0) return 1;
	return ok(sys32(I386_WRITE, fd, low(msg()), 6, 0, 0) == 6 ? 0 : -1);
}
static int i386_tcp4_socketcall(void) {
	uint32_t a[] = {AF_INET, SOCK_STREAM, 0};
	long fd = socketcall32(SC_SOCKET, a, 3);
	if (fd < 0) return 1;
	uint32_t c[] = {fd, low(sin4(tcp4)), sizeof(struct sockaddr_in)};
	return ok(socketcall32(SC_CONNECT, c, 3));
}
static int i386_tcp4_socket(void) {
	long fd = sys32(I386_SOCKET, AF_INET, SOCK_STREAM, 0, 0, 0);
	if (fd < 0) return 1;
	return ok(sys32(I386_CONNECT, fd, low(sin4(tcp4)), sizeof(struct sockaddr_in), 0, 0));
}
static int i386_unix_socketcall(void) {
	uint32_t a[] = {AF_UNIX, SOCK_STREAM, 0};
	long fd = socketcall32(SC_SOCKET, a, 3);
	if (fd < 0) return 1;
	uint32_t c[] = {fd, low(sun(unixpath)), sizeof(struct sockaddr_un)};
	return ok(socketcall32(SC_CONNECT, c, 3));
}
static int i386_unix_socket(void) {
	long fd = sys32(I386_SOCKET, AF_UNIX, SOCK_STREAM, 0, 0, 0);
	if (fd < 0) return 1;
	return ok(sys32(I386_CONNECT, fd, low(sun(unixpath)), sizeof(struct sockaddr_un), 0, 0));
}
static int i386_unix_dgram_socketpair(void) {
	// A datagram pair's socket can still send to any address.
	int *sv = (int *)(lowmem + 0x4000);
	if (sys32(I386_SOCKETPAIR, AF_UNIX, SOCK_DGRAM, 0, low(sv), 0) < 0) return 1;
	uint32_t s[] = {sv[0], low(msg()), 6, 0, low(sun(dgrampath)), sizeof(struct sockaddr_un)};
	return ok(socketcall32(SC_SENDTO, s, 6));
}
static int i386_netlink_socketcall(void) {
	uint32_t a[] = {AF_NETLINK, SOCK_RAW, NETLINK_ROUTE};
	return ok(socketcall32(SC_SOCKET, a, 3));
}
static int i386_netlink_socket(void) { return ok(sys32(I386_SOCKET, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE, 0, 0)); }
static int i386_ptrace_attach(void) { return ok(sys32(I386_PTRACE, PTRACE_ATTACH, target, 0, 0, 0)); }
static int i386_process_vm_readv(void) {
	struct {
		uint32_t base, len;
	} *iov = (void *)(lowmem + 0x5000);
	iov[0].base = low(lowmem + 0x6000), iov[0].len = 8;
	iov[1].base = 0x400000, iov[1].len = 8;
	return ok(sys32(I386_PROCESS_VM_READV, target, low(&iov[0]), 1, low(&iov[1]), 1));
}
static int i386_unshare_user(void) { return ok(sys32(I386_UNSHARE, CLONE_NEWUSER, 0, 0, 0, 0)); }
static int i386_keyctl(void) { return ok(sys32(I386_KEYCTL, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0, 0, 0)); }
static int i386_shmget(void) { return ok(sys32(I386_SHMGET, shmkey, 0, 0, 0, 0)); }
static int i386_ipc_shmget(void) { return ok(sys32(I386_IPC, 23 /* SHMGET */, shmkey, 0, 0, 0)); }
static int i386_io_uring(void) { return ok(sys32(I386_IO_URING_SETUP, 1, low(lowmem + 0x7000), 0, 0, 0)); }
static int i386_userfaultfd(void) { return ok(sys32(I386_USERFAULTFD, O_CLOEXEC | UFFD_USER_MODE_ONLY, 0, 0, 0, 0)); }
static int i386_personality(void) { return ok(sys32(I386_PERSONALITY, ADDR_NO_RANDOMIZE, 0, 0, 0, 0)); }
static int i386_prlimit(void) {
	struct rlimit *r = (void *)(lowmem + 0x8000);
	r->rlim_cur = r->rlim_max = 0;
	return ok(sys32(I386_PRLIMIT64, target, RLIMIT_CORE, low(r), 0, 0));
}
static int i386_kill(void) { return ok(sys32(I386_KILL, target, 0, 0, 0, 0)); }
static int i386_mount(void) {
	char *s = lowmem + 0x9000;
	if (!*scratch) return 1;
	strcpy(s, "none"), strncpy(s + 16, scratch, 4000), strcpy(s + 4096, "tmpfs");
	return ok(sys32(I386_MOUNT, low(s), low(s + 16), low(s + 4096), 0, 0));
}
static int i386_getpid(void) {
	// Not an attack: an innocent i386 call is refused too (the whole ABI
	// is), which tells a filter that checks only some numbers apart.
	return ok(sys32(20 /* getpid */, 0, 0, 0, 0, 0));
}

// x32: the x86_64 entry with __X32_SYSCALL_BIT set.
static int x32_udp4(void) {
	long fd = syscall(X32_BIT | SYS_socket, AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) return 1;
	return ok(syscall(X32_BIT | SYS_sendto, fd, msg(), 6, 0, sin4(udp4), sizeof(struct sockaddr_in)));
}
static int x32_unix(void) {
	long fd = syscall(X32_BIT | SYS_socket, AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0) return 1;
	return ok(syscall(X32_BIT | SYS_connect, fd, sun(unixpath), sizeof(struct sockaddr_un)));
}
static int x32_netlink(void) { return ok(syscall(X32_BIT | SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)); }
static int x32_ptrace(void) { return ok(syscall(X32_BIT | 521 /* x32 ptrace */, PTRACE_ATTACH, target, 0, 0)); }
static int x32_unshare(void) { return ok(syscall(X32_BIT | SYS_unshare, CLONE_NEWUSER)); }

// --- Native: Unix sockets the filter lets exist, and what they can reach.

static int socketpair_dgram_sendto(void) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0) return 1;
	return ok(sendto(sv[0], "ESCAPE", 6, 0, (void *)sun(dgrampath), sizeof(struct sockaddr_un)));
}
static int socketpair_dgram_connect(void) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0) return 1;
	if (connect(sv[0], (void *)sun(dgrampath), sizeof(struct sockaddr_un)) < 0) return 1;
	return ok(write(sv[0], "ESCAPE", 6) == 6 ? 0 : -1);
}
static int socketpair_raw_sendto(void) {
	// SOCK_RAW on AF_UNIX is a datagram socket.
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_RAW, 0, sv) < 0) return 1;
	return ok(sendto(sv[0], "ESCAPE", 6, 0, (void *)sun(dgrampath), sizeof(struct sockaddr_un)));
}
static int socketpair_dgram_highbits(void) {
	// The kernel reads type as an int: bits above 32 must not hide it.
	int sv[2];
	if (syscall(SYS_socketpair, AF_UNIX, (1UL << 32) | SOCK_DGRAM, 0, sv) < 0) return 1;
	return ok(sendto(sv[0], "ESCAPE", 6, 0, (void *)sun(dgrampath), sizeof(struct sockaddr_un)));
}
static int socketpair_stream_sendmsg_name(void) {
	// A connected pair ignores or refuses an address; the host listener
	// must see nothing.
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) return 1;
	struct iovec iov = {"ESCAPE", 6};
	struct msghdr m = {.msg_name = sun(dgrampath), .msg_namelen = sizeof(struct sockaddr_un), .msg_iov = &iov, .msg_iovlen = 1};
	if (sendmsg(sv[0], &m, 0) < 0) return 1;
	return 1; // went to the peer, not the address: the host checks its socket
}
static int socketpair_scm_rights_connect(void) {
	// Pass a socket over a stream pair, then try to point it outside.
	int sv[2], inner[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) return 1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, inner) < 0) return 1;
	char cbuf[CMSG_SPACE(sizeof(int))];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = {"x", 1};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &inner[0], sizeof(int));
	if (sendmsg(sv[0], &m, 0) < 0) return 1;
	char b;
	struct msghdr r = {.msg_iov = &(struct iovec){&b, 1}, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	if (recvmsg(sv[1], &r, 0) < 0) return 1;
	int got;
	memcpy(&got, CMSG_DATA(CMSG_FIRSTHDR(&r)), sizeof got);
	return ok(connect(got, (void *)sun(unixpath), sizeof(struct sockaddr_un)));
}
static int socketpair_tipc(void) {
	// Other families load kernel modules and reach cluster networks.
	int sv[2];
	return ok(socketpair(30 /* AF_TIPC */, SOCK_SEQPACKET, 0, sv));
}
static int socketpair_bind_outside(void) {
	// An endpoint bound to a path others can reach.
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) return 1;
	struct sockaddr_un *s = sun(unixpath);
	strcat(s->sun_path, ".planted");
	return ok(bind(sv[0], (void *)s, sizeof *s));
}
static int native_netlink(void) { return ok(socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)); }
static int native_unix_connect(void) {
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0) return 1;
	return ok(connect(fd, (void *)sun(unixpath), sizeof(struct sockaddr_un)));
}
static int native_packet(void) { return ok(socket(AF_PACKET, SOCK_DGRAM, 0)); }
static int native_vsock(void) { return ok(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0)); }

// --- Reaching other processes.

static int ptrace_attach(void) { return ok(ptrace(PTRACE_ATTACH, target, 0, 0)); }
static int ptrace_seize(void) { return ok(ptrace(PTRACE_SEIZE, target, 0, 0)); }
static int ptrace_sibling(void) {
	// A process of the same sandbox is no fairer game.
	pid_t kid = fork();
	if (kid == 0) {
		pause();
		_exit(0);
	}
	int r = ptrace(PTRACE_ATTACH, kid, 0, 0);
	kill(kid, SIGKILL);
	return ok(r);
}
static int process_vm_readv_target(void) {
	char buf[8];
	struct iovec l = {buf, 8}, r = {(void *)0x400000, 8};
	return ok(process_vm_readv(target, &l, 1, &r, 1, 0));
}
static int process_vm_writev_sibling(void) {
	static volatile char word[8] = "SAFE";
	pid_t kid = fork();
	if (kid == 0) {
		sleep(5);
		_exit(0);
	}
	struct iovec l = {"PWND", 4}, r = {(void *)word, 4};
	long n = process_vm_writev(kid, &l, 1, &r, 1, 0);
	kill(kid, SIGKILL);
	return ok(n);
}
static int pidfd_getfd_target(void) {
	int pfd = syscall(SYS_pidfd_open, target, 0);
	if (pfd < 0) return 1;
	for (int fd = 0; fd < 8; fd++)
		if (syscall(SYS_pidfd_getfd, pfd, fd, 0) >= 0) return 0;
	return 1;
}
static int kcmp_target(void) { return ok(syscall(SYS_kcmp, getpid(), target, 0 /* KCMP_FILE */, 0, 0)); }
static int proc_mem_target(void) {
	char p[64], b[8];
	snprintf(p, sizeof p, "/proc/%d/mem", target);
	int fd = open(p, O_RDONLY);
	if (fd < 0) return 1;
	return ok(pread(fd, b, 8, 0x400000));
}
static int prlimit_target(void) {
	struct rlimit r = {0, 0};
	return ok(prlimit(target, RLIMIT_CORE, &r, NULL));
}
static int prlimit_target_highbits(void) {
	struct rlimit r = {0, 0};
	return ok(syscall(SYS_prlimit64, (1UL << 32) | (unsigned)target, RLIMIT_CORE, &r, NULL));
}
static int shm_host(void) {
	// The host's SysV segment: another process's memory by key.
	int id = shmget(shmkey, 0, 0);
	if (id < 0) return 1;
	char *p = shmat(id, NULL, 0);
	if (p == (void *)-1) return 1;
	return strncmp(p, "HOST-SHM", 8) == 0 ? 0 : 1;
}
static int msgget_create(void) {
	long id = syscall(SYS_msgget, 0x7ac0ffee, 0600 | 01000 /* IPC_CREAT */);
	if (id < 0) return 1;
	syscall(SYS_msgctl, id, 0 /* IPC_RMID */, NULL);
	return 0;
}
static int mq_open_create(void) {
	long fd = syscall(SYS_mq_open, "acp-sandbox-test", O_CREAT | O_RDWR, 0600, NULL);
	if (fd < 0) return 1;
	syscall(SYS_mq_unlink, "acp-sandbox-test");
	return 0;
}
static int tiocsti_stdin(void) {
	// Type into the terminal on stdin (the host gives a pty there): its
	// controlling terminal once this process takes it.
	if (!isatty(0)) return 1;
	setsid();
	ioctl(0, TIOCSCTTY, 0);
	char c = 'Z';
	return ok(ioctl(0, TIOCSTI, &c));
}
static int tiocsti_highbits(void) {
	if (!isatty(0)) return 1;
	setsid();
	ioctl(0, TIOCSCTTY, 0);
	char c = 'Y';
	return ok(syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, &c));
}

// --- Namespaces, kernel interfaces, privileges.

static int unshare_user(void) { return ok(unshare(CLONE_NEWUSER)); }
static int unshare_net(void) { return ok(unshare(CLONE_NEWUSER | CLONE_NEWNET)); }
static int unshare_mnt(void) { return ok(unshare(CLONE_NEWNS)); }
static int unshare_time(void) { return ok(unshare(0x80 /* CLONE_NEWTIME */)); }
static int clone_newuser(void) {
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0) _exit(0);
	return ok(pid);
}
static int clone3_newuser(void) {
	struct clone_args a = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
	long pid = syscall(SYS_clone3, &a, sizeof a);
	if (pid == 0) _exit(0);
	return ok(pid);
}
static int setns_init_net(void) {
	int fd = open("/proc/1/ns/net", O_RDONLY);
	if (fd < 0) fd = open("/proc/self/ns/net", O_RDONLY);
	if (fd < 0) return 1;
	return ok(setns(fd, CLONE_NEWNET));
}
static int io_uring(void) {
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	return ok(syscall(SYS_io_uring_setup, 1, &p));
}
static int bpf_map(void) {
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_ARRAY, a.key_size = 4, a.value_size = 4, a.max_entries = 1;
	return ok(syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a));
}
static int perf_event(void) {
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a, a.type = PERF_TYPE_SOFTWARE, a.config = PERF_COUNT_SW_TASK_CLOCK, a.exclude_kernel = 1;
	return ok(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
}
static int userfaultfd_syscall(void) { return ok(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY)); }
static int userfaultfd_dev(void) {
	int fd = open("/dev/userfaultfd", O_RDWR);
	if (fd < 0) return 1;
	return ok(ioctl(fd, USERFAULTFD_IOC_NEW, O_CLOEXEC | UFFD_USER_MODE_ONLY));
}
static int keyctl_session(void) { return ok(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0)); }
static int keyctl_join(void) { return ok(syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL)); }
static int add_key_user(void) { return ok(syscall(SYS_add_key, "user", "acp-test", "x", 1, KEY_SPEC_PROCESS_KEYRING)); }
static int request_key_user(void) { return ok(syscall(SYS_request_key, "user", "acp-test", NULL, KEY_SPEC_PROCESS_KEYRING)); }
static int open_by_handle(void) {
	struct {
		unsigned int bytes;
		int type;
		unsigned char h[128];
	} fh = {.bytes = 128};
	int mnt;
	if (syscall(SYS_name_to_handle_at, AT_FDCWD, "/etc/hostname", &fh, &mnt, 0) < 0) return 1;
	int dir = open("/", O_RDONLY | O_DIRECTORY);
	return ok(syscall(SYS_open_by_handle_at, dir, &fh, O_RDONLY));
}
static int mount_tmpfs(void) { return *scratch ? ok(mount("none", scratch, "tmpfs", 0, NULL)) : 1; }
static int fsopen_tmpfs(void) { return ok(syscall(SYS_fsopen, "tmpfs", 0)); }
static int open_tree_clone(void) { return *scratch ? ok(syscall(SYS_open_tree, AT_FDCWD, scratch, 1 /* OPEN_TREE_CLONE */)) : 1; }
static int chroot_tmp(void) { return *scratch ? ok(chroot(scratch)) : 1; }
static int personality_norandom(void) { return ok(personality(ADDR_NO_RANDOMIZE) < 0 ? -1 : (personality(0xffffffff) & ADDR_NO_RANDOMIZE ? 0 : -1)); }
static int personality_exec(void) { return ok(personality(READ_IMPLIES_EXEC) < 0 ? -1 : (personality(0xffffffff) & READ_IMPLIES_EXEC ? 0 : -1)); }
static int syslog_read(void) {
	char b[64];
	return ok(syscall(SYS_syslog, 3 /* READ_ALL */, b, sizeof b));
}
static int fanotify(void) { return ok(syscall(SYS_fanotify_init, 0, O_RDONLY)); }

struct attack {
	const char *name;
	int (*fn)(void);
};
static const struct attack attacks[] = {
	{"i386-udp4-socketcall", i386_udp4_socketcall},
	{"i386-udp4-socket", i386_udp4_socket},
	{"i386-udp6-socketcall", i386_udp6_socketcall},
	{"i386-udp6-socket", i386_udp6_socket},
	{"i386-tcp4-socketcall", i386_tcp4_socketcall},
	{"i386-tcp4-socket", i386_tcp4_socket},
	{"i386-unix-socketcall", i386_unix_socketcall},
	{"i386-unix-socket", i386_unix_socket},
	{"i386-unix-dgram-socketpair", i386_unix_dgram_socketpair},
	{"i386-netlink-socketcall", i386_netlink_socketcall},
	{"i386-netlink-socket", i386_netlink_socket},
	{"i386-ptrace-attach", i386_ptrace_attach},
	{"i386-process-vm-readv", i386_process_vm_readv},
	{"i386-unshare-user", i386_unshare_user},
	{"i386-keyctl", i386_keyctl},
	{"i386-shmget", i386_shmget},
	{"i386-ipc-shmget", i386_ipc_shmget},
	{"i386-io-uring", i386_io_uring},
	{"i386-userfaultfd", i386_userfaultfd},
	{"i386-personality", i386_personality},
	{"i386-prlimit", i386_prlimit},
	{"i386-kill", i386_kill},
	{"i386-mount", i386_mount},
	{"i386-getpid", i386_getpid},
	{"x32-udp4", x32_udp4},
	{"x32-unix", x32_unix},
	{"x32-netlink", x32_netlink},
	{"x32-ptrace", x32_ptrace},
	{"x32-unshare", x32_unshare},
	{"socketpair-dgram-sendto", socketpair_dgram_sendto},
	{"socketpair-dgram-connect", socketpair_dgram_connect},
	{"socketpair-raw-sendto", socketpair_raw_sendto},
	{"socketpair-dgram-highbits", socketpair_dgram_highbits},
	{"socketpair-stream-sendmsg-name", socketpair_stream_sendmsg_name},
	{"socketpair-scm-rights-connect", socketpair_scm_rights_connect},
	{"socketpair-tipc", socketpair_tipc},
	{"socketpair-bind-outside", socketpair_bind_outside},
	{"native-netlink", native_netlink},
	{"native-unix-connect", native_unix_connect},
	{"native-packet", native_packet},
	{"native-vsock", native_vsock},
	{"ptrace-attach", ptrace_attach},
	{"ptrace-seize", ptrace_seize},
	{"ptrace-sibling", ptrace_sibling},
	{"process-vm-readv", process_vm_readv_target},
	{"process-vm-writev-sibling", process_vm_writev_sibling},
	{"pidfd-getfd", pidfd_getfd_target},
	{"kcmp", kcmp_target},
	{"proc-mem", proc_mem_target},
	{"prlimit-other", prlimit_target},
	{"prlimit-other-highbits", prlimit_target_highbits},
	{"sysv-shm-host", shm_host},
	{"sysv-msgget", msgget_create},
	{"posix-mq-open", mq_open_create},
	{"tiocsti", tiocsti_stdin},
	{"tiocsti-highbits", tiocsti_highbits},
	{"unshare-user", unshare_user},
	{"unshare-user-net", unshare_net},
	{"unshare-mnt", unshare_mnt},
	{"unshare-time", unshare_time},
	{"clone-newuser", clone_newuser},
	{"clone3-newuser", clone3_newuser},
	{"setns-net", setns_init_net},
	{"io-uring-setup", io_uring},
	{"bpf-map-create", bpf_map},
	{"perf-event-open", perf_event},
	{"userfaultfd", userfaultfd_syscall},
	{"userfaultfd-dev", userfaultfd_dev},
	{"keyctl-session", keyctl_session},
	{"keyctl-join", keyctl_join},
	{"add-key", add_key_user},
	{"request-key", request_key_user},
	{"open-by-handle-at", open_by_handle},
	{"mount-tmpfs", mount_tmpfs},
	{"fsopen", fsopen_tmpfs},
	{"open-tree-clone", open_tree_clone},
	{"chroot", chroot_tmp},
	{"personality-no-randomize", personality_norandom},
	{"personality-read-implies-exec", personality_exec},
	{"syslog-read", syslog_read},
	{"fanotify-init", fanotify},
};

static void run(const struct attack *a) {
	if (strncmp(a->name, only, strlen(only)) != 0) return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);
		_exit(a->fn());
	}
	int st;
	if (waitpid(pid, &st, 0) < 0) {
		printf("RESULT %s blocked waitpid-failed\n", a->name);
		return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		printf("RESULT %s ESCAPED\n", a->name);
	else if (WIFSIGNALED(st))
		printf("RESULT %s blocked signal-%d\n", a->name, WTERMSIG(st));
	else
		printf("RESULT %s blocked exit-%d\n", a->name, WEXITSTATUS(st));
}

int main(int argc, char **argv) {
	for (int i = 1; i < argc; i++) {
		char *v = strchr(argv[i], '=');
		if (!v) continue;
		*v++ = 0;
		if (!strcmp(argv[i], "udp4")) udp4 = atoi(v);
		else if (!strcmp(argv[i], "udp6")) udp6 = atoi(v);
		else if (!strcmp(argv[i], "tcp4")) tcp4 = atoi(v);
		else if (!strcmp(argv[i], "unix")) unixpath = v;
		else if (!strcmp(argv[i], "dgram")) dgrampath = v;
		else if (!strcmp(argv[i], "pid")) target = atoi(v);
		else if (!strcmp(argv[i], "shmkey")) shmkey = atoi(v);
		else if (!strcmp(argv[i], "only")) only = v;
		else if (!strcmp(argv[i], "scratch")) scratch = v;
	}
	// No core files for the cases the filter kills.
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none);
	lowmem = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (lowmem == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (size_t i = 0; i < sizeof attacks / sizeof *attacks; i++) run(&attacks[i]);
	printf("ATTACKS-DONE\n");
	return 0;
}
