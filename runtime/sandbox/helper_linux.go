//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/acp-agent/acp-agent/policy"
)

// Probe reports whether the kernel confines commands: Landlock at ABI 4
// or later, and seccomp filters; and whether denied paths can be masked
// by mount (from the process's capabilities and the kernel's settings,
// without starting anything: a helper that cannot mount after all falls
// back by itself).
func Probe() Status {
	abi, err := landlockABI()
	switch {
	case err != nil:
		return Status{Reason: "the kernel has no Landlock (" + err.Error() + "): needs Linux 6.7 or later with Landlock enabled"}
	case abi < minABI:
		return Status{ABI: abi, Reason: fmt.Sprintf("Landlock ABI %d is too old (needs %d: Linux 6.7 or later)", abi, minABI)}
	}
	if why := seccompSupport(); why != "" {
		return Status{ABI: abi, Reason: why}
	}
	st := Status{Available: true, ABI: abi}
	if how, why := mountSupport(); how != "" {
		st.Masks = how
	} else {
		st.Limit = why + "; so nothing new can be created directly in a directory holding .git or a .env file"
	}
	return st
}

// Main runs the helper when args (os.Args) ask for it, and never returns
// then; otherwise it returns at once. Call it first thing in main.
func Main(args []string) {
	if len(args) >= 2 && args[1] == HelperArg {
		if len(args) >= 3 {
			// Started in a user namespace of its own: map the agent's
			// ids while this process is still dumpable (its /proc files
			// its own).
			mapSelf(args[2])
		}
		os.Exit(serve(helperFD))
	}
	if len(args) >= 2 && args[1] == execArg {
		os.Exit(execStage(args[2:]))
	}
}

// mapSelf maps ids ("uid:gid", the agent's) to themselves in the user
// namespace the helper was started in, and denies setgroups. Without the
// maps the helper still works (files keep their owner, which the kernel
// knows), but commands would see themselves as the overflow user.
func mapSelf(ids string) {
	uid, gid, _ := strings.Cut(ids, ":")
	for _, w := range []struct{ file, data string }{
		{"/proc/self/setgroups", "deny"},
		{"/proc/self/uid_map", uid + " " + uid + " 1\n"},
		{"/proc/self/gid_map", gid + " " + gid + " 1\n"},
	} {
		if err := os.WriteFile(w.file, []byte(w.data), 0); err != nil {
			fmt.Fprintf(os.Stderr, "acp-agent sandbox helper: user namespace: %v\n", err)
			return
		}
	}
}

// execArg is argv[1] of the helper's second stage (execStage).
const execArg = "__acp-agent-sandbox-exec"

// helperFD is the helper's end of the socketpair (the launcher's first
// ExtraFiles entry).
const helperFD = 3

// server is the helper process: it runs one command at a time for the
// agent at the other end of fd, each from a fresh OS thread restricted
// by that command's policy.
type server struct {
	fd  int
	wmu sync.Mutex // serialises replies

	mu       sync.Mutex
	cur      *job // the command being run, nil when idle
	stopping bool
}

type job struct {
	id     uint64
	pid    int  // 0 until started
	reaped bool // the command itself has exited and was reaped
	done   chan struct{}
}

// serve is the helper's main loop. It is a child subreaper, so whatever a
// command leaves behind (setsid grandchildren included) is reparented to
// it and killed when the command ends; it runs one command at a time, so
// all of its children belong to that command. It ends, killing a running
// command, when the agent's end of fd closes.
func serve(fd int) int {
	// Not dumpable: a command of the same user cannot read this
	// process's memory or open its descriptors through /proc.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "acp-agent sandbox helper: subreaper: %v\n", err)
		return 126
	}
	// Neither the socket nor anything the helper inherited (descriptors
	// an editor leaked to the agent) may reach a command.
	CloseInheritedOnExec()
	s := &server{fd: fd}
	// The agent's death (Pdeathsig SIGTERM; its end of the socket closes
	// too) ends the helper as the end of its socket does: the command and
	// what it left behind first, which no one kills once the subreaper
	// is gone. This goroutine lives as long as the process.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		s.stop()
		os.Exit(0)
	}()
	for {
		var m message
		fds, err := readFrame(fd, &m)
		if err != nil {
			closeAll(fds)
			s.stop()
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(os.Stderr, "acp-agent sandbox helper: %v\n", err)
			return 2
		}
		switch m.Op {
		case "start":
			s.start(m, fds)
		case "signal":
			closeAll(fds)
			s.signal(m.ID, syscall.Signal(m.Sig))
		case "warm":
			closeAll(fds)
			if m.Req != nil {
				helperSecrets.find(realPaths(m.Req.Policy.WritableRoots), secretsCacheDir(m.Req.Policy))
			}
		default:
			closeAll(fds)
		}
	}
}

