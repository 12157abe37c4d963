//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"
)

// Probe reports whether the kernel confines commands: Landlock at ABI 4
// or later, and seccomp filters.
func Probe() Status {
	abi, err := landlockABI()
	switch {
	case err != nil:
		return Status{Reason: "the kernel has no Landlock (" + err.Error() + "): needs Linux 6.7 or later with Landlock enabled"}
	case abi < minABI:
		return Status{ABI: abi, Reason: fmt.Sprintf("Landlock ABI %d is too old (needs %d: Linux 6.7 or later)", abi, minABI)}
	case !seccomp.Supported():
		return Status{ABI: abi, Reason: "the kernel has no seccomp filters"}
	}
	return Status{Available: true, ABI: abi}
}

// Main runs the helper when args (os.Args) ask for it, and never returns
// then; otherwise it returns at once. Call it first thing in main.
func Main(args []string) {
	if len(args) < 2 {
		return
	}
	switch args[1] {
	case HelperArg:
		os.Exit(supervise(args))
	}
}

// supervise is stage one: a subreaper that runs stage two, forwards
// termination signals, and when the command ends kills and reaps every
// process it left behind. argv: exe HelperArg path argv0 args...
func supervise(args []string) int {
	if len(args) < 4 {
		fmt.Fprintln(os.Stderr, "acp-agent sandbox: missing command")
		return 126
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "acp-agent sandbox: subreaper: %v\n", err)
		return 126
	}
	p, err := readPolicy()
	if err != nil {
		fmt.Fprintf(os.Stderr, "acp-agent sandbox: %v\n", err)
		return 126
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// Restrict this goroutine's OS thread only (it stays locked: no other
	// goroutine runs on it again) and fork the command from it: the child
	// inherits the thread's Landlock domain, seccomp filter, mount
	// namespace and no_new_privs, while the helper's other threads stay
	// free to forward signals.
	runtime.LockOSThread()
	if err := restrictThread(p); err != nil {
		fmt.Fprintf(os.Stderr, "acp-agent sandbox: %v\n", err)
		return 126
	}
	cmd := &exec.Cmd{Path: args[2], Args: args[3:], Env: os.Environ(), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "acp-agent sandbox: %v\n", err)
		return 127
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	killDescendants()
	code := 0
	var ee *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ee.ExitCode()
		}
	default:
		code = 126
	}
	return code
}

// killDescendants SIGKILLs the subreaper's children (orphans of the
// command reparented to it) until none is left, reaping them.
func killDescendants() {
	self := os.Getpid()
	for range 1000 {
		kids := children(self)
		if len(kids) == 0 {
			// Reap any zombie left; ECHILD ends it.
			for {
				pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					return
				}
			}
		}
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		for range kids {
			_, _ = syscall.Wait4(-1, nil, 0, nil)
		}
	}
}

// children lists the processes whose parent is pid (from /proc).
func children(pid int) []int {
	var out []int
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err == nil {
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
		return out
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parens.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 {
			if pp, _ := strconv.Atoi(f[1]); pp == pid {
				out = append(out, n)
			}
		}
	}
	return out
}

// File rights Landlock accepts on a non-directory.
const fileRights = llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev

const readRights = llExecute | llReadFile | llReadDir

// restrictThread sets no_new_privs, Landlock and seccomp on the calling,
// locked OS thread, after making .git read-only in a private mount
// namespace where the process may.
func restrictThread(p Policy) error {
	abi, err := landlockABI()
	if err != nil || abi < minABI {
		return fmt.Errorf("Landlock unavailable (ABI %d): %v", abi, err)
	}
	handledFS := uint64(llReferBits<<1) - 1 // ABI 1-2: execute .. refer
	if abi >= 3 {
		handledFS |= llTruncate
	}
	if abi >= 5 {
		handledFS |= llIoctlDev
	}
	attr := unix.LandlockRulesetAttr{Access_fs: handledFS}
	if !p.Network {
		attr.Access_net = llNetBindTCP | llNetConnTCP
	}
	if abi >= 6 {
		attr.Scoped = llScopeAbstr | llScopeSig
	}
	fd, err := landlockCreate(&attr)
	if err != nil {
		return fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	add := func(path string, rights uint64) error {
		// Never through a symlink: a link among the entries granted
		// around a secret, or in a workspace root, would grant its
		// target (~/.ssh, a directory outside) instead.
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return nil // missing: nothing to grant
		}
		defer unix.Close(pfd)
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			return nil
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			return nil
		case unix.S_IFDIR:
		default:
			rights &= fileRights
		}
		rights &= handledFS
		if err := landlockAddPath(fd, rights, pfd); err != nil {
			return fmt.Errorf("landlock rule for %s: %w", path, err)
		}
		return nil
	}
	all := handledFS
	for _, g := range readGrants(p.DeniedPaths) {
		if err := add(g, readRights); err != nil {
			return err
		}
	}
	// The configured paths are granted as what they name: their real
	// paths (add itself never follows a final symlink).
	p.WritableRoots = realPaths(p.WritableRoots)
	// Denied paths too: the read grants go around where a secret really
	// is, so no symlinked spelling of its directory reaches it.
	p.DeniedPaths = append(p.DeniedPaths, realPaths(p.DeniedPaths)...)
	p.ExtraWritable = realPaths(p.ExtraWritable)
	if p.TempDir != "" {
		p.TempDir = realPaths([]string{p.TempDir})[0]
	}
	gitReadOnly := map[string]bool{}
	if !p.AllowGitWrites {
		gitReadOnly = bindGitReadOnly(p.WritableRoots)
	}
	for _, r := range p.WritableRoots {
		if err := addWritableRoot(add, r, p, all, gitReadOnly); err != nil {
			return err
		}
	}
	for _, w := range append(append([]string(nil), p.ExtraWritable...), p.TempDir) {
		if w == "" || denied(w, p.DeniedPaths) {
			continue
		}
		if err := add(w, all); err != nil {
			return err
		}
	}
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"} {
		if err := add(dev, llReadFile|llWriteFile|llTruncate|llIoctlDev); err != nil {
			return err
		}
	}
	dropCapabilities()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := landlockRestrictSelf(fd); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	unix.Close(fd)
	if err := seccomp.LoadFilter(seccompFilter(p.Network)); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