func (s *server) reply(m message) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	// A failed reply means the agent is gone; the read loop sees EOF.
	_ = writeFrame(s.fd, m, nil)
}

func (s *server) start(m message, fds []int) {
	fail := func(msg string) {
		closeAll(fds)
		s.reply(message{ID: m.ID, Err: msg})
	}
	switch {
	case m.Req == nil:
		fail("sandbox helper: start without a request")
		return
	case len(fds) != 3 && !(m.Req.Cgroup && len(fds) == 4):
		fail(fmt.Sprintf("sandbox helper: start with %d descriptors", len(fds)))
		return
	}
	if err := m.Req.validate(); err != nil {
		fail(err.Error())
		return
	}
	if !m.Req.Policy.Network {
		if err := checkStdio(fds[:3]); err != nil {
			fail(err.Error())
			return
		}
	}
	s.mu.Lock()
	if s.cur != nil || s.stopping {
		s.mu.Unlock()
		fail("sandbox helper: busy")
		return
	}
	j := &job{id: m.ID, done: make(chan struct{})}
	s.cur = j
	s.mu.Unlock()
	go s.run(j, *m.Req, fds, !m.NoMounts)
}

// run restricts this goroutine's OS thread and forks the command from it:
// the child inherits the thread's Landlock domain, seccomp filter, mount
// namespace, capabilities and no_new_privs. The thread stays locked and
// dies with the goroutine, so no other work ever runs restricted, and
// the command's Pdeathsig (tied to its parent thread) fires only if the
// helper itself dies.
func (s *server) run(j *job, req Request, fds []int, mounts bool) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// The main thread is the helper's leader, which a signal to the
		// helper's pid reaches: a command sharing its domain could end
		// the helper with kill(-1). Fork from another thread; this
		// goroutine holds the main thread meanwhile, so the new one
		// cannot land on it.
		inner := make(chan struct{})
		go func() {
			defer close(inner)
			s.run(j, req, fds, mounts)
		}()
		<-inner
		runtime.UnlockOSThread()
		return
	}
	defer close(j.done)
	pid, masks, err := s.fork(req, fds, mounts)
	closeAll(fds)
	if err != nil {
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
		s.reply(message{ID: j.id, Err: err.Error()})
		return
	}
	s.mu.Lock()
	j.pid = pid
	stopping := s.stopping
	s.mu.Unlock()
	if stopping {
		_ = unix.Kill(-pid, unix.SIGKILL)
	}
	s.reply(message{ID: j.id, Pid: pid, Masks: masks})
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	s.mu.Lock()
	j.reaped = true
	s.mu.Unlock()
	killDescendants()
	status := int(ws)
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
	s.reply(message{ID: j.id, Exit: &status})
}

func (s *server) fork(req Request, fds []int, mounts bool) (pid int, masks bool, err error) {
	// Starting in a cgroup takes clone3 (CLONE_INTO_CGROUP), which the
	// filter refuses: then this thread gets everything but the filter,
	// and a second stage of this binary, started in the cgroup, loads the
	// filter and execs the command.
	g := guard{pid: uint32(unix.Getpid()), tid: uint32(unix.Gettid())}
	masks, err = restrictThread(req.Policy, !req.Cgroup, mounts, g)
	if err != nil {
		return 0, masks, fmt.Errorf("sandbox: %w", err)
	}
	// A session of its own (and so a process group, which the helper
	// signals): no controlling terminal, so /dev/tty is no device for
	// the command. It shared the agent's, and under acp-agent exec in a
	// terminal wrote escape sequences to the user's terminal, past
	// exec's filtering of control characters.
	sys := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	path, argv, env := req.Path, req.Argv, req.Env
	if req.Cgroup {
		sys.UseCgroupFD, sys.CgroupFD = true, fds[3]
		path, argv, env = "/proc/self/exe", execStageArgs(req, g), nil
	}
	files := []uintptr{uintptr(fds[0]), uintptr(fds[1]), uintptr(fds[2])}
	pid, err = syscall.ForkExec(path, argv, &syscall.ProcAttr{Dir: req.Dir, Env: env, Files: files, Sys: sys})
	if err != nil {
		return 0, masks, fmt.Errorf("start %s: %w", req.Path, err)
	}
	return pid, masks, nil
}

// execStageArgs is the second stage's argv: the network setting, the
// helper thread to guard (g: its pid and tid), the program, the number of
// arguments, the arguments and the environment. The environment travels
// in argv, not in the stage's own environment, so nothing in it
// (LD_PRELOAD into a cgo build of this binary) acts before the filter is
// loaded.
func execStageArgs(req Request, g guard) []string {
	network := "0"
	if req.Policy.Network {
		network = "1"
	}
	out := []string{"acp-agent-sandbox", execArg, network, fmt.Sprintf("%d:%d", g.pid, g.tid), req.Path, strconv.Itoa(len(req.Argv))}
	return append(append(out, req.Argv...), req.Env...)
}

// execStage is the second stage: it loads the filter on its thread and
// execs the command, which inherits it. It returns only on failure, with
// the status a shell gives a command it cannot run.
func execStage(args []string) int {
	runtime.LockOSThread()
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "acp-agent sandbox: %v\n", err)
		return 126
	}
	if len(args) < 4 {
		return fail(errors.New("second stage: bad arguments"))
	}
	var g guard
	if _, err := fmt.Sscanf(args[1], "%d:%d", &g.pid, &g.tid); err != nil {
		return fail(errors.New("second stage: bad arguments"))
	}
	n, err := strconv.Atoi(args[3])
	if err != nil || n < 1 || 4+n > len(args) {
		return fail(errors.New("second stage: bad arguments"))
	}
	path, argv, env := args[2], args[4:4+n], args[4+n:]
	if err := loadSeccomp(args[0] == "1", g); err != nil {
		return fail(err)
	}
	err = unix.Exec(path, argv, env)
	fmt.Fprintf(os.Stderr, "acp-agent sandbox: start %s: %v\n", path, err)
	return 127
}

// checkStdio refuses, for a command without the network, standard
// descriptors that could address an endpoint: a socket that is not a
// connected stream or seqpacket one (sendmsg, which the filter allows for
// the pairs, takes an address a datagram socket would use).
func checkStdio(fds []int) error {
	for i, fd := range fds {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			continue
		}
		typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
		if err != nil || (typ != unix.SOCK_STREAM && typ != unix.SOCK_SEQPACKET) {
			return fmt.Errorf("sandbox helper: descriptor %d is a socket of type %d, which could send anywhere", i, typ)
		}
		if _, err := unix.Getpeername(fd); err != nil {
			return fmt.Errorf("sandbox helper: descriptor %d is an unconnected socket", i)
		}
	}
	return nil
}

// signal delivers sig to the process group of command id, if that command
// is still the one running and has not been reaped (so its pid cannot
// have been reused).
func (s *server) signal(id uint64, sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.cur; j != nil && j.id == id && j.pid > 0 && !j.reaped {
		_ = unix.Kill(-j.pid, sig)
	}
}

// stop kills the running command, if any, and waits until it and what it
// left behind are gone.
func (s *server) stop() {
	s.mu.Lock()
	s.stopping = true
	j := s.cur
	if j != nil && j.pid > 0 && !j.reaped {
		_ = unix.Kill(-j.pid, unix.SIGKILL)
		_ = unix.Kill(j.pid, unix.SIGKILL)
	}
	s.mu.Unlock()
	if j != nil {
		<-j.done
	}
}