func denied(p string, deniedPaths []string) bool {
	for _, d := range deniedPaths {
		if within(d, p) || within(p, d) {
			return true
		}
	}
	return false
}

// addWritableRoot grants a workspace root: all of it when its .git may be
// written or was made read-only by a bind mount (readOnlyGit); otherwise
// each of its entries but .git (Landlock rights are inherited down a
// hierarchy, so the root itself cannot be granted, and new entries
// directly in the root cannot be created then).
func addWritableRoot(add func(string, uint64) error, root string, p Policy, all uint64, gitReadOnly map[string]bool) error {
	gitDir := filepath.Join(root, ".git")
	if _, err := os.Lstat(gitDir); err != nil || p.AllowGitWrites || gitReadOnly[root] {
		return add(root, all)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if err := add(filepath.Join(root, e.Name()), all); err != nil {
			return err
		}
	}
	return nil
}

// seccompFilter refuses (EPERM) what no confined command needs: ptrace,
// reading or writing other processes' memory, io_uring (which bypasses
// seccomp's view of syscalls), and, with the network off, socket(2).
func seccompFilter(network bool) seccomp.Filter {
	groups := []seccomp.SyscallGroup{{
		Action: seccomp.ActionErrno,
		Names:  []string{"ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter", "io_uring_register"},
	}}
	if !network {
		// No new sockets at all: Landlock before ABI 9 cannot stop a
		// connect to a Unix socket outside the workspace (a Docker or
		// agent socket). socketpair, which reaches nothing outside,
		// stays allowed.
		groups[0].Names = append(groups[0].Names, "socket")
	}
	return seccomp.Filter{NoNewPrivs: true, Policy: seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}}
}

// bindGitReadOnly makes each root's .git directory read-only for this
// thread (and the command it becomes) with a private mount namespace and
// a read-only bind mount, where the process may (CAP_SYS_ADMIN: the agent
// running as root, as in containers). It returns the roots so covered;
// where it cannot, the caller falls back to granting around .git.
func bindGitReadOnly(roots []string) map[string]bool {
	done := map[string]bool{}
	var gits []string
	for _, r := range roots {
		if fi, err := os.Lstat(filepath.Join(r, ".git")); err == nil && fi.IsDir() {
			gits = append(gits, r)
		}
	}
	if len(gits) == 0 {
		return done
	}
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return done
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return done
	}
	for _, r := range gits {
		g := filepath.Join(r, ".git")
		if err := unix.Mount(g, g, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			continue
		}
		if err := unix.Mount("", g, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
			_ = unix.Unmount(g, unix.MNT_DETACH)
			continue
		}
		done[r] = true
	}
	return done
}

// realPaths resolves each path's symlinks (a missing one is kept as it is,
// and then grants nothing).
func realPaths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out[i] = r
		} else {
			out[i] = p
		}
	}
	return out
}

// dropCapabilities empties the calling thread's capability sets and
// bounding set, so a command started by an agent running as root (as in
// containers) cannot read other processes' memory and environment
// (CAP_SYS_PTRACE), open files by handle around path checks
// (CAP_DAC_READ_SEARCH), load modules, or administer the system. It keeps
// uid 0, so files root owns stay usable. Errors are ignored: without the
// capabilities there is nothing to drop.
func dropCapabilities() {
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	_ = unix.Capset(&hdr, &data[0])
}