// CloseInheritedOnExec marks every descriptor above stderr close-on-exec,
// so nothing the process inherited without the flag (from an editor or a
// shell that leaked it) passes on to the programs it starts.
func CloseInheritedOnExec() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Before Linux 5.11: one by one.
	entries, _ := os.ReadDir("/proc/self/fd")
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// killDescendants SIGKILLs the subreaper's children (orphans of the
// command reparented to it) until none is left, reaping them.
func killDescendants() {
	for range 1000 {
		kids := children()
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

// children lists this process's children, whichever of its threads each
// belongs to (orphans are reparented to some live thread of the
// subreaper).
func children() []int {
	var out []int
	read := false
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		read = true
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	if read {
		return out
	}
	return childrenFromStat(os.Getpid())
}

// childrenFromStat lists the processes whose parent is pid by scanning
// /proc, for kernels without the children files.
func childrenFromStat(pid int) []int {
	var out []int
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

// restrictThread sets no_new_privs, Landlock and (withSeccomp) the
// seccomp filter on the calling, locked OS thread. With mounts, it first
// moves the thread into a private mount namespace where the denied paths
// are masked and .git is read-only (mounts_linux.go); what it cannot
// mask there, or everything without mounts, Landlock grants around.
func restrictThread(p Policy, withSeccomp, mounts bool, g guard) (masks bool, err error) {
	abi, err := landlockABI()
	if err != nil || abi < minABI {
		return false, fmt.Errorf("Landlock unavailable (ABI %d): %v", abi, err)
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
		return false, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	defer unix.Close(fd)
	add := func(path string, rights uint64) error {
		// Never through a symlink, in any component: a link among the
		// entries granted around a secret, or in a workspace root,
		// would grant its target (~/.ssh, a directory outside) instead,
		// and so would a directory of the path swapped for a link
		// between its listing and this open (by a process of the user's
		// or another command). Every path granted is a real one (the
		// roots and configured paths resolved, entries listed from real
		// directories); one that no longer is grants nothing.
		pfd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
			Resolve: unix.RESOLVE_NO_SYMLINKS,
		})
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
	// The configured paths are granted as what they name: their real
	// paths (add itself never follows a final symlink). Denied paths are
	// gone around both as written and where they really are, so no
	// symlinked spelling of a secret's directory reaches it; the secrets
	// files under the roots (.env, ...) are denied like them.
	p.WritableRoots = realPaths(p.WritableRoots)
	p.ExtraWritable = realPaths(p.ExtraWritable)
	if p.TempDir != "" {
		p.TempDir = realPaths([]string{p.TempDir})[0]
	}
	writable := append(slices.Clone(p.WritableRoots), p.ExtraWritable...)
	if p.TempDir != "" {
		writable = append(writable, p.TempDir)
	}
	denied := append(slices.Clone(p.DeniedPaths), realPaths(p.DeniedPaths)...)
	// A denied path that is missing is not one to create either: a
	// missing ~/.ssh/config, ~/.kube/config or the agent's own config
	// file names programs that run unconfined later. Excluded from the
	// write grants as written and where it would be created (through a
	// symlinked parent: ~/.docker linked to dotfiles/docker).
	absent := missingIn(writable, p.DeniedPaths)
	protected := protectedIn(writable, p.ProtectedPaths)
	secrets := helperSecrets.find(p.WritableRoots, secretsCacheDir(p))
	masked := maskedPolicy{gitReadOnly: map[string]bool{}, unprotected: protected}
	if !needsMasks(denied, secrets, p) && !slices.ContainsFunc(protected, exists) {
		// Nothing to hide: no mount namespace either.
	} else if m, err := maskerIf(mounts); err == nil {
		masks = true
		masked, err = m.apply(denied, protected, secrets, p.WritableRoots, writable, p.AllowGitWrites)
		m.close()
		if err != nil {
			return masks, err
		}
		denied = masked.unmasked
	} else {
		for _, s := range secrets {
			denied = append(denied, s.paths()...)
		}
	}
	// The rules, one per path (Landlock would merge rules on one inode
	// anyway; each costs system calls).
	rules := map[string]uint64{}
	// Device nodes are no files to read: /dev/pts/N is the user's other
	// terminals (what is typed there, a password at a prompt), and a
	// uid-0 command would read disks and consoles root owns. Only the
	// devices granted below, and listing /dev (the read-dir right on /),
	// stay.
	reads, expanded := grantsAround([]string{"/"}, append(slices.Clone(denied), "/dev"))
	for _, g := range reads {
		rules[g] |= readRights
	}
	// A directory that holds only denied files (a workspace root with
	// its .env) stays listable: ls, grep -r and git status need that.
	for _, d := range listable(expanded, denied) {
		rules[d] |= llReadDir
	}
	// Writable: the roots but their .git (unless writable or made
	// read-only by a mount), the extra paths and the temporary
	// directory, all around the denied paths that are not masked.
	// Landlock rights are inherited down a hierarchy, so a directory
	// holding an excluded entry is replaced by its other entries, and
	// nothing new can be created directly in it: where masks work, only
	// what could not be masked is excluded.
	// The protected paths that are not read-only by mount are gone
	// around too, the missing ones included: nothing can create them.
	notWritable := slices.Clone(denied)
	for _, r := range p.WritableRoots {
		if !p.AllowGitWrites && !masked.gitReadOnly[r] {
			notWritable = append(notWritable, filepath.Join(r, ".git"))
		}
	}
	writes, _ := grantsAroundAll(writable, notWritable, append(masked.unprotected, absent...))
	for _, g := range writes {
		rules[g] |= all
	}
	for _, dev := range []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom"} {
		rules[dev] |= llReadFile | llWriteFile | llTruncate | llIoctlDev
	}
	for _, path := range sortedKeys(rules) {
		if err := add(path, rules[path]); err != nil {
			return masks, err
		}
	}
	dropCapabilities()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return masks, fmt.Errorf("no_new_privs: %w", err)
	}
	if err := landlockRestrictSelf(fd); err != nil {
		return masks, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if !withSeccomp {
		return masks, nil
	}
	return masks, loadSeccomp(p.Network, g)
}

// protectedIn are the protected paths, as written and resolved, cleaned,
// that lie in one of writable (their real paths) or hold one (a root
// opened inside ~/.config/fish stays read-only, as the file tools keep
// it): the others are read-only already.
func protectedIn(writable, protected []string) []string {
	var out []string
	// Where each would be, for a missing one too: ~/.config/git is
	// created in dotfiles/config when ~/.config links there, and a
	// dangling ~/.bash_profile link by creating its target.
	resolved := make([]string, len(protected))
	for i, x := range protected {
		resolved[i] = policy.RealPath(filepath.Clean(x))
	}
	for _, x := range append(slices.Clone(protected), resolved...) {
		x = filepath.Clean(x)
		if !slices.Contains(out, x) && slices.ContainsFunc(writable, func(w string) bool { return within(w, x) || within(x, w) }) {
			out = append(out, x)
		}
	}
	return out
}

// missingIn are the paths of denied that do not exist, as written and
// where they would be created (policy.RealPath), cleaned, that lie in
// one of writable (their real paths): nothing may create them.
func missingIn(writable, denied []string) []string {
	var out []string
	for _, d := range denied {
		d = filepath.Clean(d)
		for _, x := range []string{d, policy.RealPath(d)} {
			if !exists(x) && !slices.Contains(out, x) && slices.ContainsFunc(writable, func(w string) bool { return within(w, x) }) {
				out = append(out, x)
			}
		}
	}
	return out
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// needsMasks reports whether anything is to be kept from the command: a
// denied path that exists, a secrets file, or a root's .git.
func needsMasks(denied []string, secrets []secretFile, p Policy) bool {
	if len(secrets) > 0 || slices.ContainsFunc(denied, func(d string) bool { _, err := os.Lstat(d); return err == nil }) {
		return true
	}
	return !p.AllowGitWrites && slices.ContainsFunc(p.WritableRoots, func(r string) bool {
		_, err := os.Lstat(filepath.Join(r, ".git"))
		return err == nil
	})
}

// maskerIf returns a masker for the calling thread when mounts are asked
// for and the thread may mount.
func maskerIf(mounts bool) (*masker, error) {
	if !mounts {
		return nil, errors.New("masks by mount are off")
	}
	return newMasker()
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
